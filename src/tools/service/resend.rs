//! Bookings and cancellations the bridge sent without recording the
//! scheduler's answer (it stopped, or the answer never came): each is sent
//! again, as first sent, once the call that sent it has surely ended, and
//! recorded with its event. A booking goes under the same reference, which
//! a scheduler that takes one books once; cancelling twice is harmless.

use std::time::Duration;

use chrono::Utc;

use crate::adapters::{AdapterError, BookedStatus, CancelRequest, UpstreamAdapter};
use crate::model::Domain;
use crate::model::service::BookingToSend;
use crate::store::bookings;
use crate::tools::Services;

/// One look at what is waiting: `lease` is how long a send is its call's
/// alone (twice the call deadline).
pub async fn pass(services: &Services, lease: Duration) {
    let now = Utc::now();
    let store = &services.store;
    match bookings::claim_unsettled(store, now, lease).await {
        Ok(due) => {
            for (booking_id, dealership, request) in due {
                resend_booking(services, &booking_id, &dealership, &request).await;
            }
        }
        Err(e) => tracing::warn!(error = %e, "Cannot read the bookings to send again."),
    }
    let sent_before = now - chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::MAX);
    match bookings::claim_unrecorded_cancels(store, now, sent_before).await {
        Ok(due) => {
            for (dealership, appointment_id) in due {
                resend_cancel(services, &dealership, &appointment_id).await;
            }
        }
        Err(e) => tracing::warn!(error = %e, "Cannot read the cancellations to send again."),
    }
}

fn scheduler<'a>(services: &'a Services, dealership: &str) -> Option<&'a crate::adapters::Adapter> {
    let route = services
        .dealership(dealership)?
        .routes
        .get(&Domain::Service)?;
    Some(&route.adapter)
}

async fn resend_booking(services: &Services, booking_id: &str, dealership: &str, request: &str) {
    let store = &services.store;
    let (Some(adapter), Ok(to_send)) = (
        scheduler(services, dealership),
        serde_json::from_str::<BookingToSend>(request),
    ) else {
        tracing::error!(
            dealership,
            booking_id,
            "A booking to send again names no scheduler or cannot be read; it is dropped."
        );
        let _ = bookings::forget(store, booking_id).await;
        return;
    };
    match adapter.book_appointment(&to_send.request()).await {
        Ok(booking) => {
            let status = match booking.status {
                BookedStatus::Booked => "booked",
                BookedStatus::Waitlisted => "waitlisted",
            };
            let appointment = booking.appointment_id.as_deref();
            match bookings::settle(store, booking_id, status, appointment, Utc::now()).await {
                Ok(_) => {
                    tracing::info!(dealership, booking_id, "A booking sent again is recorded.")
                }
                Err(e) => {
                    tracing::warn!(error = %e, dealership, booking_id, "A booking sent again could not be recorded yet.")
                }
            }
        }
        Err(AdapterError::SlotUnavailable | AdapterError::Unsupported) => {
            tracing::warn!(
                dealership,
                booking_id,
                "A booking sent again was refused by the scheduler; the dealership should follow up with the customer."
            );
            let _ = bookings::forget(store, booking_id).await;
        }
        Err(e) => {
            tracing::info!(error = %e, dealership, booking_id, "A booking sent again got no answer; it goes again later.");
        }
    }
}

async fn resend_cancel(services: &Services, dealership: &str, appointment_id: &str) {
    let Some(adapter) = scheduler(services, dealership) else {
        return;
    };
    let request = CancelRequest {
        appointment_id,
        reason: None,
    };
    match adapter.cancel_appointment(&request).await {
        // Not found: cancelled already (the first send did it, or staff).
        Ok(()) | Err(AdapterError::NotFound) => {
            if let Err(e) =
                bookings::mark_cancelled(&services.store, dealership, appointment_id, Utc::now())
                    .await
            {
                tracing::warn!(error = %e, dealership, "A cancellation sent again could not be recorded yet.");
            }
        }
        Err(e) => {
            tracing::info!(error = %e, dealership, "A cancellation sent again got no answer; it goes again later.");
        }
    }
}
