//! `build()`: turns a validated [`Config`] into a running [`Gateway`]. This is
//! where I/O happens: secrets are read, profile and mapping files loaded,
//! clients created. Every problem is reported with its config path.

mod reload;
pub mod sealing;

pub use reload::{ReloadError, Reloaded, Reloader};

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use secrecy::ExposeSecret;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::adapters::resilience::UpstreamPolicy;
use crate::adapters::{Adapter, BuildError, DealershipContext, UpstreamAdapter, UpstreamInstance};
use crate::config::{
    Config, ConfigError, ConfigErrors, DealershipConfig, LeadsConfig, MirrorConfig, StoreConfig,
    resolve_secret,
};
use crate::contract::cursor::CursorCodec;
use crate::contract::{DealershipGrant, Principal, Scope};
use crate::gateway::auth::{Authenticator, OAuthVerifier};
use crate::gateway::cache::ReadCache;
use crate::gateway::limits::CallerLimits;
use crate::gateway::{Gateway, GatewayParts};
use crate::http::Standing;
use crate::leads::LeadDesk;
use crate::leads::outbox::Outbox;
use crate::mirror::repair_orders::WatchSource;
use crate::mirror::{InboundSinks, Mirror, MirrorSource};
use crate::model::{DealershipProfile, Domain};
use crate::quotas::SharedQuotaStore;
use crate::store::leases::Leases;
use crate::store::{AuditWriter, StoreError};
use crate::telemetry::metrics::{Known, Metrics};
use crate::tools::{Dealership, Route, ServiceParts, Services};
use crate::webhooks::Webhooks;

/// Everything built from the config, before anything runs.
pub struct Runtime {
    parts: Parts,
    store: StoreConfig,
    sealing: crate::store::sealing::Sealing,
    retention: crate::config::RetentionConfig,
    leads: LeadsConfig,
    mirror: MirrorConfig,
    repair_order_watch: Option<std::time::Duration>,
    inbound: InboundSinks,
    webhooks: Webhooks,
    status: Option<Arc<crate::http::status::OperatorKey>>,
}

/// What `build` makes; `start` adds the store and what needs it.
struct Parts {
    dealerships: Vec<Dealership>,
    auth: Authenticator,
    limits: crate::config::LimitsConfig,
    cursors: CursorCodec,
    cache: ReadCache,
    caller_limits: CallerLimits,
    metrics: Arc<Metrics>,
    tool_names: crate::config::ToolNames,
    tasks: crate::config::TasksConfig,
    quotas: Option<Arc<SharedQuotaStore>>,
}

/// A running gateway and its background work.
pub struct Started {
    pub gateway: Gateway,
    /// The inbound events' secrets, shared with the mirror (a reload replaces them).
    pub inbound: InboundSinks,
    /// What `/readyz` reports besides the gateway: webhooks and shared quotas.
    pub standing: Standing,
    audit_task: Option<JoinHandle<()>>,
    outbox_task: JoinHandle<()>,
    webhooks_task: JoinHandle<()>,
}

impl Runtime {
    /// Opens the store, starts the audit writer and feed polling (all stop
    /// when `cancel` fires) and returns the gateway.
    pub async fn start(self, cancel: &CancellationToken) -> Result<Started, StoreError> {
        let store = sealing::open_sealed(&self.store.url, self.sealing.clone()).await?;
        let event_key = crate::store::keys::key(&store, "event_cursors").await?;
        let (mut audit, mut audit_task) = (None, None);
        if self.store.audit {
            let (writer, task) = AuditWriter::start(
                store.clone(),
                self.parts.metrics.clone(),
                cancel.child_token(),
            );
            audit = Some(writer);
            audit_task = Some(task);
        }
        let sinks = lead_sinks(&self.parts.dealerships);
        let status_watch = self.leads.status_watch.every();
        let outbox = Outbox::new(
            store.clone(),
            self.leads.delivery.clone(),
            sinks.clone(),
            self.parts.metrics.clone(),
        );
        let outbox_task = outbox.spawn(cancel.child_token());
        let leads = LeadDesk::new(&store, self.leads);
        let mirror = Mirror::new(
            store.clone(),
            self.mirror,
            self.parts.metrics.clone(),
            mirror_sources(&self.parts.dealerships),
            self.inbound.clone(),
        );
        let leases = Leases::new(&store);
        mirror.start(&leases, cancel).await;
        if let Some(every) = self.repair_order_watch {
            crate::mirror::repair_orders::spawn_watch(
                store.clone(),
                self.parts.metrics.clone(),
                watch_sources(&self.parts.dealerships),
                every,
                &leases,
                cancel.child_token(),
            )
            .await;
        }
        if let Some(every) = status_watch {
            crate::leads::crm_status::spawn_watch(
                store.clone(),
                &sinks,
                every,
                &leases,
                cancel.child_token(),
            )
            .await;
        }
        let webhooks = self.webhooks.status();
        let webhooks_task = self
            .webhooks
            .spawn(
                store.clone(),
                self.parts.metrics.clone(),
                &leases,
                cancel.child_token(),
            )
            .await;
        crate::lifecycle::spawn(
            &store,
            self.retention.clone(),
            self.store
                .encryption
                .as_ref()
                .map_or(200, |e| e.reseal_batch),
            self.parts.metrics.clone(),
            &leases,
            cancel.child_token(),
        )
        .await;
        leases.start(cancel.child_token());
        if let Some(quotas) = &self.parts.quotas {
            quotas.spawn_heartbeats(cancel.child_token());
        }
        let p = self.parts;
        let services = Services::new(ServiceParts {
            dealerships: p.dealerships,
            limits: p.limits,
            cursors: p.cursors,
            event_cursors: CursorCodec::new(&event_key),
            metrics: p.metrics,
            store,
            leads,
            mirror,
        });
        let gateway = Gateway::new(GatewayParts {
            services,
            auth: p.auth,
            cache: p.cache,
            caller_limits: p.caller_limits,
            audit,
            tool_names: p.tool_names,
            tasks: p.tasks,
        });
        gateway.spawn_quota_sweep(cancel.child_token());
        spawn_resends(gateway.clone(), cancel.child_token());
        gateway.spawn_invalidation_listener(cancel.child_token());
        Ok(Started {
            gateway,
            standing: Standing {
                webhooks,
                quotas: p.quotas,
                status: self.status,
            },
            inbound: self.inbound,
            audit_task,
            outbox_task,
            webhooks_task,
        })
    }
}

/// Every dealership whose inventory upstream is read in the background.
fn mirror_sources(dealerships: &[Dealership]) -> Vec<MirrorSource> {
    dealerships
        .iter()
        .filter_map(|d| {
            let route = d.routes.get(&Domain::Inventory)?;
            Some(MirrorSource {
                dealership: d.profile.id.clone(),
                adapter: route.adapter.clone(),
                every: route.adapter.inventory_sync()?,
            })
        })
        .collect()
}

/// Every dealership that routes repair orders, for the repair-order watch.
fn watch_sources(dealerships: &[Dealership]) -> Vec<WatchSource> {
    dealerships
        .iter()
        .filter_map(|d| {
            let route = d.routes.get(&Domain::RepairOrders)?;
            Some(WatchSource {
                dealership: d.profile.id.clone(),
                adapter: route.adapter.clone(),
                timezone: d.timezone,
            })
        })
        .collect()
}

/// Every lead sink routed by some dealership, by upstream id.
fn lead_sinks(dealerships: &[Dealership]) -> BTreeMap<String, Arc<Adapter>> {
    dealerships
        .iter()
        .filter_map(|d| d.routes.get(&Domain::Leads))
        .map(|r| (r.upstream.clone(), r.adapter.clone()))
        .collect()
}

impl Started {
    /// Waits for queued audit records and the deliveries in progress (after `cancel` fired).
    pub async fn finish(self) {
        drop(self.gateway);
        let _ = self.outbox_task.await;
        let _ = self.webhooks_task.await;
        if let Some(task) = self.audit_task {
            let _ = task.await;
        }
    }
}

/// Builds everything; `base` resolves relative paths (the config file's folder).
/// Reads secrets and files but opens no connection, so `check` can run it.
pub fn build(config: &Config, base: &Path) -> Result<Runtime, ConfigErrors> {
    // Before any HTTP client, the bridge's or a library's (see `net`).
    crate::net::install_tls_provider();
    let mut errors = Vec::new();
    let metrics = Metrics::new();
    let quotas = shared_quotas(config, &metrics, &mut errors);
    let policies: BTreeMap<String, Arc<UpstreamPolicy>> = config
        .upstreams
        .iter()
        .map(|(id, u)| {
            let policy = UpstreamPolicy::new(id, u.resilience(), metrics.clone(), quotas.as_ref());
            (id.clone(), Arc::new(policy))
        })
        .collect();
    let mut dealerships = Vec::new();
    for (i, d) in config.dealerships.iter().enumerate() {
        if let Some(dealership) = build_dealership(config, i, d, base, &policies, &mut errors) {
            dealerships.push(dealership);
        }
    }
    let auth = build_auth(config, base, &mut errors);
    let webhooks = crate::webhooks::build(config, base, &mut errors);
    let inbound = InboundSinks::build(config, base, &mut errors);
    let status = status_page(config, base, &mut errors);
    let store_sealing = sealing::sealing(config, base, &mut errors);
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
    let cache = ReadCache::new(&config.cache);
    metrics.seed(&known_series(config, &dealerships, &cache));
    let parts = Parts {
        dealerships,
        auth,
        limits: config.limits.clone(),
        cursors,
        cache,
        caller_limits: CallerLimits::new(&config.rate_limits, &config.tokens, quotas.as_ref()),
        metrics,
        tool_names: config.server.tool_names,
        tasks: config.tasks.clone(),
        quotas,
    };
    Ok(Runtime {
        parts,
        store: config.store.clone(),
        sealing: store_sealing,
        retention: config.retention.clone(),
        leads: config.leads.clone(),
        mirror: config.mirror.clone(),
        repair_order_watch: config.events.repair_order_watch.every(),
        inbound,
        webhooks,
        status,
    })
}

/// The status page's credential, which must be one no agent token is.
fn status_page(
    config: &Config,
    base: &Path,
    errors: &mut Vec<ConfigError>,
) -> Option<Arc<crate::http::status::OperatorKey>> {
    let status = config.status.as_ref()?;
    let token = resolve_secret(&status.operator_token, base)
        .map_err(|e| errors.push(ConfigError::new("status.operator_token", e)))
        .ok()?;
    let shared = config.tokens.iter().position(|t| {
        resolve_secret(&t.secret, base).is_ok_and(|s| s.expose_secret() == token.expose_secret())
    });
    if let Some(i) = shared {
        errors.push(ConfigError::new(
            "status.operator_token",
            format!(
                "is the secret of tokens[{i}]; the operator's credential must be one no agent holds"
            ),
        ));
        return None;
    }
    if token.expose_secret().len() < 16 {
        errors.push(ConfigError::new(
            "status.operator_token",
            "must be at least 16 characters (a long random value, e.g. openssl rand -hex 32)",
        ));
        return None;
    }
    Some(Arc::new(crate::http::status::OperatorKey::new(
        token,
        status.path.clone(),
        status.session,
    )))
}

/// The metric series the config names, created at zero before the first scrape.
fn known_series(config: &Config, dealerships: &[Dealership], cache: &ReadCache) -> Known {
    use crate::tools::ToolId;
    // What the pipeline caches, and counts in `cache_lookups`: a cacheable
    // tool whose domain keeps answers for some time.
    let cached = |t: &ToolId| t.cacheable() && t.domain().is_some_and(|d| !cache.ttl(d).is_zero());
    let inbound = config.upstreams.iter().filter(|(_, u)| {
        matches!(u, crate::config::UpstreamConfig::Rest(rest) if rest.inbound_events.is_some())
    });
    Known {
        toolset: crate::tools::TOOLSET_VERSION,
        tools: ToolId::ALL.iter().map(|t| t.name()).collect(),
        cached_tools: ToolId::ALL
            .iter()
            .filter(|t| cached(t))
            .map(|t| t.name())
            .collect(),
        upstreams: config.upstreams.keys().cloned().collect(),
        lead_upstreams: lead_sinks(dealerships).into_keys().collect(),
        mirrored: mirror_sources(dealerships)
            .into_iter()
            .map(|s| s.dealership)
            .collect(),
        watched: match config.events.repair_order_watch.every() {
            Some(_) => watch_sources(dealerships)
                .into_iter()
                .map(|s| s.dealership)
                .collect(),
            None => Vec::new(),
        },
        webhook_endpoints: config.webhooks.keys().cloned().collect(),
        inbound_upstreams: inbound.map(|(id, _)| id.clone()).collect(),
    }
}

/// The replicas' shared quota store when `[quotas]` is set. No connection is
/// made here (the first check makes it), so `check` and a start while Redis
/// is down both work.
fn shared_quotas(
    config: &Config,
    metrics: &Arc<Metrics>,
    errors: &mut Vec<ConfigError>,
) -> Option<Arc<SharedQuotaStore>> {
    let quotas = config.quotas.as_ref()?;
    SharedQuotaStore::new(quotas, metrics.clone())
        .map_err(|e| errors.push(ConfigError::new("quotas.url", e.to_string())))
        .ok()
}

/// What an adapter knows of its dealership (`None`: a timezone `validate` refused).
fn dealership_context(d: &DealershipConfig) -> Option<DealershipContext> {
    Some(DealershipContext {
        id: d.id.clone(),
        currency: d.currency.clone(),
        timezone: d.timezone.parse().ok()?,
        region: d.address.region.clone(),
    })
}

fn build_dealership(
    config: &Config,
    index: usize,
    d: &DealershipConfig,
    base: &Path,
    policies: &BTreeMap<String, Arc<UpstreamPolicy>>,
    errors: &mut Vec<ConfigError>,
) -> Option<Dealership> {
    let context = dealership_context(d)?;
    let timezone = context.timezone;
    let mut routes = BTreeMap::new();
    // One adapter per upstream and dealership, shared by the domains routed to
    // it: one token cache, one feed refresher, and each problem reported once.
    let mut adapters: BTreeMap<&str, Option<Arc<Adapter>>> = BTreeMap::new();
    for (domain, upstream_id) in &d.routes {
        let adapter = adapters.entry(upstream_id.as_str()).or_insert_with(|| {
            build_adapter(config, upstream_id, &context, base, policies, errors)
        });
        let Some(adapter) = adapter else {
            continue;
        };
        if adapter.domains().contains(domain) {
            routes.insert(
                *domain,
                Route {
                    upstream: upstream_id.clone(),
                    adapter: adapter.clone(),
                },
            );
        } else {
            errors.push(ConfigError::new(
                format!("dealerships[{index}].routes.{}", domain.as_str()),
                format!("upstream {upstream_id:?} has no operations for this domain"),
            ));
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
        fees: d.fees.clone(),
    };
    Some(Dealership {
        profile,
        timezone,
        anonymous_inventory: d.anonymous_inventory,
        aap: d.aap,
        routes,
    })
}

fn build_auth(config: &Config, base: &Path, errors: &mut Vec<ConfigError>) -> Authenticator {
    let tokens = static_tokens(config, base, errors);
    // With sign-in on, only where the operator keeps anonymous callers.
    let anonymous_allowed = config.oauth.as_ref().is_none_or(|o| o.allow_anonymous);
    let anonymous: BTreeSet<String> = config
        .dealerships
        .iter()
        .filter(|d| anonymous_allowed && d.anonymous_inventory)
        .map(|d| d.id.clone())
        .collect();
    Authenticator::new(tokens, anonymous, build_oauth(config, errors))
}

/// `[[tokens]]` with their secrets read; problems go to `errors`.
fn static_tokens(
    config: &Config,
    base: &Path,
    errors: &mut Vec<ConfigError>,
) -> Vec<(secrecy::SecretString, Principal)> {
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
    tokens
}

/// The OAuth verifier; it fetches nothing until the first token arrives.
fn build_oauth(config: &Config, errors: &mut Vec<ConfigError>) -> Option<OAuthVerifier> {
    let oauth = config.oauth.as_ref()?;
    // Redirects are not followed: a key set must come from where the issuer says.
    let http = crate::net::client_builder()
        .timeout(oauth.jwks_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build();
    match http {
        Ok(http) => Some(OAuthVerifier::new(oauth, http)),
        Err(e) => {
            errors.push(ConfigError::new("oauth", format!("HTTP client: {e}")));
            None
        }
    }
}

/// Builds one upstream for one dealership; problems go to `errors`.
fn build_adapter(
    config: &Config,
    upstream_id: &str,
    context: &DealershipContext,
    base: &Path,
    policies: &BTreeMap<String, Arc<UpstreamPolicy>>,
    errors: &mut Vec<ConfigError>,
) -> Option<Arc<Adapter>> {
    let (upstream, policy) = (
        config.upstreams.get(upstream_id)?,
        policies.get(upstream_id)?,
    );
    let instance = UpstreamInstance {
        name: upstream_id,
        policy: policy.clone(),
    };
    let built = Adapter::build(&instance, context, upstream, base);
    let at = format!("upstreams.{upstream_id}");
    built
        .map(Arc::new)
        .map_err(|problems| {
            errors.extend(
                problems
                    .into_iter()
                    .map(|p| at_upstream(&at, p, upstream.kind().profile(), base)),
            )
        })
        .ok()
}

/// A build problem at its config path: a key of the upstream's joins the
/// upstream's path; any other stays at the upstream, its message saying
/// where, down to the file and line of a profile's or mapping's key.
fn at_upstream(at: &str, problem: BuildError, profile: Option<&str>, base: &Path) -> ConfigError {
    use crate::config::{catalog, locate};
    match problem {
        BuildError::AtKey { key, message } => ConfigError::new(format!("{at}.{key}"), message),
        BuildError::Upstream(message) => ConfigError::new(at, message),
        BuildError::InProfile { key, message } => {
            let place = profile
                .map(|p| locate::place(p, base, catalog::builtin_profile, &key))
                .unwrap_or_default();
            ConfigError::new(at, format!("profile {key}{place}: {message}"))
        }
        BuildError::InMapping {
            reference,
            key: Some(key),
            message,
        } => {
            let place = locate::place(&reference, base, catalog::builtin_mapping, &key);
            ConfigError::new(at, format!("mapping {reference}: {key}{place}: {message}"))
        }
        other @ BuildError::InMapping { key: None, .. } => ConfigError::new(at, other.to_string()),
    }
}

/// How often the bridge looks for bookings and cancellations it sent
/// without recording the answer (see `tools::service::resend`).
const RESEND_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

fn spawn_resends(gateway: Gateway, cancel: CancellationToken) {
    tokio::spawn(async move {
        let lease = gateway.services().limits.call_timeout * 2;
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(RESEND_EVERY) => {}
            }
            crate::tools::service::resend::pass(gateway.services(), lease).await;
        }
    });
}
