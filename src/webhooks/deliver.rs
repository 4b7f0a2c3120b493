//! One endpoint at one dealership: events in sequence order, one at a time,
//! from the cursor in the store. An event is retried until the endpoint takes
//! it or `max_attempts` run out (then it is dead-lettered); only then comes
//! the next, so a receiver sees events in order.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use super::endpoint::Endpoint;
use crate::model::event::Event;
use crate::store::leases::Lease;
use crate::store::webhooks::{self as cursors, Cursor};
use crate::store::{Store, StoreError, events};
use crate::telemetry::metrics::Metrics;

/// Longest idle wait between reads of the log (a commit in this process
/// that appends events wakes the deliverer at once; one in another does not).
const IDLE_POLL: Duration = Duration::from_secs(1);
/// Events read at a time.
const BATCH: u32 = 100;

pub(super) struct Pair {
    pub endpoint: Arc<Endpoint>,
    pub dealership: String,
    pub store: Store,
    pub metrics: Arc<Metrics>,
    /// Held by the one process on the store that delivers this pair's events.
    pub lease: Lease,
}

/// What became of the event after the cursor.
enum Step {
    /// Delivered or dead-lettered: go on to the next.
    Next,
    /// Failed; due again at the cursor's `next_attempt_at`.
    Later,
}

impl Pair {
    /// Runs until `cancel`; a POST in flight is finished and recorded first.
    pub async fn run(self, cancel: CancellationToken) {
        let Some(mut cursor) = self.open(&cancel).await else {
            return;
        };
        let mut delivering = self.lease.is_held();
        loop {
            if !self.lease.is_held() {
                delivering = false;
                if !self.sleep(IDLE_POLL, &cancel).await {
                    return;
                }
                continue;
            }
            if !delivering {
                // Taking over: go on from where the last holder recorded.
                let Some(stored) = self.open(&cancel).await else {
                    return;
                };
                cursor = stored;
                delivering = true;
            }
            if let Some(due) = cursor.next_attempt_at
                && !self.sleep(until(due), &cancel).await
            {
                return;
            }
            let wake = self.store.events_appended().notified();
            tokio::pin!(wake);
            wake.as_mut().enable();
            let batch = events::after(
                &self.store,
                &self.dealership,
                cursor.delivered_through,
                BATCH,
            )
            .await
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, endpoint = %self.endpoint.id, "Cannot read the event log.");
                Vec::new()
            });
            if batch.is_empty() {
                tokio::select! {
                    () = cancel.cancelled() => return,
                    () = &mut wake => {}
                    () = tokio::time::sleep(IDLE_POLL) => {}
                }
                continue;
            }
            let mut skipped = false;
            for stored in batch {
                if cancel.is_cancelled() || !self.lease.is_held() {
                    break;
                }
                let event = stored.event;
                if !self.endpoint.takes(event.event_type) {
                    cursor.delivered_through = event.sequence;
                    skipped = true;
                    continue;
                }
                skipped = false;
                if let Step::Later = self.attempt(&event, &mut cursor).await {
                    break;
                }
            }
            if skipped {
                self.record(
                    cursors::advance(
                        &self.store,
                        &self.endpoint.id,
                        &self.dealership,
                        cursor.delivered_through,
                        Utc::now(),
                    )
                    .await,
                );
            }
            if cancel.is_cancelled() {
                return;
            }
        }
    }

    /// Makes the cursor if it is new; a failure is logged and [`Self::run`]
    /// tries again.
    pub async fn prepare(&self) {
        self.try_open().await;
    }

    /// The cursor, made at the dealership's head on first start; retried
    /// while the store does not answer.
    async fn open(&self, cancel: &CancellationToken) -> Option<Cursor> {
        loop {
            if let Some(cursor) = self.try_open().await {
                return Some(cursor);
            }
            if !self.sleep(IDLE_POLL, cancel).await {
                return None;
            }
        }
    }

    /// The cursor, made at the head if new; `None` (logged) when the store fails.
    async fn try_open(&self) -> Option<Cursor> {
        cursors::open_cursor(&self.store, &self.endpoint.id, &self.dealership, Utc::now())
            .await
            .inspect_err(|e| {
                tracing::error!(error = %e, endpoint = %self.endpoint.id, "Cannot open a webhook cursor.");
            })
            .ok()
    }

    /// One POST of `event` (the one after the cursor) and its outcome recorded.
    async fn attempt(&self, event: &Event, cursor: &mut Cursor) -> Step {
        let attempts = cursor.attempts.saturating_add(1);
        let id = &self.endpoint.id;
        let span = tracing::info_span!("webhook_delivery", endpoint = %id, sequence = event.sequence, attempt = attempts);
        let failure = match tracing::Instrument::instrument(self.endpoint.post(event), span).await {
            Ok(()) => {
                self.metrics.record_webhook(id, "delivered");
                self.moved_past(event.sequence, cursor);
                let at = Utc::now();
                self.record(
                    cursors::advance(&self.store, id, &self.dealership, event.sequence, at).await,
                );
                return Step::Next;
            }
            Err(f) => f,
        };
        if attempts >= self.endpoint.max_attempts {
            tracing::error!(endpoint = %id, event_id = %event.id, attempts, error = %failure, "Webhook event dead-lettered; going on to the next.");
            self.metrics.record_webhook(id, "dead_lettered");
            self.moved_past(event.sequence, cursor);
            let dead = cursors::dead_letter(
                &self.store,
                id,
                &self.dealership,
                event.sequence,
                attempts,
                &failure.class,
                Utc::now(),
            );
            self.record(dead.await);
            return Step::Next;
        }
        let wait = self.endpoint.backoff(attempts, failure.retry_after);
        let next = Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
        tracing::warn!(endpoint = %id, event_id = %event.id, attempts, error = %failure, "Webhook delivery failed; will retry.");
        self.metrics.record_webhook(id, "retried");
        *cursor = Cursor {
            delivered_through: cursor.delivered_through,
            attempts,
            next_attempt_at: Some(next),
        };
        let failed = cursors::attempt_failed(
            &self.store,
            id,
            &self.dealership,
            attempts,
            next,
            &failure.class,
        );
        self.record(failed.await);
        Step::Later
    }

    fn moved_past(&self, sequence: u64, cursor: &mut Cursor) {
        *cursor = Cursor {
            delivered_through: sequence,
            attempts: 0,
            next_attempt_at: None,
        };
    }

    /// A cursor write that failed is logged; the in-memory cursor goes on,
    /// and the store catches up at the next write (a restart meanwhile
    /// sends an event again, which receivers drop by `webhook-id`).
    fn record(&self, written: Result<(), StoreError>) {
        if let Err(e) = written {
            tracing::error!(error = %e, endpoint = %self.endpoint.id, "Cannot record a webhook delivery.");
        }
    }

    /// Sleeps `wait`; false if `cancel` fired first.
    async fn sleep(&self, wait: Duration, cancel: &CancellationToken) -> bool {
        tokio::select! {
            () = cancel.cancelled() => false,
            () = tokio::time::sleep(wait) => true,
        }
    }
}

fn until(due: DateTime<Utc>) -> Duration {
    (due - Utc::now()).to_std().unwrap_or_default()
}
