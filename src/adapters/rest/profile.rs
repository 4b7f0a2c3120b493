//! The vendor profile format (`adapters/*.toml`): how to authenticate, which
//! headers to send, where each operation lives, how it pages and how the vendor
//! reports errors. A new REST vendor is a profile plus a mapping, not Rust.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::model::Domain;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Domains the profile has operations for.
    pub domains: Vec<Domain>,
    #[serde(default)]
    pub auth: AuthSpec,
    /// Headers on every API call; values are templates (`{vars.x}`, `{secrets.x}`, `{uuid}`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub inventory: Option<OperationSpec>,
    /// Trade-in valuation of one VIN (the `deals` domain).
    pub trade_value: Option<TradeValueSpec>,
    /// The dealership's service menu: the codes availability and bookings take.
    pub service_menu: Option<RecordsSpec>,
    /// Open service slots for service codes and a vehicle in a date range.
    pub availability: Option<RecordsSpec>,
    /// Repair orders (the `service` domain).
    pub repair_orders: Option<RepairOrdersSpec>,
    /// Books a service appointment.
    pub book_appointment: Option<WriteSpec>,
    /// Cancels a service appointment by id.
    pub cancel_appointment: Option<WriteSpec>,
    /// Submits a lead through the CRM's API (the `leads` domain).
    pub submit_lead: Option<WriteSpec>,
    /// Reads what became of a submitted lead.
    pub lead_status: Option<LeadStatusSpec>,
    #[serde(default)]
    pub errors: ErrorSpec,
}

/// Reads one lead the CRM accepted (`{crm_lead_id}`, the id its submission
/// answered) and says what became of it: the first rule that matches gives
/// the status, else `default`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeadStatusSpec {
    #[serde(default = "default_method")]
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Where the lead is in the answer.
    pub record: String,
    pub rules: Vec<StatusRule>,
    #[serde(default = "default_crm_status")]
    pub default: crate::model::crm::CrmStatus,
}

fn default_crm_status() -> crate::model::crm::CrmStatus {
    crate::model::crm::CrmStatus::New
}

/// `status` when the value at `when` is one of `in` (any case), or, without
/// `in`, when it has any non-blank value (a date that is set).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusRule {
    pub when: String,
    #[serde(rename = "in")]
    pub one_of: Option<Vec<String>>,
    pub status: crate::model::crm::CrmStatus,
}

/// How to read repair orders. Give `all` when one read returns every status,
/// else `open` and/or `closed`; `get` reads one order by `{ro_number}`, and
/// without it the bridge looks the number up in open and recently closed orders.
/// Reads may use `{from}`, `{to}` (`YYYY-MM-DD`), `{from_epoch_ms}`,
/// `{to_epoch_ms}` (the local days' bounds), `{vin}` and `{ro_number}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepairOrdersSpec {
    /// A repair-order mapping (built-in name or file).
    pub mapping: String,
    pub all: Option<RoReadSpec>,
    pub open: Option<RoReadSpec>,
    pub closed: Option<RoReadSpec>,
    pub get: Option<RoReadSpec>,
    /// How far back a lookup by number searches closed orders.
    #[serde(default = "default_lookback_days")]
    pub closed_lookback_days: u32,
    /// How long an answer is kept for the same read (paging through a list
    /// must not run a slow DMS query again for every page); 0 keeps nothing.
    #[serde(default = "default_keep_seconds")]
    pub keep_seconds: u64,
}

fn default_keep_seconds() -> u64 {
    30
}

fn default_lookback_days() -> u32 {
    90
}

/// One repair-order read: a request (paged or not), or an asynchronous
/// long operation whose result holds the records.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoReadSpec {
    #[serde(default = "default_method")]
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Where the records are in the answer (the result, for a long operation).
    pub records: String,
    #[serde(default)]
    pub pagination: Pagination,
    pub long_operation: Option<LongOperationSpec>,
}

/// The start-poll-fetch flow of an asynchronous query (CDK Drive): the first
/// answer names an operation; its status is polled until done, then the result
/// is fetched. Status and result paths are templates on the instance's base URL
/// with `{operation_id}` (links in answers are not followed: the bridge only
/// calls the host it was configured with).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongOperationSpec {
    /// Where the operation id is in the start (and status) answer.
    pub id: String,
    /// Where the operation's state is.
    pub status: String,
    /// The state that means the result is ready.
    pub done: String,
    /// States that mean the operation failed.
    #[serde(default)]
    pub failed: Vec<String>,
    /// Where the upstream says how many seconds to wait before polling again.
    pub check_after: Option<String>,
    pub status_path: String,
    pub result_path: String,
    /// Give up (upstream.timeout) when the result is not ready by then.
    #[serde(default = "default_max_wait")]
    pub max_wait_seconds: u64,
    /// Polling interval when the upstream gives none, and the floor of its advice.
    #[serde(default = "default_poll_ms")]
    pub min_poll_ms: u64,
}

fn default_max_wait() -> u64 {
    30
}

fn default_poll_ms() -> u64 {
    250
}

/// A valuation request: path and query may use `{vin}`, `{mileage_mi}`,
/// `{mileage_km}`, `{zip}` (the customer's, else the dealership's postal
/// code), `{state}` (the dealership's region) and the `lookup`'s values as
/// `{lookup.NAME}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TradeValueSpec {
    #[serde(default = "default_method")]
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Where the valued vehicle is in the answer.
    pub record: String,
    /// A boolean that is `false` when the provider has no data for the VIN.
    pub available: Option<String>,
    /// How the provider writes amounts.
    #[serde(default)]
    pub amounts: crate::model::AmountUnit,
    pub fields: TradeValueFields,
    /// Where the answer says until when its values hold (a date, or an
    /// RFC 3339 time); a date holds to the end of that day, dealership time.
    pub valid_until: Option<String>,
    /// Else how long the provider's values hold from now (its refresh
    /// cycle); by default a week.
    #[serde(default = "default_valid_for", with = "humantime_serde")]
    pub valid_for: std::time::Duration,
    /// A first call for providers that value their own vehicle id, not a VIN
    /// (J.D. Power's `ucgvehicleid`, KBB's `vehicleId`).
    pub lookup: Option<LookupSpec>,
}

fn default_valid_for() -> std::time::Duration {
    std::time::Duration::from_secs(7 * 24 * 60 * 60)
}

/// A read before the valuation whose values the valuation's templates use
/// as `{lookup.NAME}`. A name whose path finds nothing means the provider
/// has no vehicle for the VIN (`deals.trade_value_unavailable`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupSpec {
    #[serde(default = "default_method")]
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Name → path of a scalar in the lookup's answer.
    pub extract: BTreeMap<String, String>,
}

/// A read returning records whose fields the bridge reads by path. Path and
/// query may use the operation's request parameters; a query parameter whose
/// value renders empty is left out.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordsSpec {
    #[serde(default = "default_method")]
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Where the records are in the answer; `""` when the answer is the array.
    pub records: String,
    /// Canonical field name → path inside a record.
    pub fields: BTreeMap<String, String>,
}

/// A write (a booking, a cancellation): method, path and query as for a
/// records read, a JSON body given as a TOML table (see `body.rs`), and where
/// the answer says what happened.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteSpec {
    #[serde(default = "default_write_method")]
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    pub body: Option<serde_json::Map<String, Value>>,
    /// How times are written (a chrono format, e.g. `%Y-%m-%dT%H:%M%z`), in
    /// the dealership's offset; RFC 3339 when not given.
    pub time_format: Option<String>,
    /// Canonical answer field → path in the answer.
    #[serde(default)]
    pub answer: BTreeMap<String, String>,
    /// Vendor status (at `answer.status`, matched regardless of case) →
    /// canonical status. Without a status in the answer, a successful booking
    /// is `booked`.
    #[serde(default)]
    pub statuses: BTreeMap<String, crate::adapters::BookedStatus>,
}

fn default_write_method() -> String {
    "POST".into()
}

/// Paths, inside the record, of what the bridge reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TradeValueFields {
    pub rough: String,
    pub average: String,
    pub clean: String,
    pub year: Option<String>,
    pub make: Option<String>,
    pub model: Option<String>,
    pub series: Option<String>,
    pub style: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AuthSpec {
    #[default]
    None,
    /// HTTP Basic with the instance's `client_id` / `client_secret`.
    Basic,
    /// A static bearer token: the instance's `client_secret`.
    Bearer,
    /// OAuth2 client credentials against the instance's `token_url`.
    Oauth2ClientCredentials {
        /// How the client authenticates to the token endpoint.
        #[serde(default)]
        client_auth: ClientAuth,
        scope: Option<String>,
        /// Where the token is in the answer (Tekion wraps it in `data`).
        #[serde(default = "default_token_path")]
        token_path: String,
        #[serde(default = "default_expires_path")]
        expires_path: String,
        /// Extra form fields for the token request.
        #[serde(default)]
        extra_form: BTreeMap<String, String>,
        /// With `client_auth = "form"`: the names of the id and secret fields.
        #[serde(default = "default_form_fields")]
        form_fields: FormFields,
    },
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientAuth {
    #[default]
    Basic,
    Form,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormFields {
    pub client_id: String,
    pub client_secret: String,
}

fn default_form_fields() -> FormFields {
    FormFields {
        client_id: "client_id".into(),
        client_secret: "client_secret".into(),
    }
}

fn default_token_path() -> String {
    "/access_token".into()
}

fn default_expires_path() -> String {
    "/expires_in".into()
}

/// A read operation returning a list of records.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperationSpec {
    #[serde(default = "default_method")]
    pub method: String,
    /// Path appended to the instance's `base_url`.
    pub path: String,
    /// Fixed query parameters (templates allowed).
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Where the records are in the answer; `""` when the answer is the array.
    pub records: String,
    /// Mapping (built-in name or file) for the records.
    pub mapping: String,
    #[serde(default)]
    pub pagination: Pagination,
    /// The inventory's changes-since read, where the vendor offers one.
    #[serde(default)]
    pub delta: Option<DeltaSpec>,
}

/// A changes-since read of the inventory: the operation with these query
/// parameters added answers the units changed (removed ones flagged as the
/// mapping's `sold` rule says) since `{since}`, up to `{until}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeltaSpec {
    /// Added to the operation's query; `{since}` and `{until}` are RFC 3339
    /// UTC times with milliseconds (`2026-11-26T10:00:00.000Z`).
    pub query: BTreeMap<String, String>,
    /// A full read at least this often: it catches a removal no delta reported.
    #[serde(default = "default_full_every", with = "humantime_serde")]
    pub full_every: std::time::Duration,
}

fn default_full_every() -> std::time::Duration {
    std::time::Duration::from_secs(24 * 60 * 60)
}

fn default_method() -> String {
    "GET".into()
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Pagination {
    #[default]
    None,
    /// `limit` / `offset` parameters; stops at `total` or a short page.
    LimitOffset {
        limit_param: String,
        offset_param: String,
        page_size: u32,
        total: Option<String>,
        #[serde(default = "default_max_pages")]
        max_pages: u32,
    },
    /// `page` / `pageSize` parameters; stops at `total_pages` or a short page.
    PageNumber {
        page_param: String,
        size_param: String,
        page_size: u32,
        #[serde(default = "default_first_page")]
        first_page: u32,
        total_pages: Option<String>,
        #[serde(default = "default_max_pages")]
        max_pages: u32,
    },
    /// An opaque next-page key read from each answer (Tekion `meta.nextFetchKey`).
    Cursor {
        cursor_param: String,
        next: String,
        size_param: Option<String>,
        page_size: Option<u32>,
        #[serde(default = "default_max_pages")]
        max_pages: u32,
    },
}

fn default_max_pages() -> u32 {
    100
}

fn default_first_page() -> u32 {
    1
}

/// How the vendor reports errors in bodies.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorSpec {
    /// Paths to a vendor error code in an error (or in-band error) body.
    #[serde(default)]
    pub code: Vec<String>,
    /// Known vendor codes and what they mean.
    #[serde(default)]
    pub codes: BTreeMap<String, ErrorClass>,
    /// An error reported inside an HTTP 200 answer (`success: false`, `meta.status: failure`).
    pub in_band: Option<InBandSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InBandSpec {
    pub path: String,
    /// The answer is an error when the value at `path` equals this…
    pub equals: Option<Value>,
    /// …or differs from this.
    pub not_equals: Option<Value>,
}

pub use crate::adapters::ErrorClass;

impl Profile {
    pub fn from_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| crate::config::locate::described(text, &e))
    }
}
