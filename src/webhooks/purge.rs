//! Purging old events: every `purge_interval`, each dealership's events
//! older than `retention`, but none that a webhook endpoint covering the
//! dealership has yet to deliver.

use std::sync::Arc;

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use super::endpoint::Endpoint;
use crate::config::EventsConfig;
use crate::store::{Store, StoreError, events, webhooks as cursors};

pub(super) struct Purger {
    pub config: EventsConfig,
    pub dealerships: Vec<String>,
    pub endpoints: Vec<Arc<Endpoint>>,
    pub store: Store,
}

impl Purger {
    /// Purges at start and then every `purge_interval`, until `cancel`.
    pub async fn run(self, cancel: CancellationToken) {
        let mut tick = tokio::time::interval(self.config.purge_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                _ = tick.tick() => {}
            }
            for dealership in &self.dealerships {
                match self.purge(dealership).await {
                    Ok(0) => {}
                    Ok(purged) => tracing::info!(dealership, purged, "Purged old events."),
                    Err(e) => tracing::error!(error = %e, dealership, "Cannot purge old events."),
                }
            }
        }
    }

    async fn purge(&self, dealership: &str) -> Result<u64, StoreError> {
        let retention =
            chrono::Duration::from_std(self.config.retention).unwrap_or(chrono::Duration::MAX);
        let cutoff = Utc::now()
            .checked_sub_signed(retention)
            .unwrap_or(chrono::DateTime::<Utc>::MIN_UTC);
        // An endpoint without a cursor yet starts at the head when it gets
        // one, so it needs nothing up to the head read here.
        let head = events::head(&self.store, dealership).await?;
        let covering: Vec<&str> = self
            .endpoints
            .iter()
            .filter(|e| e.dealerships.iter().any(|d| d == dealership))
            .map(|e| e.id.as_str())
            .collect();
        let keep_after = cursors::delivered_through(&self.store, dealership)
            .await?
            .into_iter()
            .filter(|(endpoint, _)| covering.contains(&endpoint.as_str()))
            .map(|(_, through)| through)
            .fold(head, u64::min);
        events::purge(&self.store, dealership, cutoff, keep_after).await
    }
}
