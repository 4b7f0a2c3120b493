//! What the bridge tells its operators and callers about calls in flight:
//! Prometheus metrics, W3C trace context and progress reports. Imports nothing
//! else of the crate, so adapters, the store and the pipeline all report here.

pub mod metrics;
pub mod progress;
pub mod trace;
