//! Repair-order statuses. Every repair order the bridge reads (an agent's
//! `service.get_repair_order` or `service.list_repair_orders`, or the watch
//! below) is compared with the status last seen for it; a different status
//! is a `repair_order.updated` event. With `[events] repair_order_watch`,
//! each dealership's recent repair orders are also read in the background,
//! so status changes become events whether or not an agent asks. The watch
//! always asks the DMS (never a moments-old kept answer), and what it reads
//! also refreshes the answers agents get.

use std::sync::Arc;
use std::time::Duration;

use chrono::{Days, Utc};
use tokio_util::sync::CancellationToken;

use crate::adapters::{Adapter, RepairOrder, RoQuery, RoStatus, UpstreamAdapter};
use crate::store::leases::Leases;
use crate::store::{Store, StoreError};
use crate::telemetry::metrics::{Metrics, MirrorSyncLabels};

/// The watch reads the orders opened or closed in these last days (a DMS
/// read per day costs 8 calls): an order open for longer shows up again on the
/// day it closes, so its closing is still seen.
const WATCH_DAYS: u64 = 7;

/// Compares `orders`, just read from `dealership`'s DMS, with the statuses
/// last seen and records the changes as events. Returns how many.
pub async fn observe(
    store: &Store,
    dealership: &str,
    orders: &[RepairOrder],
) -> Result<usize, StoreError> {
    let seen: Vec<(&str, RoStatus)> = orders
        .iter()
        .map(|ro| (ro.ro_number.as_str(), ro.status))
        .collect();
    let sequences =
        crate::store::repair_orders::record_statuses(store, dealership, &seen, Utc::now()).await?;
    Ok(sequences.len())
}

/// One dealership whose repair orders are watched.
pub struct WatchSource {
    pub dealership: String,
    pub adapter: Arc<Adapter>,
    pub timezone: chrono_tz::Tz,
}

/// Reads every source's recent repair orders every `every` until `cancel`
/// fires; of the processes on one store, the holder of a dealership's
/// `repair_order_watch/<id>` lease reads it.
pub async fn spawn_watch(
    store: Store,
    metrics: Arc<Metrics>,
    sources: Vec<WatchSource>,
    every: Duration,
    leases: &Leases,
    cancel: CancellationToken,
) {
    for source in sources {
        let lease = leases
            .take(&format!("repair_order_watch/{}", source.dealership))
            .await;
        let (store, metrics, cancel) = (store.clone(), metrics.clone(), cancel.clone());
        tokio::spawn(async move {
            loop {
                if !lease.is_held() {
                    tokio::select! {
                        _ = cancel.cancelled() => break,
                        _ = tokio::time::sleep(every.min(super::FOLLOW_EVERY)) => continue,
                    }
                }
                let outcome = watch_once(&store, &source).await;
                metrics
                    .repair_order_watch
                    .get_or_create(&MirrorSyncLabels {
                        dealership: source.dealership.clone(),
                        outcome,
                    })
                    .inc();
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tokio::time::sleep(every) => {}
                }
            }
        });
    }
}

/// One read of a dealership's recent repair orders; returns the outcome's class.
async fn watch_once(store: &Store, source: &WatchSource) -> &'static str {
    let to = Utc::now().with_timezone(&source.timezone).date_naive();
    let from = to.checked_sub_days(Days::new(WATCH_DAYS)).unwrap_or(to);
    let query = RoQuery {
        statuses: &RoStatus::ALL,
        from,
        to,
        vin: None,
        fresh: true,
    };
    let orders = match source.adapter.repair_orders(&query).await {
        Ok(orders) => orders,
        Err(e) => {
            tracing::warn!(dealership = %source.dealership, error = %e, "Repair-order watch read failed; trying again at the next interval.");
            return e.class();
        }
    };
    match observe(store, &source.dealership, &orders).await {
        Ok(0) => "ok",
        Ok(events) => {
            tracing::info!(dealership = %source.dealership, events, "Repair-order statuses changed.");
            "ok"
        }
        Err(e) => {
            tracing::warn!(dealership = %source.dealership, error = %e, "Repair-order statuses could not be stored.");
            "store"
        }
    }
}
