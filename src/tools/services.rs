//! What tool handlers work with: the dealerships and their upstream routes,
//! the store and lead desk, cursors, limits and metrics. Built once by the
//! runtime; the pipeline hands each call a `ToolContext`
//! over it, so handlers never see the gateway that dispatches them.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono_tz::Tz;

use super::ToolId;
use crate::adapters::Adapter;
use crate::config::LimitsConfig;
use crate::contract::cursor::CursorCodec;
use crate::contract::{ErrorCode, Principal, ToolError};
use crate::leads::LeadDesk;
use crate::mirror::Mirror;
use crate::model::{DealershipProfile, Domain};
use crate::store::Store;
use crate::telemetry::metrics::Metrics;

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
    /// Served over the Auto Agent Protocol door too (`aap = true`).
    pub aap: bool,
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

/// The services every handler may use.
pub struct Services {
    dealerships: BTreeMap<String, Dealership>,
    pub limits: LimitsConfig,
    pub cursors: CursorCodec,
    /// Signs `events.list` cursors with the store's own key, so that they
    /// resume after a restart and on any replica.
    pub event_cursors: CursorCodec,
    pub metrics: Arc<Metrics>,
    pub store: Store,
    pub leads: LeadDesk,
    pub mirror: Mirror,
}

/// The parts [`Services`] are made of (see `runtime`).
pub struct ServiceParts {
    pub dealerships: Vec<Dealership>,
    pub limits: LimitsConfig,
    pub cursors: CursorCodec,
    pub event_cursors: CursorCodec,
    pub metrics: Arc<Metrics>,
    pub store: Store,
    pub leads: LeadDesk,
    pub mirror: Mirror,
}

impl Services {
    pub fn new(parts: ServiceParts) -> Self {
        let dealerships = parts
            .dealerships
            .into_iter()
            .map(|d| (d.profile.id.clone(), d))
            .collect();
        Self {
            dealerships,
            limits: parts.limits,
            cursors: parts.cursors,
            event_cursors: parts.event_cursors,
            metrics: parts.metrics,
            store: parts.store,
            leads: parts.leads,
            mirror: parts.mirror,
        }
    }

    pub fn dealerships(&self) -> impl Iterator<Item = &Dealership> {
        self.dealerships.values()
    }

    pub fn dealership(&self, id: &str) -> Option<&Dealership> {
        self.dealerships.get(id)
    }
}

/// The answer for a domain the dealership does not route through the bridge.
pub fn unsupported(domain: Domain) -> ToolError {
    ToolError::new(
        ErrorCode::CapabilityUnsupported,
        format!(
            "This dealership does not offer the {} domain through the bridge.",
            domain.as_str()
        ),
    )
    .with_next_tool_call(
        "dealership_list",
        serde_json::json!({}),
        "See which domains each dealership offers.",
    )
}
