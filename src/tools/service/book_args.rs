//! Arguments and answer of `service.book_appointment`, and the checks made
//! before anything is sent. The customer block and consent grant follow
//! `leads.create` (AAP `Customer`, `ConsentGrant`) with a scope of their own.

use chrono::{DateTime, Duration, FixedOffset, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::vehicle::{ServiceCode, VehicleQuery, VehicleRef, check_vehicle};
use crate::tools::customer::consent::{check_channels, check_grant};
use crate::tools::customer::text::check_line;
use crate::tools::customer::{ConsentGrant, WithheldContactPoint, check_contact};
use crate::tools::leads::DealerContact;
use crate::tools::{Check, ToolArgs};

/// The consent scope of a service booking. AAP v1.x defines only
/// `lead_submission` (for `lead.submit`); a booking is a different use of the
/// customer's details, so it gets its own scope rather than borrowing that one.
pub const BOOKING_SCOPE: &str = "service_appointment";
/// How far ahead a booking may be made.
const MAX_AHEAD_DAYS: i64 = 366;

/// `service.book_appointment` arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BookArgs {
    pub dealership_id: String,
    /// From the dealership's service menu, e.g. `01LOF`.
    #[schemars(length(min = 1, max = 10))]
    pub service_codes: Vec<ServiceCode>,
    /// Or give `vehicle_id`, or year, make and model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    /// From inventory_search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub vehicle_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1900, max = 2100))]
    pub year: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub model: Option<String>,
    /// RFC 3339 with offset, e.g. a slot's `start`.
    pub start: String,
    pub customer: BookingCustomer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<ConsentGrant>,
    /// A note for the service advisor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    pub comment: Option<String>,
    /// Makes retries safe: the same key and payload answer as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub idempotency_key: Option<String>,
    /// Check only; book nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BookingCustomer {
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
}

/// `service.book_appointment` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct BookResult {
    pub status: BookingStatus,
    /// The scheduler's id (for `service.cancel_appointment`); absent unless booked or waitlisted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment_id: Option<String>,
    /// RFC 3339 with the dealership's offset.
    pub start: String,
    pub end: String,
    /// With `proposed`: open start times to offer the customer instead, earliest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proposed_times: Vec<String>,
    /// With `requested`: the lead that carries the request to the dealership.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_id: Option<String>,
    /// The next step, in words an agent can relay; no customer data.
    pub message: String,
    /// Who the customer will hear from about the appointment.
    pub dealer: DealerContact,
    /// With `dry_run`: what would be booked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking: Option<BookingPreview>,
    /// Contact points given in `customer` that no channel in the consent grant
    /// uses: not sent to the scheduler (nor to the dealership as a lead). Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld_contact_points: Vec<WithheldContactPoint>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BookingStatus {
    /// The scheduler booked the slot.
    Booked,
    /// The scheduler put the customer on its waiting list for the slot.
    Waitlisted,
    /// The dealership's scheduler cannot book through the bridge: the request went to it as a lead.
    Requested,
    /// Outside the service department's opening hours: nothing was booked; offer `proposed_times`.
    Proposed,
}

impl BookingStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Booked => "booked",
            Self::Waitlisted => "waitlisted",
            Self::Requested => "requested",
            Self::Proposed => "proposed",
        }
    }
}

/// The booking a dry run would make (the customer is left out: the caller has it).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct BookingPreview {
    pub service_codes: Vec<String>,
    pub vehicle: VehicleRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

impl BookArgs {
    pub fn vehicle(&self) -> VehicleQuery<'_> {
        VehicleQuery {
            vin: self.vin.as_deref(),
            vehicle_id: self.vehicle_id.as_deref(),
            year: self.year,
            make: self.make.as_deref(),
            model: self.model.as_deref(),
        }
    }

    /// The start, once validated.
    pub fn start_time(&self) -> Option<DateTime<FixedOffset>> {
        DateTime::parse_from_rfc3339(self.start.trim()).ok()
    }
}

impl ToolArgs for BookArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref().filter(|_| !self.dry_run)
    }

    fn idempotency_conflict(&self) -> crate::contract::ToolError {
        idempotency_conflict()
    }

    fn validate(&self, check: &mut Check<'_>) {
        let now = Utc::now();
        check_vehicle(&self.vehicle(), check);
        match self.start_time() {
            None => check
                .problems
                .push("/start", "must be an RFC 3339 time with an offset"),
            Some(t) if t <= now => check.problems.push("/start", "is in the past"),
            Some(t) if t > now + Duration::days(MAX_AHEAD_DAYS) => {
                check.problems.push("/start", "is more than a year ahead")
            }
            Some(_) => {}
        }
        let c = &self.customer;
        check_contact(
            [&c.first_name, &c.last_name],
            c.email.as_deref(),
            c.phone.as_deref(),
            check,
        );
        // Sent to the scheduler, and into an ADF lead when it cannot book.
        for (at, value) in [
            ("/make", self.make.as_deref()),
            ("/model", self.model.as_deref()),
            (
                "/consent/source_agent",
                self.consent
                    .as_ref()
                    .and_then(|g| g.source_agent.as_deref()),
            ),
        ] {
            if let Some(value) = value {
                check_line(check, at, value);
            }
        }
        let consent = check_grant(self.consent.as_ref(), BOOKING_SCOPE, now)
            .and_then(|grant| check_channels(grant, c.email.is_some(), c.phone.is_some(), None));
        if let Err(e) = consent {
            check.reject(e);
        }
    }
}

fn idempotency_conflict() -> crate::contract::ToolError {
    crate::contract::ToolError::new(
        crate::contract::ErrorCode::ServiceIdempotencyConflict,
        "This idempotency_key was already used with a different booking; nothing was booked.",
    )
    .with_hint(
        "Use a new idempotency_key for a new booking, or resend the original arguments unchanged.",
    )
}
