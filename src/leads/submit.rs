//! Submitting a lead: the one path by which a customer's request reaches a
//! dealership's CRM, whichever tool took it (`leads.create`, or a service
//! booking the scheduler could not take). The lead arrives as the domain
//! [`Lead`], cleaned and with the contact points its consent does not cover
//! already taken out; here it gets its ADF document, its duplicate window and
//! fingerprint, and is committed for the outbox to deliver.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::adf_map::{AdfContext, to_adf};
use super::lead::{AppointmentOutcome, Lead};
use super::{Decision, LeadDesk, NewLead, customer_identity};
use crate::model::DealershipProfile;
use crate::store::StoreError;

/// A lead and what the dealership and the call add to it.
pub struct Submission<'a> {
    /// From [`super::new_lead_id`], before the appointment outcome (whose id derives from it).
    pub lead_id: &'a str,
    pub lead: &'a Lead,
    pub dealership: &'a DealershipProfile,
    pub timezone: Tz,
    /// Who submits it: its owner for reads and the duplicate rule.
    pub principal: &'a str,
    /// The configured upstream that delivers it, and over which channel.
    pub upstream: &'a str,
    pub channel: &'static str,
    pub appointment: Option<&'a AppointmentOutcome>,
    /// A note from the bridge for CRM staff (e.g. the listed vehicle has sold).
    pub note: Option<&'a str>,
    pub received_at: DateTime<Utc>,
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The lead could not be written as its stored record.
    #[error("encoding the lead: {0}")]
    Encode(#[from] serde_json::Error),
}

impl LeadDesk {
    /// The ADF document the CRM gets for `submission` (a dry run shows it).
    pub fn render(&self, submission: &Submission<'_>) -> String {
        let s = submission;
        crate::adf::render(&to_adf(
            s.lead,
            &AdfContext {
                lead_id: s.lead_id,
                id_source: &self.config().id_source,
                dealership: s.dealership,
                tz: s.timezone,
                received_at: s.received_at,
                appointment: s.appointment,
                note: s.note,
            },
        ))
    }

    /// Commits the lead, or recognises it as a duplicate of one within the
    /// window or as the same customer's lead from another agent.
    pub async fn submit(&self, submission: &Submission<'_>) -> Result<Decision, SubmitError> {
        let s = submission;
        let window = chrono::Duration::from_std(self.config().duplicate_window)
            .unwrap_or(chrono::Duration::MAX);
        let lead = NewLead {
            lead_id: s.lead_id.to_owned(),
            submission_id: uuid::Uuid::new_v4().simple().to_string(),
            dealership: s.dealership.id.clone(),
            principal: s.principal.to_owned(),
            now: s.received_at,
            duplicate_since: s.received_at - window,
            identity: customer_identity(&s.dealership.id, s.lead),
            source_agent: s.lead.source_agent.clone(),
            request: s.lead.to_stored()?,
            appointment: s.appointment.and_then(|a| serde_json::to_string(a).ok()),
            consent: serde_json::to_string(&s.lead.consent)?,
            upstream: s.upstream.to_owned(),
            channel: s.channel.to_owned(),
            document: self.render(s),
            traceparent: crate::telemetry::otlp::outgoing_traceparent(),
        };
        Ok(self.accept(&lead).await?)
    }
}
