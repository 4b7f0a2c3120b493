//! Purging old events: every `purge_interval`, each dealership's events
//! older than `retention`, but none that a webhook endpoint covering the
//! dealership has yet to deliver; and the inbound vendor event ids received
//! longer ago than `retention`.

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::config::EventsConfig;
use crate::store::leases::Lease;
use crate::store::{Store, StoreError, events, inbound, webhooks as cursors};

pub(super) struct Purger {
    pub config: EventsConfig,
    pub dealerships: Vec<String>,
    /// Each endpoint's id and the dealerships it covers.
    pub endpoints: super::Covering,
    pub store: Store,
    /// Held by the one process on the store that purges.
    pub lease: Lease,
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
            if !self.lease.is_held() {
                continue;
            }
            for dealership in &self.dealerships {
                match self.purge(dealership).await {
                    Ok(0) => {}
                    Ok(purged) => tracing::info!(dealership, purged, "Purged old events."),
                    Err(e) => tracing::error!(error = %e, dealership, "Cannot purge old events."),
                }
            }
            match inbound::purge(&self.store, self.cutoff()).await {
                Ok(0) => {}
                Ok(purged) => tracing::info!(purged, "Purged old inbound event ids."),
                Err(e) => tracing::error!(error = %e, "Cannot purge old inbound event ids."),
            }
        }
    }

    /// Anything observed before this is past `retention`.
    fn cutoff(&self) -> chrono::DateTime<Utc> {
        let retention =
            chrono::Duration::from_std(self.config.retention).unwrap_or(chrono::Duration::MAX);
        Utc::now()
            .checked_sub_signed(retention)
            .unwrap_or(chrono::DateTime::<Utc>::MIN_UTC)
    }

    async fn purge(&self, dealership: &str) -> Result<u64, StoreError> {
        let cutoff = self.cutoff();
        // An endpoint without a cursor yet starts at the head when it gets
        // one, so it needs nothing up to the head read here.
        let head = events::head(&self.store, dealership).await?;
        let covering: Vec<&str> = self
            .endpoints
            .iter()
            .filter(|(_, covered)| covered.iter().any(|d| d == dealership))
            .map(|(id, _)| id.as_str())
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::model::event::NewEvent;

    #[tokio::test]
    async fn old_events_go_but_none_an_endpoint_has_yet_to_deliver() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let long_ago = Utc::now() - chrono::Duration::days(90);
        let lead = |i: u32| NewEvent::lead_created(&format!("lead-{i}"), "agent", long_ago);
        for dealership in ["acme", "other"] {
            let five: Vec<NewEvent> = (1..=5).map(lead).collect();
            events::append(&store, dealership, &five, long_ago)
                .await
                .unwrap();
        }
        // "hook" covers acme and has delivered through 2; "gone" is no longer configured.
        cursors::open_cursor(&store, "gone", "acme", Utc::now())
            .await
            .unwrap();
        cursors::open_cursor(&store, "hook", "acme", Utc::now())
            .await
            .unwrap();
        sqlx::query("UPDATE webhook_cursors SET delivered_through = 2 WHERE endpoint = 'hook'")
            .execute(store.pool())
            .await
            .unwrap();
        sqlx::query("UPDATE webhook_cursors SET delivered_through = 0 WHERE endpoint = 'gone'")
            .execute(store.pool())
            .await
            .unwrap();
        let purger = Purger {
            config: EventsConfig::default(),
            dealerships: vec!["acme".into(), "other".into()],
            endpoints: std::sync::Arc::from(vec![("hook".to_owned(), vec!["acme".to_owned()])]),
            store: store.clone(),
            lease: Lease::always(),
        };
        assert_eq!(purger.purge("acme").await.unwrap(), 2);
        assert_eq!(purger.purge("other").await.unwrap(), 5);
        let left: Vec<u64> = events::after(&store, "acme", 0, 100)
            .await
            .unwrap()
            .iter()
            .map(|e| e.event.sequence)
            .collect();
        assert_eq!(left, [3, 4, 5]);
        assert_eq!(
            events::head(&store, "other").await.unwrap(),
            5,
            "the head stays"
        );
    }
}
