//! Repair-order reads of a REST profile: plain or paged requests, and the
//! asynchronous long-operation flow (start, poll the status as the upstream
//! advises, fetch the result), each answer's records mapped to the canonical
//! [`RepairOrder`].

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{Days, NaiveDate, Utc};
use serde_json::Value;
use tokio::time::Instant;

use super::RestAdapter;
use super::fetch::Endpoint;
use super::profile::{LongOperationSpec, RepairOrdersSpec, RoReadSpec};
use crate::adapters::mapping::path::scalar_text;
use crate::adapters::mapping::{RoMapping, ValuePath};
use crate::adapters::shared_repair_orders::{self, RecentOrders};
use crate::adapters::template::{Template, TemplateContext};
use crate::adapters::{AdapterError, BuildError};
use crate::model::repair_order::{RepairOrder, RoQuery, RoRef};
use crate::telemetry::progress;

/// The compiled `[repair_orders]` section.
pub(super) struct RepairOrdersOp {
    mapping: RoMapping,
    all: Option<RoRead>,
    open: Option<RoRead>,
    closed: Option<RoRead>,
    get: Option<RoRead>,
    lookback_days: u32,
    recent: RecentOrders,
}

struct RoRead {
    name: &'static str,
    spec: RoReadSpec,
    path: Template,
    query: Vec<(String, Template)>,
    records: Option<ValuePath>,
    long: Option<LongOperation>,
}

struct LongOperation {
    spec: LongOperationSpec,
    id: ValuePath,
    status: ValuePath,
    check_after: Option<ValuePath>,
    status_path: Template,
    result_path: Template,
}

pub(super) fn compile(
    spec: &RepairOrdersSpec,
    ctx: &TemplateContext<'_>,
    base: &Path,
    errors: &mut Vec<BuildError>,
) -> Option<RepairOrdersOp> {
    let mapping = shared_repair_orders::load_mapping(&spec.mapping, base, errors);
    let mut names = crate::adapters::template::param_names(&shared_repair_orders::PARAMS);
    names.extend(crate::adapters::template::param_names(&["operation_id"]));
    let ctx = TemplateContext {
        params: &names,
        ..*ctx
    };
    let mut read = |name: &'static str, spec: &Option<RoReadSpec>| {
        spec.as_ref()
            .and_then(|s| compile_read(name, s, &ctx, errors))
    };
    let op = RepairOrdersOp {
        all: read("all", &spec.all),
        open: read("open", &spec.open),
        closed: read("closed", &spec.closed),
        get: read("get", &spec.get),
        mapping: mapping?,
        lookback_days: spec.closed_lookback_days,
        recent: RecentOrders::new(spec.keep_seconds),
    };
    if spec.all.is_none() && spec.open.is_none() && spec.closed.is_none() {
        errors.push(BuildError::in_profile(
            "repair_orders: give `all`, or `open` and/or `closed`",
        ));
        return None;
    }
    Some(op)
}

fn compile_read(
    name: &'static str,
    spec: &RoReadSpec,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Option<RoRead> {
    let at = format!("repair_orders.{name}");
    let before = errors.len();
    let mut template = |key: &str, text: &str| {
        Template::compile(text, ctx)
            .map_err(|e| errors.push(BuildError::in_profile(format!("{at}.{key}: {e}"))))
            .ok()
    };
    let path = template("path", &spec.path);
    let query: Vec<_> = spec
        .query
        .iter()
        .filter_map(|(k, v)| template(&format!("query.{k}"), v).map(|t| (k.clone(), t)))
        .collect();
    let long = spec.long_operation.as_ref().and_then(|l| {
        let status_path = template("long_operation.status_path", &l.status_path);
        let result_path = template("long_operation.result_path", &l.result_path);
        Some((l, status_path?, result_path?))
    });
    let mut value_path = |key: &str, text: &str| {
        ValuePath::parse(text)
            .map_err(|e| errors.push(BuildError::in_profile(format!("{at}.{key}: {e}"))))
            .ok()
    };
    let records = match spec.records.as_str() {
        "" => None,
        p => value_path("records", p),
    };
    let long = long.and_then(|(l, status_path, result_path)| {
        Some(LongOperation {
            id: value_path("long_operation.id", &l.id)?,
            status: value_path("long_operation.status", &l.status)?,
            check_after: match &l.check_after {
                Some(p) => Some(value_path("long_operation.check_after", p)?),
                None => None,
            },
            status_path,
            result_path,
            spec: l.clone(),
        })
    });
    if errors.len() > before {
        return None;
    }
    Some(RoRead {
        name,
        spec: spec.clone(),
        path: path?,
        query,
        records,
        long,
    })
}

impl RestAdapter {
    pub(super) fn ro_op(&self) -> Result<&RepairOrdersOp, AdapterError> {
        self.repair_orders.as_ref().ok_or(AdapterError::Unsupported)
    }

    /// Repair orders answering `query`, newest activity first.
    pub(super) async fn list_repair_orders(
        &self,
        query: &RoQuery<'_>,
    ) -> Result<Vec<RepairOrder>, AdapterError> {
        let op = self.ro_op()?;
        let params = self.ro_params(query.from, query.to, query.vin, None);
        let reads = shared_repair_orders::reads_for(
            query.statuses,
            op.all.as_ref(),
            op.open.as_ref(),
            op.closed.as_ref(),
        );
        // Open and closed queries are independent: a slow DMS answers both at once.
        let answers = futures::future::try_join_all(
            reads
                .into_iter()
                .map(|read| self.read_orders(op, read, &params, query.fresh)),
        )
        .await?;
        let mut orders: Vec<RepairOrder> = answers.iter().flat_map(|a| a.iter().cloned()).collect();
        let tz = self.dealership.timezone;
        orders.retain(|ro| query.matches(ro, tz));
        Ok(orders)
    }

    /// One repair order by number or id; `None` when the DMS has no such order.
    pub(super) async fn find_repair_order(
        &self,
        which: RoRef<'_>,
    ) -> Result<Option<RepairOrder>, AdapterError> {
        let op = self.ro_op()?;
        let today = Utc::now()
            .with_timezone(&self.dealership.timezone)
            .date_naive();
        let from = today
            .checked_sub_days(Days::new(op.lookback_days.into()))
            .unwrap_or(today);
        let number = match which {
            RoRef::Number(n) => Some(n),
            RoRef::Id(_) => None,
        };
        if let (Some(get), Some(_)) = (&op.get, number) {
            let params = self.ro_params(from, today, None, number);
            let found = self.read_orders(op, get, &params, false).await?;
            return Ok(found.iter().find(|ro| which.matches(ro)).cloned());
        }
        // No lookup by number: search open work first, then recently closed orders.
        let params = self.ro_params(from, today, None, None);
        for read in [&op.all, &op.open, &op.closed].into_iter().flatten() {
            let found = self.read_orders(op, read, &params, false).await?;
            if let Some(ro) = found.iter().find(|ro| which.matches(ro)) {
                return Ok(Some(ro.clone()));
            }
        }
        Ok(None)
    }

    fn ro_params(
        &self,
        from: NaiveDate,
        to: NaiveDate,
        vin: Option<&str>,
        ro_number: Option<&str>,
    ) -> BTreeMap<String, String> {
        shared_repair_orders::params(self.dealership.timezone, from, to, vin, ro_number)
    }

    /// A read's orders, from a recent identical read when there is one.
    async fn read_orders(
        &self,
        op: &RepairOrdersOp,
        read: &RoRead,
        params: &BTreeMap<String, String>,
        fresh: bool,
    ) -> Result<Arc<Vec<RepairOrder>>, AdapterError> {
        let key = format!(
            "{}:{}",
            read.name,
            serde_json::to_string(params).unwrap_or_default()
        );
        op.recent
            .get_or_fetch(key, fresh, self.fetch_orders(op, read, params))
            .await
    }

    async fn fetch_orders(
        &self,
        op: &RepairOrdersOp,
        read: &RoRead,
        params: &BTreeMap<String, String>,
    ) -> Result<Vec<RepairOrder>, AdapterError> {
        let endpoint = Endpoint {
            method: &read.spec.method,
            path: &read.path,
            query: &read.query,
            params,
            body: None,
        };
        let records = match &read.long {
            Some(long) => {
                let body = self.run_long_operation(long, &endpoint).await?;
                self.records_in(&body, read.records.as_ref())?
            }
            None => {
                self.read_pages(&endpoint, &read.spec.pagination, read.records.as_ref())
                    .await?
                    .0
            }
        };
        Ok(shared_repair_orders::map_orders(
            &op.mapping,
            &records,
            self.dealership.timezone,
            &self.dealership.currency,
            &self.profile_name,
        ))
    }

    /// Starts the operation, polls its status as advised (reporting progress),
    /// and fetches the result; past `max_wait_seconds` it is `Timeout`.
    async fn run_long_operation(
        &self,
        long: &LongOperation,
        start: &Endpoint<'_>,
    ) -> Result<Value, AdapterError> {
        let began = Instant::now();
        let deadline = began + Duration::from_secs(long.spec.max_wait_seconds);
        let mut answer = self.call(start, &[]).await?;
        let id = operation_id(long, &answer)?;
        let params = BTreeMap::from([("operation_id".to_owned(), id)]);
        let status_endpoint = Endpoint {
            method: "GET",
            path: &long.status_path,
            query: &[],
            params: &params,
            body: None,
        };
        let mut polls: u32 = 0;
        loop {
            let state = long.status.first(&answer).and_then(scalar_text);
            let state = state.unwrap_or_default();
            if state.eq_ignore_ascii_case(&long.spec.done) {
                break;
            }
            if long
                .spec
                .failed
                .iter()
                .any(|f| f.eq_ignore_ascii_case(&state))
            {
                tracing::warn!(profile = %self.profile_name, polls, "The upstream's long operation failed.");
                return Err(AdapterError::Unavailable("long operation failed".into()));
            }
            let wait = self.poll_wait(long, &answer);
            if Instant::now() + wait > deadline {
                tracing::warn!(profile = %self.profile_name, polls, waited_ms = began.elapsed().as_millis() as u64, "The upstream's long operation did not finish in time.");
                return Err(AdapterError::Timeout);
            }
            progress::report(f64::from(polls), None, || {
                format!(
                    "Waiting for the DMS to prepare the data (status check {}).",
                    polls + 1
                )
            });
            tokio::time::sleep(wait).await;
            answer = self.call(&status_endpoint, &[]).await?;
            polls += 1;
        }
        progress::report(f64::from(polls), None, || "Fetching the result.".into());
        let result = Endpoint {
            path: &long.result_path,
            ..status_endpoint
        };
        let body = self.call(&result, &[]).await?;
        tracing::debug!(profile = %self.profile_name, polls, elapsed_ms = began.elapsed().as_millis() as u64, "Long operation finished.");
        Ok(body)
    }

    /// The upstream's advice, never below the profile's floor nor above 10 s.
    fn poll_wait(&self, long: &LongOperation, answer: &Value) -> Duration {
        let floor = Duration::from_millis(long.spec.min_poll_ms);
        let advised = long
            .check_after
            .as_ref()
            .and_then(|p| p.first(answer).and_then(scalar_text))
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(10.0)));
        advised.map_or(floor, |a| a.max(floor))
    }
}

/// The operation id, checked before it goes into a URL path.
fn operation_id(long: &LongOperation, answer: &Value) -> Result<String, AdapterError> {
    let id = long
        .id
        .first(answer)
        .and_then(scalar_text)
        .ok_or_else(|| AdapterError::InvalidResponse("no operation id".into()))?;
    let safe = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if safe {
        Ok(id)
    } else {
        Err(AdapterError::InvalidResponse(
            "operation id is not a plain token".into(),
        ))
    }
}
