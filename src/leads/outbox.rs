//! The delivery worker. Leads are committed first and sent from the outbox
//! table afterwards, so a lead accepted is never lost: a crash or restart only
//! delays it. Each attempt holds a lease; a lease left by a killed process
//! simply runs out and the lead is claimed again, as a `resend`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::crm_fields;
use super::lead::Lead;
use crate::adapters::rest::leads::CHANNEL as CRM_API;
use crate::adapters::{Adapter, AdapterError, DeliveryReceipt, LeadDelivery, UpstreamAdapter};
use crate::adf;
use crate::config::DeliveryConfig;
use crate::store::leads as leads_store;
use crate::store::{Signal, Store, StoreDialect, StoreError, deliveries};
use crate::telemetry::metrics::Metrics;
use crate::telemetry::trace::{CURRENT, TraceContext};

/// Longest idle wait between outbox scans. New leads and requeues wake the
/// worker at once (a signal; on PostgreSQL from every process, such as
/// `dms-bridge leads retry`); retries wake it when they fall due. On
/// PostgreSQL this only bounds the delay of a lost signal; SQLite carries no
/// signal between processes, so there the wait stays short.
const IDLE_POLL: Duration = Duration::from_secs(10);
const IDLE_POLL_SQLITE: Duration = Duration::from_secs(1);
/// Shortest idle wait.
const MIN_WAIT: Duration = Duration::from_millis(10);

/// A claimed delivery.
struct Claimed {
    lead_id: String,
    upstream: String,
    attempts: u32,
    document: String,
    trace: Option<TraceContext>,
}

/// Delivers committed leads to the CRM intakes they are routed to.
pub struct Outbox {
    store: Store,
    config: DeliveryConfig,
    sinks: BTreeMap<String, Arc<Adapter>>,
    metrics: Arc<Metrics>,
}

impl Outbox {
    pub fn new(
        store: Store,
        config: DeliveryConfig,
        sinks: BTreeMap<String, Arc<Adapter>>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            store,
            config,
            sinks,
            metrics,
        }
    }

    /// Runs until `cancel`; an attempt in progress is finished first.
    pub fn spawn(self, cancel: CancellationToken) -> JoinHandle<()> {
        tokio::spawn(async move {
            let mut signals = self.store.signals();
            loop {
                let claimed = match self.claim(Utc::now()).await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::error!(error = %e, "Cannot read the lead outbox.");
                        Vec::new()
                    }
                };
                if claimed.is_empty() {
                    let idle = self.idle_wait().await;
                    tokio::select! {
                        () = cancel.cancelled() => return,
                        () = due_signal(&mut signals) => {}
                        () = tokio::time::sleep(idle) => {}
                    }
                    continue;
                }
                futures::future::join_all(claimed.into_iter().map(|c| self.attempt(c))).await;
                if cancel.is_cancelled() {
                    return;
                }
            }
        })
    }

    /// Until the next delivery falls due, at most [`IDLE_POLL`] (or
    /// [`IDLE_POLL_SQLITE`]).
    async fn idle_wait(&self) -> Duration {
        let idle = match self.store.dialect() {
            StoreDialect::Postgres => IDLE_POLL,
            StoreDialect::Sqlite => IDLE_POLL_SQLITE,
        };
        match deliveries::next_due(&self.store).await {
            // At least a moment: a due row another process holds locked
            // right now is not claimable until it commits.
            Ok(Some(due)) => (due - Utc::now())
                .to_std()
                .unwrap_or_default()
                .clamp(MIN_WAIT, idle),
            Ok(None) => idle,
            Err(e) => {
                tracing::error!(error = %e, "Cannot read the lead outbox.");
                idle
            }
        }
    }

    /// Takes up to `concurrency` due deliveries and leases them.
    async fn claim(&self, now: DateTime<Utc>) -> Result<Vec<Claimed>, StoreError> {
        let lease = chrono::Duration::from_std(self.config.lease).unwrap_or(chrono::Duration::MAX);
        let limit = i64::try_from(self.config.concurrency).unwrap_or(1);
        let rows = deliveries::claim_due(&self.store, now, now + lease, limit).await?;
        Ok(rows
            .into_iter()
            .map(|r| Claimed {
                trace: r
                    .traceparent
                    .as_deref()
                    .and_then(TraceContext::from_traceparent),
                lead_id: r.lead_id,
                upstream: r.upstream,
                attempts: r.attempts,
                document: r.document,
            })
            .collect())
    }

    async fn attempt(&self, c: Claimed) {
        // Each attempt continues the trace of the call that accepted the lead.
        let trace = c.trace.clone().unwrap_or_else(TraceContext::generate);
        let span = tracing::info_span!("lead_delivery", upstream = %c.upstream, lead_id = %c.lead_id, attempt = c.attempts);
        crate::telemetry::otlp::join(&span, &trace);
        let send = tracing::Instrument::instrument(self.send(&c), span);
        let result = CURRENT.scope(trace, send).await;
        let outcome = match &result {
            Ok(_) => "delivered",
            Err(e) => e.class(),
        };
        self.metrics.record_lead_delivery(&c.upstream, outcome);
        let recorded = match result {
            Ok(receipt) => self.delivered(&c, receipt.reference).await,
            Err(e) => self.failed(&c, &e).await,
        };
        if let Err(e) = recorded {
            // The lease runs out and the lead is tried again: at worst a resend.
            tracing::error!(error = %e, lead_id = %c.lead_id, "Cannot record a lead delivery.");
        }
    }

    async fn send(&self, c: &Claimed) -> Result<DeliveryReceipt, AdapterError> {
        match self.sinks.get(&c.upstream) {
            Some(sink) => match document_for_attempt(&c.document, c.attempts) {
                Some(document) => {
                    let fields = self.fields_for(sink, &c.lead_id).await?;
                    let delivery = LeadDelivery {
                        lead_id: &c.lead_id,
                        document: &document,
                        fields: &fields,
                    };
                    sink.deliver_lead(&delivery).await
                }
                None => Err(AdapterError::InvalidResponse(
                    "stored ADF unreadable".into(),
                )),
            },
            // The route was removed from the config: keep the lead until it comes back.
            None => Err(AdapterError::Unavailable(
                "no such upstream in the config".into(),
            )),
        }
    }

    /// The lead as named values, for a sink that submits through a CRM's API
    /// (an ADF sink sends the stored document and needs none).
    async fn fields_for(
        &self,
        sink: &Adapter,
        lead_id: &str,
    ) -> Result<BTreeMap<String, String>, AdapterError> {
        if sink.lead_channel() != Some(CRM_API) {
            return Ok(BTreeMap::new());
        }
        let stored = leads_store::request_of(&self.store, lead_id)
            .await
            .map_err(|e| AdapterError::Unavailable(format!("store: {e}")))?;
        let lead = stored
            .as_deref()
            .map(Lead::from_stored)
            .transpose()
            .map_err(|_| AdapterError::InvalidResponse("stored lead unreadable".into()))?
            .ok_or_else(|| AdapterError::InvalidResponse("stored lead missing".into()))?;
        Ok(crm_fields::fields(lead_id, &lead))
    }

    async fn delivered(&self, c: &Claimed, receipt: Option<String>) -> Result<(), StoreError> {
        tracing::info!(lead_id = %c.lead_id, upstream = %c.upstream, attempts = c.attempts, "Lead delivered.");
        deliveries::delivered(&self.store, &c.lead_id, Utc::now(), receipt.as_deref()).await
    }

    async fn failed(&self, c: &Claimed, error: &AdapterError) -> Result<(), StoreError> {
        let retry = is_retryable(error) && c.attempts < self.config.max_attempts;
        let state = if retry { "pending" } else { "failed" };
        let next = Utc::now()
            + chrono::Duration::from_std(self.backoff(c.attempts, error)).unwrap_or_default();
        if retry {
            tracing::warn!(lead_id = %c.lead_id, upstream = %c.upstream, attempts = c.attempts, error = %error, "Lead delivery failed; will retry.");
        } else {
            tracing::error!(lead_id = %c.lead_id, upstream = %c.upstream, attempts = c.attempts, error = %error, "Lead delivery failed for good; staff must follow up.");
        }
        deliveries::attempt_failed(&self.store, &c.lead_id, state, next, error.class()).await
    }

    /// Exponential backoff with equal jitter; an upstream's Retry-After wins when longer.
    fn backoff(&self, attempts: u32, error: &AdapterError) -> Duration {
        let exp = self
            .config
            .base_delay
            .saturating_mul(2u32.saturating_pow(attempts.saturating_sub(1)))
            .min(self.config.max_delay);
        let half = exp / 2;
        let jittered = half + half.mul_f64(fastrand::f64());
        let asked = match error {
            AdapterError::RateLimited { retry_after } => *retry_after,
            AdapterError::CircuitOpen { retry_after }
            | AdapterError::QuotaExhausted { retry_after } => Some(*retry_after),
            _ => None,
        };
        asked.map_or(jittered, |a| a.max(jittered).min(self.config.max_delay))
    }
}

/// Returns when a signal says a delivery may be due (or some were lost).
async fn due_signal(signals: &mut broadcast::Receiver<Signal>) {
    loop {
        match signals.recv().await {
            Ok(Signal::OutboxDue | Signal::Resync) | Err(RecvError::Lagged(_)) => return,
            Ok(_) => {}
            // The store is gone: only cancellation ends the worker now.
            Err(RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}

/// Failures worth another attempt. A refusal of the document itself is final;
/// refused credentials are retried, as they are usually fixed by an operator
/// within the retry horizon and a lead must not be lost to a rotated token.
fn is_retryable(error: &AdapterError) -> bool {
    !matches!(
        error,
        AdapterError::Rejected { .. }
            | AdapterError::InvalidResponse(_)
            | AdapterError::Unsupported
    )
}

/// The first attempt sends the stored document; later ones mark it `resend`
/// (same `<id>`, so the CRM can drop a copy it already has).
fn document_for_attempt(document: &str, attempts: u32) -> Option<String> {
    if attempts <= 1 {
        return Some(document.to_owned());
    }
    let mut leads = adf::parse(document.as_bytes()).ok()?;
    for lead in &mut leads {
        lead.status = adf::ProspectStatus::Resend;
    }
    Some(leads.iter().map(adf::render).collect::<Vec<_>>().concat())
}
