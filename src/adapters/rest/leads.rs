//! A CRM that answers back, through its REST API: a lead submitted as JSON
//! (`[submit_lead]`, one attempt; the outbox retries), the CRM's id for it
//! kept as the delivery's receipt, and what became of it read later
//! (`[lead_status]`): the first of the profile's rules that matches the
//! CRM's record gives the canonical status.

use std::collections::BTreeMap;

use super::RestAdapter;
use super::body::Lists;
use super::fetch::Endpoint;
use super::profile::{LeadStatusSpec, StatusRule};
use super::records::compile_request;
use super::write::{WriteKind, WriteOp};
use crate::adapters::mapping::ValuePath;
use crate::adapters::mapping::path::scalar_text;
use crate::adapters::template::{Template, TemplateContext, param_names};
use crate::adapters::{AdapterError, BuildError, DeliveryReceipt, LeadDelivery};
use crate::model::crm::CrmStatus;

/// What a lead submission's path, query and body may use: the lead's values
/// as `LeadDelivery::fields` names them (filled by the leads layer).
pub const LEAD_PARAMS: [&str; 24] = [
    "lead_id",
    "first_name",
    "last_name",
    "email",
    "phone",
    "phone_national",
    "preferred_contact",
    "address_line",
    "city",
    "state",
    "zip",
    "comment",
    "source_agent",
    "vehicle_condition",
    "vehicle_year",
    "vehicle_make",
    "vehicle_model",
    "vehicle_trim",
    "vehicle_vin",
    "vehicle_stock",
    "trade_year",
    "trade_make",
    "trade_model",
    "trade_vin",
];

/// The delivery channel a lead submitted through a CRM's API shows.
pub const CHANNEL: &str = "crm_api";

pub(super) const SUBMIT: WriteKind = WriteKind {
    at: "submit_lead",
    params: &LEAD_PARAMS,
    lists: &[],
    answer: (&["lead_id"], &[]),
};

pub use super::write::national_number;

/// The parameter a status read names the lead by.
const CRM_LEAD_ID: &str = "crm_lead_id";

pub(super) struct StatusOp {
    method: String,
    path: Template,
    query: Vec<(String, Template)>,
    record: ValuePath,
    rules: Vec<(ValuePath, Option<Vec<String>>, CrmStatus)>,
    default: CrmStatus,
}

pub(super) fn compile_status(
    spec: &LeadStatusSpec,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Option<StatusOp> {
    let names = param_names(&[CRM_LEAD_ID]);
    let ctx = TemplateContext {
        params: &names,
        ..*ctx
    };
    let before = errors.len();
    let (path, query) = compile_request("lead_status", &spec.path, &spec.query, &ctx, errors);
    let mut value_path = |at: &str, text: &str| {
        ValuePath::parse(text)
            .map_err(|e| errors.push(BuildError::in_profile(format!("lead_status.{at}: {e}"))))
            .ok()
    };
    let record = value_path("record", &spec.record);
    let rules: Vec<_> = spec
        .rules
        .iter()
        .enumerate()
        .filter_map(
            |(
                i,
                StatusRule {
                    when,
                    one_of,
                    status,
                },
            )| {
                Some((
                    value_path(&format!("rules[{i}].when"), when)?,
                    one_of.clone(),
                    *status,
                ))
            },
        )
        .collect();
    if spec.rules.is_empty() {
        errors.push(BuildError::in_profile(
            "lead_status.rules: give at least one rule",
        ));
    }
    if errors.len() > before {
        return None;
    }
    Some(StatusOp {
        method: spec.method.clone(),
        path: path?,
        query,
        record: record?,
        rules,
        default: spec.default,
    })
}

impl RestAdapter {
    /// Submits the lead; the CRM's id for it is the receipt.
    pub(super) async fn submit(
        &self,
        op: &WriteOp,
        lead: &LeadDelivery<'_>,
    ) -> Result<DeliveryReceipt, AdapterError> {
        // A resend after a lost answer may make a second lead at the CRM; the
        // CRM's duplicate detection is the guard, as for ADF.
        let answer = self.write(op, lead.fields, &Lists::new(), false).await?;
        let id = op
            .answer("lead_id")
            .and_then(|p| p.first(&answer))
            .and_then(scalar_text)
            .filter(|id| !id.is_empty())
            .ok_or_else(|| {
                AdapterError::InvalidResponse("the CRM's answer has no lead id".into())
            })?;
        Ok(DeliveryReceipt {
            reference: Some(id),
        })
    }

    /// What became of the CRM's lead `crm_lead_id`; `None` when the CRM
    /// answers without the lead.
    pub(super) async fn read_lead_status(
        &self,
        op: &StatusOp,
        crm_lead_id: &str,
    ) -> Result<Option<CrmStatus>, AdapterError> {
        let params = BTreeMap::from([(CRM_LEAD_ID.to_owned(), crm_lead_id.to_owned())]);
        let endpoint = Endpoint {
            method: &op.method,
            path: &op.path,
            query: &op.query,
            params: &params,
            body: None,
        };
        let answer = match self.call(&endpoint, &[]).await {
            Err(AdapterError::NotFound | AdapterError::Rejected { status: 404, .. }) => {
                return Ok(None);
            }
            other => other?,
        };
        let Some(record) = op.record.first(&answer) else {
            return Ok(None);
        };
        let status = op
            .rules
            .iter()
            .find(|(path, one_of, _)| {
                let value = path.first(record).and_then(scalar_text);
                let value = value.as_deref().map(str::trim).unwrap_or_default();
                match one_of {
                    Some(values) => values.iter().any(|v| v.eq_ignore_ascii_case(value)),
                    None => !value.is_empty(),
                }
            })
            .map_or(op.default, |(_, _, status)| *status);
        Ok(Some(status))
    }
}
