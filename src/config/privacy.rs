//! `[store.encryption]` (customer data sealed at rest, with keys that rotate)
//! and `[retention]` (how long each kind of record is kept).

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Config, ConfigError, SecretSource};

/// Keys that seal customer data in the store: names, contact points,
/// addresses, consent grants and rendered ADF documents. Each key is 32
/// random bytes, written as 64 hex digits or as base64 (`dms-bridge keys
/// generate` prints one). Rows name the key that sealed them, so a key stays
/// listed until a rotation has resealed its rows (`dms-bridge keys status`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EncryptionConfig {
    /// The key new rows are sealed with, and to which the background
    /// rotation reseals older rows.
    pub current: String,
    /// Every key by id: the current one and those still sealing older rows.
    pub keys: BTreeMap<String, SecretSource>,
    /// Rows resealed per transaction by the background rotation.
    #[serde(default = "default_reseal_batch")]
    pub reseal_batch: u32,
}

fn default_reseal_batch() -> u32 {
    200
}

/// How long each kind of record is kept. A background purge, run by one
/// process of those sharing the store, removes what is older, in batches.
/// The event log's retention is `[events] retention`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RetentionConfig {
    /// After this, a lead's details go: its request (vehicle, message,
    /// address), its delivery and rendered document, its CRM status and its
    /// events. What proves the customer's consent stays until `consent_grants`.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub leads: Duration,
    /// After this, the rendered ADF document of a delivered lead is dropped
    /// (the CRM has it). Undelivered leads keep theirs for a retry. A
    /// document goes with its lead's details at `leads` at the latest.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub lead_documents: Duration,
    /// After this, what is left of a lead (the customer's name and contact
    /// points with the consent they gave, and every submission's grant) goes.
    /// At least `leads`.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub consent_grants: Duration,
    /// After this, a service booking (its consent grant included) goes.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub bookings: Duration,
    /// After this, audit rows (tool calls and refused requests) go.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub audit: Duration,
    /// After this, a unit gone from a dealership's inventory leaves the mirror.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub departed_units: Duration,
    /// How often the purge runs.
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub purge_interval: Duration,
    /// Rows removed per transaction, so that a purge never holds the store
    /// for long.
    pub batch: u32,
}

const DAY: u64 = 24 * 3600;

impl Default for RetentionConfig {
    fn default() -> Self {
        Self {
            leads: Duration::from_secs(730 * DAY),
            lead_documents: Duration::from_secs(90 * DAY),
            consent_grants: Duration::from_secs(5 * 365 * DAY),
            bookings: Duration::from_secs(730 * DAY),
            audit: Duration::from_secs(365 * DAY),
            departed_units: Duration::from_secs(90 * DAY),
            purge_interval: Duration::from_secs(3600),
            batch: 500,
        }
    }
}

/// The demo's key (`dms-bridge demo`): public, so never one to keep data under.
pub const DEMO_KEY: &str = "64656d6f2d6b65792d646f2d6e6f742d7573652d696e2d70726f64756374696f";

/// What `check` says of a config that is valid but keeps customer data
/// unprotected: no keys at all, or the demo's public key.
pub fn warnings(config: &Config) -> Vec<String> {
    use secrecy::ExposeSecret;
    let Some(e) = &config.store.encryption else {
        return vec![
            "[store.encryption] is not set: customer data will be stored in the clear \
             (docs/operations/data-lifecycle.md)"
                .into(),
        ];
    };
    e.keys
        .iter()
        .filter(|(_, source)| {
            matches!(source, SecretSource::Value(v) if v.0.expose_secret().trim() == DEMO_KEY)
        })
        .map(|(id, _)| {
            format!(
                "store.encryption.keys.{id} is the demo's public key: make your own with \
                 `dms-bridge keys generate` and keep it out of the config file"
            )
        })
        .collect()
}

/// Checks of `[retention]` and `[store.encryption]`.
pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    validate_retention(&config.retention, errors);
    if let Some(e) = &config.store.encryption {
        validate_encryption(e, errors);
    }
}

fn validate_retention(r: &RetentionConfig, errors: &mut Vec<ConfigError>) {
    let kinds = [
        ("leads", r.leads),
        ("lead_documents", r.lead_documents),
        ("consent_grants", r.consent_grants),
        ("bookings", r.bookings),
        ("audit", r.audit),
        ("departed_units", r.departed_units),
    ];
    for (name, kept) in kinds {
        if kept < Duration::from_secs(DAY) {
            errors.push(ConfigError::new(
                format!("retention.{name}"),
                "must be at least 1d",
            ));
        }
    }
    if r.consent_grants < r.leads {
        errors.push(ConfigError::new(
            "retention.consent_grants",
            "must be at least retention.leads: a lead's consent is kept as long as the lead",
        ));
    }
    if r.purge_interval < Duration::from_secs(1) || r.purge_interval > Duration::from_secs(DAY) {
        errors.push(ConfigError::new(
            "retention.purge_interval",
            "must be between 1s and 1d",
        ));
    }
    if !(1..=10_000).contains(&r.batch) {
        errors.push(ConfigError::new(
            "retention.batch",
            "must be between 1 and 10000",
        ));
    }
}

fn validate_encryption(e: &EncryptionConfig, errors: &mut Vec<ConfigError>) {
    if !e.keys.contains_key(&e.current) {
        errors.push(ConfigError::new(
            "store.encryption.current",
            format!("names no key under store.encryption.keys: {:?}", e.current),
        ));
    }
    for id in e.keys.keys() {
        let fits = !id.is_empty()
            && id.len() <= 32
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !fits {
            errors.push(ConfigError::new(
                format!("store.encryption.keys.{id}"),
                "a key id is 1 to 32 letters, digits, - or _",
            ));
        }
    }
    if let Some(problem) = e.keys.values().find_map(inline_problem) {
        errors.push(ConfigError::new("store.encryption.keys", problem));
    }
    if !(1..=10_000).contains(&e.reseal_batch) {
        errors.push(ConfigError::new(
            "store.encryption.reseal_batch",
            "must be between 1 and 10000",
        ));
    }
}

/// An inline key is checked here; keys from files and the environment when
/// the runtime reads them.
fn inline_problem(source: &SecretSource) -> Option<String> {
    use secrecy::ExposeSecret;
    match source {
        SecretSource::Value(v) => key_bytes(v.0.expose_secret()).err(),
        _ => None,
    }
}

/// 32 bytes from 64 hex digits or from base64.
pub fn key_bytes(text: &str) -> Result<[u8; 32], String> {
    use base64::Engine;
    let text = text.trim();
    let bytes = if text.len() == 64 && text.chars().all(|c| c.is_ascii_hexdigit()) {
        hex::decode(text).map_err(|e| e.to_string())?
    } else {
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|_| "a key is 64 hex digits or base64 of 32 bytes".to_owned())?
    };
    bytes
        .try_into()
        .map_err(|_| "a key is 32 bytes (64 hex digits, or 44 characters of base64)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(toml: &str) -> Vec<String> {
        match crate::config::from_toml_str(toml) {
            Ok(_) => Vec::new(),
            Err(e) => e.0.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn retention_and_keys_are_checked_with_their_paths() {
        // (The configs below have no dealership: that problem is not theirs.)
        let fine = problems("[retention]\nleads = \"30d\"\nlead_documents = \"90d\"\n");
        assert!(!fine.iter().any(|p| p.starts_with("retention")), "{fine:?}");
        let bad = problems(
            "[retention]\nleads = \"400d\"\nconsent_grants = \"300d\"\naudit = \"1h\"\nbatch = 0\n\
             [store.encryption]\ncurrent = \"k2\"\nkeys = { k1 = { value = \"short\" }, \"bad id\" = { env = \"X\" } }\n",
        );
        for path in [
            "retention.consent_grants",
            "retention.audit",
            "retention.batch",
            "store.encryption.current",
            "store.encryption.keys.bad id",
            "store.encryption.keys:",
        ] {
            assert!(bad.iter().any(|p| p.starts_with(path)), "{path}: {bad:?}");
        }
    }

    #[test]
    fn check_warns_of_data_in_the_clear_and_of_the_demo_key() {
        let demo = include_str!("../cli/demo.toml");
        assert!(demo.contains(DEMO_KEY), "the demo's key is DEMO_KEY");
        let parsed: Config = toml::from_str(&format!(
            "[store.encryption]\ncurrent = \"d\"\nkeys = {{ d = {{ value = \"{DEMO_KEY}\" }}, own = {{ env = \"K\" }} }}\n"
        ))
        .unwrap();
        assert_eq!(warnings(&parsed).len(), 1);
        assert!(warnings(&parsed)[0].starts_with("store.encryption.keys.d is the demo's"));
        let clear: Config = toml::from_str("").unwrap();
        assert!(warnings(&clear)[0].contains("in the clear"));
    }

    #[test]
    fn keys_are_32_bytes_as_hex_or_base64() {
        assert_eq!(key_bytes(&"ab".repeat(32)).unwrap(), [0xab; 32]);
        let b64 = "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=";
        assert_eq!(key_bytes(b64).unwrap(), [0xab; 32]);
        assert!(key_bytes("abcd").is_err());
        assert!(key_bytes(&"ab".repeat(31)).is_err());
    }
}
