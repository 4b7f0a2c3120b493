//! Arguments of `leads.create`. Field names follow AAP v1.0 `lead.submit`, so an
//! AAP payload maps over with only `dealership_id` added. The consent block is
//! loosely typed on purpose: a malformed grant is `leads.invalid_consent`
//! (AAP INVALID_CONSENT), not a schema error.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::tools::customer::ConsentGrant;

pub use crate::leads::lead::{
    AppointmentType, MileageArg, PreferredContact, SaleCondition, WearCondition,
};

/// `leads.create` arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    pub dealership_id: String,
    /// AAP message type, accepted so AAP payloads pass unchanged; not shown to models.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-model-hidden" = true))]
    pub message_type: Option<LeadSubmitType>,
    pub customer: Customer,
    /// Required with customer data.
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
    /// Your agent's name, e.g. `chatgpt-shopping`.
    #[schemars(length(min = 1, max = 200))]
    pub source_agent: String,
    /// When the agent finalised the submission (RFC 3339); AAP's, not shown to models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-model-hidden" = true))]
    pub submitted_at: Option<String>,
    /// Makes retries safe: the same key and payload answer as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub idempotency_key: Option<String>,
    /// Return the ADF; send nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub enum LeadSubmitType {
    #[serde(rename = "lead.submit.request")]
    LeadSubmitRequest,
}

/// Names plus an email and/or a phone.
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

/// `country` defaults to `US`.
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

/// By vehicle_id, vin, stock or year, make and model.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VehicleOfInterest {
    /// From inventory_search; the rest is filled in.
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

/// An appointment to request with the lead; not a booking.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppointmentRequest {
    pub appointment_type: AppointmentType,
    /// RFC 3339; without it the dealership calls to schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 15, max = 480))]
    pub duration_minutes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2000))]
    pub notes: Option<String>,
}
