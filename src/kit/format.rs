//! What kind of text a body is, from its `Content-Type` (or, without one, its
//! first byte): the faker walks each kind its own way, the fixture set names
//! body files by it and checks on load that a body is what it says it is.

/// The body formats the kit reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Xml,
    Csv,
    Tsv,
    /// `application/x-www-form-urlencoded` (token requests).
    Form,
    /// Other text: only free-text patterns are looked for.
    Text,
    /// Anything else: kept as it is.
    Binary,
}

impl Format {
    /// The format a `Content-Type` names; without one, a guess from the body's
    /// first non-blank byte, so an unlabelled JSON or XML answer is still walked.
    pub fn of(content_type: Option<&str>, body: &[u8]) -> Self {
        match content_type {
            Some(ct) => Self::named(ct),
            None => Self::sniffed(body),
        }
    }

    fn named(content_type: &str) -> Self {
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let subtype = essence.split('/').nth(1).unwrap_or_default();
        if subtype == "json" || subtype.ends_with("+json") {
            Self::Json
        } else if subtype == "xml" || subtype.ends_with("+xml") {
            Self::Xml
        } else if subtype == "csv" {
            Self::Csv
        } else if subtype == "tab-separated-values" {
            Self::Tsv
        } else if essence == "application/x-www-form-urlencoded" {
            Self::Form
        } else if essence.starts_with("text/") {
            Self::Text
        } else {
            Self::Binary
        }
    }

    fn sniffed(body: &[u8]) -> Self {
        let first = body.iter().find(|b| !b.is_ascii_whitespace());
        match first {
            Some(b'{' | b'[') => Self::Json,
            Some(b'<') => Self::Xml,
            _ if std::str::from_utf8(body).is_ok() => Self::Text,
            _ => Self::Binary,
        }
    }

    /// The file extension a body of this format is saved with.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Xml => "xml",
            Self::Csv => "csv",
            Self::Tsv => "tsv",
            Self::Form => "form",
            Self::Text => "txt",
            Self::Binary => "bin",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_and_unlabelled_bodies() {
        assert_eq!(
            Format::of(Some("application/json; charset=utf-8"), b""),
            Format::Json
        );
        assert_eq!(
            Format::of(Some("application/problem+json"), b""),
            Format::Json
        );
        assert_eq!(
            Format::of(Some("text/xml; charset=utf-8"), b""),
            Format::Xml
        );
        assert_eq!(Format::of(Some("application/soap+xml"), b""), Format::Xml);
        assert_eq!(Format::of(Some("text/csv"), b""), Format::Csv);
        assert_eq!(
            Format::of(Some("text/tab-separated-values"), b""),
            Format::Tsv
        );
        assert_eq!(Format::of(Some("text/plain"), b"{"), Format::Text);
        assert_eq!(Format::of(Some("application/pdf"), b""), Format::Binary);
        assert_eq!(Format::of(None, b"  {\"a\":1}"), Format::Json);
        assert_eq!(Format::of(None, b"<a/>"), Format::Xml);
        assert_eq!(Format::of(None, &[0xff, 0xfe]), Format::Binary);
    }
}
