//! Every log message the bridge sends a caller, in one place: the codes are
//! a contract (TOOLSET.md "Logging") and the sentences are fixed, so none
//! can carry upstream text or customer data. Fields are what the caller
//! already has: its dealership_id, times, counts, public error codes.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};

use super::client_log::{Level, Notice};

/// An inventory answer came from the mirror's copy, which the bridge could
/// not refresh for longer than the operator allows.
pub fn stale_copy(dealership_id: &str, last_synced_at: DateTime<Utc>) -> Notice {
    Notice::new(
        Level::Warning,
        "inventory.stale_copy",
        "This answer comes from the bridge's copy of the dealership's inventory, which could not be refreshed since last_synced_at; availability and prices may have changed. Confirm with the dealership before promising a vehicle.",
    )
    .with("dealership_id", dealership_id)
    .with(
        "last_synced_at",
        last_synced_at.to_rfc3339_opts(SecondsFormat::Secs, true),
    )
}

/// An upstream request failed in a way worth another try, and is tried again.
/// `reason` is the public error code the failure would have been.
pub fn upstream_retry(attempt: u32, delay: Duration, reason: &'static str) -> Notice {
    Notice::new(
        Level::Info,
        "upstream.retry",
        "The dealership's system did not answer as expected; the bridge is asking again.",
    )
    .with("attempt", attempt)
    .with("retry_in_ms", millis(delay))
    .with("reason", reason)
}

/// The vendor's quota makes this request wait its turn.
pub fn quota_wait(wait: Duration) -> Notice {
    Notice::new(
        Level::Info,
        "upstream.quota_wait",
        "The dealership's system allows only so many requests at a time; the bridge is waiting its turn.",
    )
    .with("wait_ms", millis(wait))
}

/// The answer was served from the bridge's read cache.
pub fn cache_hit(age: Duration) -> Notice {
    Notice::new(
        Level::Debug,
        "cache.hit",
        "Answered from the bridge's read cache.",
    )
    .with("age_ms", millis(age))
}

/// The scheduler could not book through the bridge: the booking went to
/// the dealership as a service-appointment lead instead.
pub fn booking_handed_over() -> Notice {
    Notice::new(
        Level::Notice,
        "service.booking_handed_over",
        "The dealership's scheduler cannot book through the bridge; the request went to the service department as a lead, and the dealership will confirm a time with the customer.",
    )
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
