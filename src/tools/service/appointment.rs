//! `service.get_appointment`: an appointment booked through the bridge, as
//! the bridge recorded it (events and subscriptions name
//! `dms://dealerships/{id}/appointments/{id}`; this is what reads it). An
//! agent reads only the appointments it booked; dealership staff
//! (`amcp:service:staff`) any booked through the bridge. "Unknown" and
//! "someone else's" answer the same `service.appointment_not_found`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::contract::error::{ErrorCode, ToolError};
use crate::store::bookings;
use crate::tools::leads::DealerContact;
use crate::tools::{Handled, ToolArgs, ToolContext, local_instant, to_result};

/// `service.get_appointment` arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAppointmentArgs {
    pub dealership_id: String,
    /// From service_book_appointment.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub appointment_id: String,
}

impl ToolArgs for GetAppointmentArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }
}

/// An appointment as the bridge recorded it (the scheduler holds the rest).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AppointmentView {
    pub appointment_id: String,
    pub dealership_id: String,
    pub status: AppointmentState,
    /// When the bridge booked it (RFC 3339, the dealership's offset).
    pub booked_at: String,
    /// When it was cancelled through the bridge, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_at: Option<String>,
    /// Who the customer will hear from about the appointment.
    pub dealer: DealerContact,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AppointmentState {
    /// The scheduler booked the slot.
    Booked,
    /// The scheduler put the customer on its waiting list for the slot.
    Waitlisted,
    /// Cancelled through the bridge.
    Cancelled,
}

pub async fn get_appointment(ctx: ToolContext<'_>, args: GetAppointmentArgs) -> Handled {
    let owner = ctx.owner();
    let found = bookings::find(
        &ctx.services.store,
        &args.dealership_id,
        &args.appointment_id,
        owner.principal(),
    )
    .await?;
    let Some(booking) = found else {
        return Err(ToolError::new(
            ErrorCode::ServiceAppointmentNotFound,
            "There is no appointment with that id that you booked through the bridge.",
        )
        .with_hint("Use the appointment_id that service_book_appointment answered you.")
        .into());
    };
    let status = match (&booking.cancelled_at, booking.status.as_str()) {
        (Some(_), _) => AppointmentState::Cancelled,
        (None, "waitlisted") => AppointmentState::Waitlisted,
        (None, _) => AppointmentState::Booked,
    };
    let dealership = ctx.dealership()?;
    let local = |t: &str| local_instant(t, dealership.timezone);
    to_result(&AppointmentView {
        appointment_id: args.appointment_id,
        dealership_id: args.dealership_id,
        status,
        booked_at: local(&booking.created_at),
        cancelled_at: booking.cancelled_at.as_deref().map(local),
        dealer: DealerContact::of_department(dealership, "service"),
    })
}
