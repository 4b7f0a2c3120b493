//! The customer data lifecycle: what the store keeps of a customer, how
//! long, and how it is protected. Two background jobs, each run by one
//! process of those sharing the store (a work lease): the retention purge
//! ([`purge`], `[retention]`) and the reseal ([`reseal`]: rows brought up to
//! the current `[store.encryption]` key, and rows from before sealing given
//! their keyed hashes). Erasure of one customer is the operator's
//! (`dms-bridge erase`), through [`erase`].
//!
//! The store keeps customer data sealed and never reads a lead; the lead
//! desk's rules (what a lead's identity is, what of it proves consent) come
//! from [`crate::leads`] and are handed to the store's SQL here.

pub mod erase;
pub mod purge;
pub mod reseal;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::RetentionConfig;
use crate::leads::customer_identity;
use crate::leads::lead::Lead;
use crate::store::Store;
use crate::store::leases::{Lease, Leases};
use crate::store::sealing::Identity;
use crate::telemetry::metrics::Metrics;

/// Starts the purge and the reseal, each under its lease; both stop at `cancel`.
pub async fn spawn(
    store: &Store,
    retention: RetentionConfig,
    reseal_batch: u32,
    metrics: Arc<Metrics>,
    leases: &Leases,
    cancel: CancellationToken,
) {
    let purge_lease = leases.take("retention_purge").await;
    let reseal_lease = leases.take("reseal").await;
    let every = retention.purge_interval;
    let purger = purge::Purger {
        store: store.clone(),
        retention,
        metrics: metrics.clone(),
    };
    tokio::spawn(purger.run(purge_lease, cancel.clone()));
    let resealer = reseal::Resealer {
        store: store.clone(),
        batch: reseal_batch,
        metrics,
    };
    tokio::spawn(resealer.run(reseal_lease, every, cancel));
}

/// When a job held by a lease runs: at once when this process starts or
/// takes the lease over (another process's pass may have been cut short),
/// then every `every` while it holds it.
struct Due {
    every: Duration,
    next: Option<tokio::time::Instant>,
}

/// How often a process without the lease looks whether it has it now.
const LEASE_LOOK: Duration = Duration::from_secs(1);

impl Due {
    fn new(every: Duration) -> Self {
        Self { every, next: None }
    }

    /// Returns when a pass is due.
    async fn wait(&mut self, lease: &Lease) {
        loop {
            let now = tokio::time::Instant::now();
            if !lease.is_held() {
                self.next = None;
            } else if self.next.is_none_or(|next| next <= now) {
                self.next = Some(now + self.every);
                return;
            }
            tokio::time::sleep(LEASE_LOOK).await;
        }
    }
}

/// A stored lead's identity, for leads stored before identities were kept.
pub fn legacy_identity(dealership: &str, request: &str) -> Option<Identity> {
    let lead = Lead::from_stored(request).ok()?;
    Some(customer_identity(dealership, &lead))
}

/// What is kept of a lead past `[retention] leads`: who the customer is and
/// the consent they gave (the proof a dealer may be asked for), nothing of
/// what they wanted (vehicle, trade-in, appointment, message, address).
pub fn minimise(request: &str) -> Option<String> {
    let lead = Lead::from_stored(request).ok()?;
    let mut customer = lead.customer;
    customer.address = None;
    let kept = Lead {
        schema_version: lead.schema_version,
        customer,
        consent: lead.consent,
        vehicle_of_interest: None,
        trade_in: None,
        appointment: None,
        message: None,
        source_agent: lead.source_agent,
        submitted_at: lead.submitted_at,
    };
    kept.to_stored().ok()
}
