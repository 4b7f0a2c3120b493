//! The gateway layer: every tool call passes through one dispatch pipeline
//! (see `pipeline.rs` for the order of steps). Cross-cutting behaviour (auth,
//! scoping, validation, quotas, cache, deadline, result limits, error mapping,
//! metrics, audit) lives here and nowhere else.

pub mod auth;
pub mod cache;
mod error_map;
pub mod limits;
mod pipeline;
mod schemas;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono_tz::Tz;
use serde::de::DeserializeOwned;

pub use crate::contract::Payload;
pub use pipeline::{CallError, CallOutcome, Caller};

use self::auth::Authenticator;
use self::cache::ReadCache;
use self::limits::CallerLimits;
use crate::adapters::{Adapter, AdapterError};
use crate::config::LimitsConfig;
use crate::contract::cursor::CursorCodec;
use crate::contract::error::{ErrorCode, Problems, ToolError};
use crate::contract::{Owner, Principal};
use crate::leads::LeadDesk;
use crate::model::{DealershipProfile, Domain, Money, vin};
use crate::store::{AuditWriter, Store};
use crate::telemetry::metrics::Metrics;
use crate::tools::ToolId;

/// A domain routed to an upstream instance.
pub struct Route {
    /// The upstream's id in the config (for logs, metrics and audit).
    pub upstream: String,
    pub adapter: Arc<Adapter>,
}

/// A dealership as the pipeline sees it: its profile and its upstream routes.
pub struct Dealership {
    pub profile: DealershipProfile,
    pub timezone: Tz,
    pub anonymous_inventory: bool,
    pub routes: BTreeMap<Domain, Route>,
}

impl Dealership {
    /// Domains this principal can use here: routed, and covered by its scopes.
    pub fn domains_for(&self, principal: &Principal) -> Vec<Domain> {
        self.routes
            .keys()
            .copied()
            .filter(|d| {
                ToolId::ALL.iter().any(|t| {
                    t.domain() == Some(*d) && t.scope().is_none_or(|s| principal.has_scope(s))
                })
            })
            .collect()
    }
}

/// Everything the gateway is built from (see `runtime::build`).
pub struct GatewayParts {
    pub dealerships: Vec<Dealership>,
    pub auth: Authenticator,
    pub limits: LimitsConfig,
    pub cursors: CursorCodec,
    pub cache: ReadCache,
    pub caller_limits: CallerLimits,
    pub metrics: Arc<Metrics>,
    pub store: Option<Store>,
    pub audit: Option<AuditWriter>,
    pub leads: Option<LeadDesk>,
}

/// The engine behind every transport. Cheap to clone.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

struct Inner {
    dealerships: BTreeMap<String, Dealership>,
    auth: Authenticator,
    limits: LimitsConfig,
    cursors: CursorCodec,
    schemas: schemas::Schemas,
    cache: ReadCache,
    limits_by_caller: CallerLimits,
    metrics: Arc<Metrics>,
    store: Option<Store>,
    audit: Option<AuditWriter>,
    leads: Option<LeadDesk>,
}

impl Gateway {
    pub fn new(parts: GatewayParts) -> Self {
        let dealerships = parts
            .dealerships
            .into_iter()
            .map(|d| (d.profile.id.clone(), d))
            .collect();
        Self {
            inner: Arc::new(Inner {
                dealerships,
                auth: parts.auth,
                limits: parts.limits,
                cursors: parts.cursors,
                schemas: schemas::Schemas::compile(),
                cache: parts.cache,
                limits_by_caller: parts.caller_limits,
                metrics: parts.metrics,
                store: parts.store,
                audit: parts.audit,
                leads: parts.leads,
            }),
        }
    }

    pub fn authenticator(&self) -> &Authenticator {
        &self.inner.auth
    }

    pub fn dealerships(&self) -> impl Iterator<Item = &Dealership> {
        self.inner.dealerships.values()
    }

    pub fn dealership(&self, id: &str) -> Option<&Dealership> {
        self.inner.dealerships.get(id)
    }

    pub fn cursors(&self) -> &CursorCodec {
        &self.inner.cursors
    }

    pub fn limits(&self) -> &LimitsConfig {
        &self.inner.limits
    }

    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    pub fn store(&self) -> Option<&Store> {
        self.inner.store.as_ref()
    }

    /// The lead desk (present once the store is open).
    pub fn leads(&self) -> Option<&LeadDesk> {
        self.inner.leads.as_ref()
    }

    /// Retires cached reads of `domain` at `dealership`; write tools call this.
    pub fn invalidate(&self, dealership: &str, domain: Domain) {
        self.inner.cache.invalidate(dealership, domain);
    }
}

/// Implemented by every tool's argument type.
pub trait ToolArgs: DeserializeOwned + Send {
    /// The dealership the call is scoped to (`None` for tools that span the caller's dealerships).
    fn dealership_id(&self) -> Option<&str>;

    /// Semantic checks the schema cannot express; push every problem found.
    fn validate(&self, _check: &mut Check<'_>) {}
}

/// What a handler gets: the gateway, the caller and the (already authorised) dealership.
#[derive(Clone, Copy)]
pub struct ToolContext<'a> {
    pub gateway: &'a Gateway,
    pub tool: ToolId,
    pub principal: &'a Principal,
    pub dealership: Option<&'a Dealership>,
}

impl<'a> ToolContext<'a> {
    pub fn dealership(&self) -> Result<&'a Dealership, ToolError> {
        self.dealership.ok_or_else(ToolError::internal)
    }

    /// The adapter routed for `domain`, or `capability.unsupported`.
    pub fn adapter(&self, domain: Domain) -> Result<&'a Adapter, ToolError> {
        let dealership = self.dealership()?;
        dealership
            .routes
            .get(&domain)
            .map(|r| r.adapter.as_ref())
            .ok_or_else(|| unsupported(domain))
    }

    /// Maps an adapter failure to the caller-visible error (one mapper for all tools).
    pub fn upstream_error(&self) -> impl Fn(AdapterError) -> ToolError + use<'a> {
        let (dealership, principal) = (
            self.dealership.map(|d| d.profile.id.clone()),
            self.principal.name.clone(),
        );
        move |e| error_map::from_adapter(&e, dealership.as_deref(), &principal)
    }

    /// Whose records this call may reach by id: everyone's when the caller
    /// holds the tool's staff scope, otherwise only its own (TOOLSET.md,
    /// "Who owns a record").
    pub fn owner(&self) -> Owner<'a> {
        match self.tool.staff_scope() {
            Some(staff) if self.principal.has_scope(staff) => Owner::Anyone,
            _ => Owner::Only(&self.principal.name),
        }
    }

    /// The page size for a validated `limit`.
    pub fn page_size(&self, limit: Option<u32>) -> u32 {
        limit.unwrap_or(self.gateway.limits().default_limit)
    }
}

pub(crate) fn unsupported(domain: Domain) -> ToolError {
    ToolError::new(
        ErrorCode::CapabilityUnsupported,
        format!(
            "This dealership does not offer the {} domain through the bridge.",
            domain.as_str()
        ),
    )
    .with_next_tool_call(
        "dealership.list",
        serde_json::json!({}),
        "See which domains each dealership offers.",
    )
}

/// Semantic validation with what it needs to know.
pub struct Check<'a> {
    pub problems: Problems,
    pub gateway: &'a Gateway,
    pub dealership: Option<&'a Dealership>,
    /// A domain rule the arguments break (e.g. consent); reported when the
    /// arguments are otherwise well formed.
    rejection: Option<ToolError>,
}

impl<'a> Check<'a> {
    pub fn new(gateway: &'a Gateway, dealership: Option<&'a Dealership>) -> Self {
        Self {
            problems: Problems::default(),
            gateway,
            dealership,
            rejection: None,
        }
    }

    /// Refuses the call with a domain error (the first one given wins).
    pub fn reject(&mut self, error: ToolError) {
        self.rejection.get_or_insert(error);
    }

    /// Puts the schema's problems first. A semantic problem at or below a
    /// field the schema already refused says nothing new and is dropped.
    pub(crate) fn after_schema(mut self, schema: Problems) -> Self {
        let semantic = std::mem::replace(&mut self.problems, schema);
        self.problems.extend_uncovered(semantic);
        self
    }

    /// Argument problems first, then a domain rejection.
    pub fn into_result(self) -> Result<(), ToolError> {
        self.problems.into_result()?;
        self.rejection.map_or(Ok(()), Err)
    }

    pub fn limit(&mut self, at: &str, limit: Option<u32>) {
        let max = self.gateway.limits().max_limit;
        if let Some(l) = limit
            && (l == 0 || l > max)
        {
            self.problems
                .push(at, format!("limit must be between 1 and {max}"));
        }
    }

    pub fn vin(&mut self, at: &str, value: &str) {
        if let Err(problem) = vin::check(&vin::normalize(value)) {
            self.problems
                .push(at, format!("not a valid VIN: {problem}"));
        }
    }

    pub fn money(&mut self, at: &str, money: &Money) {
        if money.amount < 0 {
            self.problems
                .push(format!("{at}/amount"), "must not be negative");
        }
        if let Some(d) = self.dealership
            && money.currency != d.profile.currency
        {
            self.problems.push(
                format!("{at}/currency"),
                format!("this dealership prices in {}", d.profile.currency),
            );
        }
    }

    pub fn cursor(&mut self, at: &str, cursor: &str, dealership_id: &str, query_hash: &str) {
        if let Err(e) = self
            .gateway
            .cursors()
            .decode(cursor, dealership_id, query_hash)
        {
            self.problems.push(at, e.to_string());
        }
    }
}
