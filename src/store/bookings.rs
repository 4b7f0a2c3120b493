//! SQL for service bookings: who booked which appointment (ownership for
//! cancellations) and the consent audit trail.

use chrono::{DateTime, Utc};

use super::{Store, StoreError, events};
use crate::model::event::{EventType, NewEvent};

/// A booking the scheduler accepted, ready to be recorded.
pub struct NewBooking<'a> {
    pub booking_id: &'a str,
    pub dealership: &'a str,
    pub principal: &'a str,
    pub now: DateTime<Utc>,
    pub status: &'a str,
    pub appointment_id: Option<&'a str>,
    /// The consent grant as recorded (JSON of the domain `ConsentGrant`).
    pub consent: &'a str,
}

/// Fixed-width UTC text, so times compare as strings.
fn ts(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// Records an accepted booking and its `appointment.booked` event, atomically.
pub async fn record(store: &Store, b: &NewBooking<'_>) -> Result<(), StoreError> {
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    sqlx::query(
        "INSERT INTO service_bookings (booking_id, dealership, principal, created_at,
             status, appointment_id, consent)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(b.booking_id)
    .bind(b.dealership)
    .bind(b.principal)
    .bind(ts(b.now))
    .bind(b.status)
    .bind(b.appointment_id)
    .bind(b.consent)
    .execute(&mut **tx)
    .await?;
    let id = b.appointment_id.unwrap_or(b.booking_id);
    let event = NewEvent::appointment(
        EventType::AppointmentBooked,
        id,
        b.principal,
        b.status,
        b.now,
    );
    events::append_in(tx, b.dealership, &[event], b.now).await?;
    write.tx.commit().await?;
    store.events_appended().notify_waiters();
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
         WHERE dealership = $1 AND appointment_id = $2 AND ($3 IS NULL OR principal = $3)
         LIMIT 1",
    )
    .bind(dealership)
    .bind(appointment_id)
    .bind(principal)
    .fetch_optional(store.pool())
    .await?;
    Ok(row.is_some())
}

/// Marks the bridge's record of `appointment_id` cancelled (if it booked it),
/// with its `appointment.cancelled` event, atomically.
pub async fn mark_cancelled(
    store: &Store,
    dealership: &str,
    appointment_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    let owners: Vec<String> = sqlx::query_scalar(
        "UPDATE service_bookings SET cancelled_at = $1
         WHERE dealership = $2 AND appointment_id = $3 AND cancelled_at IS NULL
         RETURNING principal",
    )
    .bind(ts(now))
    .bind(dealership)
    .bind(appointment_id)
    .fetch_all(&mut **tx)
    .await?;
    if let Some(owner) = owners.first() {
        let event = NewEvent::appointment(
            EventType::AppointmentCancelled,
            appointment_id,
            owner,
            "cancelled",
            now,
        );
        events::append_in(tx, dealership, &[event], now).await?;
    }
    write.tx.commit().await?;
    store.events_appended().notify_waiters();
    Ok(())
}
