//! Repair-order reads of a SOAP profile. Operations that take one day
//! (OpenTrack's `GetClosedRepairOrders` takes one `CloseDate`) are called once
//! per local day of the range, a few at a time, reporting progress; each day's
//! answer is kept briefly so paging does not call every day again.
//!
//! A profile reads only the states it has operations for. A list asking only
//! for states the profile cannot read is `Unsupported` (the caller learns the
//! DMS does not offer it); a list asking for several gets those it can read.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{NaiveDate, Utc};
use futures::StreamExt;

use super::SoapAdapter;
use super::call::{SoapOperation, compile_operation};
use super::profile::{SoapOperationSpec, SoapRepairOrdersSpec};
use crate::adapters::mapping::{RoMapping, list_at};
use crate::adapters::shared_repair_orders::{self, RecentOrders};
use crate::adapters::template::{TemplateContext, param_names};
use crate::adapters::{AdapterError, BuildError};
use crate::model::repair_order::{RepairOrder, RoQuery, RoRef};
use crate::telemetry::progress;

/// Days of one per-day list; the tools never ask for more (92 days apart).
const MAX_DAYS: usize = 93;
/// Day calls in flight at once: a 30-day list stays well inside a call's
/// deadline, and far below OpenTrack's ~30 requests/s (the policy's quota
/// still decides the pace).
const DAYS_AT_ONCE: usize = 4;
/// Extra parameters of per-day operations.
const DAY_PARAMS: [&str; 2] = ["date", "date_compact"];

/// The compiled `[repair_orders]` section.
pub(super) struct RoOps {
    mapping: RoMapping,
    all: Option<SoapOperation>,
    open: Option<SoapOperation>,
    closed: Option<SoapOperation>,
    get: Option<SoapOperation>,
    recent: RecentOrders,
}

pub(super) fn compile(
    spec: &SoapRepairOrdersSpec,
    ctx: &TemplateContext<'_>,
    base: &Path,
    errors: &mut Vec<BuildError>,
) -> Option<RoOps> {
    let mapping = shared_repair_orders::load_mapping(&spec.mapping, base, errors);
    let mut compile = |name: &'static str, spec: &Option<SoapOperationSpec>| {
        let spec = spec.as_ref()?;
        let mut names = param_names(&shared_repair_orders::PARAMS);
        // `{date}` only means something to an operation called per day.
        if spec.per_day {
            names.extend(param_names(&DAY_PARAMS));
        }
        let ctx = TemplateContext {
            params: &names,
            ..*ctx
        };
        compile_operation(name, &format!("repair_orders.{name}"), spec, &ctx, errors)
    };
    let ops = RoOps {
        all: compile("all", &spec.all),
        open: compile("open", &spec.open),
        closed: compile("closed", &spec.closed),
        get: compile("get", &spec.get),
        mapping: mapping?,
        recent: RecentOrders::new(spec.keep_seconds),
    };
    if spec.all.is_none() && spec.open.is_none() && spec.closed.is_none() {
        errors.push(BuildError::in_profile(
            "repair_orders: give `all`, or `open` and/or `closed`",
        ));
        return None;
    }
    if spec.get.as_ref().is_some_and(|g| g.per_day) {
        errors.push(BuildError::in_profile(
            "repair_orders.get.per_day: a lookup by number takes no day",
        ));
        return None;
    }
    Some(ops)
}

impl SoapAdapter {
    fn ro_ops(&self) -> Result<&RoOps, AdapterError> {
        self.repair_orders.as_ref().ok_or(AdapterError::Unsupported)
    }

    /// Repair orders answering `query`, from the operations that can read the
    /// states asked for.
    pub(super) async fn list_repair_orders(
        &self,
        query: &RoQuery<'_>,
    ) -> Result<Vec<RepairOrder>, AdapterError> {
        let ops = self.ro_ops()?;
        let reads = shared_repair_orders::reads_for(
            query.statuses,
            ops.all.as_ref(),
            ops.open.as_ref(),
            ops.closed.as_ref(),
        );
        if reads.is_empty() {
            return Err(AdapterError::Unsupported);
        }
        let mut orders = Vec::new();
        for op in reads {
            orders.extend(self.read_range(ops, op, query).await?);
        }
        let tz = self.dealership.timezone;
        orders.retain(|ro| query.matches(ro, tz));
        Ok(orders)
    }

    /// One repair order by number. OpenTrack-style DMSs have no key besides
    /// the number, so an id is looked up as a number.
    pub(super) async fn find_repair_order(
        &self,
        which: RoRef<'_>,
    ) -> Result<Option<RepairOrder>, AdapterError> {
        let ops = self.ro_ops()?;
        let get = ops.get.as_ref().ok_or(AdapterError::Unsupported)?;
        let (RoRef::Number(number) | RoRef::Id(number)) = which;
        let today = Utc::now()
            .with_timezone(&self.dealership.timezone)
            .date_naive();
        let params = shared_repair_orders::params(
            self.dealership.timezone,
            today,
            today,
            None,
            Some(number),
        );
        let found = self.read(ops, get, params, false).await?;
        Ok(found
            .iter()
            .find(|ro| ro.ro_number.eq_ignore_ascii_case(number) || which.matches(ro))
            .cloned())
    }

    /// Every order `op` returns for the query's range: one call, or one per day.
    async fn read_range(
        &self,
        ops: &RoOps,
        op: &SoapOperation,
        query: &RoQuery<'_>,
    ) -> Result<Vec<RepairOrder>, AdapterError> {
        let tz = self.dealership.timezone;
        if !op.per_day {
            let params = shared_repair_orders::params(tz, query.from, query.to, query.vin, None);
            return Ok(self.read(ops, op, params, query.fresh).await?.to_vec());
        }
        let days: Vec<NaiveDate> = query
            .from
            .iter_days()
            .take_while(|d| *d <= query.to)
            .take(MAX_DAYS + 1)
            .collect();
        if days.len() > MAX_DAYS {
            // The bridge's own refusal: no request was sent.
            return Err(AdapterError::Rejected {
                status: 400,
                vendor_code: None,
            });
        }
        let total = days.len();
        let mut answers = futures::stream::iter(days)
            .map(|day| {
                let mut params = shared_repair_orders::params(tz, day, day, query.vin, None);
                params.insert("date".into(), day.format("%Y-%m-%d").to_string());
                params.insert("date_compact".into(), day.format("%Y%m%d").to_string());
                self.read(ops, op, params, query.fresh)
            })
            .buffered(DAYS_AT_ONCE);
        let mut orders = Vec::new();
        let mut done: u32 = 0;
        while let Some(answer) = answers.next().await {
            orders.extend(answer?.iter().cloned());
            done += 1;
            progress::report(f64::from(done), Some(total as f64), || {
                format!("Read day {done} of {total} from the DMS.")
            });
        }
        tracing::debug!(profile = %self.profile_name, operation = op.name, days = total, orders = orders.len(), "Read repair orders day by day.");
        Ok(orders)
    }

    /// One call's orders, from a recent identical call when there is one.
    async fn read(
        &self,
        ops: &RoOps,
        op: &SoapOperation,
        params: BTreeMap<String, String>,
        fresh: bool,
    ) -> Result<Arc<Vec<RepairOrder>>, AdapterError> {
        let key = format!(
            "{}:{}",
            op.name,
            serde_json::to_string(&params).unwrap_or_default()
        );
        ops.recent
            .get_or_fetch(key, fresh, async {
                let doc = self.call(op, &params).await?;
                Ok(shared_repair_orders::map_orders(
                    &ops.mapping,
                    list_at(&op.records, &doc),
                    self.dealership.timezone,
                    &self.dealership.currency,
                    &self.profile_name,
                ))
            })
            .await
    }
}
