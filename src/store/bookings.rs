//! SQL for service bookings: the idempotency record (a key bound to a payload
//! hash and the answer first given) and the consent audit trail.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{Store, StoreError};

/// A booking the scheduler accepted, ready to be recorded.
pub struct NewBooking<'a> {
    pub booking_id: &'a str,
    pub dealership: &'a str,
    pub principal: &'a str,
    pub now: DateTime<Utc>,
    pub idempotency_key: Option<&'a str>,
    pub payload_hash: &'a str,
    pub status: &'a str,
    pub appointment_id: Option<&'a str>,
    pub consent: &'a str,
    pub answer: &'a str,
}

/// What an idempotency key has been used for before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prior {
    /// Never, or no key was given.
    Unseen,
    /// With the same payload: the stored answer.
    Replay { answer: String },
    /// With a different payload.
    Conflict,
}

/// Fixed-width UTC text, so times compare as strings.
fn ts(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// How `key` was used before by this principal at this dealership.
pub async fn prior(
    store: &Store,
    dealership: &str,
    principal: &str,
    key: &str,
    payload_hash: &str,
) -> Result<Prior, StoreError> {
    let row = sqlx::query(
        "SELECT payload_hash, answer FROM service_bookings
         WHERE dealership = ? AND principal = ? AND idempotency_key = ?",
    )
    .bind(dealership)
    .bind(principal)
    .bind(key)
    .fetch_optional(store.pool())
    .await?;
    let Some(row) = row else {
        return Ok(Prior::Unseen);
    };
    let hash: String = row.try_get("payload_hash")?;
    Ok(if hash == payload_hash {
        Prior::Replay {
            answer: row.try_get("answer")?,
        }
    } else {
        Prior::Conflict
    })
}

/// Records an accepted booking.
pub async fn record(store: &Store, b: &NewBooking<'_>) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "INSERT INTO service_bookings (booking_id, dealership, principal, created_at, idempotency_key,
             payload_hash, status, appointment_id, consent, answer)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(b.booking_id)
    .bind(b.dealership)
    .bind(b.principal)
    .bind(ts(b.now))
    .bind(b.idempotency_key)
    .bind(b.payload_hash)
    .bind(b.status)
    .bind(b.appointment_id)
    .bind(b.consent)
    .bind(b.answer)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Whether the bridge booked `appointment_id` at `dealership` for `principal`
/// (`None`: for anyone). Ids the scheduler made outside the bridge are not
/// the bridge's to hand out, so they are never found here.
pub async fn booked_by(
    store: &Store,
    dealership: &str,
    appointment_id: &str,
    principal: Option<&str>,
) -> Result<bool, StoreError> {
    let row = sqlx::query(
        "SELECT 1 FROM service_bookings
         WHERE dealership = ?1 AND appointment_id = ?2 AND (?3 IS NULL OR principal = ?3)
         LIMIT 1",
    )
    .bind(dealership)
    .bind(appointment_id)
    .bind(principal)
    .fetch_optional(store.pool())
    .await?;
    Ok(row.is_some())
}

/// Marks the bridge's record of `appointment_id` cancelled (if it booked it).
pub async fn mark_cancelled(
    store: &Store,
    dealership: &str,
    appointment_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "UPDATE service_bookings SET cancelled_at = ?
         WHERE dealership = ? AND appointment_id = ? AND cancelled_at IS NULL",
    )
    .bind(ts(now))
    .bind(dealership)
    .bind(appointment_id)
    .execute(store.pool())
    .await?;
    Ok(())
}
