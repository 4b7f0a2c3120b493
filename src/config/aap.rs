//! `[aap]` and each dealership's `aap = true`: the Auto Agent Protocol (AAP
//! v1.3, an A2A v1.0 profile) as a second front door onto the same tools.
//! A dealership with `aap = true` gets its agent card at
//! `/aap/<id>/.well-known/agent-card.json` and its JSON-RPC endpoint at
//! `/aap/<id>`; `[aap] well_known` names the one whose card also answers at
//! the host's `/.well-known/agent-card.json`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Config, ConfigError};

/// The AAP door's settings shared by every dealership that enables it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AapConfig {
    /// Scheme, host and optional port (and path prefix) buyer agents reach the
    /// bridge at, e.g. `https://agents.riverside.example`: the agent cards'
    /// interface URLs start with it. Default: `http://` and the request's
    /// `Host` (already checked against `server.allowed_hosts`); set it behind
    /// a TLS proxy.
    pub public_url: Option<String>,
    /// The dealership (with `aap = true`) whose agent card the host's own
    /// `/.well-known/agent-card.json` serves. Without it that path is 404.
    pub well_known: Option<String>,
}

impl AapConfig {
    /// `public_url` without a trailing slash.
    pub fn base(&self) -> Option<&str> {
        self.public_url.as_deref().map(|u| u.trim_end_matches('/'))
    }
}

/// Checks of `[aap]` against the dealerships.
pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    let Some(aap) = &config.aap else {
        return;
    };
    if let Some(url) = &aap.public_url
        && !public_url_ok(url)
    {
        errors.push(ConfigError::new(
            "aap.public_url",
            "must be an absolute http or https URL without query or fragment, e.g. https://agents.example.com",
        ));
    }
    if let Some(id) = &aap.well_known {
        match config.dealerships.iter().find(|d| &d.id == id) {
            None => errors.push(ConfigError::new(
                "aap.well_known",
                format!("no dealership has the id {id:?}"),
            )),
            Some(d) if !d.aap => errors.push(ConfigError::new(
                "aap.well_known",
                format!("dealership {id:?} does not have aap = true"),
            )),
            Some(_) => {}
        }
    }
}

fn public_url_ok(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    matches!(parsed.scheme(), "http" | "https")
        && parsed.host_str().is_some()
        && parsed.query().is_none()
        && parsed.fragment().is_none()
        && parsed.username().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_urls() {
        assert!(public_url_ok("https://agents.example.com"));
        assert!(public_url_ok("http://127.0.0.1:8080/bridge/"));
        assert!(!public_url_ok("agents.example.com"));
        assert!(!public_url_ok("ftp://agents.example.com"));
        assert!(!public_url_ok("https://agents.example.com/?x=1"));
        assert!(!public_url_ok("https://user@agents.example.com"));
    }
}
