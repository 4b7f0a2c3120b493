//! The line of a key in a TOML file, so a problem in a profile or mapping is
//! reported where a person will fix it: the file, the section and the line.

use toml::de::{DeTable, DeValue};

/// The 1-based line of `dotted` (`inventory.records`, `fields.make`) in
/// `text`; when the key is not there, the line of its deepest section that
/// is. `None` for text that is not TOML or a key none of whose sections exist.
pub fn line_of(text: &str, dotted: &str) -> Option<usize> {
    let doc = DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let mut found = None;
    for segment in dotted.split('.') {
        let Some((key, value)) = table.iter().find(|(k, _)| k.get_ref().as_ref() == segment) else {
            break;
        };
        found = Some(key.span().start);
        match value.get_ref() {
            DeValue::Table(inner) => table = inner,
            _ => break,
        }
    }
    found.map(|at| line_at(text, at))
}

fn line_at(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(0, |before| before.matches('\n').count())
        + 1
}

/// Where `key` is in the profile or mapping `reference` (read as the bridge
/// reads it, relative to `base`): ` (path/to/file.toml line 12, [section])`,
/// or empty when the key cannot be placed.
pub fn place(
    reference: &str,
    base: &std::path::Path,
    builtin: fn(&str) -> Option<&'static str>,
    key: &str,
) -> String {
    let Ok(text) = super::catalog::read(reference, base, builtin) else {
        return String::new();
    };
    let Some(line) = line_of(&text, key) else {
        return String::new();
    };
    let file = if super::catalog::is_file_reference(reference) {
        base.join(reference).display().to_string()
    } else {
        format!("built-in {reference}")
    };
    format!(" ({file} line {line}, {})", section_of(key))
}

/// A TOML error as a person fixes it: `line 8, [inventory]: unknown field ...`.
pub fn described(text: &str, error: &toml::de::Error) -> String {
    let Some(span) = error.span() else {
        return error.message().to_owned();
    };
    let line = line_at(text, span.start);
    let header = text
        .lines()
        .take(line)
        .filter_map(|l| {
            let l = l.trim();
            (l.starts_with('[') && l.ends_with(']')).then_some(l)
        })
        .last()
        .unwrap_or("top level");
    format!("line {line}, {header}: {}", error.message())
}

/// A dotted key's section (all but its last segment), as a person writes it
/// in the file: `[inventory.pagination]`; the top level is `top level`.
pub fn section_of(dotted: &str) -> String {
    match dotted.rsplit_once('.') {
        Some((section, _)) => format!("[{section}]"),
        None => "top level".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = "name = \"x\"\n\n[headers]\nAccept = \"json\"\n\n[inventory]\npath = \"/v\"\nrecords = \"/results\"\n\n[inventory.pagination]\nkind = \"none\"\n";

    #[test]
    fn finds_keys_in_sections_and_nested_tables() {
        assert_eq!(line_of(PROFILE, "name"), Some(1));
        assert_eq!(line_of(PROFILE, "headers.Accept"), Some(4));
        assert_eq!(line_of(PROFILE, "inventory.records"), Some(8));
        assert_eq!(line_of(PROFILE, "inventory.pagination.kind"), Some(11));
    }

    #[test]
    fn describes_a_parse_error_with_its_line_and_section() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Inventory {
            path: String,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Doc {
            inventory: Inventory,
        }
        let text = "name = 1\n[inventory]\npath = \"/v\"\nrecrods = \"/r\"\n";
        let error = toml::from_str::<Doc>(text).unwrap_err();
        let described = described(text, &error);
        assert!(
            described.starts_with("line 4, [inventory]: unknown field `recrods`"),
            "{described}"
        );
    }

    #[test]
    fn falls_back_to_the_deepest_section_present() {
        // A key the file does not have (a field the build requires) is
        // reported at its section.
        assert_eq!(line_of(PROFILE, "inventory.mapping"), Some(6));
        assert_eq!(line_of(PROFILE, "nowhere.at_all"), None);
        assert_eq!(line_of("not = [toml", "not"), None);
        assert_eq!(
            section_of("inventory.pagination.kind"),
            "[inventory.pagination]"
        );
        assert_eq!(section_of("name"), "top level");
    }
}
