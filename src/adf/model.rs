//! The ADF 1.0 document model (Auto-lead Data Format), shared by the strict
//! generator (`write.rs`) and the lenient parser (`read.rs`). It carries what
//! dealer CRMs read from a lead; everything optional in ADF is optional here.

use chrono::{DateTime, FixedOffset};

/// One `<prospect>`: a lead as a CRM receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdfLead {
    pub status: ProspectStatus,
    /// Prospect-level `<id source=…>`s; `(source, value)` is the CRM's dedupe key.
    pub ids: Vec<AdfId>,
    pub request_date: RequestDate,
    /// Vehicle of interest, trade-in… in any order; select by `interest`, never by position.
    pub vehicles: Vec<AdfVehicle>,
    pub customer: AdfCustomer,
    pub vendor: AdfVendor,
    pub provider: Option<AdfProvider>,
    /// Elements the parser did not recognise, as `(path, text)`; the generator ignores them.
    pub extras: Vec<(String, String)>,
}

/// `prospect@status`: `resend` marks a retry of a lead already sent with the same `<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProspectStatus {
    #[default]
    New,
    Resend,
}

/// `<id sequence="1" source="dms-bridge">L-…</id>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdfId {
    pub source: Option<String>,
    pub value: String,
}

/// `<requestdate>`: the text as sent, and the instant when it could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestDate {
    pub raw: String,
    pub parsed: Option<DateTime<FixedOffset>>,
}

impl RequestDate {
    /// The form the generator writes: `2026-05-01T14:03:00-05:00`.
    pub fn new(at: DateTime<FixedOffset>) -> Self {
        Self {
            raw: at.format("%Y-%m-%dT%H:%M:%S%:z").to_string(),
            parsed: Some(at),
        }
    }
}

/// `vehicle@interest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Interest {
    #[default]
    Buy,
    Lease,
    Sell,
    TradeIn,
    TestDrive,
    /// A value outside ADF 1.0, kept as sent (lower-cased).
    Other(String),
}

/// `vehicle@status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VehicleStatus {
    #[default]
    New,
    Used,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdfVehicle {
    pub interest: Interest,
    pub status: VehicleStatus,
    pub year: Option<u16>,
    pub make: Option<String>,
    pub model: Option<String>,
    pub vin: Option<String>,
    pub stock: Option<String>,
    pub trim: Option<String>,
    pub bodystyle: Option<String>,
    /// `A` or `M` when written by us; free text as received.
    pub transmission: Option<String>,
    pub odometer: Option<Odometer>,
    /// `excellent`, `good`, `fair`, `poor` (trade-ins).
    pub condition: Option<String>,
    pub price: Option<Price>,
    pub comments: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Odometer {
    pub value: u64,
    pub units: OdometerUnits,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OdometerUnits {
    #[default]
    Miles,
    Kilometres,
}

/// `<price type="quote" currency="USD">18995.00</price>`: decimal text in major units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Price {
    pub value: String,
    /// `quote`, `offer`, `msrp`, `invoice`, `call`, `appraisal`, `asking`.
    pub kind: Option<String>,
    pub currency: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdfCustomer {
    pub contact: AdfContact,
    /// Free text: the customer's message and anything ADF has no element for.
    pub comments: Option<String>,
}

/// `<contact>` as used by customer and vendor.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdfContact {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    /// `name part="full"`; the parser splits it on the last space when first/last are missing.
    pub full_name: Option<String>,
    pub email: Option<String>,
    pub email_preferred: bool,
    pub phones: Vec<AdfPhone>,
    pub address: Option<AdfAddress>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdfPhone {
    pub number: String,
    /// `phone@type`: `voice`, `cellphone`, … as sent.
    pub kind: Option<String>,
    pub preferred: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdfAddress {
    /// `<street line="1">`, `line="2"`…
    pub street: Vec<String>,
    pub city: Option<String>,
    pub regioncode: Option<String>,
    pub postalcode: Option<String>,
    /// ISO 3166 alpha-2.
    pub country: Option<String>,
}

/// The dealership receiving the lead (from the bridge's config, never from the caller).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdfVendor {
    pub id: Option<AdfId>,
    pub name: String,
    pub url: Option<String>,
    pub contact: AdfContact,
}

/// The lead's source: the AI agent that took it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdfProvider {
    pub name: String,
    pub service: Option<String>,
    pub url: Option<String>,
}
