//! `build()`: turns a validated [`Config`] into a running [`Gateway`]. This is
//! where I/O happens: secrets are read, profile and mapping files loaded,
//! clients created. Every problem is reported with its config path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use secrecy::ExposeSecret;
use tokio_util::sync::CancellationToken;

use crate::adapters::feed::FeedAdapter;
use crate::adapters::rest::{DealershipContext, RestAdapter};
use crate::adapters::{Adapter, UpstreamAdapter};
use crate::config::{
    Config, ConfigError, ConfigErrors, DealershipConfig, UpstreamConfig, resolve_secret,
};
use crate::gateway::auth::{Authenticator, DealershipGrant, Principal, Scope};
use crate::gateway::cursor::CursorCodec;
use crate::gateway::{Dealership, Gateway};
use crate::model::DealershipProfile;

/// A built gateway and the feed adapters whose refresh loops must be started.
pub struct Runtime {
    pub gateway: Gateway,
    feeds: Vec<FeedAdapter>,
}

impl Runtime {
    /// Starts background work (feed polling) until `cancel` fires.
    pub fn start(&self, cancel: &CancellationToken) {
        for feed in &self.feeds {
            feed.spawn_refresh(cancel.child_token());
        }
    }
}

/// Builds everything; `base` resolves relative paths (the config file's folder).
pub fn build(config: &Config, base: &Path) -> Result<Runtime, ConfigErrors> {
    let mut errors = Vec::new();
    let mut feeds = Vec::new();
    let mut dealerships = Vec::new();
    for (i, d) in config.dealerships.iter().enumerate() {
        if let Some(dealership) = build_dealership(config, i, d, base, &mut feeds, &mut errors) {
            dealerships.push(dealership);
        }
    }
    let auth = build_auth(config, base, &mut errors);
    let cursors = match &config.server.cursor_secret {
        Some(source) => match resolve_secret(source, base) {
            Ok(key) => CursorCodec::new(key.expose_secret().as_bytes()),
            Err(e) => {
                errors.push(ConfigError::new("server.cursor_secret", e));
                CursorCodec::random()
            }
        },
        None => CursorCodec::random(),
    };
    if !errors.is_empty() {
        return Err(ConfigErrors(errors));
    }
    Ok(Runtime {
        gateway: Gateway::new(dealerships, auth, config.limits.clone(), cursors),
        feeds,
    })
}

fn build_dealership(
    config: &Config,
    index: usize,
    d: &DealershipConfig,
    base: &Path,
    feeds: &mut Vec<FeedAdapter>,
    errors: &mut Vec<ConfigError>,
) -> Option<Dealership> {
    let timezone: chrono_tz::Tz = d.timezone.parse().ok()?;
    let context = DealershipContext {
        id: d.id.clone(),
        currency: d.currency.clone(),
        timezone,
    };
    let mut routes = BTreeMap::new();
    for (domain, upstream_id) in &d.routes {
        let at = format!("upstreams.{upstream_id}");
        let Some(upstream) = config.upstreams.get(upstream_id) else {
            continue;
        };
        let built = match upstream {
            UpstreamConfig::Rest(rest) => {
                RestAdapter::build(context.clone(), rest, base).map(|a| Adapter::Rest(Box::new(a)))
            }
            UpstreamConfig::Feed(feed) => {
                FeedAdapter::build(context.clone(), feed, base).map(|f| {
                    feeds.push(f.clone());
                    Adapter::Feed(f)
                })
            }
        };
        match built {
            Ok(adapter) if adapter.domains().contains(domain) => {
                routes.insert(*domain, Arc::new(adapter));
            }
            Ok(_) => errors.push(ConfigError::new(
                format!("dealerships[{index}].routes.{}", domain.as_str()),
                format!("upstream {upstream_id:?} has no operations for this domain"),
            )),
            Err(problems) => errors.extend(problems.into_iter().map(|p| located(&at, &p))),
        }
    }
    let profile = DealershipProfile {
        id: d.id.clone(),
        name: d.name.clone(),
        legal_name: d.legal_name.clone(),
        address: d.address.clone(),
        geo: d.geo,
        phones: d.phones.clone(),
        website: d.website.clone(),
        timezone: d.timezone.clone(),
        currency: d.currency.clone(),
        brands: d.brands.clone(),
        hours: d.hours.clone(),
        domains: routes.keys().copied().collect(),
        capabilities: d.capabilities.clone(),
    };
    Some(Dealership {
        profile,
        timezone,
        anonymous_inventory: d.anonymous_inventory,
        routes,
    })
}

/// Adapter problems read `client_id: …` or `profile headers.X: …`; a bare key
/// joins the upstream's path, anything else (another file) stays in the message.
fn located(at: &str, problem: &str) -> ConfigError {
    match problem.split_once(": ") {
        Some((key, message)) if !key.contains(' ') => {
            ConfigError::new(format!("{at}.{key}"), message)
        }
        _ => ConfigError::new(at, problem),
    }
}

fn build_auth(config: &Config, base: &Path, errors: &mut Vec<ConfigError>) -> Authenticator {
    let mut tokens = Vec::new();
    for (i, t) in config.tokens.iter().enumerate() {
        let secret = match resolve_secret(&t.secret, base) {
            Ok(s) => s,
            Err(e) => {
                errors.push(ConfigError::new(format!("tokens[{i}].secret"), e));
                continue;
            }
        };
        let dealerships = if t.dealerships.iter().any(|d| d == "*") {
            DealershipGrant::All
        } else {
            DealershipGrant::Only(t.dealerships.iter().cloned().collect())
        };
        let scopes = t.scopes.iter().filter_map(|s| Scope::parse(s)).collect();
        tokens.push((
            secret,
            Principal {
                name: Arc::from(t.name.as_str()),
                anonymous: false,
                dealerships,
                scopes,
            },
        ));
    }
    let anonymous: BTreeSet<String> = config
        .dealerships
        .iter()
        .filter(|d| d.anonymous_inventory)
        .map(|d| d.id.clone())
        .collect();
    Authenticator::new(tokens, anonymous)
}
