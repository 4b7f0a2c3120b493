//! What can go wrong talking to an upstream. Nothing in here carries an upstream
//! body: vendor error codes are kept only when the profile's code table knows them.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdapterError {
    /// The upstream refused the bridge's own credentials (after one refresh).
    #[error("upstream refused the bridge's credentials (HTTP {status})")]
    Unauthorized { status: u16 },
    /// The upstream throttled the bridge.
    #[error("upstream rate limited the bridge")]
    RateLimited { retry_after: Option<Duration> },
    /// The upstream could not be reached or failed on its side.
    #[error("upstream unavailable: {0}")]
    Unavailable(String),
    #[error("upstream timed out")]
    Timeout,
    /// The upstream refused the request itself (a 4xx other than auth/throttling).
    #[error("upstream rejected the request (HTTP {status}, vendor code {vendor_code:?})")]
    Rejected {
        status: u16,
        vendor_code: Option<String>,
    },
    /// The answer could not be read (not JSON, wrong shape, unreadable feed).
    #[error("upstream answer unreadable: {0}")]
    InvalidResponse(String),
    /// The circuit breaker is open: the bridge is not calling this upstream for a while.
    #[error("circuit open for another {retry_after:?}")]
    CircuitOpen { retry_after: Duration },
    /// The bridge's own quota for this upstream (the vendor's documented limit) is used up.
    #[error("upstream quota used up for {retry_after:?}")]
    QuotaExhausted { retry_after: Duration },
    /// The scheduler says the slot asked for is taken (a vendor code the profile
    /// classes `slot_unavailable`): the caller should pick another time.
    #[error("upstream says the slot is taken")]
    SlotUnavailable,
    /// The upstream has no record with the id the caller gave (a vendor code
    /// the profile classes `not_found`).
    #[error("upstream has no such record")]
    NotFound,
    /// This adapter does not serve the requested domain.
    #[error("not supported by this adapter")]
    Unsupported,
}

impl AdapterError {
    /// A short class name for metrics.
    pub fn class(&self) -> &'static str {
        match self {
            Self::Unauthorized { .. } => "unauthorized",
            Self::RateLimited { .. } => "rate_limited",
            Self::Unavailable(_) => "unavailable",
            Self::Timeout => "timeout",
            Self::Rejected { .. } => "rejected",
            Self::InvalidResponse(_) => "invalid_response",
            Self::CircuitOpen { .. } => "circuit_open",
            Self::QuotaExhausted { .. } => "quota_exhausted",
            Self::SlotUnavailable => "slot_unavailable",
            Self::NotFound => "not_found",
            Self::Unsupported => "unsupported",
        }
    }

    /// Failures that say the upstream is unhealthy (they trip the circuit breaker).
    pub fn is_health_failure(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Timeout)
    }
}

/// What a vendor error code (or SOAP fault) means, as profiles write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The token is stale: fetch a new one and retry once.
    Reauthenticate,
    Unauthorized,
    RateLimited,
    Timeout,
    Unavailable,
    Rejected,
    /// A booking asked for a slot someone else took.
    SlotUnavailable,
    /// The record the request names (an appointment id) does not exist.
    NotFound,
}

impl ErrorClass {
    /// The error a reply of this class is, given its HTTP status, the vendor code
    /// the profile knew and the upstream's `Retry-After`. `None` for
    /// [`Self::Reauthenticate`]: only a kind with tokens can act on it.
    pub fn error(
        self,
        status: u16,
        code: &str,
        retry_after: Option<Duration>,
    ) -> Option<AdapterError> {
        Some(match self {
            Self::Reauthenticate => return None,
            Self::Unauthorized => AdapterError::Unauthorized { status },
            Self::RateLimited => AdapterError::RateLimited { retry_after },
            Self::Timeout => AdapterError::Timeout,
            Self::Unavailable => AdapterError::Unavailable(format!("vendor code {code}")),
            Self::Rejected => AdapterError::Rejected {
                status,
                vendor_code: Some(code.to_owned()),
            },
            Self::SlotUnavailable => AdapterError::SlotUnavailable,
            Self::NotFound => AdapterError::NotFound,
        })
    }
}
