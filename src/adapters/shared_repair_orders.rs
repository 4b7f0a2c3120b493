//! What the repair-order reads of the REST and SOAP kinds share: loading the
//! mapping, the request parameters a profile's templates may use, mapping
//! records to canonical orders, and the short-lived cache that keeps paging
//! through a list from running the same slow DMS query again.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{NaiveDate, TimeZone};
use serde_json::Value;

use super::mapping::{RoMapping, map_repair_order};
use super::{AdapterError, BuildError};
use crate::config::catalog;
use crate::model::repair_order::{RepairOrder, RoStatus};

/// Request parameters every repair-order read may use.
pub const PARAMS: [&str; 6] = [
    "from",
    "to",
    "from_epoch_ms",
    "to_epoch_ms",
    "vin",
    "ro_number",
];

/// Reads and compiles a repair-order mapping (built-in name or file); problems
/// go to `errors`, each naming the mapping.
pub fn load_mapping(
    reference: &str,
    base: &Path,
    errors: &mut Vec<BuildError>,
) -> Option<RoMapping> {
    catalog::read(reference, base, catalog::builtin_mapping)
        .map_err(|e| vec![e])
        .and_then(|text| RoMapping::from_toml(&text))
        .map_err(|es| errors.extend(es.into_iter().map(|e| BuildError::in_mapping(reference, e))))
        .ok()
}

/// Values of [`PARAMS`]: the dates as `YYYY-MM-DD`, and the bounds of those
/// local days in epoch milliseconds (`to` ends at the last millisecond of its day).
pub fn params(
    tz: chrono_tz::Tz,
    from: NaiveDate,
    to: NaiveDate,
    vin: Option<&str>,
    ro_number: Option<&str>,
) -> BTreeMap<String, String> {
    let day_start = |d: NaiveDate| {
        d.and_hms_opt(0, 0, 0)
            .and_then(|t| tz.from_local_datetime(&t).earliest())
            .map_or(0, |t| t.timestamp_millis())
    };
    let to_end = to.succ_opt().map_or(i64::MAX, |d| day_start(d) - 1);
    BTreeMap::from([
        ("from".to_owned(), from.format("%Y-%m-%d").to_string()),
        ("to".to_owned(), to.format("%Y-%m-%d").to_string()),
        ("from_epoch_ms".to_owned(), day_start(from).to_string()),
        ("to_epoch_ms".to_owned(), to_end.to_string()),
        ("vin".to_owned(), vin.unwrap_or_default().to_owned()),
        (
            "ro_number".to_owned(),
            ro_number.unwrap_or_default().to_owned(),
        ),
    ])
}

/// The reads answering a list of `statuses`: `all` when the profile has one,
/// else `open` for open or in-progress orders and `closed` for closed ones.
pub fn reads_for<'a, T>(
    statuses: &[RoStatus],
    all: Option<&'a T>,
    open: Option<&'a T>,
    closed: Option<&'a T>,
) -> Vec<&'a T> {
    if let Some(all) = all {
        return vec![all];
    }
    let wants_open = statuses.iter().any(|s| s.is_open());
    let wants_closed = statuses.contains(&RoStatus::Closed);
    [open.filter(|_| wants_open), closed.filter(|_| wants_closed)]
        .into_iter()
        .flatten()
        .collect()
}

/// Maps records to orders; records without an RO number are skipped and
/// counted in the log (never their content: it is customer data).
pub fn map_orders<'a>(
    mapping: &RoMapping,
    records: impl IntoIterator<Item = &'a Value>,
    tz: chrono_tz::Tz,
    currency: &str,
    profile: &str,
) -> Vec<RepairOrder> {
    let mut total = 0;
    let orders: Vec<RepairOrder> = records
        .into_iter()
        .inspect(|_| total += 1)
        .filter_map(|r| map_repair_order(mapping, r, tz, currency))
        .collect();
    if orders.len() < total {
        tracing::warn!(
            profile,
            skipped = total - orders.len(),
            "Skipped repair orders without an RO number."
        );
    }
    orders
}

/// Recent answers by read and parameters; concurrent identical reads share one
/// upstream request, and errors are not kept. Without a cache (`keep_seconds`
/// 0) every read goes upstream.
pub struct RecentOrders(Option<moka::future::Cache<String, Arc<Vec<RepairOrder>>>>);

impl RecentOrders {
    /// Keeps answers for `keep_seconds`; 0 keeps nothing.
    pub fn new(keep_seconds: u64) -> Self {
        Self((keep_seconds > 0).then(|| {
            moka::future::Cache::builder()
                .max_capacity(256)
                .time_to_live(Duration::from_secs(keep_seconds))
                .build()
        }))
    }

    /// The answer under `key`, fetched when there is none or when `fresh`
    /// (then it replaces the kept one).
    pub async fn get_or_fetch(
        &self,
        key: String,
        fresh: bool,
        fetch: impl Future<Output = Result<Vec<RepairOrder>, AdapterError>>,
    ) -> Result<Arc<Vec<RepairOrder>>, AdapterError> {
        let fetch = async { fetch.await.map(Arc::new) };
        match &self.0 {
            Some(cache) if fresh => {
                let answer = fetch.await?;
                cache.insert(key, answer.clone()).await;
                Ok(answer)
            }
            Some(cache) => cache
                .try_get_with(key, fetch)
                .await
                .map_err(|e| (*e).clone()),
            None => fetch.await,
        }
    }
}
