//! MCP logging: the notices a call makes (`telemetry::client_log`) sent to
//! the client as `notifications/message`, at or above the level it asked
//! for, on the same path as progress notifications.
//!
//! The level comes from the request's `_meta` `io.modelcontextprotocol/logLevel`
//! (how 2026-07-28 asks, per request) or else from `logging/setLevel`,
//! which lasts as long as the server instance: the session on stdio and
//! stateful HTTP, one request on stateless HTTP (where it therefore changes
//! nothing). Without a level nothing is sent: the spec leaves the default
//! to the server, 2026-07-28 asks for silence without `logLevel`, and an
//! answer with no notification stays one JSON body.

// rmcp marks MCP logging deprecated (SEP-2577 plans its removal); it is
// still part of both revisions the bridge serves.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::{mpsc, oneshot};

use crate::telemetry::client_log::{Level, LogSink, Notice};

/// The name log messages carry as `logger`.
const LOGGER: &str = "dms-bridge";

/// The level `logging/setLevel` set, as a rank (0: never set).
#[derive(Debug, Default)]
pub struct SessionLevel(AtomicU8);

impl SessionLevel {
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    fn get(&self) -> Option<u8> {
        Some(self.0.load(Ordering::Relaxed)).filter(|r| *r > 0)
    }
}

/// How long an answer waits for its log messages to go out first.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

enum Outgoing {
    Message(LoggingMessageNotificationParam),
    /// Answered once every message before it has been handed to the transport.
    Flush(oneshot::Sender<()>),
}

/// Sends notices in order from a task of its own, so adapters never wait on
/// the client's connection; the task ends with the call.
pub struct Notifier {
    outgoing: mpsc::UnboundedSender<Outgoing>,
    threshold: u8,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

impl LogSink for Notifier {
    fn log(&self, notice: Notice) {
        let level = level_of(notice.level);
        if rank(level) < self.threshold {
            return;
        }
        let param = LoggingMessageNotificationParam::new(level, notice.data()).with_logger(LOGGER);
        // The receiver is gone only once the client went away; nothing to tell then.
        let _ = self.outgoing.send(Outgoing::Message(param));
    }
}

impl Notifier {
    /// Waits (bounded) until the messages logged so far are on their way:
    /// the answer must not overtake them, as the request's stream ends with it.
    pub async fn flush(&self) {
        let (done, sent) = oneshot::channel();
        if self.outgoing.send(Outgoing::Flush(done)).is_ok() {
            let _ = tokio::time::timeout(FLUSH_WAIT, sent).await;
        }
    }
}

/// The call's notifier, when the client asked for log messages.
pub fn sink(ctx: &RequestContext<RoleServer>, session: &SessionLevel) -> Option<Arc<Notifier>> {
    let threshold = ctx.meta.log_level().map(rank).or_else(|| session.get())?;
    // Above every level the bridge sends: keep the answer a plain JSON body.
    if threshold > rank(level_of(Level::Warning)) {
        return None;
    }
    let (outgoing, mut pending) = mpsc::unbounded_channel::<Outgoing>();
    let peer: Peer<RoleServer> = ctx.peer.clone();
    tokio::spawn(async move {
        while let Some(next) = pending.recv().await {
            match next {
                Outgoing::Message(param) => {
                    if let Err(e) = peer.notify_logging_message(param).await {
                        tracing::debug!(error = %e, "Could not send a log message.");
                        break;
                    }
                }
                Outgoing::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    });
    Some(Arc::new(Notifier {
        outgoing,
        threshold,
    }))
}

fn level_of(level: Level) -> LoggingLevel {
    match level {
        Level::Debug => LoggingLevel::Debug,
        Level::Info => LoggingLevel::Info,
        Level::Notice => LoggingLevel::Notice,
        Level::Warning => LoggingLevel::Warning,
    }
}

/// Severity order, from 1 (debug) up.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 1,
        LoggingLevel::Info => 2,
        LoggingLevel::Notice => 3,
        LoggingLevel::Warning => 4,
        LoggingLevel::Error => 5,
        LoggingLevel::Critical => 6,
        LoggingLevel::Alert => 7,
        LoggingLevel::Emergency => 8,
    }
}
