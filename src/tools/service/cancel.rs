//! `service.cancel_appointment`: cancels a booking in the dealership's
//! scheduler. Cancelling twice is harmless; an id the scheduler does not know
//! is `service.appointment_not_found`.

use chrono::Utc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::book::store_error;
use crate::adapters::{AdapterError, CancelRequest, UpstreamAdapter};
use crate::gateway::Payload;
use crate::gateway::error::{ErrorCode, ToolError};
use crate::gateway::{ToolArgs, ToolContext};
use crate::model::Domain;
use crate::store::bookings;
use crate::tools::to_result;

/// `service.cancel_appointment` arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelArgs {
    pub dealership_id: String,
    /// The `appointment_id` from `service.book_appointment`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub appointment_id: String,
    /// Why the customer cancels, for the service department.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CancelResult {
    pub appointment_id: String,
    pub status: CancelStatus,
    pub message: String,
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

pub async fn cancel_appointment(
    ctx: ToolContext<'_>,
    args: CancelArgs,
) -> Result<Payload, ToolError> {
    let dealership = ctx.dealership()?;
    let adapter = ctx.adapter(Domain::Service)?;
    let request = CancelRequest {
        appointment_id: &args.appointment_id,
        reason: args.reason.as_deref(),
    };
    match adapter.cancel_appointment(&request).await {
        Ok(()) => {}
        Err(AdapterError::NotFound) => {
            return Err(ToolError::new(
                ErrorCode::ServiceAppointmentNotFound,
                "The dealership's scheduler has no appointment with that id; nothing was cancelled.",
            )
            .with_hint("Check the appointment_id that service.book_appointment answered."));
        }
        Err(e) => return Err(ctx.upstream_error()(e)),
    }
    // The freed slot is open again: cached availability no longer says so.
    ctx.gateway
        .invalidate(&dealership.profile.id, Domain::Service);
    if let Some(store) = ctx.gateway.store() {
        bookings::mark_cancelled(
            store,
            &dealership.profile.id,
            &args.appointment_id,
            Utc::now(),
        )
        .await
        .map_err(store_error)
        .ok();
    }
    to_result(&CancelResult {
        message: format!(
            "{} has cancelled the appointment; the slot is free again.",
            dealership.profile.name
        ),
        appointment_id: args.appointment_id,
        status: CancelStatus::Cancelled,
    })
}
