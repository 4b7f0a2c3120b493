//! Progress notifications to an MCP client that sent a `progressToken`.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::mpsc;

use crate::telemetry::progress::ProgressSink;

/// Sends reports in order, from a task of its own: adapters report without
/// waiting on the client's connection. The task ends with the call.
#[derive(Debug)]
struct Notifier {
    reports: mpsc::UnboundedSender<ProgressNotificationParam>,
    token: ProgressToken,
}

impl ProgressSink for Notifier {
    fn report(&self, progress: f64, total: Option<f64>, message: String) {
        let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
        param.total = total;
        param.message = Some(message);
        // The receiver is gone only once the client went away; nothing to tell then.
        let _ = self.reports.send(param);
    }
}

/// The call's progress sink, when the client asked for progress.
pub fn sink(ctx: &RequestContext<RoleServer>) -> Option<Arc<dyn ProgressSink>> {
    let token = ctx.meta.get_progress_token()?;
    let (reports, mut pending) = mpsc::unbounded_channel::<ProgressNotificationParam>();
    let peer: Peer<RoleServer> = ctx.peer.clone();
    tokio::spawn(async move {
        while let Some(param) = pending.recv().await {
            if let Err(e) = peer.notify_progress(param).await {
                tracing::debug!(error = %e, "Could not send a progress notification.");
                break;
            }
        }
    });
    Some(Arc::new(Notifier { reports, token }))
}
