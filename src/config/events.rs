//! `[events]` (how long the event log is kept) and `[webhooks.<id>]`
//! (endpoints that get every event of their dealerships, signed per Standard
//! Webhooks, from a durable cursor of their own).

use std::time::Duration;

use base64::Engine;
use schemars::JsonSchema;
use serde::Deserialize;

use super::mirror::MIN_INTERVAL;
use super::{Config, ConfigError, SecretSource, SyncInterval};
use crate::model::event::EventType;

/// The event log's retention. An event a webhook endpoint has not delivered
/// is kept past it, until the endpoint has it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EventsConfig {
    /// Events observed longer ago than this are purged.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub retention: Duration,
    /// How often old events are purged.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub purge_interval: Duration,
    /// How often the repair orders of every dealership that routes them are
    /// read to find status changes (`repair_order.updated`), or `"off"`: then
    /// only the repair orders agents read are compared.
    pub repair_order_watch: SyncInterval,
}

impl Default for EventsConfig {
    fn default() -> Self {
        Self {
            retention: Duration::from_secs(30 * 24 * 3600),
            purge_interval: Duration::from_secs(3600),
            repair_order_watch: SyncInterval::Off,
        }
    }
}

/// One webhook endpoint: events POSTed one at a time, in sequence order per
/// dealership, retried with jittered exponential backoff, then dead-lettered.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// `http(s)://` URL events are POSTed to. Redirects are not followed.
    pub url: String,
    /// The signing secret, `whsec_` followed by base64 of 24 to 64 bytes.
    pub secret: SecretSource,
    /// Dealership ids whose events go to this endpoint; `"*"` means all.
    pub dealerships: Vec<String>,
    /// Event types sent (`vehicle.created`, `lead.created`, …); empty means all.
    #[serde(default)]
    pub types: Vec<String>,
    /// Timeout of one POST.
    #[serde(default = "default_timeout", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub timeout: Duration,
    /// Attempts at one event before it is dead-lettered and the next one is sent.
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
    /// Wait before the first retry; doubles per attempt, with jitter.
    #[serde(default = "default_base_delay", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub base_delay: Duration,
    /// Longest wait between attempts (a longer `Retry-After` is cut to it).
    #[serde(default = "default_max_delay", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub max_delay: Duration,
}

fn default_timeout() -> Duration {
    Duration::from_secs(10)
}

fn default_max_attempts() -> u32 {
    12
}

fn default_base_delay() -> Duration {
    Duration::from_secs(2)
}

fn default_max_delay() -> Duration {
    Duration::from_secs(10 * 60)
}

/// The signing key of a Standard Webhooks secret (`whsec_<base64>`).
pub fn webhook_key(secret: &str) -> Result<Vec<u8>, String> {
    let Some(encoded) = secret.strip_prefix("whsec_") else {
        return Err("must start with whsec_ (Standard Webhooks)".into());
    };
    let key = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| "is not whsec_ followed by base64".to_owned())?;
    if (24..=64).contains(&key.len()) {
        Ok(key)
    } else {
        Err(format!(
            "decodes to {} bytes; use 24 to 64 random bytes",
            key.len()
        ))
    }
}

/// Checks of `[events]` and every `[webhooks.<id>]` (an inline secret here,
/// one from the environment or a file when it is read at build time).
pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    let e = &config.events;
    super::rules::require_durations(
        "events",
        &[
            ("retention", e.retention),
            ("purge_interval", e.purge_interval),
        ],
        errors,
    );
    if e.repair_order_watch
        .every()
        .is_some_and(|every| every < MIN_INTERVAL)
    {
        errors.push(ConfigError::new(
            "events.repair_order_watch",
            "must be at least 1s (or \"off\")",
        ));
    }
    for (id, hook) in &config.webhooks {
        validate_webhook(config, &format!("webhooks.{id}"), id, hook, errors);
    }
}

fn validate_webhook(
    config: &Config,
    path: &str,
    id: &str,
    hook: &WebhookConfig,
    errors: &mut Vec<ConfigError>,
) {
    if !super::rules::is_identifier(id) {
        errors.push(ConfigError::new(
            path,
            "webhook ids use 1-64 characters from a-z, 0-9, - and _",
        ));
    }
    super::rules::check_url(&format!("{path}.url"), &hook.url, errors);
    if let SecretSource::Value(v) = &hook.secret
        && let Err(problem) = webhook_key(secrecy::ExposeSecret::expose_secret(&v.0))
    {
        errors.push(ConfigError::new(format!("{path}.secret"), problem));
    }
    super::rules::check_dealership_ids(
        config,
        &format!("{path}.dealerships"),
        &hook.dealerships,
        errors,
    );
    for (i, t) in hook.types.iter().enumerate() {
        if EventType::parse(t).is_none() {
            let known: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
            errors.push(ConfigError::new(
                format!("{path}.types[{i}]"),
                format!("unknown event type {t:?}; known: {}", known.join(", ")),
            ));
        }
    }
    super::rules::require_durations(
        path,
        &[
            ("timeout", hook.timeout),
            ("base_delay", hook.base_delay),
            ("max_delay", hook.max_delay),
        ],
        errors,
    );
    if hook.max_attempts == 0 {
        errors.push(ConfigError::new(
            format!("{path}.max_attempts"),
            "must be at least 1",
        ));
    }
    if hook.base_delay > hook.max_delay {
        errors.push(ConfigError::new(
            format!("{path}.base_delay"),
            format!("must not exceed {path}.max_delay"),
        ));
    }
}

/// The dealership ids `hook` covers, `"*"` expanded to every configured one.
pub fn webhook_dealerships(config: &Config, hook: &WebhookConfig) -> Vec<String> {
    if hook.dealerships.iter().any(|d| d == "*") {
        return config.dealerships.iter().map(|d| d.id.clone()).collect();
    }
    let mut ids = hook.dealerships.clone();
    ids.sort();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_whsec_base64_of_24_to_64_bytes() {
        let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
        assert_eq!(
            webhook_key(&format!("whsec_{}", b64(32))).map(|k| k.len()),
            Ok(32)
        );
        assert!(webhook_key(&format!("whsec_{}", b64(16))).is_err());
        assert!(webhook_key(&format!("whsec_{}", b64(65))).is_err());
        assert!(webhook_key(&b64(32)).is_err());
        assert!(webhook_key("whsec_not base64!").is_err());
    }
}
