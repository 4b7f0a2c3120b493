//! What an operator sees of one upstream besides its circuit: when it last
//! answered, its last failure, and how much of the vendor's quota the last
//! window used (the status page). Kept per policy, in memory, per process.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use crate::config::Rate;

/// Requests remembered for the quota window at most, however large the quota.
const MAX_REMEMBERED: usize = 100_000;

/// The upstream's recent history.
#[derive(Debug)]
pub struct Seen {
    quota: Option<(u32, Duration)>,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    last_success: Option<DateTime<Utc>>,
    last_error: Option<(DateTime<Utc>, &'static str)>,
    /// When each exchange of the current quota window went out.
    sent: VecDeque<Instant>,
}

/// A snapshot for the page.
#[derive(Debug, Clone)]
pub struct Standing {
    pub last_success: Option<DateTime<Utc>>,
    /// When, and the failure's class (`http_503`, `timeout`…).
    pub last_error: Option<(DateTime<Utc>, &'static str)>,
    pub quota: Option<QuotaUse>,
}

/// Exchanges in the last `per`, against the vendor's `requests`.
#[derive(Debug, Clone, Copy)]
pub struct QuotaUse {
    pub used: usize,
    pub requests: u32,
    pub per: Duration,
}

impl Seen {
    pub fn new(rate: Option<&Rate>) -> Self {
        Self {
            quota: rate.map(|r| (r.requests, r.per)),
            inner: Mutex::default(),
        }
    }

    /// One exchange's outcome: `None` when it succeeded, else its class.
    pub fn record(&self, failure: Option<&'static str>) {
        let now = Utc::now();
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        match failure {
            None => inner.last_success = Some(now),
            Some(class) => inner.last_error = Some((now, class)),
        }
        if let Some((_, per)) = self.quota {
            inner.sent.push_back(Instant::now());
            prune(&mut inner.sent, per);
        }
    }

    pub fn standing(&self) -> Standing {
        let Ok(mut inner) = self.inner.lock() else {
            return Standing {
                last_success: None,
                last_error: None,
                quota: None,
            };
        };
        let quota = self.quota.map(|(requests, per)| {
            prune(&mut inner.sent, per);
            QuotaUse {
                used: inner.sent.len(),
                requests,
                per,
            }
        });
        Standing {
            last_success: inner.last_success,
            last_error: inner.last_error,
            quota,
        }
    }
}

/// Forgets the exchanges older than `per`, and the oldest beyond the cap.
fn prune(sent: &mut VecDeque<Instant>, per: Duration) {
    let now = Instant::now();
    while sent
        .front()
        .is_some_and(|t| now.duration_since(*t) > per || sent.len() > MAX_REMEMBERED)
    {
        sent.pop_front();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn counts_the_window_and_keeps_the_last_outcomes() {
        let rate = Rate {
            requests: 10,
            per: Duration::from_secs(1),
            burst: None,
        };
        let seen = Seen::new(Some(&rate));
        seen.record(None);
        seen.record(Some("http_503"));
        let s = seen.standing();
        assert!(s.last_success.is_some());
        assert_eq!(s.last_error.map(|e| e.1), Some("http_503"));
        assert_eq!(s.quota.unwrap().used, 2);
        tokio::time::advance(Duration::from_millis(1_500)).await;
        seen.record(None);
        assert_eq!(seen.standing().quota.unwrap().used, 1);
        assert!(Seen::new(None).standing().quota.is_none());
    }
}
