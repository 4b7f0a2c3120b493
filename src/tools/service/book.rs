//! `service.book_appointment`: check, then book through the dealership's
//! scheduler. A start outside the service department's hours is never sent:
//! the answer proposes open slots instead. A taken slot comes back as
//! `service.slot_unavailable` with the next open slots to offer. A scheduler
//! that cannot book hands the request over as a lead (`fallback.rs`).

use chrono::{DateTime, Duration, FixedOffset, Utc};

use super::book_args::{BookArgs, BookResult, BookingPreview, BookingStatus};
use super::fallback::request_as_lead;
use super::recovery::{NOT_OPEN, TAKEN, slot_taken};
use super::slots::{free_slots, local, lookahead, next_starts};
use super::vehicle::{check_codes, resolve_vehicle};
use crate::adapters::{AdapterError, BookedStatus, UpstreamAdapter};
use crate::contract::error::ToolError;
use crate::leads::appointment::within_hours;
use crate::model::Domain;
use crate::model::service::BookingToSend;
use crate::store::bookings::{self, Begun, NewBooking};
use crate::store::sealing::Identity;
use crate::tools::customer::consent::withhold;
use crate::tools::customer::consent_record;
use crate::tools::customer::text::clean_optional_free_text;
use crate::tools::customer::{WithheldContactPoint, clean_contact};
use crate::tools::leads::DealerContact;
use crate::tools::to_result;
use crate::tools::{Dealership, Handled, ToolContext};

/// Appointments whose length the scheduler does not say last this long.
const SLOT_MINUTES: i64 = 30;
/// Alternatives offered with `proposed`.
const PROPOSALS: usize = 3;

pub async fn book_appointment(ctx: ToolContext<'_>, mut args: BookArgs) -> Handled {
    let dealership = ctx.dealership()?;
    let adapter = ctx.adapter(Domain::Service)?;
    let start = args.start_time().ok_or_else(ToolError::internal)?;
    // From here on `args` is what the scheduler (or the lead) gets.
    clean_optional_free_text(&mut args.comment);
    let c = &mut args.customer;
    clean_contact(&mut c.first_name, &mut c.last_name, &mut c.email);
    let withheld = withhold(args.consent.as_ref(), &mut c.email, &mut c.phone);
    let vehicle = resolve_vehicle(&ctx, &args.vehicle()).await?;
    let codes: Vec<String> = args.service_codes.iter().map(|c| c.0.clone()).collect();
    check_codes(&ctx, &codes).await?;
    let answer = Answer {
        dealership,
        start,
        end: start + Duration::minutes(SLOT_MINUTES),
        withheld,
    };
    let hours = &dealership.profile.hours;
    let length = answer.end - answer.start;
    let open = within_hours(
        hours,
        "service",
        start.to_utc(),
        length,
        dealership.timezone,
    );
    if open == Some(false) {
        let (from, to) = lookahead(start, dealership.timezone);
        let request = vehicle.request(&codes, from, to);
        let slots = next_starts(&ctx, adapter, &request, start, PROPOSALS).await;
        return to_result(&answer.proposed(slots.into_iter().map(|s| s.start).collect()));
    }
    if args.dry_run {
        // A dry run answers what a real call would: a taken slot is refused.
        let day = start.with_timezone(&dealership.timezone).date_naive();
        let open = free_slots(&ctx, adapter, &vehicle.request(&codes, day, day)).await?;
        if !open.iter().any(|s| s.start == start) {
            return Err(
                slot_taken(&ctx, adapter, &args, &vehicle, &codes, start, NOT_OPEN)
                    .await
                    .into(),
            );
        }
        return to_result(&answer.dry_run(BookingPreview {
            service_codes: codes,
            vehicle,
            comment: args.comment.clone(),
        }));
    }
    let to_send = booking_to_send(&args, &vehicle, &codes, start, answer.end);
    let consent = args.consent.as_ref().map(consent_record);
    let consent = serde_json::to_string(&consent).map_err(|_| ToolError::internal())?;
    let request = serde_json::to_string(&to_send).map_err(|_| ToolError::internal())?;
    let store = &ctx.services.store;
    // Recorded before it is sent: a crash after the scheduler's answer leaves
    // a booking the bridge (or a retry with the key) sends again under the
    // same reference, which the scheduler books once.
    let now = Utc::now();
    let resend_after = now + resend_lease(&ctx);
    let begun = bookings::begin(
        store,
        &NewBooking {
            booking_id: &to_send.reference,
            dealership: &dealership.profile.id,
            principal: &ctx.principal.name,
            idempotency_key: args.idempotency_key.as_deref(),
            now,
            send_after: resend_after,
            consent: &consent,
            request: &request,
            identity: Identity {
                email: args.customer.email.clone(),
                phone: args.customer.phone.clone(),
                fingerprint: None,
            },
        },
    )
    .await?;
    let to_send = match begun {
        Begun::New => to_send,
        Begun::Unsettled { request, .. } => {
            serde_json::from_str::<BookingToSend>(&request).map_err(|_| ToolError::internal())?
        }
        Begun::Settled {
            status,
            appointment_id,
            ..
        } => {
            let status = match status.as_str() {
                "waitlisted" => BookingStatus::Waitlisted,
                _ => BookingStatus::Booked,
            };
            return to_result(&answer.booked(status, appointment_id));
        }
    };
    let booking = match adapter.book_appointment(&to_send.request()).await {
        Ok(booking) => booking,
        Err(AdapterError::SlotUnavailable) => {
            bookings::forget(store, &to_send.reference).await?;
            return Err(
                slot_taken(&ctx, adapter, &args, &vehicle, &codes, start, TAKEN)
                    .await
                    .into(),
            );
        }
        Err(AdapterError::Unsupported) => {
            bookings::forget(store, &to_send.reference).await?;
            let base = answer.base(BookingStatus::Requested, String::new());
            return request_as_lead(ctx, &args, &vehicle, &codes, base).await;
        }
        Err(e) => {
            // No answer (a timeout, an outage): it may be booked. The bridge
            // sends it again later under the same reference.
            bookings::send_later(store, &to_send.reference, resend_after).await?;
            return Err(e.into());
        }
    };
    let status = match booking.status {
        BookedStatus::Booked => BookingStatus::Booked,
        BookedStatus::Waitlisted => BookingStatus::Waitlisted,
    };
    let result = answer.booked(status, booking.appointment_id);
    let settled = bookings::settle(
        store,
        &to_send.reference,
        status.as_str(),
        result.appointment_id.as_deref(),
        Utc::now(),
    )
    .await;
    if let Err(e) = settled {
        // The scheduler holds the booking: failing the call now would invite a
        // second one. The bridge records it when it sends it again (the
        // scheduler books a reference once).
        tracing::error!(error = %e, dealership = %dealership.profile.id, "A booking was made but could not be recorded yet.");
    }
    to_result(&result)
}

/// How long a sending booking is the sending call's alone: past it, the
/// call has surely ended, and the bridge (or a retry) may send it again.
pub fn resend_lease(ctx: &ToolContext<'_>) -> chrono::Duration {
    chrono::Duration::from_std(ctx.services.limits.call_timeout * 2)
        .unwrap_or(chrono::Duration::minutes(1))
}

/// The booking as it is kept until settled, under a new reference.
fn booking_to_send(
    args: &BookArgs,
    vehicle: &super::vehicle::VehicleRef,
    codes: &[String],
    start: DateTime<FixedOffset>,
    end: DateTime<FixedOffset>,
) -> BookingToSend {
    let c = &args.customer;
    BookingToSend {
        schema_version: BookingToSend::SCHEMA_VERSION,
        reference: format!("bk_{}", uuid::Uuid::now_v7().simple()),
        service_codes: codes.to_vec(),
        start,
        end,
        vin: vehicle.vin.clone(),
        year: vehicle.year,
        make: vehicle.make.clone(),
        model: vehicle.model.clone(),
        first_name: c.first_name.trim().to_owned(),
        last_name: c.last_name.trim().to_owned(),
        email: c.email.as_deref().map(|e| e.trim().to_owned()),
        phone: c.phone.clone(),
        comment: args.comment.clone(),
    }
}

/// Builds the answer for each outcome.
struct Answer<'a> {
    dealership: &'a Dealership,
    start: DateTime<FixedOffset>,
    end: DateTime<FixedOffset>,
    withheld: Vec<WithheldContactPoint>,
}

impl Answer<'_> {
    fn base(&self, status: BookingStatus, message: String) -> BookResult {
        let tz = self.dealership.timezone;
        BookResult {
            status,
            appointment_id: None,
            start: local(self.start, tz),
            end: local(self.end, tz),
            proposed_times: Vec::new(),
            lead_id: None,
            message,
            dealer: DealerContact::of_department(self.dealership, "service"),
            booking: None,
            withheld_contact_points: self.withheld.clone(),
            replayed: false,
            dry_run: false,
        }
    }

    fn booked(&self, status: BookingStatus, appointment_id: Option<String>) -> BookResult {
        let name = &self.dealership.profile.name;
        let start = local(self.start, self.dealership.timezone);
        let message = match status {
            BookingStatus::Waitlisted => format!(
                "{name} put the customer on the waiting list for {start}; the service department confirms later."
            ),
            _ => format!("{name} has the appointment booked for {start}."),
        };
        BookResult {
            appointment_id,
            ..self.base(status, message)
        }
    }

    fn proposed(&self, proposed_times: Vec<String>) -> BookResult {
        let name = &self.dealership.profile.name;
        let message = if proposed_times.is_empty() {
            format!(
                "The time is outside {name}'s service hours and nothing was booked; find an open time with service_check_availability."
            )
        } else {
            format!(
                "The time is outside {name}'s service hours and nothing was booked: offer the customer one of the proposed times."
            )
        };
        BookResult {
            proposed_times,
            ..self.base(BookingStatus::Proposed, message)
        }
    }

    fn dry_run(&self, booking: BookingPreview) -> BookResult {
        let message = "Dry run: the booking is valid; nothing was booked or stored.".to_owned();
        BookResult {
            booking: Some(booking),
            dry_run: true,
            ..self.base(BookingStatus::Booked, message)
        }
    }
}
