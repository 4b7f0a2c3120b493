//! `leads.create`, `leads.get` and `leads.list`: lead capture with AAP consent
//! rules, committed to the store before the answer and delivered to the
//! dealership's CRM as ADF by the outbox.

mod args;
pub(crate) mod consent;
mod create;
mod list;
mod present;
mod to_lead;
mod view;

pub use crate::leads::lead::parse_instant;
pub use crate::tools::customer::{Warning, WithheldContactPoint, consent_record};
pub use args::*;
pub use create::{create, refresh_replay};
pub use list::{GetArgs, ListArgs};
pub use view::*;

use chrono::Utc;
use serde_json::json;

use crate::contract::cursor::CursorCodec;
use crate::contract::error::{ErrorCode, ToolError};
use crate::leads::ListQuery;
use crate::tools::budget::fit_page;
use crate::tools::customer::{check_contact, text};
use crate::tools::to_result;
use crate::tools::{Check, Handled, ToolArgs, ToolContext};

/// How far ahead an appointment may be requested.
const MAX_AHEAD_DAYS: i64 = 366;

impl ToolArgs for CreateArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref().filter(|_| !self.dry_run)
    }

    fn idempotency_conflict(&self) -> ToolError {
        create::idempotency_conflict()
    }

    fn validate(&self, check: &mut Check<'_>) {
        let now = Utc::now();
        check_customer(&self.customer, check);
        text::check_required_line(check, "/source_agent", &self.source_agent);
        if let Some(v) = &self.vehicle_of_interest {
            if let Some(vin) = &v.vin {
                check.vin("/vehicle_of_interest/vin", vin);
            }
            check_lines(
                check,
                "/vehicle_of_interest",
                [
                    ("stock", &v.stock),
                    ("make", &v.make),
                    ("model", &v.model),
                    ("trim", &v.trim),
                    ("body", &v.body),
                    ("transmission", &v.transmission),
                ],
            );
        }
        if let Some(t) = &self.trade_in {
            if let Some(v) = &t.vin {
                check.vin("/trade_in/vin", v);
            }
            check_lines(
                check,
                "/trade_in",
                [("make", &t.make), ("model", &t.model), ("trim", &t.trim)],
            );
            let blank = |s: &Option<String>| s.as_deref().is_none_or(|s| s.trim().is_empty());
            if t.vin.is_none() && (blank(&t.make) || blank(&t.model)) {
                check.problems.push(
                    "/trade_in",
                    "give the trade-in's VIN, or at least its make and model",
                );
            }
        }
        if let Some(a) = &self.appointment {
            check_appointment(self, a, now, check);
        }
        if let Some(s) = &self.submitted_at {
            match parse_instant(s) {
                None => check
                    .problems
                    .push("/submitted_at", "must be an RFC 3339 time with an offset"),
                Some(t) if t > now + chrono::Duration::minutes(5) => {
                    check.problems.push("/submitted_at", "is in the future")
                }
                Some(_) => {}
            }
        }
        if let Err(e) = consent::check(self, now) {
            check.reject(e);
        }
    }
}

/// Each optional single-line field under `parent` (see `text`).
fn check_lines<const N: usize>(
    check: &mut Check<'_>,
    parent: &str,
    fields: [(&str, &Option<String>); N],
) {
    for (name, value) in fields {
        if let Some(value) = value {
            text::check_line(check, &format!("{parent}/{name}"), value);
        }
    }
}

fn check_customer(c: &Customer, check: &mut Check<'_>) {
    check_contact(
        [&c.first_name, &c.last_name],
        c.email.as_deref(),
        c.phone.as_deref(),
        check,
    );
    if let Some(a) = &c.address {
        check_lines(
            check,
            "/customer/address",
            [
                ("address_line_1", &a.address_line_1),
                ("address_line_2", &a.address_line_2),
                ("city", &a.city),
                ("state", &a.state),
                ("zip", &a.zip),
            ],
        );
    }
    let missing = match c.preferred_contact {
        Some(PreferredContact::Email) if c.email.is_none() => Some("email"),
        Some(PreferredContact::Phone | PreferredContact::Sms) if c.phone.is_none() => Some("phone"),
        _ => None,
    };
    if let Some(field) = missing {
        check.problems.push(
            "/customer/preferred_contact",
            format!("needs customer.{field}"),
        );
    }
}

fn check_appointment(
    args: &CreateArgs,
    a: &AppointmentRequest,
    now: chrono::DateTime<Utc>,
    check: &mut Check<'_>,
) {
    // AAP's own example of MISSING_REQUIRED_FIELD: the appointment's vehicle is absent.
    if a.appointment_type == AppointmentType::TestDrive && args.vehicle_of_interest.is_none() {
        check.problems.push_missing(
            "/vehicle_of_interest",
            "a test drive needs the vehicle_of_interest to drive",
        );
    }
    if a.appointment_type == AppointmentType::TradeIn && args.trade_in.is_none() {
        check.problems.push_missing(
            "/trade_in",
            "a trade-in appraisal needs the trade_in vehicle",
        );
    }
    if let Some(at) = &a.appointment_at {
        match parse_instant(at) {
            None => check.problems.push(
                "/appointment/appointment_at",
                "must be an RFC 3339 time with an offset",
            ),
            Some(t) if t <= now => check
                .problems
                .push("/appointment/appointment_at", "is in the past"),
            Some(t) if t > now + chrono::Duration::days(MAX_AHEAD_DAYS) => check
                .problems
                .push("/appointment/appointment_at", "is more than a year ahead"),
            Some(_) => {}
        }
    }
}

impl ToolArgs for GetArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }
}

impl ToolArgs for ListArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        check.limit("/limit", self.limit);
        for (at, value) in [
            ("/created_after", &self.created_after),
            ("/created_before", &self.created_before),
        ] {
            if value.as_deref().is_some_and(|v| parse_instant(v).is_none()) {
                check
                    .problems
                    .push(at, "must be an RFC 3339 time with an offset");
            }
        }
        if let Some(cursor) = &self.cursor {
            check.cursor("/cursor", cursor, &self.dealership_id, &list_hash(self));
        }
    }
}

fn list_hash(args: &ListArgs) -> String {
    CursorCodec::query_hash(&json!({
        "delivery_state": args.delivery_state,
        "created_after": args.created_after,
        "created_before": args.created_before,
    }))
}

pub async fn get(ctx: ToolContext<'_>, args: GetArgs) -> Handled {
    let desk = &ctx.services.leads;
    // Another principal's lead answers exactly like an unknown id, so ids cannot be probed.
    let owner = ctx.owner();
    let stored = desk
        .get(&args.dealership_id, &args.lead_id, owner.principal())
        .await?;
    match stored {
        Some(lead) => to_result(&present::lead_view(&lead, viewer(&owner), zone(&ctx))?),
        None => Err(ToolError::new(
            ErrorCode::LeadsLeadNotFound,
            "This dealership has no lead with that id that you sent through the bridge.",
        )
        .with_next_tool_call(
            "leads_list",
            json!({ "dealership_id": args.dealership_id }),
            "List the leads taken for this dealership.",
        )
        .into()),
    }
}

pub async fn list(ctx: ToolContext<'_>, args: ListArgs) -> Handled {
    let desk = &ctx.services.leads;
    let limit = ctx.page_size(args.limit);
    let hash = list_hash(&args);
    let cursors = &ctx.services.cursors;
    let offset = match &args.cursor {
        Some(c) => cursors.decode(c, &args.dealership_id, &hash).unwrap_or(0),
        None => 0,
    };
    let utc = |v: &Option<String>| v.as_deref().and_then(parse_instant).map(crate::store::ts);
    let owner = ctx.owner();
    let query = ListQuery {
        dealership: &args.dealership_id,
        principal: owner.principal(),
        states: args
            .delivery_state
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect(),
        created_after: utc(&args.created_after),
        created_before: utc(&args.created_before),
        offset,
        limit,
    };
    let mut rows = desk.list(&query).await?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let items = rows
        .iter()
        .map(|lead| present::lead_view(lead, viewer(&owner), zone(&ctx)))
        .collect::<Result<Vec<_>, _>>()?;
    fit_page(&ctx, &items, |kept| {
        let next_cursor = (more || kept < items.len())
            .then(|| cursors.encode(&args.dealership_id, &hash, offset + kept as u64));
        to_result(&ListResult {
            items: items[..kept].to_vec(),
            has_more: next_cursor.is_some(),
            next_cursor,
        })
    })
}

/// The dealership's time zone, which every time a lead tool answers is in.
fn zone(ctx: &ToolContext<'_>) -> chrono_tz::Tz {
    ctx.dealership.map_or(chrono_tz::UTC, |d| d.timezone)
}

/// Staff (who may see every lead) see how leads were merged; a submitter sees its own.
fn viewer(owner: &crate::contract::Owner<'_>) -> present::Viewer {
    match owner.principal() {
        None => present::Viewer::Staff,
        Some(_) => present::Viewer::Submitter,
    }
}
