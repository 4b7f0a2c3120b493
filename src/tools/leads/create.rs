//! `leads.create`: check, enrich, render ADF, commit, answer. The answer is
//! given only once the lead is committed; delivery follows from the outbox.

use chrono::Utc;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::args::{CreateArgs, PreferredContact, SaleCondition};
use super::present::{Viewer, delivery_for, metrics_status};
use super::view::{
    AppointmentOutcome, CreateResult, DealerContact, DeliveryState, DeliveryView, LeadStatus,
};
use crate::adapters::{Lookup, UnitRef, UpstreamAdapter};
use crate::contract::error::{ErrorCode, Problem, ToolError};
use crate::leads::appointment;
use crate::leads::lead::Lead;
use crate::leads::submit::Submission;
use crate::leads::{Decision, new_lead_id};
use crate::model::{Condition, Domain, vin};
use crate::tools::customer::consent::withhold;
use crate::tools::customer::text::{clean_line, clean_optional_free_text, clean_optional_line};
use crate::tools::customer::{Warning, WithheldContactPoint, clean_contact};
use crate::tools::to_result;
use crate::tools::{Dealership, Handled, ToolContext};

pub async fn create(ctx: ToolContext<'_>, mut args: CreateArgs) -> Handled {
    let dealership = ctx.dealership()?;
    let desk = &ctx.services.leads;
    let route = dealership
        .routes
        .get(&Domain::Leads)
        .ok_or_else(ToolError::internal)?;
    let channel = route
        .adapter
        .lead_channel()
        .ok_or_else(ToolError::internal)?;
    clean(&mut args);
    // From here on `args` is what the dealership gets and what is stored.
    let c = &mut args.customer;
    let withheld = withhold(args.consent.as_ref(), &mut c.email, &mut c.phone);
    let (note, warnings) = enrich_vehicle(&ctx, dealership, &mut args).await?;
    let lead_id = new_lead_id();
    // The lead the bridge keeps and sends, mapped from the arguments once.
    let record = Lead::from(&args);
    let appointment = appointment::of_lead(
        &record,
        &lead_id,
        &dealership.profile.hours,
        dealership.timezone,
    );
    let submission = Submission {
        lead_id: &lead_id,
        lead: &record,
        dealership: &dealership.profile,
        timezone: dealership.timezone,
        principal: &ctx.principal.name,
        upstream: &route.upstream,
        channel,
        appointment: appointment.as_ref(),
        note: note.as_deref(),
        received_at: Utc::now(),
    };
    let base = Answer {
        dealership,
        channel,
        args: &args,
        appointment: appointment.clone(),
        withheld,
        warnings,
    };
    if args.dry_run {
        let document = desk.render(&submission);
        return to_result(&base.dry_run(lead_id.clone(), document));
    }
    let decision = desk.submit(&submission).await?;
    let mut result = base.answer(&decision, &lead_id);
    let label = match decision {
        Decision::Merged { .. } => crate::telemetry::metrics::LeadLabels { status: "merged" },
        _ => metrics_status(result.status, false),
    };
    ctx.services.metrics.leads.get_or_create(&label).inc();
    // The answer names a lead this call just submitted to: no owner check needed.
    if let Ok(Some(current)) = desk
        .get(&dealership.profile.id, &result.lead_id, None)
        .await
    {
        result.delivery = delivery_for(&current, Viewer::Submitter, dealership.timezone);
    }
    to_result(&result)
}

/// A replayed answer with where the lead's delivery stands now (and counted
/// as a replay in `dms_bridge_leads_total`).
pub fn refresh_replay(ctx: ToolContext<'_>, mut answer: Value) -> BoxFuture<'_, Value> {
    Box::pin(async move {
        ctx.services
            .metrics
            .leads
            .get_or_create(&metrics_status(LeadStatus::Received, true))
            .inc();
        let (Ok(dealership), Some(lead_id)) = (ctx.dealership(), answer["lead_id"].as_str()) else {
            return answer;
        };
        // The key's owner made this lead: no owner check needed.
        let current = ctx
            .services
            .leads
            .get(&dealership.profile.id, lead_id, None)
            .await;
        if let Ok(Some(current)) = current
            && let Ok(delivery) = serde_json::to_value(delivery_for(
                &current,
                Viewer::Submitter,
                dealership.timezone,
            ))
        {
            answer["delivery"] = delivery;
        }
        answer
    })
}

/// Builds the answer for each outcome.
struct Answer<'a> {
    dealership: &'a Dealership,
    channel: &'static str,
    args: &'a CreateArgs,
    appointment: Option<AppointmentOutcome>,
    withheld: Vec<WithheldContactPoint>,
    warnings: Vec<Warning>,
}

impl Answer<'_> {
    fn result(&self, lead_id: String, status: LeadStatus, state: DeliveryState) -> CreateResult {
        CreateResult {
            lead_id,
            status,
            message: self.message(status),
            appointment: self.appointment.clone(),
            delivery: DeliveryView {
                state,
                channel: self.channel.to_owned(),
                attempts: 0,
                last_attempt_at: None,
                next_attempt_at: None,
                delivered_at: None,
                last_error: None,
                receipt: None,
            },
            dealer: DealerContact::of(self.dealership),
            withheld_contact_points: self.withheld.clone(),
            warnings: self.warnings.clone(),
            replayed: false,
            dry_run: false,
            adf_document: None,
        }
    }

    fn dry_run(&self, lead_id: String, document: String) -> CreateResult {
        CreateResult {
            dry_run: true,
            adf_document: Some(document),
            message: "Dry run: the lead is valid; nothing was stored or sent.".into(),
            ..self.result(lead_id, LeadStatus::Received, DeliveryState::NotSent)
        }
    }

    /// The answer for what the store decided.
    fn answer(&self, decision: &Decision, lead_id: &str) -> CreateResult {
        match decision {
            Decision::Duplicate { of } => {
                self.result(of.clone(), LeadStatus::Duplicate, DeliveryState::Pending)
            }
            // Another agent's lead carries it: this agent's answer is that of
            // a lead of its own, and tells nothing of the other one.
            Decision::Merged { .. } | Decision::Received => self.result(
                lead_id.to_owned(),
                LeadStatus::Received,
                DeliveryState::Pending,
            ),
        }
    }

    /// The next step, in words an agent can relay (no customer data in it).
    fn message(&self, status: LeadStatus) -> String {
        let name = &self.dealership.profile.name;
        if status == LeadStatus::Duplicate {
            return format!(
                "{name} already has this request from the last day; it was not sent again. They will follow up on the first one."
            );
        }
        let channel = match self.args.customer.preferred_contact {
            Some(PreferredContact::Email) => "by email",
            Some(PreferredContact::Phone) => "by phone",
            Some(PreferredContact::Sms) => "by text message",
            Some(PreferredContact::Any) | None => "through a channel the customer allowed",
        };
        let mut message = format!(
            "{name} has the request and will follow up {channel}, usually within one business day."
        );
        if let Some(a) = &self.appointment {
            message.push_str(match a.status {
                super::view::AppointmentStatus::Proposed => " The requested time is outside opening hours: offer the customer one of the proposed times.",
                _ => " The appointment is requested, not booked, until the dealership confirms it.",
            });
        }
        message
    }
}

/// How long a lead waits for the inventory to fill in vehicle details.
const ENRICH_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// A note for CRM staff (in the ADF comments) and warnings for the agent.
type Enriched = (Option<String>, Vec<Warning>);

/// Fills in what the dealership lists for the vehicle the customer named, so
/// the CRM gets year/make/model, and finds out whether it is still for sale.
/// Lead capture must not depend on inventory: if it cannot be read, the lead
/// goes in as given and the agent is told that availability is unknown.
async fn enrich_vehicle(
    _ctx: &ToolContext<'_>,
    dealership: &Dealership,
    args: &mut CreateArgs,
) -> Result<Enriched, ToolError> {
    let none = || Ok((None, Vec::new()));
    let Some(v) = args.vehicle_of_interest.as_mut() else {
        return none();
    };
    let Some(route) = dealership.routes.get(&Domain::Inventory) else {
        return none();
    };
    let vin_text = v.vin.as_deref().map(vin::normalize);
    let unit = match (&v.vehicle_id, &vin_text, &v.stock) {
        (Some(id), _, _) => UnitRef::Id(id),
        (None, Some(x), _) => UnitRef::Vin(x),
        (None, None, Some(s)) => UnitRef::Stock(s),
        (None, None, None) => return none(),
    };
    let unchecked = |code: ErrorCode| {
        Ok((
            None,
            vec![Warning {
                code: code.as_str().to_owned(),
                message: "The dealership's inventory could not be read, so whether the vehicle is still available is unknown; the lead went in as given.".into(),
            }],
        ))
    };
    let snapshot = match tokio::time::timeout(ENRICH_WITHIN, route.adapter.inventory()).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "Inventory unavailable; the lead goes in without vehicle details.");
            return unchecked(e.to_caller().code);
        }
        Err(_) => {
            tracing::warn!("Inventory too slow; the lead goes in without vehicle details.");
            return unchecked(ErrorCode::UpstreamTimeout);
        }
    };
    match snapshot.lookup(unit) {
        Lookup::Listed(found) => {
            v.vehicle_id.get_or_insert_with(|| found.id.clone());
            fill(&mut v.vin, &found.vin);
            fill(&mut v.stock, &found.stock);
            fill(&mut v.make, &found.make);
            fill(&mut v.model, &found.model);
            fill(&mut v.trim, &found.trim);
            fill(&mut v.body, &found.body);
            fill(&mut v.transmission, &found.transmission);
            if v.year.is_none() {
                v.year = found.year.and_then(|y| u16::try_from(y).ok());
            }
            if v.condition.is_none() {
                v.condition = Some(match found.condition {
                    Condition::New => SaleCondition::New,
                    Condition::Used => SaleCondition::Used,
                    Condition::Cpo => SaleCondition::Cpo,
                });
            }
            if v.mileage.is_none() {
                v.mileage = found.mileage.map(super::args::MileageArg::Reading);
            }
            none()
        }
        Lookup::Sold => Ok((
            Some(
                "Note from dms-bridge: the vehicle asked about is no longer listed as available."
                    .into(),
            ),
            vec![Warning {
                code: ErrorCode::InventoryVehicleUnavailable.as_str().to_owned(),
                message: "The vehicle of interest has been sold and is no longer available. The lead was still sent: the dealership can offer similar vehicles (inventory_search finds the ones for sale).".into(),
            }],
        )),
        Lookup::NotFound if matches!(unit, UnitRef::Id(_)) => {
            Err(ToolError::invalid_arguments(vec![Problem::new(
                "/vehicle_of_interest/vehicle_id",
                "this dealership lists no vehicle with this id",
            )]))
        }
        Lookup::NotFound => none(),
    }
}

/// The lead as it is stored and sent (`text`): single-line fields trimmed
/// (blank optional ones dropped), free text cleaned.
fn clean(args: &mut CreateArgs) {
    let c = &mut args.customer;
    clean_contact(&mut c.first_name, &mut c.last_name, &mut c.email);
    if let Some(a) = c.address.as_mut() {
        for line in [
            &mut a.address_line_1,
            &mut a.address_line_2,
            &mut a.city,
            &mut a.state,
            &mut a.zip,
        ] {
            clean_optional_line(line);
        }
    }
    if let Some(v) = args.vehicle_of_interest.as_mut() {
        for field in [
            &mut v.stock,
            &mut v.make,
            &mut v.model,
            &mut v.trim,
            &mut v.body,
            &mut v.transmission,
        ] {
            clean_optional_line(field);
        }
    }
    if let Some(t) = args.trade_in.as_mut() {
        for field in [&mut t.make, &mut t.model, &mut t.trim] {
            clean_optional_line(field);
        }
    }
    if let Some(a) = args.appointment.as_mut() {
        clean_optional_free_text(&mut a.notes);
    }
    clean_optional_free_text(&mut args.message);
    clean_line(&mut args.source_agent);
}

fn fill(slot: &mut Option<String>, value: &Option<String>) {
    if slot.is_none() {
        slot.clone_from(value);
    }
}

pub(super) fn idempotency_conflict() -> ToolError {
    ToolError::new(
        ErrorCode::LeadsIdempotencyConflict,
        "This idempotency_key was already used with a different lead; nothing was sent.",
    )
    .with_details(json!({}))
    .with_hint(
        "Use a new idempotency_key for a new lead, or resend the original payload unchanged.",
    )
}
