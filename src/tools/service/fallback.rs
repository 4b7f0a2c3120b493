//! When the dealership's scheduler cannot book through the bridge, the
//! booking still reaches the service department: as a service-appointment
//! lead, submitted by the lead domain (the same commit-then-deliver path as
//! `leads.create`), answered `requested`. Without a lead route either, there
//! is nobody to hand it to: `capability.unsupported`.

use chrono::Utc;

use super::book_args::{BookArgs, BookResult, BookingStatus};
use super::vehicle::VehicleRef;
use crate::adapters::UpstreamAdapter;
use crate::contract::error::{ErrorCode, ToolError};
use crate::leads::appointment;
use crate::leads::lead::{
    AppointmentRequest, AppointmentStatus, AppointmentType, Customer, LEAD_SCHEMA, Lead,
};
use crate::leads::submit::Submission;
use crate::leads::{Decision, new_lead_id};
use crate::model::Domain;
use crate::tools::customer::consent_record;
use crate::tools::customer::text::clean_free_text;
use crate::tools::to_result;
use crate::tools::{Handled, ToolContext};

/// The lead's source when the consent grant names no agent.
const SOURCE: &str = "dms-bridge service.book_appointment";

/// Hands the booking to the dealership as a lead; `base` is the answer to fill in.
/// `args` is already cleaned, and holds only the contact points the consent covers.
pub async fn request_as_lead(
    ctx: ToolContext<'_>,
    args: &BookArgs,
    vehicle: &VehicleRef,
    codes: &[String],
    base: BookResult,
) -> Handled {
    let dealership = ctx.dealership()?;
    let Some(route) = dealership.routes.get(&Domain::Leads) else {
        return Err(ToolError::new(
            ErrorCode::CapabilityUnsupported,
            "This dealership's scheduler cannot book through the bridge, and the dealership takes no leads through it either.",
        )
        .with_hint("Give the customer the dealership's service phone number from dealership_get.").into());
    };
    let channel = route
        .adapter
        .lead_channel()
        .ok_or_else(ToolError::internal)?;
    crate::telemetry::client_log::tell(crate::telemetry::notices::booking_handed_over);
    let lead = booking_as_lead(args, vehicle, codes);
    let lead_id = new_lead_id();
    let appointment = appointment::of_lead(
        &lead,
        &lead_id,
        &dealership.profile.hours,
        dealership.timezone,
    );
    let decision = ctx
        .services
        .leads
        .submit(&Submission {
            lead_id: &lead_id,
            lead: &lead,
            dealership: &dealership.profile,
            timezone: dealership.timezone,
            principal: &ctx.principal.name,
            upstream: &route.upstream,
            channel,
            appointment: appointment.as_ref(),
            note: None,
            received_at: Utc::now(),
        })
        .await?;
    let (lead_id, status) = match decision {
        Decision::Duplicate { of } => (of, "duplicate"),
        Decision::Merged { .. } => (lead_id, "merged"),
        Decision::Received => (lead_id, "received"),
    };
    let label = crate::telemetry::metrics::LeadLabels { status };
    ctx.services.metrics.leads.get_or_create(&label).inc();
    let name = &dealership.profile.name;
    let proposed = appointment
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
        lead_id: Some(lead_id),
        proposed_times: proposed.unwrap_or_default(),
        message,
        ..base
    })
}

/// The booking as the lead the service department gets.
fn booking_as_lead(args: &BookArgs, vehicle: &VehicleRef, codes: &[String]) -> Lead {
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
    Lead {
        schema_version: LEAD_SCHEMA,
        customer: Customer {
            first_name: c.first_name.clone(),
            last_name: c.last_name.clone(),
            email: c.email.clone(),
            phone: c.phone.clone(),
            preferred_contact: None,
            address: None,
        },
        // Verbatim: the lead keeps what the customer agreed to, scope and all.
        consent: args.consent.as_ref().map(consent_record),
        vehicle_of_interest: None,
        trade_in: None,
        appointment: Some(AppointmentRequest {
            appointment_type: AppointmentType::Service,
            appointment_at: Some(args.start.clone()),
            duration_minutes: None,
            // Vehicle details may come from the inventory: cleaned like any free text.
            notes: Some(clean_free_text(&notes)).filter(|n| !n.is_empty()),
        }),
        message: args.comment.clone(),
        source_agent: args
            .consent
            .as_ref()
            .and_then(|g| g.source_agent.as_deref())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .unwrap_or(SOURCE)
            .to_owned(),
        submitted_at: None,
    }
}
