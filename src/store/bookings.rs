//! SQL for service bookings: who booked which appointment (ownership for
//! cancellations) and the consent audit trail.

use chrono::{DateTime, Utc};

use super::sealing::Identity;
use super::{Store, StoreError, events};
use crate::model::event::{EventType, NewEvent};

/// A booking about to be sent to the scheduler, recorded first.
pub struct NewBooking<'a> {
    pub booking_id: &'a str,
    pub dealership: &'a str,
    pub principal: &'a str,
    pub idempotency_key: Option<&'a str>,
    pub now: DateTime<Utc>,
    /// Until then only the call sending it may send it.
    pub send_after: DateTime<Utc>,
    /// The consent grant as recorded (JSON of the domain `ConsentGrant`).
    pub consent: &'a str,
    /// The booking to send (JSON of `BookingToSend`).
    pub request: &'a str,
    /// The customer's contact points, kept sealed and as keyed hashes, so
    /// that an erasure finds the booking.
    pub identity: Identity,
}

/// Fixed-width UTC text, so times compare as strings.
fn ts(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// What the store holds for a booking's idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begun {
    /// Recorded now, as `sending`: send it.
    New,
    /// A call with this key recorded it before and died before its answer was
    /// recorded: send that booking again, under its own id.
    Unsettled { booking_id: String, request: String },
    /// Already settled (the key's answer is no longer kept): this is it.
    Settled {
        booking_id: String,
        status: String,
        appointment_id: Option<String>,
    },
}

/// A booking found by its idempotency key: id, state, status, appointment id, request.
type KeyedBooking = (String, String, String, Option<String>, Option<String>);

/// Records `b` as `sending` before it goes to the scheduler; or, when its
/// idempotency key has a booking already, that booking.
pub async fn begin(store: &Store, b: &NewBooking<'_>) -> Result<Begun, StoreError> {
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    if let Some(key) = b.idempotency_key {
        store
            .lock(
                tx,
                &format!("bookings/{}/{}/{key}", b.dealership, b.principal),
            )
            .await?;
        let earlier: Option<KeyedBooking> = sqlx::query_as(
            "SELECT booking_id, state, status, appointment_id, request FROM service_bookings
                 WHERE dealership = $1 AND principal = $2 AND idempotency_key = $3",
        )
        .bind(b.dealership)
        .bind(b.principal)
        .bind(key)
        .fetch_optional(&mut **tx)
        .await?;
        if let Some((booking_id, state, status, appointment_id, request)) = earlier {
            write.tx.commit().await?;
            let request = store
                .sealing()
                .open_opt("service_bookings.request", request)?;
            return Ok(match (state.as_str(), request) {
                ("sending", Some(request)) => Begun::Unsettled {
                    booking_id,
                    request,
                },
                _ => Begun::Settled {
                    booking_id,
                    status,
                    appointment_id,
                },
            });
        }
    }
    let seal = store.sealing();
    let (email, phone) = seal.contact_hashes(&b.identity);
    sqlx::query(
        "INSERT INTO service_bookings (booking_id, dealership, principal, created_at, status,
             consent, state, idempotency_key, request, send_after, identity, contact_email,
             contact_phone, sealed_with)
         VALUES ($1, $2, $3, $4, 'sending', $5, 'sending', $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(b.booking_id)
    .bind(b.dealership)
    .bind(b.principal)
    .bind(ts(b.now))
    .bind(seal.seal("service_bookings.consent", b.consent)?)
    .bind(b.idempotency_key)
    .bind(seal.seal("service_bookings.request", b.request)?)
    .bind(ts(b.send_after))
    .bind(seal.seal_identity("service_bookings.identity", &b.identity)?)
    .bind(email)
    .bind(phone)
    .bind(seal.sealed_with())
    .execute(&mut **tx)
    .await?;
    write.tx.commit().await?;
    Ok(Begun::New)
}

/// The scheduler's answer to a sending booking, recorded with its
/// `appointment.booked` event, atomically; the request (customer data) goes.
/// False when another send settled it first (then it has its event already).
pub async fn settle(
    store: &Store,
    booking_id: &str,
    status: &str,
    appointment_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let mut write = store.write().await?;
    let tx = &mut write.tx;
    let settled: Option<(String, String)> = sqlx::query_as(
        "UPDATE service_bookings
         SET state = 'settled', status = $1, appointment_id = $2, request = NULL, send_after = NULL
         WHERE booking_id = $3 AND state = 'sending'
         RETURNING dealership, principal",
    )
    .bind(status)
    .bind(appointment_id)
    .bind(booking_id)
    .fetch_optional(&mut **tx)
    .await?;
    let Some((dealership, principal)) = settled else {
        return Ok(false);
    };
    let id = appointment_id.unwrap_or(booking_id);
    let event = NewEvent::appointment(EventType::AppointmentBooked, id, &principal, status, now);
    events::append_in(tx, &dealership, &[event], now).await?;
    write.tx.commit().await?;
    store.announce_events(&dealership).await;
    Ok(true)
}

/// Forgets a sending booking the scheduler refused: nothing was booked.
pub async fn forget(store: &Store, booking_id: &str) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query("DELETE FROM service_bookings WHERE booking_id = $1 AND state = 'sending'")
        .bind(booking_id)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// A sending booking whose send ended without an answer: the bridge sends
/// it again after `after` (a retry of the call may do so sooner).
pub async fn send_later(
    store: &Store,
    booking_id: &str,
    after: DateTime<Utc>,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "UPDATE service_bookings SET send_after = $1 WHERE booking_id = $2 AND state = 'sending'",
    )
    .bind(ts(after))
    .bind(booking_id)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Sending bookings whose time to be sent again has come, claimed until
/// `now + lease` (by this process, among replicas): (booking id, dealership,
/// request).
pub async fn claim_unsettled(
    store: &Store,
    now: DateTime<Utc>,
    lease: std::time::Duration,
) -> Result<Vec<(String, String, String)>, StoreError> {
    let until = now + chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::MAX);
    let _turn = store.write_turn().await;
    let claimed: Vec<(String, String, String)> = sqlx::query_as(
        "UPDATE service_bookings SET send_after = $1
         WHERE state = 'sending' AND request IS NOT NULL AND send_after <= $2
         RETURNING booking_id, dealership, request",
    )
    .bind(ts(until))
    .bind(ts(now))
    .fetch_all(store.pool())
    .await?;
    claimed
        .into_iter()
        .map(|(id, dealership, request)| {
            let request = store.sealing().open("service_bookings.request", &request)?;
            Ok((id, dealership, request))
        })
        .collect()
}

/// Notes that the cancellation of `appointment_id` is being sent, before it
/// reaches the scheduler; false when the bridge holds no live booking of it.
pub async fn begin_cancel(
    store: &Store,
    dealership: &str,
    appointment_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let _turn = store.write_turn().await;
    let noted = sqlx::query(
        "UPDATE service_bookings SET cancel_sent_at = $1
         WHERE dealership = $2 AND appointment_id = $3 AND cancelled_at IS NULL",
    )
    .bind(ts(now))
    .bind(dealership)
    .bind(appointment_id)
    .execute(store.pool())
    .await?;
    Ok(noted.rows_affected() > 0)
}

/// A cancellation the scheduler refused (the appointment stands): no longer sending.
pub async fn cancel_refused(
    store: &Store,
    dealership: &str,
    appointment_id: &str,
) -> Result<(), StoreError> {
    let _turn = store.write_turn().await;
    sqlx::query(
        "UPDATE service_bookings SET cancel_sent_at = NULL
         WHERE dealership = $1 AND appointment_id = $2 AND cancelled_at IS NULL",
    )
    .bind(dealership)
    .bind(appointment_id)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Cancellations sent before `sent_before` whose answer was never recorded,
/// claimed (their time moved to `now`): (dealership, appointment id).
pub async fn claim_unrecorded_cancels(
    store: &Store,
    now: DateTime<Utc>,
    sent_before: DateTime<Utc>,
) -> Result<Vec<(String, String)>, StoreError> {
    let _turn = store.write_turn().await;
    let claimed = sqlx::query_as(
        "UPDATE service_bookings SET cancel_sent_at = $1
         WHERE cancelled_at IS NULL AND cancel_sent_at IS NOT NULL AND cancel_sent_at <= $2
         RETURNING dealership, appointment_id",
    )
    .bind(ts(now))
    .bind(ts(sent_before))
    .fetch_all(store.pool())
    .await?;
    Ok(claimed)
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

/// The bridge's record of one appointment it booked.
#[derive(Debug, Clone)]
pub struct StoredBooking {
    pub status: String,
    pub created_at: String,
    pub cancelled_at: Option<String>,
}

/// The booking of `appointment_id` at `dealership`, if `principal` made it
/// (`None`: whoever did).
pub async fn find(
    store: &Store,
    dealership: &str,
    appointment_id: &str,
    principal: Option<&str>,
) -> Result<Option<StoredBooking>, StoreError> {
    let row: Option<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT status, created_at, cancelled_at FROM service_bookings
         WHERE dealership = $1 AND appointment_id = $2 AND state = 'settled'
           AND ($3 IS NULL OR principal = $3)
         ORDER BY created_at LIMIT 1",
    )
    .bind(dealership)
    .bind(appointment_id)
    .bind(principal)
    .fetch_optional(store.pool())
    .await?;
    Ok(row.map(|(status, created_at, cancelled_at)| StoredBooking {
        status,
        created_at,
        cancelled_at,
    }))
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
        "UPDATE service_bookings SET cancelled_at = $1, cancel_sent_at = NULL
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
    store.announce_events(dealership).await;
    Ok(())
}
