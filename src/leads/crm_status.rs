//! Asking CRMs what became of the leads they took. A CRM reached through its
//! API (a REST profile with `[lead_status]`) is asked, every `[leads]
//! status_watch`, about the leads it accepted in the last 90 days that are
//! neither sold nor lost, least recently asked first and a bounded number
//! per round, so the vendor's quota is spent evenly; each answer is recorded
//! and a change becomes a `lead.status_changed` event. Of the processes on
//! one store, the holder of the upstream's `lead_status_watch/<id>` lease asks.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::adapters::{Adapter, UpstreamAdapter};
use crate::store::Store;
use crate::store::crm_statuses;
use crate::store::leases::Leases;

/// Leads asked about per upstream and round.
const PER_ROUND: i64 = 50;
/// Leads older than this are no longer followed.
const FOLLOW_DAYS: i64 = 90;
/// How often a process without the lease checks whether it has it now.
const LEASE_CHECK: Duration = Duration::from_secs(30);

/// Starts one watch per upstream that reads lead statuses (`sinks` by upstream id).
pub async fn spawn_watch(
    store: Store,
    sinks: &BTreeMap<String, Arc<Adapter>>,
    every: Duration,
    leases: &Leases,
    cancel: CancellationToken,
) {
    for (upstream, adapter) in sinks {
        if !adapter.reads_lead_status() {
            continue;
        }
        let lease = leases.take(&format!("lead_status_watch/{upstream}")).await;
        let (store, cancel) = (store.clone(), cancel.clone());
        let (upstream, adapter) = (upstream.clone(), adapter.clone());
        tokio::spawn(async move {
            loop {
                let wait = if lease.is_held() {
                    watch_once(&store, &upstream, &adapter).await;
                    every
                } else {
                    every.min(LEASE_CHECK)
                };
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tokio::time::sleep(wait) => {}
                }
            }
        });
    }
}

/// One round: asks about the open leads `upstream` took, records each answer.
/// Returns how many statuses changed.
pub async fn watch_once(store: &Store, upstream: &str, adapter: &Adapter) -> usize {
    let since = Utc::now() - chrono::Duration::days(FOLLOW_DAYS);
    let open = match crm_statuses::open_leads(store, upstream, since, PER_ROUND).await {
        Ok(open) => open,
        Err(e) => {
            tracing::warn!(upstream, error = %e, "Cannot list the leads to ask the CRM about.");
            return 0;
        }
    };
    let mut changed = 0;
    for lead in open {
        let status = match adapter.lead_status(&lead.crm_lead_id).await {
            Ok(Some(status)) => status,
            Ok(None) => {
                tracing::warn!(upstream, lead_id = %lead.lead_id, "The CRM does not know a lead it accepted.");
                continue;
            }
            Err(e) => {
                // The next round asks again; a failing CRM stops this round.
                tracing::warn!(upstream, error = %e, "Lead status read failed; trying again at the next interval.");
                break;
            }
        };
        match crm_statuses::record(store, &lead.lead_id, status, Utc::now()).await {
            Ok(Some(_)) => changed += 1,
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(upstream, error = %e, "A lead status could not be stored.");
                break;
            }
        }
    }
    if changed > 0 {
        tracing::info!(upstream, changed, "Lead statuses changed at the CRM.");
    }
    changed
}
