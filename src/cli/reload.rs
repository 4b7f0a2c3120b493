//! When to reload credentials (see `runtime::Reloader`): on SIGHUP, and when
//! the config file or a secret file it names changes (checked every
//! [`WATCH_EVERY`]). Each outcome is logged: what was replaced, or why
//! nothing was.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::runtime::{Reloader, Started};

/// How often the watched files' modification times are compared.
const WATCH_EVERY: Duration = Duration::from_secs(2);

/// Starts the signal handler and the file watch; both end with `cancel`.
pub fn spawn(path: &Path, started: &Started, cancel: &CancellationToken) {
    let reloader = match Reloader::new(
        path,
        started.gateway.clone(),
        started.inbound.clone(),
        started.standing.webhooks.clone(),
    ) {
        Ok(r) => Arc::new(r),
        Err(e) => {
            tracing::warn!(error = %e, "Reloading is off: the config file cannot be read again.");
            return;
        }
    };
    #[cfg(unix)]
    tokio::spawn(on_hangup(reloader.clone(), cancel.clone()));
    tokio::spawn(on_change(reloader, cancel.clone()));
}

async fn reload(reloader: &Reloader, cause: &'static str) {
    match reloader.reload().await {
        Ok(r) => tracing::info!(
            cause,
            tokens = r.tokens,
            upstream_instances = r.adapters,
            webhook_keys = r.webhook_keys,
            inbound_secrets = r.inbound_secrets,
            "Reloaded the credentials; calls in flight finish on the old ones."
        ),
        Err(e) => {
            // One line, however many problems: a log line per event.
            let why = e
                .to_string()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            tracing::error!(cause, why, "Reload refused, nothing changed.");
        }
    }
}

#[cfg(unix)]
async fn on_hangup(reloader: Arc<Reloader>, cancel: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "Cannot listen for SIGHUP; reloads follow file changes only.");
            return;
        }
    };
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            got = hangups.recv() => {
                if got.is_none() {
                    return;
                }
                reload(&reloader, "SIGHUP").await;
            }
        }
    }
}

async fn on_change(reloader: Arc<Reloader>, cancel: CancellationToken) {
    let mut seen = reloader.watched();
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(WATCH_EVERY) => {}
        }
        let now = reloader.watched();
        if now != seen {
            reload(&reloader, "file change").await;
            // Files named by the new config are watched from here on.
            seen = reloader.watched();
        }
    }
}
