//! The recovery a taken slot comes with: the next open slots from that day on,
//! and a ready `service.book_appointment` call for the first: the caller's own
//! arguments (customer, consent and comment included) with the new start, so
//! calling it as given books. The message and details never carry customer
//! data; the suggested call carries only what this caller sent.

use chrono::{DateTime, Duration, FixedOffset, NaiveDate};
use serde_json::{Value, json};

use super::book_args::BookArgs;
use super::slots::{lookahead, next_starts};
use super::vehicle::VehicleRef;
use crate::adapters::Adapter;
use crate::contract::error::{ErrorCode, ToolError};
use crate::tools::ToolContext;

/// Alternatives offered with `service.slot_unavailable`.
const RECOVERY_SLOTS: usize = 5;
/// The longest `idempotency_key` the tool takes.
const KEY_MAX: usize = 128;

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
    let Some(first) = slots.first() else {
        // AAP's case: the time is impossible and there is no alternative to offer.
        return error
            .with_details(json!({ "aap_code": "APPOINTMENT_TIME_UNAVAILABLE" }))
            .with_next_tool_call(
                "service_check_availability",
                look_further(args, codes, to),
                "No open slots in the following week: look further ahead.",
            );
    };
    let mut error = error.with_next_tool_call(
        "service_book_appointment",
        book_instead(args, &first.start),
        "Offer the customer one of recovery.slots; the suggested call books the first with the same customer, consent and comment.",
    );
    if let Some(Value::Object(recovery)) = error.recovery.as_mut() {
        recovery.insert("slots".into(), json!(slots));
    }
    error
}

/// `service.check_availability` for the same vehicle and services, the two weeks after `to`.
fn look_further(args: &BookArgs, codes: &[String], to: NaiveDate) -> Value {
    let mut arguments = json!({
        "dealership_id": args.dealership_id,
        "service_codes": codes,
        "from": (to + Duration::days(1)).to_string(),
        "to": (to + Duration::days(14)).to_string(),
    });
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
    arguments
}

/// The same booking at `start`. A key of the caller's gets a sibling bound to
/// the new start: the old key with other arguments would be a conflict, and
/// no key at all would make the retry unsafe.
fn book_instead(args: &BookArgs, start: &str) -> Value {
    let mut booking = args.clone();
    booking.start = start.to_owned();
    booking.idempotency_key = args.idempotency_key.as_deref().map(|key| {
        let digits: String = start.chars().filter(char::is_ascii_digit).collect();
        let kept: String = key.chars().take(KEY_MAX - digits.len() - 1).collect();
        format!("{kept}~{digits}")
    });
    serde_json::to_value(&booking)
        .unwrap_or_else(|_| json!({ "dealership_id": args.dealership_id }))
}
