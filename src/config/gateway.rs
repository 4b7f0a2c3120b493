//! Configuration of the gateway layer: cache, rate limits, upstream
//! resilience, the store and result limits.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::model::Domain;

/// A rate: `requests` per `per`, with an optional `burst` allowance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    pub requests: u32,
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub per: Duration,
    /// Requests allowed at once before the rate applies (callers: default `requests`; upstreams: default 1).
    pub burst: Option<u32>,
}

impl Rate {
    /// A governor quota for this rate; `default_burst` applies when the rate names none.
    pub fn quota(&self, default_burst: u32) -> Option<governor::Quota> {
        let requests = self.requests.max(1);
        let period = self.per.checked_div(requests)?;
        let burst = std::num::NonZeroU32::new(self.burst.unwrap_or(default_burst).max(1))?;
        governor::Quota::with_period(period.max(Duration::from_nanos(1)))
            .map(|q| q.allow_burst(burst))
    }
}

/// The read cache: read-only, idempotent tools only, keyed by dealership, tool and arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    pub enabled: bool,
    /// Most results kept at once.
    pub max_entries: u64,
    /// Time to live per domain; a domain without an entry is not cached.
    #[schemars(with = "BTreeMap<Domain, String>")]
    #[serde(deserialize_with = "durations")]
    pub ttl: BTreeMap<Domain, Duration>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_entries: 10_000,
            // Repair orders: some DMSs answer through a slow asynchronous query,
            // and paging through a list must not start it again for every page.
            ttl: BTreeMap::from([
                (Domain::Inventory, Duration::from_secs(60)),
                (Domain::RepairOrders, Duration::from_secs(60)),
            ]),
        }
    }
}

fn durations<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<Domain, Duration>, D::Error> {
    let raw = BTreeMap::<Domain, String>::deserialize(d)?;
    raw.into_iter()
        .map(|(k, v)| {
            humantime::parse_duration(&v)
                .map(|d| (k, d))
                .map_err(serde::de::Error::custom)
        })
        .collect()
}

/// Quotas on callers. Over quota, a call gets the `rate_limited` tool error with `retry_after_ms`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitsConfig {
    /// Every token (unless the token sets its own `rate_limit`), over all tools.
    pub per_token: Option<Rate>,
    /// Per token and tool class (`read`, `write`).
    pub per_class: BTreeMap<ToolClass, Rate>,
    /// Anonymous callers, per client IP address.
    pub anonymous: Option<Rate>,
}

impl Default for RateLimitsConfig {
    fn default() -> Self {
        let minute = Duration::from_secs(60);
        Self {
            per_token: Some(Rate {
                requests: 1200,
                per: minute,
                burst: Some(100),
            }),
            per_class: BTreeMap::from([(
                ToolClass::Write,
                Rate {
                    requests: 60,
                    per: minute,
                    burst: Some(10),
                },
            )]),
            anonymous: Some(Rate {
                requests: 120,
                per: minute,
                burst: Some(20),
            }),
        }
    }
}

/// Kinds of tools for quotas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolClass {
    Read,
    Write,
}

impl ToolClass {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
        }
    }
}

/// How the bridge treats one upstream: its quota, retries and circuit breaker.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResilienceConfig {
    /// The vendor's documented quota: at most `requests` in any window of
    /// `per`, wherever the window falls; the bridge never sends more.
    pub rate_limit: Option<Rate>,
    /// Headroom in that window for network and clock jitter: requests are
    /// spaced for a window this much longer than `per`, so one arriving up to
    /// this much late still keeps the vendor's count (default: a tenth of
    /// `per`, at most 1s).
    #[serde(default, with = "humantime_serde::option")]
    #[schemars(with = "Option<String>")]
    pub quota_margin: Option<Duration>,
    /// How long a call may wait for the quota before it gets `rate_limited` (default 2s).
    #[serde(default, with = "humantime_serde::option")]
    #[schemars(with = "Option<String>")]
    pub max_queue_wait: Option<Duration>,
    #[serde(default)]
    pub retries: RetryConfig,
    #[serde(default)]
    pub circuit_breaker: BreakerConfig,
}

/// Retries of idempotent reads on 429, 5xx and timeouts, with jittered exponential backoff.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RetryConfig {
    /// Retries after the first attempt (0 disables).
    pub max: u32,
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub base_delay: Duration,
    /// Longest wait between attempts; a `Retry-After` beyond it is not waited for.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub max_delay: Duration,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max: 2,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
        }
    }
}

/// Opens after `failures` consecutive failures; fails fast for `open_for`, then lets one call through.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    pub failures: u32,
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub open_for: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self {
            failures: 5,
            open_for: Duration::from_secs(30),
        }
    }
}

/// Durable state: audit records now; leads, idempotency keys and the outbox later.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `sqlite://path/to/file.db` (created if missing), `sqlite::memory:`, or
    /// `postgres://user@host:5432/database` (`postgresql://` too).
    pub url: String,
    /// Write one audit record per tool call.
    pub audit: bool,
    /// Seal customer data at rest; absent, it is stored in the clear (and
    /// the bridge says so at start).
    pub encryption: Option<super::EncryptionConfig>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: "sqlite://dms-bridge.db".into(),
            audit: true,
            encryption: None,
        }
    }
}
