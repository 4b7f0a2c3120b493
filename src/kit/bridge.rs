//! The bridge `verify` and `probe` talk to: the operator's own config,
//! narrowed to one upstream and one dealership, with nothing that could hide
//! the upstream (no read cache, no inventory mirror), a store of its own in a
//! temporary folder (never the deployment's), and a token of its own with
//! read scopes only. Verify builds one fresh for each fault cell, so no
//! circuit breaker, kept answer or token carries over.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::config::{
    Config, InlineSecret, SecretSource, SyncInterval, TokenConfig, UpstreamConfig,
};
use crate::contract::Principal;
use crate::gateway::{Caller, Gateway};
use crate::model::Domain;
use crate::runtime::{self, Started};
use crate::telemetry::door::Door;
use crate::telemetry::trace::TraceContext;

/// Why the bridge under test could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Target(String),
    #[error("the config does not build: {0}")]
    Build(String),
    #[error("the verify store could not be opened: {0}")]
    Store(String),
}

/// The upstream under test and the dealership it is read for.
#[derive(Clone)]
pub struct Target {
    config: Config,
    base: PathBuf,
    pub upstream: String,
    pub dealership: String,
    /// The domains the dealership routes to the upstream, in a fixed order.
    pub domains: Vec<Domain>,
    store_dir: Arc<tempfile::TempDir>,
    /// Bridges started so far, to give each its own store.
    bridges: Arc<std::sync::atomic::AtomicUsize>,
}

const VERIFY_TOKEN: &str = "dms-bridge-verify";
const READ_SCOPES: &[&str] = &[
    "amcp:inventory:read",
    "amcp:service:read",
    "amcp:deals:read",
];

impl Target {
    /// Picks `upstream` and the dealership to read it for (the first that
    /// routes a domain to it, unless `dealership` names one).
    pub fn new(
        mut config: Config,
        base: &Path,
        upstream: &str,
        dealership: Option<&str>,
    ) -> Result<Self, SetupError> {
        if !config.upstreams.contains_key(upstream) {
            let known: Vec<&str> = config.upstreams.keys().map(String::as_str).collect();
            return Err(SetupError::Target(format!(
                "no upstream {upstream:?} in the config; it has: {}",
                known.join(", ")
            )));
        }
        let routes_here = |d: &crate::config::DealershipConfig| {
            d.routes.values().any(|u| u == upstream)
                && dealership.is_none_or(|wanted| d.id == wanted)
        };
        let Some(chosen) = config.dealerships.iter().find(|d| routes_here(d)) else {
            return Err(SetupError::Target(format!(
                "no dealership{} routes a domain to upstream {upstream:?}",
                dealership.map(|d| format!(" {d:?}")).unwrap_or_default()
            )));
        };
        let id = chosen.id.clone();
        let domains: Vec<Domain> = chosen
            .routes
            .iter()
            .filter(|(_, u)| *u == upstream)
            .map(|(d, _)| *d)
            .collect();
        let store_dir =
            tempfile::tempdir().map_err(|e| SetupError::Store(format!("temporary folder: {e}")))?;
        narrow(&mut config, upstream, &id, store_dir.path());
        Ok(Self {
            config,
            base: base.to_path_buf(),
            upstream: upstream.to_owned(),
            dealership: id,
            domains,
            store_dir: Arc::new(store_dir),
            bridges: Arc::default(),
        })
    }

    /// The upstream's URL that faults are put in front of: the REST or SOAP
    /// base URL, a feed's URL, an ADF intake's URL.
    pub fn api_url(&self) -> Option<&str> {
        match self.config.upstreams.get(&self.upstream)? {
            UpstreamConfig::Rest(r) => Some(&r.base_url),
            UpstreamConfig::Soap(s) => Some(&s.base_url),
            UpstreamConfig::Feed(f) => Some(&f.url),
            UpstreamConfig::AdfHttp(a) => Some(&a.url),
            UpstreamConfig::AdfEmail(_) => None,
        }
    }

    /// Whether the upstream signs in for a token it can fetch again (a
    /// refused token is then fetched once more before the call fails).
    pub fn refreshes_tokens(&self) -> bool {
        matches!(
            self.config.upstreams.get(&self.upstream),
            Some(UpstreamConfig::Rest(r)) if r.token_url.is_some()
        )
    }

    /// The upstream kind's name, for the report.
    pub fn kind(&self) -> &'static str {
        match self.config.upstreams.get(&self.upstream) {
            Some(UpstreamConfig::Rest(_)) => "rest",
            Some(UpstreamConfig::Soap(_)) => "soap",
            Some(UpstreamConfig::Feed(_)) => "feed",
            Some(UpstreamConfig::AdfHttp(_)) => "adf_http",
            Some(UpstreamConfig::AdfEmail(_)) => "adf_email",
            None => "unknown",
        }
    }

    pub fn timezone(&self) -> Option<chrono_tz::Tz> {
        self.config
            .dealerships
            .iter()
            .find(|d| d.id == self.dealership)
            .and_then(|d| d.timezone.parse().ok())
    }

    pub fn currency(&self) -> Option<&str> {
        self.config
            .dealerships
            .iter()
            .find(|d| d.id == self.dealership)
            .map(|d| d.currency.as_str())
    }

    /// Starts a bridge on this target; `api_url` replaces the upstream's own
    /// (a fault in front of it) and `timeout` its request timeout.
    pub async fn start(
        &self,
        api_url: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<Bridge, SetupError> {
        let upstream = self.upstream.clone();
        self.start_edited(move |config| {
            if let Some(upstream) = config.upstreams.get_mut(&upstream) {
                if let Some(url) = api_url {
                    set_api_url(upstream, url);
                }
                if let Some(timeout) = timeout {
                    set_timeout(upstream, timeout);
                }
            }
            Ok(())
        })
        .await
    }

    /// Starts a bridge on this target with `edit` applied to its config
    /// (upstream URLs pointed at proxies, say).
    pub async fn start_edited(
        &self,
        edit: impl FnOnce(&mut Config) -> Result<(), String>,
    ) -> Result<Bridge, SetupError> {
        let mut config = self.config.clone();
        // A store of its own for each bridge: nothing one left behind (a
        // feed's mirrored copy, a kept answer) may serve another's calls.
        let n = self
            .bridges
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        config.store.url = format!(
            "sqlite://{}",
            self.store_dir
                .path()
                .join(format!("verify-{n}.db"))
                .display()
        );
        edit(&mut config).map_err(SetupError::Target)?;
        let runtime = runtime::build(&config, &self.base)
            .map_err(|e| SetupError::Build(e.to_string().trim_end().to_owned()))?;
        let cancel = CancellationToken::new();
        let started = runtime
            .start(&cancel)
            .await
            .map_err(|e| SetupError::Store(e.to_string()))?;
        let principal = started
            .gateway
            .authenticator()
            .authenticate(&verify_secret(&self.store_dir))
            .ok_or_else(|| SetupError::Build("the verify token was not accepted".into()))?;
        Ok(Bridge {
            started: Some(started),
            principal,
            cancel,
        })
    }

    /// The config the bridges start from (narrowed).
    pub fn config(&self) -> &Config {
        &self.config
    }
}

/// The config narrowed to what verify needs; see the module docs.
fn narrow(config: &mut Config, upstream: &str, dealership: &str, store: &Path) {
    config.dealerships.retain(|d| d.id == dealership);
    config.upstreams.retain(|id, _| {
        config
            .dealerships
            .iter()
            .any(|d| d.routes.values().any(|u| u == id))
            || id == upstream
    });
    config.cache.enabled = false;
    // A watch would read the upstream in the background, through the cell's fault.
    config.events.repair_order_watch = SyncInterval::Off;
    config.store.audit = false;
    config.quotas = None;
    config.webhooks.clear();
    config.oauth = None;
    match config.upstreams.get_mut(upstream) {
        Some(UpstreamConfig::Rest(r)) => {
            r.inventory_sync = SyncInterval::Off;
            r.inbound_events = None;
        }
        Some(UpstreamConfig::Soap(s)) => s.inventory_sync = SyncInterval::Off,
        _ => {}
    }
    config.tokens = vec![TokenConfig {
        name: VERIFY_TOKEN.to_owned(),
        secret: SecretSource::Value(InlineSecret(verify_secret_text(store).into())),
        dealerships: vec![dealership.to_owned()],
        // Read scopes only: whatever verify calls, the pipeline refuses a write.
        scopes: READ_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
        rate_limit: None,
    }];
}

/// A token secret no one else knows: derived from the run's own temporary folder.
fn verify_secret_text(store: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(store.display().to_string().as_bytes());
    format!("verify-{}", hex::encode(&digest[..16]))
}

fn verify_secret(dir: &tempfile::TempDir) -> String {
    verify_secret_text(dir.path())
}

fn set_api_url(upstream: &mut UpstreamConfig, url: &str) {
    match upstream {
        UpstreamConfig::Rest(r) => r.base_url = url.to_owned(),
        UpstreamConfig::Soap(s) => s.base_url = url.to_owned(),
        UpstreamConfig::Feed(f) => f.url = url.to_owned(),
        UpstreamConfig::AdfHttp(a) => a.url = url.to_owned(),
        UpstreamConfig::AdfEmail(_) => {}
    }
}

fn set_timeout(upstream: &mut UpstreamConfig, timeout: Duration) {
    match upstream {
        UpstreamConfig::Rest(r) => r.timeout = timeout,
        UpstreamConfig::Soap(s) => s.timeout = timeout,
        UpstreamConfig::Feed(f) => f.timeout = timeout,
        UpstreamConfig::AdfHttp(a) => a.timeout = timeout,
        UpstreamConfig::AdfEmail(_) => {}
    }
}

/// What makes a canonical tool call and says what the agent was told: the
/// bridge in this process, or a remote deployment over MCP (`conform`).
pub trait Calls: Sync {
    fn call(&self, tool: &str, arguments: Value) -> impl Future<Output = Answer> + Send;
}

impl Calls for Bridge {
    fn call(&self, tool: &str, arguments: Value) -> impl Future<Output = Answer> + Send {
        self.call_tool(tool, arguments)
    }
}

/// A bridge built for one run or one cell.
pub struct Bridge {
    started: Option<Started>,
    principal: Arc<Principal>,
    cancel: CancellationToken,
}

/// What the agent would see: the structured result, or the error envelope.
#[derive(Debug, Clone)]
pub enum Answer {
    Ok(Value),
    Error(Value),
}

impl Bridge {
    fn gateway(&self) -> Option<&Gateway> {
        self.started.as_ref().map(|s| &s.gateway)
    }

    /// Calls `tool` through the whole pipeline, as an agent's call would run.
    pub async fn call_tool(&self, tool: &str, arguments: Value) -> Answer {
        let Some(gateway) = self.gateway() else {
            return Answer::Error(serde_json::json!({"code": "verify.stopped"}));
        };
        let caller = Caller {
            principal: self.principal.clone(),
            client_ip: None,
            trace: TraceContext::generate(),
            door: Door::Kit,
            progress: None,
            log: None,
        };
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        match gateway.call_tool(&caller, tool, Some(arguments)).await {
            Ok(outcome) => match outcome.result {
                Ok(payload) => Answer::Ok(payload.value().clone()),
                Err(error) => Answer::Error(error.to_json()),
            },
            Err(_) => Answer::Error(serde_json::json!({"code": "verify.unknown_tool"})),
        }
    }

    /// Stops the background work and waits for it.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        if let Some(started) = self.started.take() {
            started.finish().await;
        }
    }
}
