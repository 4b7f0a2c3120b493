//! What the bridge tells its operators and callers about calls in flight:
//! Prometheus metrics, W3C trace context, progress reports and log messages
//! for the caller (`client_log`). Imports nothing
//! else of the crate, so adapters, the store and the pipeline all report here.

pub mod client_log;
pub mod door;
pub mod logs;
pub mod metrics;
pub mod notices;
pub mod otlp;
pub mod process;
pub mod progress;
pub mod trace;
