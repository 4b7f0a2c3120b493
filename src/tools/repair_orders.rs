//! `service.get_repair_order` and `service.list_repair_orders`: repair orders
//! from the dealership's DMS, in its time zone and currency, with customer data
//! reduced to initials.

use chrono::{DateTime, Days, FixedOffset, NaiveDate, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::adapters::{RoQuery, RoRef, RoStatus, UpstreamAdapter};
use crate::contract::cursor::CursorCodec;
use crate::contract::error::{ErrorCode, ToolError};
use crate::mirror::repair_orders;
use crate::model::repair_order::{PayTotal, RepairOrder, RoJob, RoVehicle};
use crate::model::{Domain, vin};
use crate::tools::budget::fit_page;
use crate::tools::inventory::ResponseFormat;
use crate::tools::{Check, Handled, ToolArgs, ToolContext};
use crate::tools::{iso_date, to_result};

/// The widest date range one list may ask for.
const MAX_DAYS: i64 = 92;
/// The default range: the last 30 days.
const DEFAULT_DAYS: u64 = 30;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetRepairOrderArgs {
    pub dealership_id: String,
    /// As printed; or give `repair_order_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$"))]
    pub ro_number: Option<String>,
    /// The DMS's own id, from service_list_repair_orders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"))]
    pub repair_order_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRepairOrdersArgs {
    pub dealership_id: String,
    /// Default: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 3))]
    pub status: Vec<RoStatus>,
    /// First day, `YYYY-MM-DD`, dealership time; default 30 days ago.
    // Closed orders count on the day they closed, others on the day they opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub from: Option<String>,
    /// Last day; default today; at most 92 days after `from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
    /// A `next_cursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 512))]
    pub cursor: Option<String>,
    /// `detailed` adds `jobs` and `totals`.
    #[serde(default, skip_serializing_if = "is_concise")]
    pub response_format: ResponseFormat,
}

fn is_concise(format: &ResponseFormat) -> bool {
    *format == ResponseFormat::Concise
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepairOrderView {
    pub ro_number: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_order_id: Option<String>,
    pub status: RoStatus,
    /// RFC 3339 with the dealership's offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promised_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
    /// The service advisor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisor: Option<String>,
    pub vehicle: RoVehicle,
    /// The customer, minimised to initials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_initials: Option<String>,
    /// Absent in a concise list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<RoJob>,
    /// Per pay type, in minor units.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub totals: Vec<PayTotal>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepairOrderResult {
    pub repair_order: RepairOrderView,
    /// The dealership's IANA time zone.
    pub timezone: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListRepairOrdersResult {
    /// Newest activity first.
    pub items: Vec<RepairOrderView>,
    /// True when another page follows: pass `next_cursor` back as `cursor`.
    pub has_more: bool,
    /// Pass as `cursor` to get the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub total: u64,
    /// The range applied, inclusive.
    pub from: String,
    pub to: String,
    pub timezone: String,
}

impl ToolArgs for GetRepairOrderArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        if self.ro_number.is_some() == self.repair_order_id.is_some() {
            check
                .problems
                .push("", "give exactly one of ro_number and repair_order_id");
        }
    }
}

impl ToolArgs for ListRepairOrdersArgs {
    fn dealership_id(&self) -> Option<&str> {
        Some(&self.dealership_id)
    }

    fn validate(&self, check: &mut Check<'_>) {
        check.limit("/limit", self.limit);
        if let Some(v) = &self.vin {
            check.vin("/vin", v);
        }
        for (at, text) in [("/from", &self.from), ("/to", &self.to)] {
            if text.as_deref().is_some_and(|t| iso_date(t).is_none()) {
                check.problems.push(at, "is not a calendar date");
            }
        }
        if let Some(tz) = check.dealership.map(|d| d.timezone) {
            let (from, to) = self.range(tz);
            if to < from {
                check.problems.push("/to", "is before from");
            } else if (to - from).num_days() > MAX_DAYS {
                let message = format!("is more than {MAX_DAYS} days after from");
                check.problems.push("/to", message);
            }
        }
        if let Some(cursor) = &self.cursor {
            check.cursor("/cursor", cursor, &self.dealership_id, &list_hash(self));
        }
    }
}

impl ListRepairOrdersArgs {
    /// The inclusive local days asked for, defaults filled in.
    fn range(&self, tz: chrono_tz::Tz) -> (NaiveDate, NaiveDate) {
        let today = Utc::now().with_timezone(&tz).date_naive();
        let to = self.to.as_deref().and_then(iso_date).unwrap_or(today);
        let from = self
            .from
            .as_deref()
            .and_then(iso_date)
            .unwrap_or_else(|| to.checked_sub_days(Days::new(DEFAULT_DAYS)).unwrap_or(to));
        (from, to)
    }
}

/// Binds cursors to everything that shapes the list.
fn list_hash(args: &ListRepairOrdersArgs) -> String {
    CursorCodec::query_hash(&json!({
        "status": args.status, "from": args.from, "to": args.to, "vin": args.vin
    }))
}

pub async fn get_repair_order(ctx: ToolContext<'_>, args: GetRepairOrderArgs) -> Handled {
    let dealership = ctx.dealership()?;
    let which = match (&args.ro_number, &args.repair_order_id) {
        (Some(n), _) => RoRef::Number(n),
        (None, Some(id)) => RoRef::Id(id),
        (None, None) => return Err(ToolError::internal().into()),
    };
    let found = ctx
        .adapter(Domain::RepairOrders)?
        .repair_order(which)
        .await?;
    let Some(ro) = found else {
        return Err(not_found(&args.dealership_id).into());
    };
    observe_statuses(&ctx, &args.dealership_id, std::slice::from_ref(&ro)).await;
    to_result(&RepairOrderResult {
        repair_order: view(ro, dealership.timezone),
        timezone: dealership.profile.timezone.clone(),
    })
}

pub async fn list_repair_orders(ctx: ToolContext<'_>, args: ListRepairOrdersArgs) -> Handled {
    let dealership = ctx.dealership()?;
    let tz = dealership.timezone;
    let (from, to) = args.range(tz);
    let statuses = if args.status.is_empty() {
        RoStatus::ALL.to_vec()
    } else {
        args.status.clone()
    };
    let vin = args.vin.as_deref().map(vin::normalize);
    let query = RoQuery {
        statuses: &statuses,
        from,
        to,
        vin: vin.as_deref(),
        fresh: false,
    };
    let mut orders = ctx
        .adapter(Domain::RepairOrders)?
        .repair_orders(&query)
        .await?;
    // Newest activity first; the RO number breaks ties so pages are stable.
    orders.sort_by(|a, b| {
        last_activity(b)
            .cmp(&last_activity(a))
            .then_with(|| a.ro_number.cmp(&b.ro_number))
    });
    orders.dedup_by(|a, b| a.ro_number == b.ro_number);
    observe_statuses(&ctx, &args.dealership_id, &orders).await;
    let hash = list_hash(&args);
    let cursors = &ctx.services.cursors;
    let page = cursors.page(
        args.cursor.as_deref(),
        &args.dealership_id,
        &hash,
        ctx.page_size(args.limit),
        orders.len(),
    );
    let total = orders.len();
    let items: Vec<RepairOrderView> = orders
        .drain(page.range.clone())
        .map(|ro| shaped(view(ro, tz), args.response_format))
        .collect();
    fit_page(&ctx, &items, |kept| {
        let next_cursor = page.cursor_after(kept, cursors, &args.dealership_id, &hash);
        to_result(&ListRepairOrdersResult {
            items: items[..kept].to_vec(),
            has_more: next_cursor.is_some(),
            next_cursor,
            total: total as u64,
            from: from.to_string(),
            to: to.to_string(),
            timezone: dealership.profile.timezone.clone(),
        })
    })
}

/// A concise list leaves the jobs and totals to `service.get_repair_order`.
fn shaped(mut view: RepairOrderView, format: ResponseFormat) -> RepairOrderView {
    if format == ResponseFormat::Concise {
        view.jobs.clear();
        view.totals.clear();
    }
    view
}

/// Status changes since the bridge last read these orders become events.
/// The answer does not depend on it: a store failure is logged, not returned.
async fn observe_statuses(ctx: &ToolContext<'_>, dealership: &str, orders: &[RepairOrder]) {
    if let Err(e) = repair_orders::observe(&ctx.services.store, dealership, orders).await {
        tracing::warn!(dealership, error = %e, "Repair-order statuses could not be recorded.");
    }
}

fn last_activity(ro: &RepairOrder) -> Option<DateTime<FixedOffset>> {
    ro.closed_at.or(ro.opened_at)
}

fn not_found(dealership_id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ServiceRepairOrderNotFound,
        "The dealership's DMS has no repair order with this number or id.",
    )
    .with_next_tool_call(
        "service_list_repair_orders",
        json!({ "dealership_id": dealership_id }),
        "List recent repair orders to find the right one.",
    )
}

fn view(ro: RepairOrder, tz: chrono_tz::Tz) -> RepairOrderView {
    let local = |t: Option<DateTime<FixedOffset>>| {
        t.map(|t| {
            t.with_timezone(&tz)
                .to_rfc3339_opts(SecondsFormat::Secs, false)
        })
    };
    RepairOrderView {
        ro_number: ro.ro_number,
        repair_order_id: ro.repair_order_id,
        status: ro.status,
        opened_at: local(ro.opened_at),
        promised_at: local(ro.promised_at),
        closed_at: local(ro.closed_at),
        advisor: ro.advisor,
        vehicle: ro.vehicle,
        customer_initials: ro.customer_name.as_deref().and_then(initials),
        jobs: ro.jobs,
        totals: ro.totals,
    }
}

/// `WHITFIELD, DANA` or `Dana Whitfield` → `D. W.`: DMSs write names either way.
fn initials(name: &str) -> Option<String> {
    let ordered = match name.split_once(',') {
        Some((last, first)) => format!("{first} {last}"),
        None => name.to_owned(),
    };
    let letters: Vec<String> = ordered
        .split_whitespace()
        .filter_map(|w| w.chars().find(|c| c.is_alphabetic()))
        .map(|c| format!("{}.", c.to_uppercase()))
        .collect();
    (!letters.is_empty()).then(|| letters.join(" "))
}

#[cfg(test)]
mod tests {
    use super::initials;

    #[test]
    fn initials_read_both_name_orders() {
        assert_eq!(initials("WHITFIELD, DANA").as_deref(), Some("D. W."));
        assert_eq!(initials("dana whitfield").as_deref(), Some("D. W."));
        assert_eq!(initials("  "), None);
    }
}
