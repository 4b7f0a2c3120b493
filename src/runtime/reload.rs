//! Reloading credentials without a restart: on SIGHUP, or when the config
//! file or a secret file it names changes, the config is read again and the
//! static tokens, every upstream's credentials (the CRMs' among them), the
//! webhook signing keys and the inbound events' secrets are replaced at once.
//!
//! All or nothing: every new secret is read and every adapter built before
//! anything is swapped, so a reload with any problem (a missing secret file,
//! a bad value) changes nothing and the log says why. A change that cannot
//! take effect while running (a new dealership, an upstream's kind or quota,
//! the listen address…) refuses the reload, naming it, rather than applying
//! part of the file. Calls in flight keep the tokens and adapters they began
//! with; the next call takes the new ones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::adapters::{AdapterKind, UpstreamInstance};
use crate::config::{Config, ConfigError, ConfigErrors, SecretSource, load_file};
use crate::gateway::Gateway;
use crate::mirror::InboundSinks;

/// What a reload replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloaded {
    pub tokens: usize,
    /// Upstream instances (one per dealership and upstream) rebuilt.
    pub adapters: usize,
    pub webhook_keys: usize,
    pub inbound_secrets: usize,
}

/// Why a reload changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    #[error("{0}")]
    Config(ConfigErrors),
    #[error("these changes need a restart, so nothing was reloaded: {}", .0.join(", "))]
    NeedsRestart(Vec<String>),
}

/// Everything a reload replaces, and the config it was built from.
pub struct Reloader {
    path: PathBuf,
    base: PathBuf,
    gateway: Gateway,
    inbound: InboundSinks,
    webhooks: crate::webhooks::Status,
    /// The config as last applied (raw), to tell what a new file changes.
    applied: std::sync::Mutex<toml::Table>,
    /// One reload at a time (a signal and a file change can coincide).
    turn: tokio::sync::Mutex<()>,
}

impl Reloader {
    /// `path`: the config file the bridge was started with.
    pub fn new(
        path: &Path,
        gateway: Gateway,
        inbound: InboundSinks,
        webhooks: crate::webhooks::Status,
    ) -> std::io::Result<Self> {
        let applied = read_raw(path)?;
        Ok(Self {
            base: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            path: path.to_path_buf(),
            gateway,
            inbound,
            webhooks,
            applied: std::sync::Mutex::new(applied),
            turn: tokio::sync::Mutex::new(()),
        })
    }

    /// Reads the config again and replaces every credential, or nothing.
    pub async fn reload(&self) -> Result<Reloaded, ReloadError> {
        let _turn = self.turn.lock().await;
        let config = load_file(&self.path).map_err(ReloadError::Config)?;
        let raw = read_raw(&self.path).map_err(|e| {
            ReloadError::Config(ConfigErrors(vec![ConfigError::new("", e.to_string())]))
        })?;
        let blocked = match self.applied.lock() {
            Ok(applied) => needs_restart(&applied, &raw),
            Err(_) => vec!["(the last applied config is unreadable)".into()],
        };
        if !blocked.is_empty() {
            return Err(ReloadError::NeedsRestart(blocked));
        }
        let staged = self.stage(&config)?;
        let reloaded = staged.summary();
        self.swap(staged);
        if let Ok(mut applied) = self.applied.lock() {
            *applied = raw;
        }
        Ok(reloaded)
    }

    /// Builds every replacement; the first problem anywhere stops the reload.
    fn stage(&self, config: &Config) -> Result<Staged, ReloadError> {
        let mut errors = Vec::new();
        let tokens = super::static_tokens(config, &self.base, &mut errors);
        let adapters = self.stage_adapters(config, &mut errors);
        let inbound = InboundSinks::build(config, &self.base, &mut errors);
        let webhooks = crate::webhooks::build(config, &self.base, &mut errors);
        if !errors.is_empty() {
            return Err(ReloadError::Config(ConfigErrors(errors)));
        }
        Ok(Staged {
            tokens,
            adapters,
            inbound,
            webhooks,
        })
    }

    /// A new kind for every running (dealership, upstream) instance, keeping
    /// its policy (quota and circuit state carry over).
    fn stage_adapters(
        &self,
        config: &Config,
        errors: &mut Vec<ConfigError>,
    ) -> Vec<(Arc<crate::adapters::Adapter>, AdapterKind)> {
        let mut staged = Vec::new();
        for dealership in self.gateway.dealerships() {
            let Some(d) = config
                .dealerships
                .iter()
                .find(|d| d.id == dealership.profile.id)
            else {
                continue;
            };
            let Some(context) = super::dealership_context(d) else {
                continue;
            };
            let mut seen = BTreeMap::new();
            for route in dealership.routes.values() {
                if seen.insert(route.upstream.as_str(), ()).is_some() {
                    continue;
                }
                let Some(upstream) = config.upstreams.get(&route.upstream) else {
                    continue;
                };
                let instance = UpstreamInstance {
                    name: &route.upstream,
                    policy: route.adapter.shared_policy(),
                };
                let at = format!("upstreams.{}", route.upstream);
                match AdapterKind::build(&instance, &context, upstream, &self.base) {
                    Ok(kind) if route.adapter.fits(&kind).is_ok() => {
                        staged.push((route.adapter.clone(), kind));
                    }
                    Ok(_) => errors.push(ConfigError::new(
                        at,
                        "now serves other domains (its profile changed); that needs a restart",
                    )),
                    Err(problems) => errors.extend(problems.into_iter().map(|p| {
                        super::at_upstream(&at, p, upstream.kind().profile(), &self.base)
                    })),
                }
            }
        }
        staged
    }

    fn swap(&self, staged: Staged) {
        self.gateway.authenticator().replace_tokens(staged.tokens);
        for (adapter, kind) in staged.adapters {
            adapter.replace(kind);
        }
        self.inbound.replace(&staged.inbound);
        for running in self.webhooks.endpoints() {
            if let Some(new) = staged
                .webhooks
                .endpoints()
                .iter()
                .find(|e| e.id == running.id)
            {
                running.take_key_of(new);
            }
        }
    }

    /// The files whose change triggers a reload: the config and every
    /// secret it reads from a file, with their modification times now.
    pub fn watched(&self) -> Vec<(PathBuf, Option<SystemTime>)> {
        let mut files = vec![self.path.clone()];
        if let Ok(config) = load_file(&self.path) {
            files.extend(secret_files(&config).into_iter().map(|f| self.base.join(f)));
        }
        files
            .into_iter()
            .map(|f| {
                let modified = std::fs::metadata(&f).and_then(|m| m.modified()).ok();
                (f, modified)
            })
            .collect()
    }
}

/// Replacements built and checked, not yet in use.
struct Staged {
    tokens: Vec<(secrecy::SecretString, crate::contract::principal::Principal)>,
    adapters: Vec<(Arc<crate::adapters::Adapter>, AdapterKind)>,
    inbound: InboundSinks,
    webhooks: crate::webhooks::Webhooks,
}

impl Staged {
    fn summary(&self) -> Reloaded {
        Reloaded {
            tokens: self.tokens.len(),
            adapters: self.adapters.len(),
            webhook_keys: self.webhooks.endpoints().len(),
            inbound_secrets: self.inbound.len(),
        }
    }
}

fn read_raw(path: &Path) -> std::io::Result<toml::Table> {
    let text = std::fs::read_to_string(path)?;
    toml::from_str(&text).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Top-level tables a reload applies; within them, keys it cannot.
const RELOADED: &[&str] = &["tokens", "upstreams", "webhooks"];
/// Upstream keys kept from start: the quota and circuit breaker (the policy
/// carries its state over) and how often the mirror reads.
const FIXED_UPSTREAM_KEYS: &[&str] = &["kind", "resilience", "inventory_sync", "refresh_interval"];

/// What differs between the applied config and `new` that a reload cannot
/// apply, as config paths (empty: the reload may go ahead).
fn needs_restart(applied: &toml::Table, new: &toml::Table) -> Vec<String> {
    let mut blocked = Vec::new();
    let keys: std::collections::BTreeSet<&String> = applied.keys().chain(new.keys()).collect();
    for key in keys {
        if !RELOADED.contains(&key.as_str()) && applied.get(key) != new.get(key) {
            blocked.push(format!("[{key}]"));
        }
    }
    let table = |t: &toml::Table, k: &str| {
        t.get(k)
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_default()
    };
    let (old_up, new_up) = (table(applied, "upstreams"), table(new, "upstreams"));
    if old_up.keys().ne(new_up.keys()) {
        blocked.push("the set of [upstreams]".into());
    }
    for (id, old) in &old_up {
        let new = new_up.get(id);
        for key in FIXED_UPSTREAM_KEYS {
            if old.get(key) != new.and_then(|n| n.get(key)) {
                blocked.push(format!("upstreams.{id}.{key}"));
            }
        }
    }
    let (old_hooks, new_hooks) = (table(applied, "webhooks"), table(new, "webhooks"));
    if old_hooks.keys().ne(new_hooks.keys()) {
        blocked.push("the set of [webhooks]".into());
    }
    for (id, old) in &old_hooks {
        let without_secret = |v: Option<&toml::Value>| {
            v.and_then(toml::Value::as_table).map(|t| {
                let mut t = t.clone();
                t.remove("secret");
                t
            })
        };
        if without_secret(Some(old)) != without_secret(new_hooks.get(id)) {
            blocked.push(format!("webhooks.{id} (only its secret reloads)"));
        }
    }
    let rate_limits = |t: &toml::Table| -> Vec<(Option<toml::Value>, Option<toml::Value>)> {
        t.get("tokens")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|tok| {
                let rate = tok.get("rate_limit")?.clone();
                Some((tok.get("name").cloned(), Some(rate)))
            })
            .collect()
    };
    if rate_limits(applied) != rate_limits(new) {
        blocked.push("tokens[].rate_limit".into());
    }
    blocked
}

/// Every secret the config reads from a file.
fn secret_files(config: &Config) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut add = |s: &SecretSource| {
        if let SecretSource::File(path) = s {
            files.push(path.clone());
        }
    };
    for token in &config.tokens {
        add(&token.secret);
    }
    for hook in config.webhooks.values() {
        add(&hook.secret);
    }
    for upstream in config.upstreams.values() {
        for source in upstream.secret_sources() {
            add(source);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn raw(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn only_credentials_and_upstream_settings_reload() {
        let old = raw(r#"
            [server]
            listen = "127.0.0.1:1"
            [upstreams.a]
            kind = "rest"
            client_secret = { value = "one" }
            resilience = { retries = { max = 1 } }
            [[tokens]]
            name = "t"
            secret = { value = "s1" }
        "#);
        let rotated = raw(r#"
            [server]
            listen = "127.0.0.1:1"
            [upstreams.a]
            kind = "rest"
            client_secret = { file = "secret" }
            resilience = { retries = { max = 1 } }
            [[tokens]]
            name = "t"
            secret = { value = "s2" }
            [[tokens]]
            name = "u"
            secret = { value = "s3" }
        "#);
        assert!(needs_restart(&old, &rotated).is_empty());
        let moved = raw(&toml::to_string(&rotated)
            .unwrap()
            .replace("127.0.0.1:1", "127.0.0.1:2"));
        assert_eq!(needs_restart(&old, &moved), ["[server]"]);
        let mut requota = rotated.clone();
        requota["upstreams"]["a"]["resilience"] = toml::Value::String("x".into());
        requota.insert("upstreams2".into(), toml::Value::Integer(1));
        assert_eq!(
            needs_restart(&old, &requota),
            ["[upstreams2]", "upstreams.a.resilience"]
        );
    }
}
