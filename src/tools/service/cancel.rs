//! `service.cancel_appointment`: cancels a booking in the dealership's
//! scheduler. An agent may cancel only the appointments it booked through the
//! bridge; dealership staff (`amcp:service:staff`) may cancel any. "Unknown",
//! "someone else's" and "not booked through the bridge" answer the same
//! `service.appointment_not_found`, so ids cannot be probed. Cancelling twice
//! is harmless.

use chrono::Utc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::adapters::{AdapterError, CancelRequest, UpstreamAdapter};
use crate::contract::Owner;
use crate::contract::error::{ErrorCode, ToolError};
use crate::model::Domain;
use crate::store::bookings;
use crate::tools::leads::DealerContact;
use crate::tools::{Handled, ToolArgs, ToolContext, to_result};

/// `service.cancel_appointment` arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelArgs {
    pub dealership_id: String,
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub appointment_id: String,
    /// For the service department.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub reason: Option<String>,
    /// Check only; cancel nothing.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CancelResult {
    pub appointment_id: String,
    /// With `dry_run`, the status a real call would answer.
    pub status: CancelStatus,
    pub message: String,
    /// Who the customer will hear from about the appointment.
    pub dealer: DealerContact,
    /// True when nothing was cancelled because the call was a dry run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CancelStatus {
    Cancelled,
}

impl ToolArgs for CancelArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }
}

pub async fn cancel_appointment(ctx: ToolContext<'_>, args: CancelArgs) -> Handled {
    let dealership = ctx.dealership()?;
    let adapter = ctx.adapter(Domain::Service)?;
    let dealership_id = &dealership.profile.id;
    if let Owner::Only(principal) = ctx.owner() {
        let store = &ctx.services.store;
        let mine = bookings::booked_by(store, dealership_id, &args.appointment_id, Some(principal))
            .await?;
        if !mine {
            return Err(not_found().into());
        }
    }
    if args.dry_run {
        // Staff may cancel appointments the bridge did not book, but a dry
        // run can vouch only for one it did: it does not ask the scheduler.
        let known = bookings::booked_by(
            &ctx.services.store,
            dealership_id,
            &args.appointment_id,
            None,
        )
        .await?;
        if !known {
            return Err(ToolError::new(
                ErrorCode::ServiceAppointmentNotFound,
                "The bridge booked no appointment with that id, so a dry run cannot tell whether it may be cancelled; nothing was cancelled.",
            )
            .with_hint("A real call asks the scheduler, which may hold appointments the bridge did not book.")
            .into());
        }
        return to_result(&CancelResult {
            message: "Dry run: you may cancel this appointment; nothing was cancelled.".into(),
            dealer: DealerContact::of_department(dealership, "service"),
            appointment_id: args.appointment_id,
            status: CancelStatus::Cancelled,
            dry_run: true,
        });
    }
    let request = CancelRequest {
        appointment_id: &args.appointment_id,
        reason: args.reason.as_deref(),
    };
    // Noted before it is sent: should the bridge stop between the scheduler's
    // answer and its record, it sends the cancellation again (cancelling
    // twice is harmless) and records it with its event.
    let store = &ctx.services.store;
    bookings::begin_cancel(store, dealership_id, &args.appointment_id, Utc::now()).await?;
    match adapter.cancel_appointment(&request).await {
        Ok(()) => {}
        Err(AdapterError::NotFound) => {
            bookings::cancel_refused(store, dealership_id, &args.appointment_id).await?;
            return Err(not_found().into());
        }
        Err(e) => return Err(e.into()),
    }
    if let Err(e) = bookings::mark_cancelled(
        &ctx.services.store,
        dealership_id,
        &args.appointment_id,
        Utc::now(),
    )
    .await
    {
        // The scheduler has cancelled: failing the call now would misreport it.
        tracing::error!(error = %e, dealership = %dealership_id, "A cancellation was made but could not be recorded.");
    }
    to_result(&CancelResult {
        message: format!(
            "{} has cancelled the appointment; the slot is free again.",
            dealership.profile.name
        ),
        dealer: DealerContact::of_department(dealership, "service"),
        appointment_id: args.appointment_id,
        status: CancelStatus::Cancelled,
        dry_run: false,
    })
}

/// One answer for an unknown id, another principal's booking and one not made
/// through the bridge.
fn not_found() -> ToolError {
    ToolError::new(
        ErrorCode::ServiceAppointmentNotFound,
        "There is no appointment with that id that you booked through the bridge; nothing was cancelled.",
    )
    .with_hint("Check the appointment_id that service_book_appointment answered you.")
}
