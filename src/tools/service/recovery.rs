//! The recovery a taken slot comes with: the next open slots from that day on,
//! and a ready `service.book_appointment` call for the first. Customer details
//! are left for the caller to add: errors never carry them.

use chrono::{DateTime, Duration, FixedOffset};
use serde_json::{Value, json};

use super::book_args::BookArgs;
use super::slots::{lookahead, next_starts};
use super::vehicle::VehicleRef;
use crate::adapters::Adapter;
use crate::contract::error::{ErrorCode, ToolError};
use crate::tools::ToolContext;

/// Alternatives offered with `service.slot_unavailable`.
const RECOVERY_SLOTS: usize = 5;

/// Why a start cannot be booked: the scheduler refused it while booking.
pub(super) const TAKEN: &str = "That time was taken before it could be booked; nothing was booked.";
/// Why a start cannot be booked: it is not among the open slots (dry runs check).
pub(super) const NOT_OPEN: &str =
    "That time is not an open slot in the dealership's scheduler; nothing was booked.";

/// `service.slot_unavailable`, with the next open slots and a call that books the first.
pub(super) async fn slot_taken(
    ctx: &ToolContext<'_>,
    adapter: &Adapter,
    args: &BookArgs,
    vehicle: &VehicleRef,
    codes: &[String],
    start: DateTime<FixedOffset>,
    why: &'static str,
) -> ToolError {
    let tz = ctx.dealership.map_or(chrono_tz::UTC, |d| d.timezone);
    let (from, to) = lookahead(start, tz);
    let slots = next_starts(
        ctx,
        adapter,
        &vehicle.request(codes, from, to),
        start,
        RECOVERY_SLOTS,
    )
    .await;
    let error = ToolError::new(ErrorCode::ServiceSlotUnavailable, why);
    // Only what names the slot and the vehicle: customer details stay out of errors.
    let mut arguments = json!({ "dealership_id": args.dealership_id, "service_codes": codes });
    let v = args.vehicle();
    for (name, value) in [
        ("vin", v.vin.map(Value::from)),
        ("vehicle_id", v.vehicle_id.map(Value::from)),
        ("year", v.year.map(Value::from)),
        ("make", v.make.map(Value::from)),
        ("model", v.model.map(Value::from)),
    ] {
        if let Some(value) = value {
            arguments[name] = value;
        }
    }
    let Some(first) = slots.first() else {
        arguments["from"] = json!((to + Duration::days(1)).to_string());
        arguments["to"] = json!((to + Duration::days(14)).to_string());
        return error.with_next_tool_call(
            "service_check_availability",
            arguments,
            "No open slots in the following week: look further ahead.",
        );
    };
    arguments["start"] = json!(first.start);
    let mut error = error.with_next_tool_call(
        "service_book_appointment",
        arguments,
        "Offer the customer one of recovery.slots; book it with the same customer, consent and comment.",
    );
    if let Some(Value::Object(recovery)) = error.recovery.as_mut() {
        recovery.insert("slots".into(), json!(slots));
    }
    error
}
