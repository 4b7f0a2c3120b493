//! `[mirror]`: the inventory mirror. Each dealership's inventory is read in
//! the background (`upstreams.<id>.inventory_sync` for REST upstreams, a
//! feed's `refresh_interval`) and inventory reads are answered from the copy;
//! the differences between two reads are the `vehicle.*` events.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use super::{Config, ConfigError};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MirrorConfig {
    /// With no successful read for this long, inventory answers carry a
    /// `stale` notice and `/readyz` names the dealership.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub stale_after: Duration,
    /// The mass-removal guard: a read that would remove more than this share
    /// of a dealership's listed units (a vendor answering a truncated or
    /// empty inventory) is held back…
    pub max_removed_share: f64,
    /// …until this many reads in a row agree (a real clearance sale).
    pub confirm_removals: u32,
}

impl Default for MirrorConfig {
    fn default() -> Self {
        Self {
            stale_after: Duration::from_secs(60 * 60),
            max_removed_share: 0.5,
            confirm_removals: 3,
        }
    }
}

/// How often something is read in the background: a duration, or `"off"`.
/// A REST or SOAP upstream's `inventory_sync` (default five minutes; `"off"` reads
/// through on every cache miss, as before the mirror, and makes no
/// `vehicle.*` events) and `[events] repair_order_watch` (default off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(with = "String")]
pub enum SyncInterval {
    Every(Duration),
    Off,
}

impl SyncInterval {
    /// The interval, unless off.
    pub fn every(self) -> Option<Duration> {
        match self {
            Self::Every(every) => Some(every),
            Self::Off => None,
        }
    }
}

/// A REST upstream's inventory is mirrored every five minutes unless told otherwise.
pub(crate) fn default_inventory_sync() -> SyncInterval {
    SyncInterval::Every(Duration::from_secs(5 * 60))
}

impl<'de> Deserialize<'de> for SyncInterval {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text == "off" {
            return Ok(Self::Off);
        }
        humantime::parse_duration(&text)
            .map(Self::Every)
            .map_err(|e| serde::de::Error::custom(format!("{text:?}: {e} (or \"off\")")))
    }
}

/// Background reads more often than this would only burn the vendor's quota.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_secs(1);

pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    let m = &config.mirror;
    super::rules::require_durations("mirror", &[("stale_after", m.stale_after)], errors);
    if !(m.max_removed_share > 0.0 && m.max_removed_share <= 1.0) {
        errors.push(ConfigError::new(
            "mirror.max_removed_share",
            "must be above 0 and at most 1",
        ));
    }
    if m.confirm_removals == 0 {
        errors.push(ConfigError::new(
            "mirror.confirm_removals",
            "must be at least 1",
        ));
    }
    for (id, upstream) in &config.upstreams {
        let sync = match upstream {
            super::UpstreamConfig::Rest(rest) => rest.inventory_sync,
            super::UpstreamConfig::Soap(soap) => soap.inventory_sync,
            _ => continue,
        };
        if sync.every().is_some_and(|every| every < MIN_INTERVAL) {
            errors.push(ConfigError::new(
                format!("upstreams.{id}.inventory_sync"),
                "must be at least 1s (or \"off\")",
            ));
        }
    }
}
