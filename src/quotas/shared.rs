//! Quotas shared by every replica (`[quotas]`): one atomic GCRA check per call
//! in Redis, so N replicas together allow what one would. When Redis does not
//! answer within `[quotas] timeout`, each replica decides alone with a local
//! governor limiter at its share of the quota (quota / replicas, at least 1
//! request per period): never an unbounded burst, and the fallback is counted
//! (`dms_bridge_quota_fallbacks`) and shown on `/readyz` as a warning.
//!
//! Key layout: `<prefix><scope>:<key>` (for example
//! `dms-bridge:quota:token:alice`) holds the key's theoretical arrival time
//! (TAT) in microseconds of Redis's own clock, and expires when the quota is
//! full again, so idle keys disappear by themselves.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::DefaultKeyedRateLimiter;
use governor::clock::Clock;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::time::Instant;

use crate::config::{QuotasConfig, Rate};
use crate::telemetry::metrics::Metrics;

/// GCRA on one key. KEYS[1]: the key; ARGV[1]: the emission interval (µs
/// between requests at the sustained rate); ARGV[2]: the burst. Returns
/// `{1, 0}` when admitted, `{0, wait_µs}` when refused. Clocked by `TIME`
/// so replicas' clocks never matter; Redis ≥ 5 replicates the script's
/// effects, which makes `TIME` before a write safe.
const GCRA_SCRIPT: &str = concat!(
    now_lua!(),
    r"
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
",
    gcra_lua!()
);

/// After Redis failed, checks skip it this long before trying again, so a
/// hung Redis costs one timeout per interval, not one per call.
pub(super) const RETRY_REDIS_AFTER: Duration = Duration::from_secs(1);

/// What a quota said about one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Allowed,
    /// Refused; a request after `retry_after` would pass (if no one else takes the slot).
    Refused {
        retry_after: Duration,
    },
}

/// Why Redis could not decide a check (the check then falls back).
#[derive(Debug, thiserror::Error)]
pub enum SharedQuotaError {
    #[error("[quotas] url is not usable: {0}")]
    Url(#[source] redis::RedisError),
    #[error("Redis did not answer within {0:?}")]
    Timeout(Duration),
    #[error("Redis failed: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("the GCRA script answered {0:?}")]
    Answer(Vec<i64>),
}

/// Whether quotas are shared right now, for `/readyz`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedQuotaStatus {
    Shared,
    /// Redis did not answer; every replica enforces its local share.
    LocalShare {
        reason: String,
    },
}

/// The connection to Redis every shared quota of a process uses.
pub struct SharedQuotaStore {
    client: redis::Client,
    connection: tokio::sync::Mutex<Option<ConnectionManager>>,
    script: redis::Script,
    prefix: String,
    timeout: Duration,
    pub(super) replicas: u32,
    /// This process among the replicas present (vendor quotas, `quotas::vendor`).
    pub(super) replica_id: String,
    pub(super) standing: Mutex<Standing>,
    pub(super) metrics: Arc<Metrics>,
}

/// What this replica knows of Redis.
#[derive(Default, Clone)]
pub(super) struct Standing {
    /// Set after a failure: Redis is not asked before then (and why it failed).
    pub skip_until: Option<(Instant, String)>,
    /// Cut off since the last failure, until Redis answers again: vendor
    /// quotas decide locally (see `quotas::vendor`).
    pub cut_off: bool,
    /// When Redis last counted this replica present.
    pub present_at: Option<Instant>,
    /// Vendor requests decided here while cut off stay in the vendor's
    /// window until then.
    pub local_until: Option<Instant>,
}

impl SharedQuotaStore {
    /// Parses the URL; the connection is made on the first check (and again
    /// after Redis went away), so a bridge starts while Redis is down.
    pub fn new(
        config: &QuotasConfig,
        metrics: Arc<Metrics>,
    ) -> Result<Arc<Self>, SharedQuotaError> {
        let client = redis::Client::open(config.url.as_str()).map_err(SharedQuotaError::Url)?;
        Ok(Arc::new(Self {
            client,
            connection: tokio::sync::Mutex::new(None),
            script: redis::Script::new(GCRA_SCRIPT),
            prefix: config.prefix.clone(),
            timeout: config.timeout,
            replicas: config.replicas.max(1),
            replica_id: uuid::Uuid::new_v4().simple().to_string(),
            standing: Mutex::new(Standing::default()),
            metrics,
        }))
    }

    /// Local share from a failed check until a check succeeds again (also
    /// between retries, while Redis is not asked).
    pub fn status(&self) -> SharedQuotaStatus {
        match self.outage().map(|(_, reason)| reason) {
            Some(reason) => SharedQuotaStatus::LocalShare { reason },
            None => SharedQuotaStatus::Shared,
        }
    }

    /// When Redis may be asked again, and why it failed, during an outage;
    /// on the way back, while vendor requests decided here age out.
    fn outage(&self) -> Option<(Instant, String)> {
        let standing = self.standing.lock().ok()?;
        if let Some(outage) = &standing.skip_until {
            return Some(outage.clone());
        }
        let rejoining = standing
            .local_until
            .filter(|until| Instant::now() < *until)?;
        Some((
            rejoining,
            "back from an outage; vendor requests decided alone are still in the vendor's window"
                .into(),
        ))
    }

    /// Whether checks skip Redis now (it failed less than [`RETRY_REDIS_AFTER`] ago).
    pub(super) fn skipping(&self) -> bool {
        self.standing.lock().is_ok_and(|s| {
            s.skip_until
                .as_ref()
                .is_some_and(|(until, _)| Instant::now() < *until)
        })
    }

    pub(super) fn mark_down(&self, error: &SharedQuotaError) {
        tracing::warn!(error = %error, "Shared quotas unreachable; this replica enforces its local share.");
        if let Ok(mut standing) = self.standing.lock() {
            standing.skip_until = Some((Instant::now() + RETRY_REDIS_AFTER, error.to_string()));
            standing.cut_off = true;
        }
    }

    pub(super) fn mark_up(&self) {
        if let Ok(mut standing) = self.standing.lock() {
            standing.cut_off = false;
            if standing.skip_until.take().is_some() {
                tracing::info!("Shared quotas reachable again.");
            }
        }
    }

    /// `PREFIX` + `name`.
    pub(super) fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Runs `invoke` on the connection within the configured timeout.
    pub(super) async fn within_timeout<T, F, Fut>(&self, invoke: F) -> Result<T, SharedQuotaError>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: std::future::Future<Output = Result<T, SharedQuotaError>>,
    {
        let attempt = async { invoke(self.connection().await?).await };
        tokio::time::timeout(self.timeout, attempt)
            .await
            .map_err(|_| SharedQuotaError::Timeout(self.timeout))?
    }

    /// One GCRA check in Redis, within the configured timeout.
    async fn check_in_redis(
        &self,
        key: &str,
        rate: GcraRate,
    ) -> Result<Admission, SharedQuotaError> {
        self.within_timeout(|mut connection| async move {
            let answer: Vec<i64> = self
                .script
                .key(self.key(key))
                .arg(rate.interval_us)
                .arg(rate.burst)
                .invoke_async(&mut connection)
                .await?;
            admission_from(answer)
        })
        .await
    }

    /// The shared connection, made when there is none yet. The manager
    /// reconnects by itself once it exists.
    async fn connection(&self) -> Result<ConnectionManager, SharedQuotaError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            return Ok(connection.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1)
            .set_max_delay(RETRY_REDIS_AFTER);
        let connection = self
            .client
            .get_connection_manager_with_config(config)
            .await?;
        *slot = Some(connection.clone());
        Ok(connection)
    }
}

pub(super) fn admission_from(answer: Vec<i64>) -> Result<Admission, SharedQuotaError> {
    match answer.as_slice() {
        [1, _] => Ok(Admission::Allowed),
        [0, wait_us] if *wait_us >= 0 => Ok(Admission::Refused {
            retry_after: Duration::from_micros(*wait_us as u64).max(Duration::from_millis(1)),
        }),
        _ => Err(SharedQuotaError::Answer(answer)),
    }
}

/// A quota in the script's terms.
#[derive(Debug, Clone, Copy)]
struct GcraRate {
    interval_us: u64,
    burst: u32,
}

/// One quota (for example "per token") shared by every replica, keyed by caller.
pub struct SharedQuota {
    store: Arc<SharedQuotaStore>,
    scope: &'static str,
    rate: GcraRate,
    local_share: DefaultKeyedRateLimiter<String>,
}

impl SharedQuota {
    /// `default_burst` applies when `rate` names none (as in [`Rate::quota`]).
    /// `None` when the rate cannot be expressed (a zero period).
    pub fn new(
        store: Arc<SharedQuotaStore>,
        scope: &'static str,
        rate: &Rate,
        default_burst: u32,
    ) -> Option<Self> {
        let requests = rate.requests.max(1);
        let burst = rate.burst.unwrap_or(default_burst).max(1);
        let interval_us = u64::try_from(rate.per.checked_div(requests)?.as_micros())
            .ok()?
            .max(1);
        let local = local_share(rate, burst, store.replicas).quota(1)?;
        Some(Self {
            store,
            scope,
            rate: GcraRate { interval_us, burst },
            local_share: DefaultKeyedRateLimiter::keyed(local),
        })
    }

    /// Counts one request of `key` against the quota.
    pub async fn check(&self, key: &str) -> Admission {
        if !self.store.skipping() {
            match self
                .store
                .check_in_redis(&format!("{}:{key}", self.scope), self.rate)
                .await
            {
                Ok(admission) => {
                    self.store.mark_up();
                    return admission;
                }
                Err(error) => self.store.mark_down(&error),
            }
        }
        self.check_local_share(key)
    }

    fn check_local_share(&self, key: &str) -> Admission {
        self.store.metrics.quota_fallbacks.inc();
        match self.local_share.check_key(&key.to_owned()) {
            Ok(()) => Admission::Allowed,
            Err(not_until) => Admission::Refused {
                retry_after: not_until
                    .wait_time_from(self.local_share.clock().now())
                    .max(Duration::from_millis(1)),
            },
        }
    }

    /// Forgets callers whose local share is full again.
    pub fn forget_idle(&self) {
        self.local_share.retain_recent();
        self.local_share.shrink_to_fit();
    }
}

/// This replica's share of `rate` while it decides alone: the quota and its
/// burst divided by the replicas, at least 1 request per period.
fn local_share(rate: &Rate, burst: u32, replicas: u32) -> Rate {
    let replicas = replicas.max(1);
    Rate {
        requests: (rate.requests / replicas).max(1),
        per: rate.per,
        burst: Some((burst / replicas).max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_share_divides_rate_and_burst_and_keeps_one_request() {
        let rate = Rate {
            requests: 10,
            per: Duration::from_secs(1),
            burst: Some(10),
        };
        let share = local_share(&rate, 10, 3);
        assert_eq!((share.requests, share.burst), (3, Some(3)));
        let share = local_share(&rate, 10, 50);
        assert_eq!((share.requests, share.burst), (1, Some(1)));
    }

    #[test]
    fn odd_script_answers_are_errors() {
        assert_eq!(admission_from(vec![1, 0]).ok(), Some(Admission::Allowed));
        assert!(matches!(
            admission_from(vec![0, 2500]),
            Ok(Admission::Refused { retry_after }) if retry_after == Duration::from_micros(2500)
        ));
        assert!(admission_from(vec![7]).is_err());
    }
}
