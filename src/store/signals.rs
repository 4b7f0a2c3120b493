//! What one process tells the others sharing its store: events appended, a
//! lead queued, a write that retires cached reads, a mirror copy changed, a
//! mirror read asked for. Every signal is delivered in this process at once
//! and, on PostgreSQL, to every other process through `NOTIFY` on one
//! channel. Signals are wake-ups, never the record: one lost while a
//! connection is down costs only the delay until the receiver's next poll,
//! and a listener that reconnects sends [`Signal::Resync`] to say so.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::postgres::PgListener;
use tokio::sync::{Notify, broadcast};

use crate::model::Domain;

/// The one `LISTEN`/`NOTIFY` channel every process of a deployment shares.
const CHANNEL: &str = "dms_bridge";
/// Signals a slow subscriber may fall behind by before it sees `Lagged`
/// (then it acts as on [`Signal::Resync`]).
const BUFFERED: usize = 1024;
/// Wait before connecting the listener again after a failure.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// One wake-up, as sent between processes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signal {
    /// Events were appended to this dealership's log.
    Events { dealership: String },
    /// A lead delivery is due now.
    OutboxDue,
    /// A write changed this dealership's domain: cached reads of it are over.
    Invalidate { dealership: String, domain: Domain },
    /// The stored mirror copy of this dealership changed: reload it.
    MirrorChanged { dealership: String },
    /// Someone asked for a read of this dealership's inventory now.
    SyncRequested { dealership: String },
    /// Signals may have been lost (a listener reconnected): look again.
    Resync,
}

/// A signal on the wire, with the process that sent it, so a process skips
/// its own (it had them at once).
#[derive(Serialize, Deserialize)]
struct Wire {
    origin: String,
    #[serde(flatten)]
    signal: Signal,
}

/// This process's end of the signals.
pub(super) struct Signals {
    /// Names this process in leases and on the wire.
    pub origin: String,
    local: broadcast::Sender<Signal>,
    /// Woken on every [`Signal::Events`] and [`Signal::Resync`]: what event
    /// readers wait on between polls.
    pub events_appended: Notify,
}

impl Signals {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            origin: uuid::Uuid::new_v4().to_string(),
            local: broadcast::channel(BUFFERED).0,
            events_appended: Notify::new(),
        })
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.local.subscribe()
    }

    /// Delivers `signal` in this process.
    pub fn deliver(&self, signal: Signal) {
        if matches!(signal, Signal::Events { .. } | Signal::Resync) {
            self.events_appended.notify_waiters();
        }
        // No subscriber yet is not an error: nobody is waiting.
        let _ = self.local.send(signal);
    }

    /// The `NOTIFY` payload for `signal`.
    pub fn payload(&self, signal: &Signal) -> Option<String> {
        serde_json::to_string(&Wire {
            origin: self.origin.clone(),
            signal: signal.clone(),
        })
        .ok()
    }
}

/// `SELECT pg_notify(…)` for `signal`; the caller runs it.
pub(super) const NOTIFY_SQL: &str = "SELECT pg_notify($1, $2)";

pub(super) fn channel() -> &'static str {
    CHANNEL
}

/// Listens on PostgreSQL at `url` and delivers other processes' signals here,
/// until the store (`signals`) is dropped. Reconnects after any failure.
pub(super) fn spawn_listener(url: String, signals: Weak<Signals>) {
    tokio::spawn(async move {
        loop {
            match listen(&url, &signals).await {
                Ok(()) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "Store signal listener lost its connection; reconnecting.");
                }
            }
            tokio::time::sleep(RECONNECT_AFTER).await;
            match signals.upgrade() {
                Some(s) => s.deliver(Signal::Resync),
                None => return,
            }
        }
    });
}

/// One connection's worth of listening. `Ok` when the store is gone.
async fn listen(url: &str, signals: &Weak<Signals>) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect(url).await?;
    listener.listen(CHANNEL).await?;
    loop {
        // Wake now and then to notice that the store was dropped.
        let next = tokio::time::timeout(RECONNECT_AFTER, listener.try_recv()).await;
        let Some(signals) = signals.upgrade() else {
            return Ok(());
        };
        match next {
            Err(_elapsed) => {}
            Ok(Ok(Some(notification))) => receive(&signals, notification.payload()),
            Ok(Ok(None)) => signals.deliver(Signal::Resync),
            Ok(Err(e)) => return Err(e),
        }
    }
}

fn receive(signals: &Signals, payload: &str) {
    match serde_json::from_str::<Wire>(payload) {
        Ok(wire) if wire.origin == signals.origin => {}
        Ok(wire) => signals.deliver(wire.signal),
        // A newer version's signal: waking everyone is always safe.
        Err(_) => signals.deliver(Signal::Resync),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_process_skips_its_own_signals_and_takes_others() {
        let here = Signals::new();
        let there = Signals::new();
        let mut seen = here.subscribe();
        let signal = Signal::Invalidate {
            dealership: "acme".into(),
            domain: Domain::Service,
        };
        receive(&here, &here.payload(&signal).unwrap());
        assert!(seen.try_recv().is_err(), "its own signal came back");
        receive(&here, &there.payload(&signal).unwrap());
        assert_eq!(seen.try_recv().unwrap(), signal);
        receive(&here, "{\"kind\":\"from_the_future\"}");
        assert_eq!(seen.try_recv().unwrap(), Signal::Resync);
    }
}
