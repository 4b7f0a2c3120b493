//! The SOAP vendor profile format (`adapters/*.toml` with `version`): which
//! SOAP version and security to use, how the HTTP request is dressed, each
//! operation's body template and where its records are, and what the vendor's
//! faults and in-band status codes mean. A new SOAP/STAR vendor is a profile
//! plus a mapping, not Rust.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::envelope::SoapVersion;
use crate::adapters::ErrorClass;
use crate::model::Domain;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoapProfile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Domains the profile has operations for.
    pub domains: Vec<Domain>,
    pub version: VersionSpec,
    #[serde(default)]
    pub security: Security,
    /// `Content-Type` instead of the version's standard one (OpenTrack takes a
    /// SOAP 1.2 envelope as `text/xml`).
    pub content_type: Option<String>,
    /// Whether to send the `SOAPAction` header; by default only SOAP 1.1 does.
    pub soap_action_header: Option<bool>,
    /// Extra headers on every call; values are templates (`{vars.x}`, `{uuid}`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The whole inventory in one call (the `inventory` domain).
    pub inventory: Option<SoapInventorySpec>,
    /// Repair orders (the `repair_orders` domain).
    pub repair_orders: Option<SoapRepairOrdersSpec>,
    #[serde(default)]
    pub errors: SoapErrorSpec,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionSpec {
    Soap11,
    Soap12,
}

impl From<VersionSpec> for SoapVersion {
    fn from(v: VersionSpec) -> Self {
        match v {
            VersionSpec::Soap11 => Self::Soap11,
            VersionSpec::Soap12 => Self::Soap12,
        }
    }
}

/// How the bridge proves who it is inside the envelope.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Security {
    /// No `soap:Header` (credentials, if any, travel in the body or headers).
    #[default]
    None,
    /// WS-Security UsernameToken (clear-text password, over TLS) from the
    /// instance's `username` and `password`.
    UsernameToken,
}

/// How to read repair orders. `closed` and `open` read orders of that state,
/// `all` every state (give `all`, or `open` and/or `closed`); `get` reads one
/// order by `{ro_number}`. Without `get`, a lookup by number is unsupported:
/// searching day by day would cost one call per day.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoapRepairOrdersSpec {
    /// A repair-order mapping (built-in name or file) for each record.
    pub mapping: String,
    pub all: Option<SoapOperationSpec>,
    pub open: Option<SoapOperationSpec>,
    pub closed: Option<SoapOperationSpec>,
    pub get: Option<SoapOperationSpec>,
    /// How long an answer is kept for the same read (per day for `per_day`
    /// reads), so paging does not run every day's call again; 0 keeps nothing.
    #[serde(default = "default_keep_seconds")]
    pub keep_seconds: u64,
}

fn default_keep_seconds() -> u64 {
    30
}

/// The inventory read: one call answering every unit (STAR
/// `GetVehicleInventory`-style), each record mapped by a vehicle mapping.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoapInventorySpec {
    /// A vehicle mapping (built-in name or file) for each record.
    pub mapping: String,
    pub path: String,
    pub action: String,
    pub body: String,
    pub records: String,
    pub status: Option<StatusSpec>,
}

impl SoapInventorySpec {
    /// The call itself, as every other operation is described.
    pub fn operation(&self) -> SoapOperationSpec {
        SoapOperationSpec {
            path: self.path.clone(),
            action: self.action.clone(),
            body: self.body.clone(),
            records: self.records.clone(),
            per_day: false,
            status: self.status.clone(),
        }
    }
}

/// One SOAP call. `action` and `path` are templates like headers; `body` is
/// the XML inside `soap:Body`, a template whose substituted values are all
/// XML-escaped: `{vars.x}`, `{dealership_id}`, `{uuid}`, `{now_local}` (the
/// dealership's wall-clock time, `YYYY-MM-DDTHH:MM:SS`, as STAR's
/// `CreationDateTime` is written), and for repair orders `{from}`, `{to}`
/// (`YYYY-MM-DD`), `{vin}`, `{ro_number}`, with `per_day` also `{date}`
/// (`YYYY-MM-DD`) and `{date_compact}` (`YYYYMMDD`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoapOperationSpec {
    /// Appended to the instance's `base_url`.
    pub path: String,
    /// The SOAP action URI (`SOAPAction` header or `action` content-type parameter).
    pub action: String,
    pub body: String,
    /// Where the records are in the answer, from the root element
    /// (`/Envelope/Body/…`); one element is one record, none is an empty answer.
    pub records: String,
    /// The operation takes one day: the bridge calls it once per local day of
    /// the range asked for.
    #[serde(default)]
    pub per_day: bool,
    /// An in-band status for STAR-style answers that report failures inside HTTP 200.
    pub status: Option<StatusSpec>,
}

/// The answer is an error unless the value at `path` equals `success`; the
/// code found is looked up in `[errors.codes]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusSpec {
    pub path: String,
    pub success: String,
}

/// What the vendor's faults and status codes mean. Fault codes are matched
/// without their prefix, the subcode first (`FailedAuthentication`,
/// `InvalidDealer`), then the code (`Sender`, `Client`, `Receiver`, `Server`).
/// A fault neither matches is `rejected` when it blames the sender
/// (`Sender`/`Client`), else `unavailable`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoapErrorSpec {
    #[serde(default)]
    pub faults: BTreeMap<String, ErrorClass>,
    /// In-band status codes (see [`StatusSpec`]); an unknown one is `rejected`.
    #[serde(default)]
    pub codes: BTreeMap<String, ErrorClass>,
}

impl SoapProfile {
    pub fn from_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| crate::config::locate::described(text, &e))
    }
}
