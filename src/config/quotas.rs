//! `[quotas]`: quotas shared by every replica through Redis. Without the
//! table each process keeps its own quotas (one node).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Config, ConfigError};

/// Where replicas keep their shared quotas, and what each does when it cannot reach it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotasConfig {
    /// `redis://host:port/db` (this build has no TLS to Redis).
    pub url: String,
    /// Prepended to every key, so several bridges can share one Redis.
    #[serde(default = "default_prefix")]
    pub prefix: String,
    /// Longest wait for Redis on one check; then this replica decides alone.
    #[serde(default = "default_timeout", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// Replicas running. While Redis is unreachable each replica allows this
    /// share of every quota (at least 1 request per period), so together they
    /// stay within it.
    pub replicas: u32,
}

fn default_prefix() -> String {
    "dms-bridge:quota:".into()
}

fn default_timeout() -> Duration {
    Duration::from_millis(50)
}

/// A check waits on Redis at most this long: a quota check sits on every call.
const MAX_TIMEOUT: Duration = Duration::from_secs(2);

/// Checks of `[quotas]`: the URL's shape only (no connection is made).
pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    let Some(q) = &config.quotas else {
        return;
    };
    if let Err(problem) = redis_url_problem(&q.url) {
        errors.push(ConfigError::new("quotas.url", problem));
    }
    if q.prefix.is_empty() {
        errors.push(ConfigError::new(
            "quotas.prefix",
            "must not be empty (keys of other programs could collide)",
        ));
    }
    if q.timeout.is_zero() || q.timeout > MAX_TIMEOUT {
        errors.push(ConfigError::new(
            "quotas.timeout",
            "must be longer than 0s and at most 2s",
        ));
    }
    if q.replicas == 0 {
        errors.push(ConfigError::new("quotas.replicas", "must be at least 1"));
    }
}

/// The URL's problem, in words that never repeat the URL: it may carry
/// Redis's password.
fn redis_url_problem(raw: &str) -> Result<(), String> {
    let url = url::Url::parse(raw).map_err(|e| format!("not a URL ({e})"))?;
    match url.scheme() {
        "redis" => {}
        // The redis crate is built without TLS here: refuse now, not at start.
        "rediss" => {
            return Err("rediss:// (TLS) is not supported by this build; use redis://".into());
        }
        _ => return Err("must start with redis://".into()),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("names no host".into());
    }
    let db = url.path().trim_start_matches('/');
    if !db.is_empty() && db.parse::<u32>().is_err() {
        return Err("the path must be a database number (redis://host:6379/0)".into());
    }
    Ok(())
}
