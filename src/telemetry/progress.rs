//! Progress of a slow call, for clients that asked for it (an MCP request with
//! a `progressToken`). Adapters report where they are without knowing who
//! listens: the pipeline scopes the caller's reporter around the call.

use std::sync::Arc;

/// Where progress reports go (the MCP layer sends them as notifications).
pub trait ProgressSink: Send + Sync + std::fmt::Debug {
    /// `progress` grows with every report; `total` when it is known.
    fn report(&self, progress: f64, total: Option<f64>, message: String);
}

tokio::task_local! {
    static SINK: Option<Arc<dyn ProgressSink>>;
}

/// Runs `call` with `sink` receiving the progress reports made inside it.
pub async fn scope<F: Future>(sink: Option<Arc<dyn ProgressSink>>, call: F) -> F::Output {
    SINK.scope(sink, call).await
}

/// Reports progress to the current caller, if it asked for progress.
pub fn report(progress: f64, total: Option<f64>, message: impl FnOnce() -> String) {
    let _ = SINK.try_with(|sink| {
        if let Some(sink) = sink {
            sink.report(progress, total, message());
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Debug, Default)]
    struct Recorder(Mutex<Vec<(f64, String)>>);

    impl ProgressSink for Recorder {
        fn report(&self, progress: f64, _total: Option<f64>, message: String) {
            if let Ok(mut seen) = self.0.lock() {
                seen.push((progress, message));
            }
        }
    }

    #[tokio::test]
    async fn reports_reach_the_scoped_sink_only() {
        report(1.0, None, || "nobody listens".into());
        let recorder = Arc::new(Recorder::default());
        let sink: Arc<dyn ProgressSink> = recorder.clone();
        scope(Some(sink), async { report(2.0, None, || "polled".into()) }).await;
        let seen = recorder.0.lock().map(|s| s.clone()).unwrap_or_default();
        assert_eq!(seen, vec![(2.0, "polled".to_owned())]);
    }
}
