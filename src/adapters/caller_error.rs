//! What an upstream failure looks like to the caller. Messages are fixed text:
//! nothing from the upstream (bodies, vendor messages) passes through. The
//! pipeline applies this once to every failure a handler passes up.

use serde_json::json;

use super::AdapterError;
use crate::contract::error::{ErrorCode, ToolError};

impl AdapterError {
    /// The caller-visible error for this failure.
    pub fn to_caller(&self) -> ToolError {
        match self {
        AdapterError::Unauthorized { .. } => ToolError::new(
            ErrorCode::UpstreamRejected,
            "The dealer's system refused the bridge's credentials. The bridge operator has to fix them; retrying will not help.",
        ),
        AdapterError::RateLimited { retry_after } => {
            let error = ToolError::new(
                ErrorCode::UpstreamRateLimited,
                "The dealer's system is throttling requests. Wait and try again.",
            );
            match retry_after {
                Some(d) => error.with_details(json!({ "retry_after_ms": d.as_millis() as u64 })),
                None => error,
            }
        }
        AdapterError::Unavailable(_) => ToolError::new(
            ErrorCode::UpstreamUnavailable,
            "The dealer's system is unavailable right now. Try again shortly.",
        ),
        AdapterError::Timeout => ToolError::new(
            ErrorCode::UpstreamTimeout,
            "The dealer's system did not answer in time. Try again shortly.",
        ),
        // Booking tools map a taken slot and an unknown id to their own codes
        // first; anywhere else they are a refusal the same request cannot overcome.
        AdapterError::Rejected { .. } | AdapterError::SlotUnavailable | AdapterError::NotFound => ToolError::new(
            ErrorCode::UpstreamRejected,
            "The dealer's system refused the request. Retrying the same request will not help.",
        ),
        AdapterError::InvalidResponse(_) => ToolError::new(
            ErrorCode::UpstreamInvalidResponse,
            "The dealer's system answered with data the bridge cannot read. The operator has been told through the logs.",
        ),
        AdapterError::CircuitOpen { retry_after } => ToolError::new(
            ErrorCode::UpstreamUnavailable,
            "The dealer's system has been failing; the bridge is pausing calls to it. Try again later.",
        )
        .with_details(json!({ "retry_after_ms": retry_after.as_millis().max(1) as u64 })),
        AdapterError::QuotaExhausted { retry_after } => crate::contract::error::rate_limited("upstream", *retry_after),
        AdapterError::Unsupported => ToolError::new(
            ErrorCode::CapabilityUnsupported,
            "This dealership's system does not offer that operation.",
        ),
    }
    }
}
