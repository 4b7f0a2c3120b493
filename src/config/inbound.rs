//! `upstreams.<id>.inbound_events`: a REST upstream's vendor pushes its change
//! events (CDK/Fortellis Event Relay) to `POST /events/inbound/<id>`, and each
//! one asks for a fresh read of the inventory of every dealership the upstream
//! serves it to.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Config, ConfigError, SecretSource, UpstreamConfig};

/// The smallest and largest `max_body` accepted.
const MIN_BODY: usize = 1024;
const MAX_BODY: usize = 4 * 1024 * 1024;

/// How the vendor's events are accepted.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InboundEventsConfig {
    /// Shared with the vendor. With `signing = "body"`: sent as
    /// `Authorization: Bearer <secret>`, or the key of `X-Signature:
    /// sha256=<hex HMAC-SHA256 of the body>`. With `"standard_webhooks"`: the
    /// signing secret (`whsec_<base64>`, or any text used as the key).
    pub secret: SecretSource,
    /// What the vendor signs: `"body"` (CDK/Fortellis Event Relay: the body
    /// only, so a captured push could come again under another event id;
    /// a body seen before is refused) or `"standard_webhooks"` (`webhook-id`,
    /// `webhook-timestamp` and the body, within five minutes of now).
    #[serde(default)]
    pub signing: InboundSigning,
    /// Largest event body read, e.g. `"256KiB"` (1 KiB to 4 MiB); larger gets 413.
    #[serde(default = "default_max_body")]
    pub max_body: String,
    /// Least time between two reads events ask of one dealership's inventory:
    /// events in between make one read at its end, whatever the push rate.
    #[serde(default = "default_min_read_interval", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub min_read_interval: std::time::Duration,
}

/// What an inbound event's signature covers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InboundSigning {
    #[default]
    Body,
    StandardWebhooks,
}

fn default_max_body() -> String {
    "256KiB".into()
}

fn default_min_read_interval() -> std::time::Duration {
    std::time::Duration::from_secs(10)
}

impl InboundEventsConfig {
    /// `max_body` in bytes, if it reads as a size within bounds.
    pub fn max_body_bytes(&self) -> Option<usize> {
        parse_size(&self.max_body).filter(|n| (MIN_BODY..=MAX_BODY).contains(n))
    }
}

/// `"512"`, `"512B"`, `"64KiB"`, `"1MiB"` (also `KB`/`MB`, taken as binary).
fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit_bytes: usize = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "KB" | "K" => 1024,
        "MiB" | "MB" | "M" => 1024 * 1024,
        _ => return None,
    };
    number.parse::<usize>().ok()?.checked_mul(unit_bytes)
}

/// Every REST upstream's `inbound_events`: a secret given inline is not
/// empty (one from the environment or a file is read at build time),
/// `max_body` is a size within bounds, and some dealership's mirrored
/// inventory is there to refresh.
pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    for (id, upstream) in &config.upstreams {
        let UpstreamConfig::Rest(rest) = upstream else {
            continue;
        };
        let Some(inbound) = &rest.inbound_events else {
            continue;
        };
        let path = format!("upstreams.{id}.inbound_events");
        let routed = config
            .dealerships
            .iter()
            .any(|d| d.routes.get(&crate::model::Domain::Inventory) == Some(id));
        if !routed {
            errors.push(ConfigError::new(
                path.clone(),
                "no dealership routes its inventory to this upstream, so no event would refresh anything",
            ));
        } else if rest.inventory_sync == super::SyncInterval::Off {
            errors.push(ConfigError::new(
                path.clone(),
                "needs a mirrored inventory: set inventory_sync to an interval, not \"off\"",
            ));
        }
        if let SecretSource::Value(v) = &inbound.secret
            && secrecy::ExposeSecret::expose_secret(&v.0).trim().is_empty()
        {
            errors.push(ConfigError::new(
                format!("{path}.secret"),
                "must not be empty",
            ));
        }
        if inbound.max_body_bytes().is_none() {
            errors.push(ConfigError::new(
                format!("{path}.max_body"),
                format!(
                    "{:?} is not a size between 1KiB and 4MiB (e.g. \"256KiB\")",
                    inbound.max_body
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_binary_units() {
        assert_eq!(parse_size("256KiB"), Some(256 * 1024));
        assert_eq!(parse_size("4MiB"), Some(4 * 1024 * 1024));
        assert_eq!(parse_size("2048"), Some(2048));
        assert_eq!(parse_size("2048 B"), Some(2048));
        assert_eq!(parse_size("1.5MiB"), None);
        assert_eq!(parse_size("KiB"), None);
        assert_eq!(parse_size("12 parsecs"), None);
    }
}
