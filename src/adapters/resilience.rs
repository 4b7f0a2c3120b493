//! How the bridge protects an upstream and copes with it failing: the vendor's
//! quota (never exceeded, bounded wait; shared by replicas through `[quotas]`
//! when set), retries of idempotent reads with
//! jittered exponential backoff that honour `Retry-After`, and a circuit
//! breaker that fails fast and recovers by itself. Every adapter kind sends
//! its upstream requests through one [`UpstreamPolicy`].

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::DefaultDirectRateLimiter;
use governor::clock::Clock;
use tokio::time::Instant;

use super::AdapterError;
use crate::config::{BreakerConfig, ResilienceConfig, RetryConfig};
use crate::quotas::window::{default_margin, governor_quota, spacing};
use crate::quotas::{Admission, SharedQuotaStore, SharedVendorQuota};
use crate::telemetry::client_log;
use crate::telemetry::metrics::{Metrics, RateLimitLabels, UpstreamLabels, UpstreamName};
use crate::telemetry::notices;

const DEFAULT_MAX_QUEUE_WAIT: Duration = Duration::from_secs(2);

/// The policy for one upstream instance.
pub struct UpstreamPolicy {
    name: String,
    limiter: Option<DefaultDirectRateLimiter>,
    /// The same quota counted across replicas (`[quotas]`), after the local limiter.
    shared: Option<SharedVendorQuota>,
    max_wait: Duration,
    retry: RetryConfig,
    breaker: Breaker,
    metrics: Arc<Metrics>,
    seen: super::standing::Seen,
}

impl UpstreamPolicy {
    /// `shared`: the replicas' common quota store, when `[quotas]` is set.
    pub fn new(
        name: &str,
        config: &ResilienceConfig,
        metrics: Arc<Metrics>,
        shared: Option<&Arc<SharedQuotaStore>>,
    ) -> Self {
        // The vendor counts a sliding window: spaced so none holds more than
        // its quota, with the margin for jitter (burst 1 unless it names one).
        let margin = |per| config.quota_margin.unwrap_or_else(|| default_margin(per));
        let limiter = config
            .rate_limit
            .as_ref()
            .and_then(|r| {
                let window = r.per.checked_add(margin(r.per))?;
                spacing(r.requests, r.burst.unwrap_or(1), window)
            })
            .and_then(governor_quota)
            .map(DefaultDirectRateLimiter::direct);
        let shared = shared
            .zip(config.rate_limit.as_ref())
            .and_then(|(store, rate)| {
                SharedVendorQuota::new(store.clone(), rate, margin(rate.per))
            });
        let breaker = Breaker::new(config.circuit_breaker, name.to_owned(), metrics.clone());
        Self {
            name: name.to_owned(),
            limiter,
            shared,
            max_wait: config.max_queue_wait.unwrap_or(DEFAULT_MAX_QUEUE_WAIT),
            retry: config.retries,
            breaker,
            metrics,
            seen: super::standing::Seen::new(config.rate_limit.as_ref()),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The breaker's state, for `/readyz`.
    /// The breaker's state now (an open circuit whose wait is over reads half-open);
    /// also refreshes the exported gauge, which otherwise moves only with calls.
    pub fn circuit(&self) -> CircuitState {
        let state = self.breaker.state();
        self.breaker.export(state);
        state
    }

    /// Last success, last failure and quota use, for the status page.
    pub fn standing(&self) -> super::standing::Standing {
        self.seen.standing()
    }

    /// Runs one logical upstream request; `attempt` performs one exchange.
    /// Only `idempotent` requests are retried.
    pub async fn run<T, F, Fut>(&self, idempotent: bool, mut attempt: F) -> Result<T, AdapterError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, AdapterError>>,
    {
        self.breaker.admit()?;
        let mut retries = 0;
        loop {
            if let Err(e) = self.acquire().await {
                // A trial the quota refused never reached the upstream: free the slot.
                self.breaker.abandon_trial();
                return Err(e);
            }
            let started = Instant::now();
            // One span per exchange, so retries show as siblings in a trace.
            let span = tracing::info_span!("upstream_request", upstream = %self.name, attempt = retries + 1);
            let result = tracing::Instrument::instrument(attempt(), span).await;
            self.observe(&result, started.elapsed());
            let error = match result {
                Ok(value) => {
                    self.breaker.record(None);
                    return Ok(value);
                }
                Err(e) => e,
            };
            self.breaker.record(Some(&error));
            let delay = (idempotent && retries < self.retry.max && !self.breaker.is_open())
                .then(|| self.retry_delay(&error, retries))
                .flatten();
            match delay {
                Some(d) => {
                    tracing::debug!(upstream = %self.name, retry = retries + 1, delay_ms = d.as_millis() as u64, error = %error, "Retrying upstream request.");
                    client_log::tell(|| {
                        notices::upstream_retry(retries + 1, d, error.to_caller().code.as_str())
                    });
                    tokio::time::sleep(d).await;
                    retries += 1;
                }
                None => return Err(error),
            }
        }
    }

    /// Waits for the vendor quota, at most `max_wait`: this process's limiter
    /// first (no Redis round trip for what it refuses anyway), then the quota
    /// shared by replicas, both within one deadline.
    async fn acquire(&self) -> Result<(), AdapterError> {
        let deadline = Instant::now() + self.max_wait;
        if let Some(limiter) = &self.limiter {
            self.acquire_local(limiter, deadline).await?;
        }
        if let Some(shared) = &self.shared {
            self.acquire_shared(shared, deadline).await?;
        }
        Ok(())
    }

    async fn acquire_local(
        &self,
        limiter: &DefaultDirectRateLimiter,
        deadline: Instant,
    ) -> Result<(), AdapterError> {
        loop {
            match limiter.check() {
                Ok(()) => return Ok(()),
                Err(not_until) => {
                    let wait = not_until.wait_time_from(limiter.clock().now());
                    self.wait_or_give_up(wait, deadline).await?;
                }
            }
        }
    }

    async fn acquire_shared(
        &self,
        shared: &SharedVendorQuota,
        deadline: Instant,
    ) -> Result<(), AdapterError> {
        loop {
            // Key `upstream:<name>`: every replica's requests to this upstream.
            match shared.check(&self.name).await {
                Admission::Allowed => return Ok(()),
                Admission::Refused { retry_after } => {
                    self.wait_or_give_up(retry_after, deadline).await?;
                }
            }
        }
    }

    /// Sleeps `wait` when that ends before `deadline`; else counts the refusal.
    async fn wait_or_give_up(&self, wait: Duration, deadline: Instant) -> Result<(), AdapterError> {
        if Instant::now() + wait > deadline {
            self.metrics
                .rate_limited
                .get_or_create(&RateLimitLabels { scope: "upstream" })
                .inc();
            return Err(AdapterError::QuotaExhausted {
                retry_after: wait.max(Duration::from_millis(1)),
            });
        }
        client_log::tell(|| notices::quota_wait(wait));
        tokio::time::sleep(wait).await;
        Ok(())
    }

    fn retry_delay(&self, error: &AdapterError, retries: u32) -> Option<Duration> {
        match error {
            AdapterError::Unavailable(_)
            | AdapterError::Timeout
            | AdapterError::RateLimited { retry_after: None } => Some(backoff(self.retry, retries)),
            AdapterError::RateLimited {
                retry_after: Some(after),
            } => (*after <= self.retry.max_delay).then_some(*after),
            _ => None,
        }
    }

    fn observe<T>(&self, result: &Result<T, AdapterError>, elapsed: Duration) {
        let outcome = match result {
            Ok(_) => "ok",
            Err(e) => e.class(),
        };
        self.seen
            .record(result.as_ref().err().map(AdapterError::class));
        self.metrics
            .upstream_requests
            .get_or_create(&UpstreamLabels {
                upstream: self.name.clone(),
                outcome,
            })
            .inc();
        self.metrics
            .upstream_duration
            .get_or_create(&UpstreamName {
                upstream: self.name.clone(),
            })
            .observe(elapsed.as_secs_f64());
    }
}

/// Exponential backoff with "equal jitter": half fixed, half random, capped.
fn backoff(retry: RetryConfig, retries: u32) -> Duration {
    let exp = retry
        .base_delay
        .saturating_mul(2u32.saturating_pow(retries))
        .min(retry.max_delay);
    let half = exp / 2;
    half + half.mul_f64(fastrand::f64())
}

/// Circuit states as exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitState {
    Closed,
    HalfOpen,
    Open,
}

impl CircuitState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::HalfOpen => "half_open",
            Self::Open => "open",
        }
    }
}

enum BreakerState {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// One trial call is in flight; others fail fast until it reports. A trial
    /// that never reports (cut off by the call deadline) is given up after
    /// `open_for`, so the breaker cannot stay half-open forever.
    HalfOpen {
        since: Instant,
    },
}

/// Counts consecutive health failures (unavailable, timeout); a refused request
/// still proves the upstream is alive and resets the count.
struct Breaker {
    config: BreakerConfig,
    state: Mutex<BreakerState>,
    name: String,
    metrics: Arc<Metrics>,
}

impl Breaker {
    fn new(config: BreakerConfig, name: String, metrics: Arc<Metrics>) -> Self {
        metrics
            .circuit_state
            .get_or_create(&UpstreamName {
                upstream: name.clone(),
            })
            .set(0);
        Self {
            config,
            state: Mutex::new(BreakerState::Closed { failures: 0 }),
            name,
            metrics,
        }
    }

    fn admit(&self) -> Result<(), AdapterError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *state {
            BreakerState::Closed { .. } => Ok(()),
            BreakerState::Open { until } if Instant::now() < until => {
                Err(AdapterError::CircuitOpen {
                    retry_after: until - Instant::now(),
                })
            }
            BreakerState::HalfOpen { since } if since.elapsed() < self.config.open_for => {
                Err(AdapterError::CircuitOpen {
                    retry_after: self.config.open_for - since.elapsed(),
                })
            }
            // Open long enough, or a lost trial: this call is the (new) trial.
            BreakerState::Open { .. } | BreakerState::HalfOpen { .. } => {
                *state = BreakerState::HalfOpen {
                    since: Instant::now(),
                };
                self.export(CircuitState::HalfOpen);
                Ok(())
            }
        }
    }

    fn record(&self, error: Option<&AdapterError>) {
        let health_failure = error.is_some_and(AdapterError::is_health_failure);
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let next = match (&*state, health_failure) {
            (_, false) => BreakerState::Closed { failures: 0 },
            (BreakerState::Closed { failures }, true)
                if failures + 1 < self.config.failures.max(1) =>
            {
                BreakerState::Closed {
                    failures: failures + 1,
                }
            }
            _ => {
                tracing::warn!(upstream = %self.name, open_for_s = self.config.open_for.as_secs(), "Circuit opened: upstream keeps failing.");
                BreakerState::Open {
                    until: Instant::now() + self.config.open_for,
                }
            }
        };
        let exported = match next {
            BreakerState::Closed { .. } => CircuitState::Closed,
            BreakerState::Open { .. } => CircuitState::Open,
            BreakerState::HalfOpen { .. } => CircuitState::HalfOpen,
        };
        *state = next;
        self.export(exported);
    }

    /// A half-open trial that did not happen: the next call may try instead.
    fn abandon_trial(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(*state, BreakerState::HalfOpen { .. }) {
            *state = BreakerState::Open {
                until: Instant::now(),
            };
        }
    }

    fn is_open(&self) -> bool {
        matches!(
            *self.state.lock().unwrap_or_else(|p| p.into_inner()),
            BreakerState::Open { .. }
        )
    }

    fn state(&self) -> CircuitState {
        match *self.state.lock().unwrap_or_else(|p| p.into_inner()) {
            BreakerState::Closed { .. } => CircuitState::Closed,
            BreakerState::Open { until } if Instant::now() >= until => CircuitState::HalfOpen,
            BreakerState::Open { .. } => CircuitState::Open,
            BreakerState::HalfOpen { .. } => CircuitState::HalfOpen,
        }
    }

    fn export(&self, state: CircuitState) {
        let value = match state {
            CircuitState::Closed => 0,
            CircuitState::HalfOpen => 1,
            CircuitState::Open => 2,
        };
        self.metrics
            .circuit_state
            .get_or_create(&UpstreamName {
                upstream: self.name.clone(),
            })
            .set(value);
    }
}
