//! The watching tap: each exchange's timing and quota headers, for the live
//! probe.

use std::sync::Mutex;
use std::time::Duration;

use super::{Exchange, ProxyRequest, Tap};

/// A tap that only watches: each exchange's timing and rate-limit headers.
#[derive(Debug, Default)]
pub struct Observe {
    seen: Mutex<Vec<Observed>>,
}

/// What [`Observe`] keeps of one exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    pub method: String,
    pub path: String,
    /// `None` when the origin could not be reached.
    pub status: Option<u16>,
    pub elapsed: Duration,
    /// `Retry-After`, `X-RateLimit-*` and `RateLimit-*` headers of the answer.
    pub rate_limit: Vec<(String, String)>,
}

impl Observe {
    /// Everything seen so far, oldest first.
    pub fn seen(&self) -> Vec<Observed> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn push(&self, observed: Observed) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(observed);
        }
    }
}

/// Whether an answer's header says something about the upstream's quota.
pub fn is_rate_limit_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "retry-after" || name.starts_with("x-ratelimit-") || name.starts_with("ratelimit")
}

impl Tap for Observe {
    fn after(&self, exchange: &Exchange) {
        let rate_limit = exchange
            .response
            .headers
            .iter()
            .filter(|(n, _)| is_rate_limit_header(n.as_str()))
            .map(|(n, v)| {
                (
                    n.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        self.push(Observed {
            method: exchange.request.method.to_string(),
            path: exchange.request.path.clone(),
            status: Some(exchange.response.status.as_u16()),
            elapsed: exchange.elapsed,
            rate_limit,
        });
    }

    fn failed(&self, request: &ProxyRequest, _error: &str, elapsed: Duration) {
        self.push(Observed {
            method: request.method.to_string(),
            path: request.path.clone(),
            status: None,
            elapsed,
            rate_limit: Vec::new(),
        });
    }
}
