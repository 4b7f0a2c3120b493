//! Input clean-up before the XML reader sees a byte: real ADF arrives as an
//! e-mail body, often mis-encoded, with text around it and markup mistakes
//! that a strict XML parser would reject outright.

/// Decoded text starting at the first ADF markup, and how many bytes of the
/// decoded input were skipped to get there (to report error positions).
pub(super) struct Prepared {
    pub text: String,
    pub skipped: usize,
}

/// Decodes `input`, drops whatever precedes the ADF markup (BOM, blank lines,
/// e-mail text) and escapes stray `<` so the reader keeps the text.
/// `None` when there is no ADF markup at all.
pub(super) fn prepare(input: &[u8]) -> Option<Prepared> {
    let decoded = decode(input);
    let start = find_markup_start(&decoded)?;
    let text = escape_stray_lt(&decoded[start..]);
    Some(Prepared {
        text,
        skipped: start,
    })
}

/// UTF-8 where the bytes are valid UTF-8, Windows-1252 for each byte that is
/// not. Senders often declare UTF-8 but send Windows-1252 (curly quotes, `é`);
/// decoding per invalid byte keeps correct UTF-8 intact in mixed input.
fn decode(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len());
    for chunk in input.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(chunk.invalid().iter().copied().map(windows_1252));
    }
    out
}

/// Windows-1252 differs from Latin-1 only in 0x80..=0x9F; the five bytes it
/// leaves undefined map to the C1 control with the same value.
fn windows_1252(byte: u8) -> char {
    const C1: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8D}', 'Ž',
        '\u{8F}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9D}',
        'ž', 'Ÿ',
    ];
    match byte {
        0x80..=0x9F => C1[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

/// Markup that can open an ADF document, lower-case. Each must be followed by
/// a delimiter so that e-mail text such as `<prospects@example.com>` does not
/// count as markup.
const MARKUP_STARTS: [&str; 4] = ["<?xml", "<?adf", "<adf", "<prospect"];

/// Byte offset of the earliest ADF markup, matched case-insensitively.
fn find_markup_start(text: &str) -> Option<usize> {
    // ASCII lower-casing keeps byte offsets identical to `text`.
    let lower = text.to_ascii_lowercase();
    MARKUP_STARTS
        .iter()
        .filter_map(|start| find_delimited(&lower, start))
        .min()
}

fn find_delimited(haystack: &str, needle: &str) -> Option<usize> {
    haystack.match_indices(needle).find_map(|(at, _)| {
        let next = haystack[at + needle.len()..].chars().next();
        let delimited =
            next.is_none_or(|c| c.is_whitespace() || matches!(c, '>' | '/' | ':' | '?'));
        delimited.then_some(at)
    })
}

/// Replaces a `<` that cannot start markup (`price < 20k`, `I <3 it`) with
/// `&lt;`; the reader would otherwise misread the rest of the text as a tag.
/// CDATA sections are copied untouched: their content is literal.
fn escape_stray_lt(text: &str) -> String {
    const CDATA_OPEN: &str = "<![CDATA[";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if tail.starts_with(CDATA_OPEN) {
            let end = tail.find("]]>").map_or(tail.len(), |end| end + 3);
            out.push_str(&tail[..end]);
            rest = &tail[end..];
            continue;
        }
        let starts_markup = tail[1..]
            .chars()
            .next()
            .is_some_and(|n| n.is_alphabetic() || matches!(n, '_' | ':' | '/' | '?' | '!'));
        out.push_str(if starts_markup { "<" } else { "&lt;" });
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_windows_1252_bytes_only_where_utf8_is_invalid() {
        let bytes = b"caf\xe9 \x93hi\x94 \xc3\xa9";
        assert_eq!(decode(bytes), "café “hi” é");
    }

    #[test]
    fn skips_email_text_but_not_an_address_in_angle_brackets() {
        let text = "From: <prospects@example.com>\n\n<ADF>";
        assert_eq!(find_markup_start(text), text.find("<ADF>"));
    }

    #[test]
    fn escapes_only_stray_less_than() {
        assert_eq!(escape_stray_lt("<a>x < 2 <3</a>"), "<a>x &lt; 2 &lt;3</a>");
        assert_eq!(escape_stray_lt("<![CDATA[a < b]]>"), "<![CDATA[a < b]]>");
    }
}
