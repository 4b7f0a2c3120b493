//! The write step: what every write tool gets from the pipeline, whatever it
//! writes. A call with an idempotency key runs at most once per key (the turn
//! is taken in the store, so it holds across processes sharing it): a retry
//! of the same request replays the first answer, a different request with the
//! key is refused, and a call arriving while the first still runs waits for
//! its answer. After the write, cached reads of the tool's domain are retired.

use std::future::Future;
use std::time::Duration;

use chrono::Utc;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::broadcast::error::RecvError;

use super::Gateway;
use crate::contract::{Payload, ToolError};
use crate::store::Signal;
use crate::store::idempotency::{self, KeyRef, Turn};
use crate::tools::{Dealership, ToolContext};

/// How long an answer replays for its key (a day, as payment APIs do).
const ANSWER_KEPT: Duration = Duration::from_secs(24 * 60 * 60);

/// How often a call waiting on a key held by another call asks again.
const WAIT_STEP: Duration = Duration::from_millis(25);

/// A write about to run.
pub struct Write<'a> {
    /// The call: tool, caller, and the context a replayed answer is refreshed with.
    pub ctx: ToolContext<'a>,
    pub dealership: &'a Dealership,
    /// Present when the caller sent a key: the write happens at most once for it.
    pub once: Option<Once>,
    /// The call's deadline, which waiting on the key's turn counts against.
    pub deadline: tokio::time::Instant,
}

/// What makes a write happen at most once.
pub struct Once {
    pub key: String,
    /// What a replay must match, over the request as sent.
    pub request_hash: String,
    /// The tool's answer to a key reused for another request.
    pub conflict: ToolError,
}

/// SHA-256 of the request as sent, without `dry_run` (a dry run writes nothing,
/// so it neither takes nor replays a key).
pub fn request_hash(args: &Value) -> String {
    let mut args = args.clone();
    if let Value::Object(map) = &mut args {
        map.remove("dry_run");
    }
    // serde_json objects keep keys sorted, so equal requests hash equally.
    hex::encode(Sha256::digest(args.to_string().as_bytes()))
}

impl Gateway {
    /// Retires cached reads when another process on the store says a write
    /// changed them, until `cancel` fires. A lost signal (a listener that
    /// reconnected) retires everything: the cache is only a cache.
    pub fn spawn_invalidation_listener(&self, cancel: tokio_util::sync::CancellationToken) {
        let (gateway, mut signals) = (self.clone(), self.store().signals());
        tokio::spawn(async move {
            loop {
                let signal = tokio::select! {
                    () = cancel.cancelled() => return,
                    s = signals.recv() => s,
                };
                match signal {
                    Ok(Signal::Invalidate { dealership, domain }) => {
                        gateway.inner.cache.invalidate(&dealership, domain);
                    }
                    Ok(Signal::Resync) | Err(RecvError::Lagged(_)) => {
                        gateway.inner.cache.invalidate_all();
                    }
                    Ok(_) => {}
                    Err(RecvError::Closed) => return,
                }
            }
        });
    }

    /// Runs `work` as the write `write` describes.
    pub(super) async fn write_once(
        &self,
        write: Write<'_>,
        work: impl Future<Output = Result<Payload, ToolError>>,
    ) -> Result<Payload, ToolError> {
        let (ctx, dealership) = (write.ctx, write.dealership.profile.id.as_str());
        let result = match write.once {
            None => work.await,
            Some(once) => {
                let key = KeyRef {
                    dealership,
                    principal: &ctx.principal.name,
                    tool: ctx.tool.name(),
                    key: &once.key,
                };
                match self.once_per_key(key, &once, write.deadline, work).await? {
                    Done::Now(payload) => Ok(payload),
                    Done::Before(answer) => self.replay(ctx, answer).await,
                }
            }
        };
        // Retired whatever the outcome: a failed write may still have changed
        // the upstream (a timeout after it committed) or shown the cache wrong
        // (a slot taken by someone else). Every other process on the store
        // retires its copies when the signal reaches it; a domain nothing
        // keeps (replicas share one config) costs no signal.
        if let Some(domain) = ctx.tool.domain() {
            self.inner.cache.invalidate(dealership, domain);
            if !self.inner.cache.ttl(domain).is_zero() {
                let signal = Signal::Invalidate {
                    dealership: dealership.to_owned(),
                    domain,
                };
                self.store().announce(signal).await;
            }
        }
        result
    }

    async fn once_per_key(
        &self,
        key: KeyRef<'_>,
        once: &Once,
        deadline: tokio::time::Instant,
        work: impl Future<Output = Result<Payload, ToolError>>,
    ) -> Result<Done, ToolError> {
        let store = self.store();
        // A holder that died keeps the key until its own deadline has surely passed.
        let lease = self.limits().call_timeout * 2;
        loop {
            let now = Utc::now().timestamp_millis();
            let turn = idempotency::take_turn(
                store,
                key,
                &once.request_hash,
                now,
                now + millis(lease),
                now + millis(ANSWER_KEPT),
            )
            .await
            .map_err(store_failed)?;
            match turn {
                Turn::Taken => break,
                Turn::Answered(answer) => return Ok(Done::Before(answer)),
                Turn::Conflict => return Err(once.conflict.clone()),
                Turn::Busy if tokio::time::Instant::now() + WAIT_STEP < deadline => {
                    tokio::time::sleep(WAIT_STEP).await;
                }
                // It waited its whole deadline on another call with the key.
                Turn::Busy => return Err(ToolError::past_deadline()),
            }
        }
        let result = work.await;
        let recorded = match &result {
            Ok(payload) => idempotency::finish(store, key, payload.text()).await,
            Err(_) => idempotency::release(store, key).await,
        };
        if let Err(e) = recorded {
            // The write itself is done (or failed) upstream: misreporting it
            // now would be worse than a key that replays nothing.
            tracing::error!(error = %e, tool = key.tool, "Could not record an idempotency key's outcome.");
        }
        result.map(Done::Now)
    }

    /// The stored answer, marked as a replay where the tool's result can say
    /// so, and brought up to date by the tool where its row says how.
    async fn replay(&self, ctx: ToolContext<'_>, answer: String) -> Result<Payload, ToolError> {
        let mut value: Value = serde_json::from_str(&answer).map_err(|e| {
            tracing::error!(error = %e, "A stored idempotent answer is not JSON.");
            ToolError::internal()
        })?;
        if let (true, Value::Object(map)) = (
            self.inner.schemas.result_has(ctx.tool, "replayed"),
            &mut value,
        ) {
            map.insert("replayed".into(), Value::Bool(true));
        }
        if let Some(refresh) = ctx.tool.spec().on_replay {
            value = refresh(ctx, value).await;
        }
        Payload::serialize(&value).map_err(|_| ToolError::internal())
    }
}

/// How a keyed write ended.
enum Done {
    /// This call ran it.
    Now(Payload),
    /// An earlier call did: its stored answer.
    Before(String),
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn store_failed(e: crate::store::StoreError) -> ToolError {
    tracing::error!(error = %e, "The idempotency store failed.");
    ToolError::internal()
}
