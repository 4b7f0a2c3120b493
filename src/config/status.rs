//! `[status]`: the status page for people (`GET /status`), behind an operator
//! credential that no agent token grants. Without the table there is no page.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Config, ConfigError, SecretSource};

/// The operator's status page.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusConfig {
    /// The operator's credential: typed into the page's sign-in form, or sent
    /// as `Authorization: Bearer` by a script. It must differ from every
    /// `[[tokens]]` secret; no agent token or OAuth access token opens the page.
    pub operator_token: SecretSource,
    /// Where the page is served.
    #[serde(default = "default_path")]
    pub path: String,
    /// How long a sign-in lasts before the form is asked again.
    #[serde(default = "default_session", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub session: Duration,
}

fn default_path() -> String {
    "/status".into()
}

fn default_session() -> Duration {
    Duration::from_secs(8 * 3600)
}

/// Paths the bridge serves itself, which the page must not shadow.
const TAKEN: &[&str] = &[
    "/healthz",
    "/readyz",
    "/metrics",
    "/events",
    "/.well-known",
    "/aap",
];

/// Checks of `[status]`: the path's shape and the session's length.
pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    let Some(s) = &config.status else {
        return;
    };
    let path = s.path.as_str();
    let segments_ok = path.split('/').skip(1).all(|seg| {
        !seg.is_empty()
            && seg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    });
    if !path.starts_with('/') || path == "/" || !segments_ok {
        errors.push(ConfigError::new(
            "status.path",
            "must be an absolute path like /status (letters, digits, -, _ and . between slashes)",
        ));
    } else if path == config.server.path
        || TAKEN
            .iter()
            .any(|t| path == *t || path.starts_with(&format!("{t}/")))
    {
        errors.push(ConfigError::new(
            "status.path",
            format!("{path} is a path the bridge serves already"),
        ));
    }
    if s.session < Duration::from_secs(60) || s.session > Duration::from_secs(7 * 24 * 3600) {
        errors.push(ConfigError::new(
            "status.session",
            "must be between 1m and 7d",
        ));
    }
}
