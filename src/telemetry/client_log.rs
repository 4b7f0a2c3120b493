//! What the caller should know while its call runs (MCP log messages,
//! `notifications/message`): a stale copy served, an upstream retried, a
//! wait for the vendor's quota, a booking handed over as a lead. Like
//! progress, the code that knows reports without knowing who listens: the
//! pipeline scopes the caller's sink around the call, and outside a call
//! (background syncs, deliveries) reports go nowhere.
//!
//! A notice is a fixed sentence, a stable code and fields the caller already
//! has (its dealership_id, times, counts): never upstream text, never
//! customer data. The operator's log keeps the details.

use std::sync::Arc;

use serde_json::{Map, Value};

/// Severity, in the order of MCP's (RFC 5424) levels; only those the bridge
/// sends are here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Notice,
    Warning,
}

/// One message for the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub level: Level,
    /// Stable, documented (TOOLSET.md "Logging"): `inventory.stale_copy`, …
    pub code: &'static str,
    /// A fixed sentence.
    pub message: &'static str,
    /// Ids, times and counts the caller already has.
    pub fields: Map<String, Value>,
}

impl Notice {
    pub fn new(level: Level, code: &'static str, message: &'static str) -> Self {
        Self {
            level,
            code,
            message,
            fields: Map::new(),
        }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(key.to_owned(), value.into());
        self
    }

    /// The message's `data`: code, sentence and fields in one object.
    pub fn data(&self) -> Value {
        let mut data = self.fields.clone();
        data.insert("code".into(), Value::from(self.code));
        data.insert("message".into(), Value::from(self.message));
        Value::Object(data)
    }
}

/// Where a call's notices go (the MCP layer sends those at or above the
/// caller's level).
pub trait LogSink: Send + Sync + std::fmt::Debug {
    fn log(&self, notice: Notice);
}

tokio::task_local! {
    static SINK: Option<Arc<dyn LogSink>>;
}

/// Runs `call` with `sink` receiving the notices made inside it.
pub async fn scope<F: Future>(sink: Option<Arc<dyn LogSink>>, call: F) -> F::Output {
    SINK.scope(sink, call).await
}

/// Tells the current caller, if it asked for log messages; `notice` is
/// built only then.
pub fn tell(notice: impl FnOnce() -> Notice) {
    let _ = SINK.try_with(|sink| {
        if let Some(sink) = sink {
            sink.log(notice());
        }
    });
}

/// Whether the current call has a listener: lets a caller skip work (a
/// lock, a lookup) that only a notice needs.
pub fn listening() -> bool {
    SINK.try_with(Option::is_some).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Debug, Default)]
    struct Recorder(Mutex<Vec<Notice>>);

    impl LogSink for Recorder {
        fn log(&self, notice: Notice) {
            if let Ok(mut seen) = self.0.lock() {
                seen.push(notice);
            }
        }
    }

    #[tokio::test]
    async fn notices_reach_the_scoped_sink_only() {
        tell(|| Notice::new(Level::Info, "a.b", "nobody listens"));
        assert!(!listening());
        let recorder = Arc::new(Recorder::default());
        let sink: Arc<dyn LogSink> = recorder.clone();
        scope(Some(sink), async {
            assert!(listening());
            tell(|| Notice::new(Level::Warning, "c.d", "heard").with("n", 1));
        })
        .await;
        let seen = recorder.0.lock().map(|s| s.clone()).unwrap_or_default();
        assert_eq!(seen.len(), 1);
        assert_eq!(
            seen[0].data(),
            serde_json::json!({ "code": "c.d", "message": "heard", "n": 1 })
        );
    }
}
