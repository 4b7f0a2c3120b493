//! What `mapping test` reads: a profile (REST or SOAP, optional), a mapping
//! (vehicle or repair order, named by the profile when not given) and a saved
//! upstream answer (JSON, XML/SOAP, CSV or TSV), each a built-in name or a file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::adapters::mapping::{
    FeedFormat, FeedSource, RoMapping, ValuePath, VehicleMapping, list_at,
};
use crate::adapters::rest::profile::Profile;
use crate::adapters::soap::profile::SoapProfile;
use crate::config::catalog;
use crate::kit::format::Format;

/// Why the inputs could not be read; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{file}: {reason}")]
    Unreadable { file: String, reason: String },
    #[error("{0}")]
    Usage(String),
}

fn unreadable(file: &str, reason: impl std::fmt::Display) -> InputError {
    InputError::Unreadable {
        file: file.to_owned(),
        reason: reason.to_string(),
    }
}

/// A mapping of either entity.
pub enum Mapping {
    Vehicle(Box<VehicleMapping>),
    RepairOrder(Box<RoMapping>),
}

/// The profile's kind, with what the test needs of it.
pub enum LoadedProfile {
    Rest(Box<Profile>),
    Soap(Box<SoapProfile>),
}

/// A reference (`cdk-fortellis` or `adapters/x.toml`) and the text it names.
pub struct Named {
    pub name: String,
    pub text: String,
    /// The folder relative references inside it resolve against.
    pub base: PathBuf,
}

/// Reads a built-in by name, else a file (relative to the working directory).
pub fn read_named(
    reference: &str,
    builtin: fn(&str) -> Option<&'static str>,
) -> Result<Named, InputError> {
    let text = catalog::read(reference, Path::new("."), builtin)
        .map_err(|reason| unreadable(reference, reason))?;
    let base = if catalog::is_file_reference(reference) {
        Path::new(reference)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    } else {
        PathBuf::from(".")
    };
    Ok(Named {
        name: reference.to_owned(),
        text,
        base,
    })
}

pub fn load_profile(named: &Named) -> Result<LoadedProfile, InputError> {
    let table: toml::Table = toml::from_str(&named.text)
        .map_err(|e| unreadable(&named.name, format!("not TOML: {}", e.message())))?;
    // SOAP profiles say which SOAP version and security they use; REST ones cannot.
    let soap = table.contains_key("version") || table.contains_key("security");
    if soap {
        SoapProfile::from_toml(&named.text)
            .map(|p| LoadedProfile::Soap(Box::new(p)))
            .map_err(|e| unreadable(&named.name, e))
    } else {
        Profile::from_toml(&named.text)
            .map(|p| LoadedProfile::Rest(Box::new(p)))
            .map_err(|e| unreadable(&named.name, e))
    }
}

pub fn load_mapping(named: &Named) -> Result<Mapping, InputError> {
    let table: toml::Table = toml::from_str(&named.text)
        .map_err(|e| unreadable(&named.name, format!("not TOML: {}", e.message())))?;
    let joined = |errors: Vec<String>| unreadable(&named.name, errors.join("; "));
    match table.get("entity").and_then(toml::Value::as_str) {
        Some("vehicle") => VehicleMapping::from_toml(&named.text)
            .map(|m| Mapping::Vehicle(Box::new(m)))
            .map_err(joined),
        Some("repair_order") => RoMapping::from_toml(&named.text)
            .map(|m| Mapping::RepairOrder(Box::new(m)))
            .map_err(joined),
        Some(other) => Err(unreadable(
            &named.name,
            format!("entity {other:?} is not vehicle or repair_order"),
        )),
        None => Err(unreadable(&named.name, "entity: missing")),
    }
}

/// Where the records are in the answer, and which mapping the profile names.
pub struct Operation {
    /// The profile section the records path came from (`inventory`,
    /// `repair_orders.open`), or where it was given.
    pub section: String,
    pub records: String,
    pub mapping: Option<String>,
    /// The REST engine refuses an object where it expects a list of records.
    pub list_required: bool,
}

/// The records path of each read a `[repair_orders]` section has: REST and
/// SOAP sections have the same four reads, of different types.
macro_rules! reads_of {
    ($ro:expr) => {
        [
            ("all", $ro.all.as_ref().map(|s| &s.records)),
            ("open", $ro.open.as_ref().map(|s| &s.records)),
            ("closed", $ro.closed.as_ref().map(|s| &s.records)),
            ("get", $ro.get.as_ref().map(|s| &s.records)),
        ]
    };
}

/// The operation of `profile` that reads the mapping's entity; `read` picks
/// one of a repair-order profile's reads (`all`, `open`, `closed`, `get`).
pub fn operation(
    profile: &LoadedProfile,
    entity: &str,
    read: Option<&str>,
) -> Result<Operation, InputError> {
    let missing = |what: &str| InputError::Usage(format!("the profile has no [{what}] section"));
    match (profile, entity) {
        (LoadedProfile::Rest(p), "vehicle") => {
            let op = p.inventory.as_ref().ok_or_else(|| missing("inventory"))?;
            Ok(Operation {
                section: "inventory".into(),
                records: op.records.clone(),
                mapping: Some(op.mapping.clone()),
                list_required: true,
            })
        }
        (LoadedProfile::Rest(p), _) => {
            let ro = p
                .repair_orders
                .as_ref()
                .ok_or_else(|| missing("repair_orders"))?;
            repair_order_read(&reads_of!(ro), &ro.mapping, read)
        }
        (LoadedProfile::Soap(p), "vehicle") => {
            let op = p.inventory.as_ref().ok_or_else(|| missing("inventory"))?;
            Ok(Operation {
                section: "inventory".into(),
                records: op.records.clone(),
                mapping: Some(op.mapping.clone()),
                list_required: false,
            })
        }
        (LoadedProfile::Soap(p), _) => {
            let ro = p
                .repair_orders
                .as_ref()
                .ok_or_else(|| missing("repair_orders"))?;
            repair_order_read(&reads_of!(ro), &ro.mapping, read)
        }
    }
}

/// One of a profile's repair-order reads (each given as its records path):
/// the one named, else the first the profile has.
fn repair_order_read(
    reads: &[(&'static str, Option<&String>)],
    mapping: &str,
    wanted: Option<&str>,
) -> Result<Operation, InputError> {
    let found = match wanted {
        Some(w) => reads.iter().find(|(n, _)| *n == w),
        None => reads.iter().find(|(_, s)| s.is_some()),
    };
    match found {
        Some((name, Some(records))) => Ok(Operation {
            section: format!("repair_orders.{name}"),
            records: (*records).clone(),
            mapping: Some(mapping.to_owned()),
            list_required: false,
        }),
        _ => {
            let present: Vec<&str> = reads
                .iter()
                .filter(|(_, s)| s.is_some())
                .map(|(n, _)| *n)
                .collect();
            Err(InputError::Usage(format!(
                "the profile's [repair_orders] has no read {:?}; it has: {}",
                wanted.unwrap_or("any"),
                present.join(", ")
            )))
        }
    }
}

/// A saved answer, read as the engine that would receive it reads it.
pub enum Answer {
    /// JSON, or XML read into the same tree.
    Tree(Value),
    /// Feed rows, keyed by lower-cased header.
    Rows(Vec<Value>),
}

/// Reads `path` by its content (sniffed as the fixture sets sniff bodies,
/// `kit::format`): XML, JSON, or else a delimited feed. A file whose
/// extension claims one format and whose content is another is refused.
pub fn read_answer(path: &Path, feed: Option<&FeedSource>) -> Result<Answer, InputError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| unreadable(&name, e))?;
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let looks = match Format::of(None, body) {
        Format::Json => Format::Json,
        Format::Xml => Format::Xml,
        _ => Format::Csv,
    };
    let claimed = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let claims = match claimed.as_deref() {
        Some("json") => Some(Format::Json),
        Some("xml" | "soap") => Some(Format::Xml),
        Some("csv" | "tsv" | "txt") => Some(Format::Csv),
        _ => None,
    };
    if claims.is_some_and(|c| c != looks) {
        let reads_as = match looks {
            Format::Json => "json",
            Format::Xml => "xml",
            _ => "delimited",
        };
        return Err(unreadable(
            &name,
            format!(
                "named .{} but its content reads as {reads_as}",
                claimed.unwrap_or_default()
            ),
        ));
    }
    let xml_feed = feed.is_some_and(|f| f.format == FeedFormat::Xml);
    match looks {
        // An XML feed's records are where its mapping says, as the feed reads them.
        Format::Xml if xml_feed => crate::adapters::feed::parse_rows(&bytes, feed)
            .map(Answer::Rows)
            .map_err(|e| unreadable(&name, format!("not a readable feed: {e}"))),
        Format::Xml => crate::adapters::soap::xml::to_json(&bytes)
            .map(Answer::Tree)
            .map_err(|e| unreadable(&name, format!("not readable XML: {e}"))),
        Format::Json => serde_json::from_slice(body)
            .map(Answer::Tree)
            .map_err(|e| unreadable(&name, format!("not readable JSON: {e}"))),
        _ => crate::adapters::feed::parse_rows(&bytes, feed)
            .map(Answer::Rows)
            .map_err(|e| unreadable(&name, format!("not a readable feed: {e}"))),
    }
}

/// The records at `records` (`""`: the answer itself): a list's elements, or
/// one object. `None` when the path reaches nothing.
pub fn records_at(answer: &Value, records: &str) -> Result<Option<Vec<Value>>, InputError> {
    if records.is_empty() {
        return Ok(Some(match answer {
            Value::Array(items) => items.clone(),
            other => vec![other.clone()],
        }));
    }
    let path = ValuePath::parse(records)
        .map_err(|e| InputError::Usage(format!("records path {records:?}: {e}")))?;
    if path.first(answer).is_none() {
        return Ok(None);
    }
    Ok(Some(list_at(&path, answer).into_iter().cloned().collect()))
}
