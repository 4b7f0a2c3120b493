//! A lead as the bridge keeps it: the domain record stored with each lead and
//! read back by `leads.get`, the ADF mapping and the duplicate check. It is
//! mapped from `leads.create`'s arguments once, and is not those arguments:
//! the stored form carries a schema version and reads leniently, so a change
//! to the tool's contract never makes a stored lead unreadable.
//!
//! Schema 1 is the stored form before versioning (the `leads.create`
//! arguments as accepted): the same field names, without `schema_version`
//! and with wire-only fields (`dealership_id`, `dry_run`…) that reading
//! ignores. Schema 2 adds `schema_version`. The value vocabularies below are
//! shared with the tool's arguments: their names are the contract.

use chrono::{DateTime, FixedOffset, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::Mileage;

/// The schema version a lead is stored with now.
pub const LEAD_SCHEMA: u32 = 2;

/// A lead taken through the bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lead {
    /// Absent in schema 1 rows.
    #[serde(default = "schema_1")]
    pub schema_version: u32,
    pub customer: Customer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<ConsentGrant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vehicle_of_interest: Option<VehicleOfInterest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trade_in: Option<TradeIn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment: Option<AppointmentRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub source_agent: String,
    /// When the agent says the customer submitted it (RFC 3339, as given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitted_at: Option<String>,
}

fn schema_1() -> u32 {
    1
}

/// Unknown versions are refused rather than misread.
#[derive(Debug, thiserror::Error)]
pub enum LeadReadError {
    #[error("stored lead is not readable JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("stored lead has schema version {0}, newer than this bridge reads")]
    Newer(u32),
}

impl Lead {
    /// The stored form (JSON, schema [`LEAD_SCHEMA`]).
    pub fn to_stored(&self) -> Result<String, serde_json::Error> {
        let mut lead = self.clone();
        lead.schema_version = LEAD_SCHEMA;
        serde_json::to_string(&lead)
    }

    /// Reads a stored lead of any schema up to [`LEAD_SCHEMA`].
    pub fn from_stored(text: &str) -> Result<Self, LeadReadError> {
        let lead: Self = serde_json::from_str(text)?;
        if lead.schema_version > LEAD_SCHEMA {
            return Err(LeadReadError::Newer(lead.schema_version));
        }
        Ok(lead)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Customer {
    pub first_name: String,
    pub last_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_contact: Option<PreferredContact>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<PostalAddress>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PostalAddress {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line_1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line_2: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zip: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
}

/// What the customer agreed to, as the agent recorded it (the audit trail).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsentGrant {
    pub granted_at: String,
    pub allowed_channels: Vec<String>,
    pub consent_text: String,
    pub scope: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_agent: Option<String>,
}

impl ConsentGrant {
    /// Whether the customer allowed calls or texts (the CRM's phone consent flag).
    pub fn phone_and_sms_allowed(&self) -> bool {
        let allowed = |c: &str| self.allowed_channels.iter().any(|a| a == c);
        allowed("phone") && allowed("sms")
    }
}

/// A vehicle the customer asked about.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VehicleOfInterest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vehicle_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stock: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<SaleCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transmission: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mileage: Option<MileageArg>,
}

/// The customer's trade-in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TradeIn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mileage: Option<MileageArg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<WearCondition>,
}

/// The appointment the customer asked for (requested, never booked by a lead).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppointmentRequest {
    pub appointment_type: AppointmentType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_minutes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PreferredContact {
    Email,
    Phone,
    /// Text messages to `phone`.
    Sms,
    Any,
}

/// Sale condition of a vehicle of interest.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SaleCondition {
    New,
    Used,
    /// Certified pre-owned.
    Cpo,
}

/// Condition of a trade-in (ADF `<condition>`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WearCondition {
    Excellent,
    Good,
    Fair,
    Poor,
}

/// Whole miles, or a value with its unit.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum MileageArg {
    Miles(#[schemars(range(max = 2_000_000))] u32),
    Reading(Mileage),
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AppointmentType {
    Sales,
    Service,
    /// Needs `vehicle_of_interest`.
    TestDrive,
    /// A trade-in appraisal; needs `trade_in`.
    TradeIn,
}

impl AppointmentType {
    /// The dealership department whose opening hours apply.
    pub fn department(self) -> &'static str {
        match self {
            Self::Service => "service",
            Self::Sales | Self::TestDrive | Self::TradeIn => "sales",
        }
    }
}

impl SaleCondition {
    pub fn as_str(self) -> &'static str {
        match self {
            SaleCondition::New => "new",
            SaleCondition::Used => "used",
            SaleCondition::Cpo => "cpo",
        }
    }
}

impl WearCondition {
    pub fn as_str(self) -> &'static str {
        match self {
            WearCondition::Excellent => "excellent",
            WearCondition::Good => "good",
            WearCondition::Fair => "fair",
            WearCondition::Poor => "poor",
        }
    }
}

/// The appointment part of a lead. Only `confirmed` is a booking.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct AppointmentOutcome {
    pub appointment_id: String,
    pub appointment_type: AppointmentType,
    pub status: AppointmentStatus,
    /// The requested start, in the dealership's time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<String>,
    /// Present iff `confirmed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_at: Option<String>,
    /// Present iff `proposed`: start times within opening hours the customer can pick from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proposed_times: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppointmentStatus {
    /// Passed to the dealership; staff confirm it with the customer.
    Requested,
    /// The requested time cannot be honoured (outside opening hours); see `proposed_times`.
    Proposed,
    Confirmed,
    Rejected,
}

/// An RFC 3339 instant; a time without an offset is refused (AAP requires one).
pub fn parse_instant(s: &str) -> Option<DateTime<Utc>> {
    DateTime::<FixedOffset>::parse_from_rfc3339(s.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
