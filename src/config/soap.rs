//! Settings of a SOAP upstream instance (`kind = "soap"`).

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ResilienceConfig, SecretSource, default_upstream_timeout};

/// A SOAP/XML web service driven by a declarative SOAP profile
/// (`adapters/*.toml`, e.g. `opentrack`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SoapUpstreamConfig {
    /// A built-in SOAP profile name (e.g. `opentrack`) or a path to a profile file.
    pub profile: String,
    /// Base URL the profile's paths are appended to.
    pub base_url: String,
    /// WS-Security user name, for profiles with `security = "username_token"`.
    pub username: Option<SecretSource>,
    /// WS-Security password, for profiles with `security = "username_token"`.
    pub password: Option<SecretSource>,
    /// Named values the profile's templates use as `{vars.NAME}`
    /// (OpenTrack: `enterprise_code`, `company_number`).
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Timeout of one upstream HTTP request.
    #[serde(default = "default_upstream_timeout", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// Quota, retries and circuit breaker for this upstream.
    #[serde(default)]
    pub resilience: ResilienceConfig,
    /// How often the inventory mirror reads the profile's inventory (as for
    /// REST upstreams: default five minutes, `"off"` reads through on every
    /// cache miss). Ignored by profiles without an inventory.
    #[serde(default = "super::mirror::default_inventory_sync")]
    pub inventory_sync: super::SyncInterval,
}
