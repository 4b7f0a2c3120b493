//! When the dealership's scheduler cannot book through the bridge, the
//! booking still reaches the service department: as a service-appointment
//! lead through the lead desk (the same commit-then-deliver path as
//! `leads.create`), answered `requested`. Without a lead route either, there
//! is nobody to hand it to: `capability.unsupported`.

use super::book_args::{BookArgs, BookResult, BookingStatus};
use super::vehicle::VehicleRef;
use crate::contract::error::{ErrorCode, ToolError};
use crate::model::Domain;
use crate::tools::leads::{
    AppointmentRequest, AppointmentStatus, AppointmentType, CreateArgs, CreateResult, Customer,
};
use crate::tools::to_result;
use crate::tools::{Handled, ToolContext};

/// The lead's source when the consent grant names no agent.
const SOURCE: &str = "dms-bridge service.book_appointment";

/// Hands the booking to the dealership as a lead; `base` is the answer to fill in.
pub async fn request_as_lead(
    ctx: ToolContext<'_>,
    args: &BookArgs,
    vehicle: &VehicleRef,
    codes: &[String],
    base: BookResult,
) -> Handled {
    let dealership = ctx.dealership()?;
    if !dealership.routes.contains_key(&Domain::Leads) {
        return Err(ToolError::new(
            ErrorCode::CapabilityUnsupported,
            "This dealership's scheduler cannot book through the bridge, and the dealership takes no leads through it either.",
        )
        .with_hint("Give the customer the dealership's service phone number from dealership_get.").into());
    }
    crate::telemetry::client_log::tell(crate::telemetry::notices::booking_handed_over);
    let lead = lead_args(args, vehicle, codes);
    let created = crate::tools::leads::create(ctx, lead).await?;
    let created: CreateResult = serde_json::from_str(created.text()).map_err(|e| {
        tracing::error!(error = %e, "A lead answer could not be read back.");
        ToolError::internal()
    })?;
    let name = &dealership.profile.name;
    let proposed = created
        .appointment
        .filter(|a| a.status == AppointmentStatus::Proposed)
        .map(|a| a.proposed_times);
    let (status, message) = match proposed {
        Some(_) => (
            BookingStatus::Proposed,
            format!(
                "{name}'s scheduler cannot book through the bridge and the time is outside service hours: the request went to the dealership; offer the customer one of the proposed times."
            ),
        ),
        None => (
            BookingStatus::Requested,
            format!(
                "{name}'s scheduler cannot book through the bridge: the service department has the request and will confirm a time with the customer."
            ),
        ),
    };
    to_result(&BookResult {
        status,
        lead_id: Some(created.lead_id),
        proposed_times: proposed.unwrap_or_default(),
        message,
        replayed: created.replayed,
        ..base
    })
}

fn lead_args(args: &BookArgs, vehicle: &VehicleRef, codes: &[String]) -> CreateArgs {
    let c = &args.customer;
    let mut notes = format!("Service appointment: {}.", codes.join(", "));
    let described = [
        vehicle.year.map(|y| y.to_string()),
        vehicle.make.clone(),
        vehicle.model.clone(),
        vehicle.vin.as_ref().map(|v| format!("VIN {v}")),
    ];
    let described: Vec<String> = described.into_iter().flatten().collect();
    if !described.is_empty() {
        notes.push_str(&format!(" Vehicle: {}.", described.join(" ")));
    }
    CreateArgs {
        dealership_id: args.dealership_id.clone(),
        message_type: None,
        customer: Customer {
            first_name: c.first_name.clone(),
            last_name: c.last_name.clone(),
            email: c.email.clone(),
            phone: c.phone.clone(),
            preferred_contact: None,
            address: None,
        },
        // Verbatim: the lead keeps what the customer agreed to, scope and all.
        consent: args.consent.clone(),
        vehicle_of_interest: None,
        trade_in: None,
        appointment: Some(AppointmentRequest {
            appointment_type: AppointmentType::Service,
            appointment_at: Some(args.start.clone()),
            duration_minutes: None,
            notes: Some(notes),
        }),
        message: args.comment.clone(),
        source_agent: args
            .consent
            .as_ref()
            .and_then(|g| g.source_agent.clone())
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| SOURCE.to_owned()),
        submitted_at: None,
        // The booking's key is the pipeline's, taken for service.book_appointment.
        idempotency_key: None,
        dry_run: false,
    }
}
