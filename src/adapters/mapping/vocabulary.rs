//! The bridge's one vocabulary for vehicle descriptions (`mappings/vocabulary.toml`):
//! make, body style, drivetrain, fuel and colour values from every vendor
//! are replaced by one canonical spelling, so the same thing read from two
//! upstreams compares and counts as one. Only listed spellings are replaced;
//! anything else is kept as the vendor wrote it (no guessing).

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

const TABLE: &str = include_str!("../../../mappings/vocabulary.toml");

/// The vocabularies, by name; each maps a folded spelling to its canonical one.
type Tables = HashMap<String, HashMap<String, String>>;

static VOCABULARY: LazyLock<Tables> = LazyLock::new(|| {
    compile(TABLE).unwrap_or_else(|e| {
        // The table is compiled in; the unit tests keep this from happening.
        tracing::error!(error = %e, "The built-in vocabulary is unreadable; values are kept as read.");
        Tables::new()
    })
});

/// Which vocabulary a canonical field's values are looked up in.
fn table_of(field: &str) -> Option<&'static str> {
    Some(match field {
        "make" => "make",
        "body" => "body",
        "drivetrain" => "drivetrain",
        "fuel" => "fuel",
        "exterior_color" | "interior_color" => "color",
        _ => return None,
    })
}

/// `value` of `field` in the canonical spelling, when the vocabulary lists it.
pub fn canonical(field: &str, value: String) -> String {
    let found = table_of(field)
        .and_then(|t| VOCABULARY.get(t))
        .and_then(|t| t.get(&fold(&value)));
    match found {
        Some(canonical) => canonical.clone(),
        None => value,
    }
}

/// Upper case, single spaces, `-` and `_` as spaces: `Front-Wheel  Drive`
/// and `FRONT_WHEEL_DRIVE` fold alike.
fn fold(value: &str) -> String {
    value
        .to_uppercase()
        .replace(['-', '_'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads the table file; a spelling that folds to two canonical values of
/// one table is an error.
fn compile(text: &str) -> Result<Tables, String> {
    let file: BTreeMap<String, BTreeMap<String, Vec<String>>> =
        toml::from_str(text).map_err(|e| e.to_string())?;
    let mut tables = Tables::new();
    for (name, entries) in file {
        let mut table = HashMap::new();
        for (canonical, aliases) in entries {
            for spelling in std::iter::once(&canonical).chain(&aliases) {
                if let Some(other) = table.insert(fold(spelling), canonical.clone())
                    && other != canonical
                {
                    return Err(format!(
                        "{name}: {spelling:?} is listed under {other:?} too"
                    ));
                }
            }
        }
        tables.insert(name, table);
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_reads_and_lists_each_spelling_once() {
        let tables = compile(TABLE).unwrap();
        for name in ["make", "body", "drivetrain", "fuel", "color"] {
            assert!(tables.get(name).is_some_and(|t| !t.is_empty()), "{name}");
        }
        // An alias that folds to its own canonical spelling is harmless; one
        // claimed by two canonical values is not.
        assert!(compile("[make]\n\"Ram\" = [\"RAM\"]\n").is_ok());
        assert!(compile("[make]\n\"Ram\" = []\n\"RAM TRUCK\" = [\"ram\"]\n").is_err());
    }

    #[test]
    fn vendor_spellings_become_one() {
        let c = |f: &str, v: &str| canonical(f, v.to_owned());
        assert_eq!(c("make", "CHEVROLET"), "Chevrolet");
        assert_eq!(c("make", " chevrolet  truck "), "Chevrolet");
        assert_eq!(c("make", "Chevrolet"), "Chevrolet");
        assert_eq!(c("body", "SEDAN 4D"), "Sedan");
        assert_eq!(c("body", "Truck"), "Pickup");
        assert_eq!(c("drivetrain", "FOUR_WD"), "4WD");
        assert_eq!(c("drivetrain", "Front-Wheel Drive"), "FWD");
        assert_eq!(c("fuel", "PLUG_IN_HYBRID"), "Plug-in Hybrid");
        assert_eq!(c("exterior_color", "GREY"), "Gray");
        assert_eq!(c("interior_color", "black"), "Black");
    }

    #[test]
    fn what_the_table_does_not_list_is_kept_as_written() {
        let c = |f: &str, v: &str| canonical(f, v.to_owned());
        assert_eq!(c("body", "Car"), "Car");
        assert_eq!(c("drivetrain", "2WD"), "2WD");
        assert_eq!(c("exterior_color", "SUMMIT WHITE"), "SUMMIT WHITE");
        assert_eq!(c("make", "Studebaker"), "Studebaker");
        assert_eq!(c("model", "SILVERADO 1500"), "SILVERADO 1500");
    }
}
