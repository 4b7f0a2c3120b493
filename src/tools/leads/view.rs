//! What the lead tools answer. Customer data is minimised in everything read
//! back: initials and masked contact points, never the full record.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::PreferredContact;
pub use crate::leads::lead::{AppointmentOutcome, AppointmentStatus};
use crate::tools::customer::{Warning, WithheldContactPoint};

/// `leads.create` result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CreateResult {
    /// The bridge's id for the lead (also the ADF prospect `<id>`). For a duplicate, the
    /// earlier lead this submission was merged into.
    pub lead_id: String,
    pub status: LeadStatus,
    /// What happens next, in a sentence the agent can relay.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment: Option<AppointmentOutcome>,
    pub delivery: DeliveryView,
    pub dealer: DealerContact,
    /// Contact points given in `customer` that no channel in the consent grant
    /// uses: neither sent to the dealership nor stored. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld_contact_points: Vec<WithheldContactPoint>,
    /// What the agent should tell the customer about the accepted lead (e.g.
    /// `inventory.vehicle_unavailable`: the vehicle has been sold). Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// True when this answer replays an earlier call with the same `idempotency_key`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// The ADF document that would be sent (`dry_run` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adf_document: Option<String>,
}

/// AAP lead status. A refused lead is an error (`leads.consent_required`, …), not a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LeadStatus {
    /// Accepted and queued for delivery to the dealership's CRM.
    Received,
    /// The same customer sent an equivalent lead within the duplicate window; nothing new is sent.
    Duplicate,
}

/// Where the lead's delivery to the CRM stands.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct DeliveryView {
    pub state: DeliveryState,
    /// `adf_http` or `adf_email`.
    pub channel: String,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempt_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
    /// Why the last attempt failed, as a short class (`unavailable`, `timeout`, `rejected`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The CRM's reference for the lead (its lead id, or the e-mail's Message-ID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Committed and waiting for (another) attempt.
    Pending,
    /// The CRM accepted the ADF document.
    Delivered,
    /// Given up: the CRM refused the lead or every attempt failed. Staff must follow up.
    Failed,
    /// Nothing was sent (`dry_run`).
    NotSent,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
            Self::NotSent => "not_sent",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Pending, Self::Delivered, Self::Failed, Self::NotSent]
            .into_iter()
            .find(|d| d.as_str() == s)
    }
}

/// Who the customer will hear from.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct DealerContact {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
}

impl DealerContact {
    /// The dealership's name and first listed phone number (AAP `dealer`).
    pub fn of(dealership: &crate::tools::Dealership) -> Self {
        Self {
            name: dealership.profile.name.clone(),
            phone: dealership.profile.phones.first().map(|p| p.number.clone()),
        }
    }

    /// As [`Self::of`], with the number named for `department` when the
    /// dealership lists one (the service desk for an appointment).
    pub fn of_department(dealership: &crate::tools::Dealership, department: &str) -> Self {
        let phones = &dealership.profile.phones;
        let phone = phones
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(department))
            .or(phones.first());
        Self {
            name: dealership.profile.name.clone(),
            phone: phone.map(|p| p.number.clone()),
        }
    }
}

/// A lead as `leads.get` and `leads.list` show it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LeadView {
    pub lead_id: String,
    pub dealership_id: String,
    pub status: LeadStatus,
    pub created_at: String,
    pub source_agent: String,
    pub customer: CustomerSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vehicle_of_interest: Option<VehicleSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trade_in: Option<VehicleSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment: Option<AppointmentOutcome>,
    pub consent: ConsentSummary,
    pub delivery: DeliveryView,
    /// Submissions received for this lead: 1, plus one per later duplicate of
    /// the same submitter (for staff, also one per other agent's lead merged into it).
    pub submissions: u32,
    /// For staff only: the lead whose delivery carries this one, sent by
    /// another agent for the same customer within the duplicate window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_into: Option<String>,
    /// What the dealership's CRM says became of the lead, for CRMs the bridge
    /// reaches through their API; absent until the CRM first answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crm_status: Option<CrmStatusView>,
}

/// The CRM's word on a lead.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct CrmStatusView {
    pub status: crate::model::crm::CrmStatus,
    /// When the bridge first saw this status (dealership time).
    pub since: String,
}

/// The customer, minimised: initials and masked contact points.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct CustomerSummary {
    /// Initials, e.g. `D. W.`
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_contact: Option<PreferredContact>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct VehicleSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vehicle_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stock: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub make: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// What the customer agreed to (the verbatim text stays in the audit record).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ConsentSummary {
    pub granted_at: String,
    pub allowed_channels: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// `leads.list` result, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListResult {
    pub items: Vec<LeadView>,
    /// True when another page follows: pass `next_cursor` back as `cursor`.
    pub has_more: bool,
    /// Pass back as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
