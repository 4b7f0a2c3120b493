//! An operator's retry of a webhook dead letter (from the status page): the
//! event is posted once more, now, outside the endpoint's cursor, signed as
//! the first time (same `webhook-id`, so a receiver that took it drops it).

use chrono::Utc;

use super::Status;
use crate::store::{Store, StoreError, events, webhooks as cursors};

/// How a retry went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redelivery {
    /// The receiver took it; it is a dead letter no more.
    Delivered,
    /// The receiver refused again; the class of its answer.
    Failed(String),
    /// No such dead letter (delivered meanwhile, or never one).
    NotDeadLettered,
    /// The event left the log (older than `[events] retention`).
    EventGone,
    /// The endpoint is no longer configured.
    EndpointGone,
}

impl Status {
    /// Posts dead letter (`endpoint`, `dealership`, `sequence`) once more.
    pub async fn redeliver(
        &self,
        store: &Store,
        endpoint: &str,
        dealership: &str,
        sequence: u64,
    ) -> Result<Redelivery, StoreError> {
        if !cursors::is_dead_letter(store, endpoint, dealership, sequence).await? {
            return Ok(Redelivery::NotDeadLettered);
        }
        let Some(target) = self.posting.iter().find(|e| e.id == endpoint) else {
            return Ok(Redelivery::EndpointGone);
        };
        let stored = events::after(store, dealership, sequence.saturating_sub(1), 1).await?;
        let Some(event) = stored
            .into_iter()
            .map(|s| s.event)
            .find(|e| e.sequence == sequence)
        else {
            return Ok(Redelivery::EventGone);
        };
        let outcome = target.post(&event).await;
        let class = outcome.as_ref().err().map(|f| f.class.clone());
        cursors::dead_letter_retried(
            store,
            endpoint,
            dealership,
            sequence,
            class.as_deref(),
            Utc::now(),
        )
        .await?;
        tracing::info!(
            endpoint,
            dealership,
            sequence,
            outcome = class.as_deref().unwrap_or("delivered"),
            "An operator retried a webhook dead letter."
        );
        Ok(match class {
            None => Redelivery::Delivered,
            Some(class) => Redelivery::Failed(class),
        })
    }
}
