//! The fixture-set format (docs/guides/record-and-replay.md): a folder
//! with `fixtures.json`, which lists the recorded exchanges in order, and one
//! file per body. Loading checks the whole set and names every problem with
//! its file; it never guesses what a broken body meant.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use quick_xml::events::Event;
use serde::{Deserialize, Serialize};

use crate::adapters::soap::xml::to_json;
use crate::kit::format::Format;

mod writer;
pub use writer::SetWriter;

/// The version of the format this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;
/// The index file of a set.
pub const INDEX: &str = "fixtures.json";

/// `fixtures.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureSet {
    pub schema_version: u32,
    /// The upstream's id in the config it was recorded with.
    pub upstream: String,
    /// Its kind: `rest`, `soap`, `feed` or `adf_http`.
    pub kind: String,
    /// Its profile (REST, SOAP) or mapping (feeds).
    #[serde(default)]
    pub profile: Option<String>,
    /// Its URL keys and the path part of each (the origin is not kept).
    #[serde(default)]
    pub urls: Vec<RecordedUrl>,
    /// RFC 3339.
    pub recorded_at: String,
    /// `dms-bridge <version>`.
    pub recorded_by: String,
    pub exchanges: Vec<RecordedExchange>,
}

/// One URL key of the recorded upstream.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedUrl {
    pub key: String,
    pub path: String,
}

/// One request and its answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedExchange {
    pub method: String,
    pub path: String,
    /// Query parameters in order; credentials are `REDACTED`.
    #[serde(default)]
    pub query: Vec<(String, String)>,
    /// What else tells requests apart: `soap_action`, `soap_operation`.
    #[serde(default, rename = "match", skip_serializing_if = "BTreeMap::is_empty")]
    pub match_key: BTreeMap<String, String>,
    /// Request headers, less those that carry credentials.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub request_headers: BTreeMap<String, String>,
    /// The file of the request's body, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    pub status: u16,
    /// The answer's content type, validators, and quota headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The file of the answer's body, if it had one.
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub elapsed_ms: u64,
}

/// A loaded, checked set: the index and every body, by exchange.
#[derive(Debug, Clone)]
pub struct LoadedSet {
    pub dir: PathBuf,
    pub set: FixtureSet,
    pub bodies: Vec<Option<Bytes>>,
}

/// Why a set cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0}: not a fixture index: {1}")]
    Index(PathBuf, String),
    #[error("fixture set {dir} has {n} problem(s):\n{list}", dir = .0.display(), n = .1.len(), list = .1.join("\n"))]
    Problems(PathBuf, Vec<String>),
}

/// The answer headers a set keeps: what the bridge reads besides the body.
pub fn kept_response_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "content-type" | "content-encoding" | "etag" | "last-modified" | "retry-after"
    ) || name.starts_with("x-ratelimit-")
        || name.starts_with("ratelimit")
}

/// Whether headers say the body is compressed (`Content-Encoding` other than
/// `identity`): such a body is kept as it came, neither faked nor checked.
pub fn is_encoded(headers: &BTreeMap<String, String>) -> bool {
    header(headers, "content-encoding").is_some_and(|e| !e.trim().eq_ignore_ascii_case("identity"))
}

/// `003-get-openapi-v3-1-0-repair-orders.json` (`-request` before the dot
/// for a request's body).
pub fn body_file(seq: usize, method: &str, path: &str, format: Format, request: bool) -> String {
    let mut slug = String::new();
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_matches('-').chars().take(60).collect();
    let slug = slug.trim_end_matches('-');
    let suffix = if request { "-request" } else { "" };
    let slug = if slug.is_empty() { "root" } else { slug };
    format!(
        "{seq:03}-{}-{slug}{suffix}.{}",
        method.to_ascii_lowercase(),
        format.extension()
    )
}

/// What tells apart requests to one SOAP endpoint: the `SOAPAction` header
/// (or SOAP 1.2's `action` content-type parameter) and the name of the Body's
/// first element.
pub fn match_key(headers: &http::HeaderMap, body: &[u8]) -> BTreeMap<String, String> {
    let mut key = BTreeMap::new();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let action = header("soapaction").map(str::to_owned).or_else(|| {
        let ct = header("content-type")?;
        ct.split(';')
            .filter_map(|p| p.trim().strip_prefix("action="))
            .map(str::to_owned)
            .next()
    });
    if let Some(action) = action {
        key.insert(
            "soap_action".to_owned(),
            action.trim_matches('"').to_owned(),
        );
    }
    if let Some(op) = soap_operation(body) {
        key.insert("soap_operation".to_owned(), op);
    }
    key
}

/// The local name of the first element inside `Envelope/Body`.
fn soap_operation(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    if !text.trim_start().starts_with('<') {
        return None;
    }
    let mut reader = quick_xml::reader::Reader::from_str(text);
    let mut path: Vec<String> = Vec::new();
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) | Event::Empty(e)
                if path.len() == 2 && path[0] == "Envelope" && path[1] == "Body" =>
            {
                return Some(e.local_name().as_ref().to_owned());
            }
            Event::Start(e) => path.push(e.local_name().as_ref().to_owned()),
            Event::End(_) => {
                path.pop();
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

/// Loads the set in `dir` and checks it whole.
pub fn load(dir: &Path) -> Result<LoadedSet, FixtureError> {
    let index = dir.join(INDEX);
    let text = std::fs::read_to_string(&index).map_err(|e| FixtureError::Io(index.clone(), e))?;
    let set: FixtureSet = serde_json::from_str(&text)
        .map_err(|e| FixtureError::Index(index.clone(), e.to_string()))?;
    let mut problems = Vec::new();
    if set.schema_version != SCHEMA_VERSION {
        problems.push(format!(
            "{INDEX}: schema_version {} is not the one this dms-bridge reads ({SCHEMA_VERSION})",
            set.schema_version
        ));
    }
    let mut bodies = Vec::with_capacity(set.exchanges.len());
    for (i, exchange) in set.exchanges.iter().enumerate() {
        let at = format!("{INDEX}: exchange {}", i + 1);
        if http::Method::from_bytes(exchange.method.as_bytes()).is_err() {
            problems.push(format!(
                "{at}: method {:?} is not an HTTP method",
                exchange.method
            ));
        }
        if !exchange.path.starts_with('/') {
            problems.push(format!(
                "{at}: path {:?} does not start with /",
                exchange.path
            ));
        }
        if http::StatusCode::from_u16(exchange.status).is_err() {
            problems.push(format!(
                "{at}: status {} is not an HTTP status",
                exchange.status
            ));
        }
        let answer = exchange.body.as_deref();
        bodies.push(body(dir, &at, answer, &exchange.headers, &mut problems));
        let request = exchange.request_body.as_deref();
        body(dir, &at, request, &exchange.request_headers, &mut problems);
    }
    if problems.is_empty() {
        Ok(LoadedSet {
            dir: dir.to_path_buf(),
            set,
            bodies,
        })
    } else {
        Err(FixtureError::Problems(dir.to_path_buf(), problems))
    }
}

fn header<'a>(headers: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// One body file, read and checked against its declared content type.
fn body(
    dir: &Path,
    at: &str,
    name: Option<&str>,
    headers: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
) -> Option<Bytes> {
    let name = name?;
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') || name == INDEX {
        problems.push(format!(
            "{at}: body file name {name:?} is not a plain file name in the set"
        ));
        return None;
    }
    let bytes = match std::fs::read(dir.join(name)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            problems.push(format!("{name}: missing ({at} names it)"));
            return None;
        }
        Err(e) => {
            problems.push(format!("{name}: {e}"));
            return None;
        }
    };
    let content_type = header(headers, "content-type");
    let declared = content_type.unwrap_or("no content type");
    let format = match is_encoded(headers) {
        true => Format::Binary,
        false => Format::of(content_type, &bytes),
    };
    if let Err(why) = check(format, &bytes) {
        problems.push(format!("{name}: declared {declared} but {why}"));
    }
    Some(Bytes::from(bytes))
}

/// Whether a body is what its format says, and if not, why not.
fn check(format: Format, body: &[u8]) -> Result<(), String> {
    match format {
        Format::Json => serde_json::from_slice::<serde_json::Value>(body)
            .map(drop)
            .map_err(|e| format!("is not JSON (truncated or another format?): {e}")),
        Format::Xml => to_json(body)
            .map(drop)
            .map_err(|e| format!("is not well-formed XML (truncated or another format?): {e}")),
        Format::Csv => table(body, b','),
        Format::Tsv => table(body, b'\t'),
        Format::Form | Format::Text => std::str::from_utf8(body)
            .map(drop)
            .map_err(|e| format!("is not UTF-8 text: {e}")),
        Format::Binary => Ok(()),
    }
}

/// Every row as long as the header row: a cut-off last row is not.
fn table(body: &[u8], delimiter: u8) -> Result<(), String> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .from_reader(body);
    for record in reader.records() {
        record.map_err(|e| format!("is not a whole table (truncated?): {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
