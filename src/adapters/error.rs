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
    /// This adapter does not serve the requested domain.
    #[error("not supported by this adapter")]
    Unsupported,
}
