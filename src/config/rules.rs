//! Checks that several config sections share: URLs, identifiers, dealership
//! lists, phone numbers, durations.

use super::{Config, ConfigError};

pub(super) fn check_url(path: &str, url: &str, errors: &mut Vec<ConfigError>) {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
        // The URL is not repeated: it may carry a password.
        _ => errors.push(ConfigError::new(path, "is not an http(s) URL")),
    }
}

/// A list of dealership ids (or `"*"`) at `path`: not empty, each configured.
pub(super) fn check_dealership_ids(
    config: &Config,
    path: &str,
    ids: &[String],
    errors: &mut Vec<ConfigError>,
) {
    if ids.is_empty() {
        errors.push(ConfigError::new(
            path,
            "list at least one dealership id, or \"*\"",
        ));
    }
    for (i, id) in ids.iter().enumerate() {
        if id != "*" && !config.dealerships.iter().any(|d| &d.id == id) {
            errors.push(ConfigError::new(
                format!("{path}[{i}]"),
                format!("no dealership with id {id:?}"),
            ));
        }
    }
}

pub(super) fn is_identifier(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

pub(super) fn is_e164(s: &str) -> bool {
    let Some(digits) = s.strip_prefix('+') else {
        return false;
    };
    (2..=15).contains(&digits.len())
        && digits.chars().all(|c| c.is_ascii_digit())
        && !digits.starts_with('0')
}

/// Each `(key, duration)` of `section` must be longer than zero.
pub(super) fn require_durations(
    section: &str,
    durations: &[(&str, std::time::Duration)],
    errors: &mut Vec<ConfigError>,
) {
    for (key, value) in durations {
        if value.is_zero() {
            errors.push(ConfigError::new(
                format!("{section}.{key}"),
                "must be longer than 0s",
            ));
        }
    }
}
