//! OAuth 2.1 sign-in: the bridge as a resource server (MCP authorization).
//! Access tokens are JWTs from one authorization server, checked locally
//! against its published keys.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Config, ConfigError};

/// `[oauth]`: where tokens come from and what they must say.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// The canonical URL of this MCP endpoint, exactly as users give it to
    /// their host (`https://mcp.dealergroup.example/mcp`). Tokens must carry
    /// it in `aud` (with or without a trailing slash).
    pub resource: String,
    /// The authorization server's issuer identifier; tokens' `iss` must equal it.
    pub issuer: String,
    /// Where its signing keys are. Default: `jwks_uri` from the issuer's
    /// RFC 8414 metadata (or its OpenID configuration).
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// Audiences accepted besides `resource` (an API identifier, say).
    #[serde(default)]
    pub audiences: Vec<String>,
    /// Clock skew allowed on `exp` and `nbf`.
    #[serde(default = "default_leeway", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub leeway: Duration,
    /// The claim holding the granted scopes: a space-separated string or an
    /// array (`scope`; Entra ID uses `scp`).
    #[serde(default = "default_scopes_claim")]
    pub scopes_claim: String,
    /// The claim holding the dealership ids a token may use (an array; `"*"`
    /// for all).
    #[serde(default = "default_dealerships_claim")]
    pub dealerships_claim: String,
    /// Dealerships by subject or client, for authorization servers that
    /// cannot put them in a claim.
    #[serde(default)]
    pub grants: Vec<OAuthGrant>,
    /// Longest wait for the issuer's metadata or keys; then the token is refused.
    #[serde(default = "default_jwks_timeout", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub jwks_timeout: Duration,
    /// Least time between two fetches of the keys when a token names a key
    /// the bridge does not know (rotation), so forged `kid`s cannot make it
    /// hammer the authorization server.
    #[serde(default = "default_refresh_interval", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub jwks_refresh_min_interval: Duration,
    /// Whether callers without a token are still served anonymously (public
    /// inventory of dealerships with `anonymous_inventory`). Off by default:
    /// hosts such as Claude and ChatGPT start the sign-in only when the
    /// bridge answers 401, and an anonymous answer would keep them from it.
    #[serde(default)]
    pub allow_anonymous: bool,
    /// Shown to users by hosts that read the protected resource metadata.
    #[serde(default)]
    pub resource_name: Option<String>,
}

/// Dealerships for the tokens of one subject (`sub`) or one client (`client_id`/`azp`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OAuthGrant {
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
    /// Dealership ids; `"*"` means all.
    pub dealerships: Vec<String>,
}

fn default_leeway() -> Duration {
    Duration::from_secs(60)
}

fn default_scopes_claim() -> String {
    "scope".into()
}

fn default_dealerships_claim() -> String {
    "amcp_dealerships".into()
}

fn default_jwks_timeout() -> Duration {
    Duration::from_secs(5)
}

fn default_refresh_interval() -> Duration {
    Duration::from_secs(30)
}

/// The problems of `[oauth]`, if set.
pub(super) fn validate(config: &Config, errors: &mut Vec<ConfigError>) {
    let Some(oauth) = &config.oauth else {
        return;
    };
    if let Some(url) = check_url("oauth.resource", &oauth.resource, errors) {
        if url.fragment().is_some() {
            errors.push(ConfigError::new(
                "oauth.resource",
                "a resource identifier has no fragment (RFC 8707)",
            ));
        }
        let path = url.path().trim_end_matches('/');
        if path != config.server.path.trim_end_matches('/') {
            errors.push(ConfigError::new(
                "oauth.resource",
                format!(
                    "its path {:?} is not server.path {:?}: hosts derive the resource from the URL they call",
                    url.path(),
                    config.server.path
                ),
            ));
        }
    }
    check_url("oauth.issuer", &oauth.issuer, errors);
    if let Some(uri) = &oauth.jwks_uri {
        check_url("oauth.jwks_uri", uri, errors);
    }
    for (i, audience) in oauth.audiences.iter().enumerate() {
        if audience.trim().is_empty() {
            errors.push(ConfigError::new(
                format!("oauth.audiences[{i}]"),
                "an audience must not be blank",
            ));
        }
    }
    for (name, value) in [
        ("scopes_claim", &oauth.scopes_claim),
        ("dealerships_claim", &oauth.dealerships_claim),
    ] {
        if value.trim().is_empty() {
            errors.push(ConfigError::new(
                format!("oauth.{name}"),
                "a claim name must not be blank",
            ));
        }
    }
    if oauth.jwks_timeout.is_zero() {
        errors.push(ConfigError::new(
            "oauth.jwks_timeout",
            "must be longer than zero",
        ));
    }
    for (i, grant) in oauth.grants.iter().enumerate() {
        validate_grant(config, &format!("oauth.grants[{i}]"), grant, errors);
    }
}

fn validate_grant(config: &Config, path: &str, grant: &OAuthGrant, errors: &mut Vec<ConfigError>) {
    if grant.subject.is_some() == grant.client_id.is_some() {
        errors.push(ConfigError::new(
            path.to_owned(),
            "name exactly one of subject and client_id",
        ));
    }
    for (j, id) in grant.dealerships.iter().enumerate() {
        if id != "*" && !config.dealerships.iter().any(|d| &d.id == id) {
            errors.push(ConfigError::new(
                format!("{path}.dealerships[{j}]"),
                format!("no dealership with id {id:?}"),
            ));
        }
    }
}

/// An absolute http(s) URL; plain http only to a loopback host.
fn check_url(path: &str, text: &str, errors: &mut Vec<ConfigError>) -> Option<url::Url> {
    let url = match url::Url::parse(text) {
        Ok(url) => url,
        Err(e) => {
            errors.push(ConfigError::new(
                path,
                format!("{text:?} is not a URL: {e}"),
            ));
            return None;
        }
    };
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        "http" => errors.push(ConfigError::new(
            path,
            format!("{text:?} must use https (plain http only to a loopback host)"),
        )),
        other => errors.push(ConfigError::new(
            path,
            format!("{text:?} has scheme {other:?}; use https"),
        )),
    }
    Some(url)
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}
