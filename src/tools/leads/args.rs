//! Arguments of `leads.create`. Field names follow AAP v1.0 `lead.submit`, so an
//! AAP payload maps over with only `dealership_id` added. The consent block is
//! loosely typed on purpose: a malformed grant is `leads.invalid_consent`
//! (AAP INVALID_CONSENT), not a schema error.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::leads::lead::{
    AppointmentType, MileageArg, PreferredContact, SaleCondition, WearCondition,
};

/// `leads.create` arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    pub dealership_id: String,
    /// AAP message type, accepted so AAP `lead.submit.request` payloads pass unchanged.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub message_type: Option<LeadSubmitType>,
    pub customer: Customer,
    /// The customer's consent to be contacted; required whenever customer data is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<ConsentGrant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vehicle_of_interest: Option<VehicleOfInterest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trade_in: Option<TradeIn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment: Option<AppointmentRequest>,
    /// The customer's message to the dealership.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4000))]
    pub message: Option<String>,
    /// The AI agent that took the lead (e.g. `chatgpt-shopping`); becomes the ADF provider.
    #[schemars(length(min = 1, max = 200))]
    pub source_agent: String,
    /// When the agent finalised the submission (RFC 3339 with offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitted_at: Option<String>,
    /// Client key that makes retries safe: the same key and payload return the original answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub idempotency_key: Option<String>,
    /// Validate and render the ADF document, but store and send nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub enum LeadSubmitType {
    #[serde(rename = "lead.submit.request")]
    LeadSubmitRequest,
}

/// The customer (AAP `Customer`): names plus an e-mail and/or an E.164 phone.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    #[schemars(length(min = 1, max = 100))]
    pub first_name: String,
    #[schemars(length(min = 1, max = 100))]
    pub last_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 3, max = 254))]
    pub email: Option<String>,
    /// E.164, e.g. `+15125550123`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^\+[1-9]\d{1,14}$"))]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_contact: Option<PreferredContact>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<CustomerAddress>,
}

/// Postal address (AAP v1.0 `Address`); `country` defaults to `US`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomerAddress {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub address_line_1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub address_line_2: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub city: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 50))]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 20))]
    pub zip: Option<String>,
    /// ISO 3166 alpha-2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))]
    pub country: Option<String>,
}

/// The consent grant (AAP `ConsentGrant`), kept verbatim as an audit record with the lead or booking.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsentGrant {
    /// When the customer agreed (RFC 3339 with offset; not in the future).
    pub granted_at: String,
    /// Channels the customer allowed: `email`, `phone`, `sms`.
    pub allowed_channels: Vec<String>,
    /// The verbatim text the customer agreed to; must not be empty.
    #[schemars(length(max = 8000))]
    pub consent_text: String,
    /// Must be exactly the tool's scope: `["lead_submission"]` for `leads.create`,
    /// `["service_appointment"]` for `service.book_appointment`.
    pub scope: Vec<String>,
    /// When the grant lapses (RFC 3339 with offset); an expired grant is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The agent that captured the consent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub source_agent: Option<String>,
}

/// The vehicle the customer wants, by id, VIN, stock number or year/make/model.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VehicleOfInterest {
    /// An id from `inventory.search`; the bridge fills in what the dealership lists for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub vehicle_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub stock: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1900, max = 2100))]
    pub year: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub trim: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<SaleCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub transmission: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mileage: Option<MileageArg>,
}

/// The customer's trade-in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TradeIn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1900, max = 2100))]
    pub year: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub trim: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mileage: Option<MileageArg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<WearCondition>,
}

/// An appointment requested with the lead (AAP `Appointment`). Only `confirmed` is a booking.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppointmentRequest {
    pub appointment_type: AppointmentType,
    /// Requested start (RFC 3339 with offset). Without it the dealership follows up to schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 15, max = 480))]
    pub duration_minutes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2000))]
    pub notes: Option<String>,
}
