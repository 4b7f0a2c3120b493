//! A stored lead as `leads.get`/`leads.list` show it: customer data minimised
//! (initials, masked e-mail and phone), consent summarised.

use super::view::{
    AppointmentOutcome, ConsentSummary, CrmStatusView, CustomerSummary, DeliveryState,
    DeliveryView, LeadStatus, LeadView, VehicleSummary,
};
use crate::contract::error::ToolError;
use crate::leads::StoredLead;
use crate::leads::lead::{ConsentGrant, Lead, TradeIn, VehicleOfInterest};
use crate::model::crm::CrmStatus;
use crate::store::leads::StoredDelivery;
use crate::tools::local_instant;
use chrono_tz::Tz;

/// Who is looking at a lead: its submitter sees its own record only; the
/// dealership's staff see how leads were merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    Submitter,
    Staff,
}

pub fn lead_view(lead: &StoredLead, viewer: Viewer, tz: Tz) -> Result<LeadView, ToolError> {
    let request = Lead::from_stored(&lead.request).map_err(|e| {
        tracing::error!(error = %e, "A stored lead could not be read.");
        ToolError::internal()
    })?;
    let consent: Option<ConsentGrant> = serde_json::from_str(&lead.consent).ok();
    let appointment: Option<AppointmentOutcome> = match &lead.appointment {
        Some(a) => Some(parse(a)?),
        None => None,
    };
    let c = &request.customer;
    Ok(LeadView {
        lead_id: lead.lead_id.clone(),
        dealership_id: lead.dealership.clone(),
        status: LeadStatus::Received,
        created_at: local_instant(&lead.created_at, tz),
        source_agent: lead.source_agent.clone(),
        customer: CustomerSummary {
            name: format!("{}. {}.", initial(&c.first_name), initial(&c.last_name)),
            email: c.email.as_deref().map(mask_email),
            phone: c.phone.as_deref().map(mask_phone),
            preferred_contact: c.preferred_contact,
        },
        vehicle_of_interest: request.vehicle_of_interest.as_ref().map(vehicle_summary),
        trade_in: request.trade_in.as_ref().map(trade_summary),
        appointment,
        consent: consent.map_or_else(
            || ConsentSummary {
                granted_at: String::new(),
                allowed_channels: Vec::new(),
                expires_at: None,
            },
            |g| ConsentSummary {
                granted_at: g.granted_at,
                allowed_channels: g.allowed_channels,
                expires_at: g.expires_at,
            },
        ),
        delivery: delivery_for(lead, viewer, tz),
        submissions: u32::try_from(match viewer {
            Viewer::Submitter => lead.submissions,
            Viewer::Staff => lead.submissions + lead.merged,
        })
        .unwrap_or(u32::MAX),
        merged_into: (viewer == Viewer::Staff)
            .then(|| lead.merged_into.clone())
            .flatten(),
        // Like the CRM's receipt: another agent's merged lead learns nothing of it.
        crm_status: (lead.merged_into.is_none() || viewer == Viewer::Staff)
            .then(|| crm_status_view(lead, tz))
            .flatten(),
    })
}

fn crm_status_view(lead: &StoredLead, tz: Tz) -> Option<CrmStatusView> {
    let (status, since) = lead.crm_status.as_ref()?;
    Some(CrmStatusView {
        status: CrmStatus::parse(status)?,
        since: local_instant(since, tz),
    })
}

/// The lead's delivery as `viewer` may see it. A merged lead rides on another
/// lead's delivery, which its submitter must learn nothing of: they see its
/// state on their own lead's timeline (nothing before their submission, one
/// attempt at most, no CRM receipt), as any lead of theirs would show it.
pub fn delivery_for(lead: &StoredLead, viewer: Viewer, tz: Tz) -> DeliveryView {
    let full = delivery_view(&lead.delivery);
    let shown = if lead.merged_into.is_none() || viewer == Viewer::Staff {
        full
    } else {
        // The store's instants are UTC text of one form: they compare as text.
        let ours = |t: Option<String>| t.map(|t| t.max(lead.created_at.clone()));
        DeliveryView {
            attempts: u32::from(full.state != DeliveryState::Pending),
            last_attempt_at: ours(full.last_attempt_at),
            next_attempt_at: ours(full.next_attempt_at),
            delivered_at: ours(full.delivered_at),
            receipt: None,
            ..full
        }
    };
    in_zone(shown, tz)
}

/// The delivery's times in the dealership's offset, as every time the tools answer.
fn in_zone(delivery: DeliveryView, tz: Tz) -> DeliveryView {
    let at = |t: Option<String>| t.map(|t| local_instant(&t, tz));
    DeliveryView {
        last_attempt_at: at(delivery.last_attempt_at),
        next_attempt_at: at(delivery.next_attempt_at),
        delivered_at: at(delivery.delivered_at),
        ..delivery
    }
}

fn delivery_view(d: &StoredDelivery) -> DeliveryView {
    let state = DeliveryState::parse(&d.state).unwrap_or(DeliveryState::Pending);
    DeliveryView {
        state,
        channel: d.channel.clone(),
        attempts: u32::try_from(d.attempts).unwrap_or(0),
        last_attempt_at: d.last_attempt_at.clone(),
        next_attempt_at: (state == DeliveryState::Pending)
            .then(|| d.next_attempt_at.clone())
            .flatten(),
        delivered_at: d.delivered_at.clone(),
        last_error: d.last_error.clone(),
        receipt: d.receipt.clone(),
    }
}

fn vehicle_summary(v: &VehicleOfInterest) -> VehicleSummary {
    VehicleSummary {
        vehicle_id: v.vehicle_id.clone(),
        vin: v.vin.clone(),
        stock: v.stock.clone(),
        year: v.year,
        make: v.make.clone(),
        model: v.model.clone(),
        trim: v.trim.clone(),
        condition: v.condition.map(|c| c.as_str().to_owned()),
    }
}

fn trade_summary(t: &TradeIn) -> VehicleSummary {
    VehicleSummary {
        vin: t.vin.clone(),
        year: t.year,
        make: t.make.clone(),
        model: t.model.clone(),
        trim: t.trim.clone(),
        condition: t.condition.map(|c| c.as_str().to_owned()),
        ..VehicleSummary::default()
    }
}

fn initial(name: &str) -> String {
    name.trim()
        .chars()
        .next()
        .map(String::from)
        .unwrap_or_default()
}

/// `dana@mail.example.com` → `d***@m***.com`: enough to tell two customers
/// apart, not enough to write to them.
pub fn mask_email(email: &str) -> String {
    let Some((local, domain)) = email.trim().split_once('@') else {
        return "***".into();
    };
    match domain.rsplit_once('.') {
        Some((_, tld)) => format!("{}***@{}***.{tld}", initial(local), initial(domain)),
        None => format!("{}***@***", initial(local)),
    }
}

/// `+15125550188` → `+*******0188`.
pub fn mask_phone(phone: &str) -> String {
    let digits: Vec<char> = phone.chars().filter(char::is_ascii_digit).collect();
    let keep = digits.len().saturating_sub(4);
    let tail: String = digits[keep..].iter().collect();
    format!("+{}{tail}", "*".repeat(keep))
}

fn parse<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, ToolError> {
    serde_json::from_str(json).map_err(|e| {
        tracing::error!(error = %e, "A stored lead could not be read.");
        ToolError::internal()
    })
}

/// The `leads` metric label for an answer.
pub fn metrics_status(status: LeadStatus, replayed: bool) -> crate::telemetry::metrics::LeadLabels {
    let status = match (replayed, status) {
        (true, _) => "replayed",
        (false, LeadStatus::Received) => "received",
        (false, LeadStatus::Duplicate) => "duplicate",
    };
    crate::telemetry::metrics::LeadLabels { status }
}
