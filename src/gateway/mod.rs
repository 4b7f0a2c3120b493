//! The gateway layer: every tool call passes through one dispatch pipeline
//! (see `pipeline.rs` for the order of steps). Cross-cutting behaviour (auth,
//! scoping, validation, quotas, cache, deadline, result limits, error mapping,
//! metrics, audit) lives here and nowhere else. It sits on top of the tools:
//! handlers get a [`ToolContext`](crate::tools::ToolContext), never the gateway.

pub mod auth;
pub mod cache;
pub mod limits;
mod pipeline;
mod schemas;
pub mod tasks;
mod write;

use std::sync::Arc;

pub use crate::contract::Payload;
pub use pipeline::{CallError, CallOutcome, Caller};
pub use tasks::{Answer, TaskError, TaskView};

use self::auth::Authenticator;
use self::cache::ReadCache;
use self::limits::CallerLimits;
use crate::config::{LimitsConfig, TasksConfig, ToolNames};
use crate::store::{AuditWriter, Store};
use crate::telemetry::metrics::Metrics;
use crate::tools::{Dealership, Services};

/// Everything the gateway is built from (see `runtime`).
pub struct GatewayParts {
    pub services: Services,
    pub auth: Authenticator,
    pub cache: ReadCache,
    pub caller_limits: CallerLimits,
    pub audit: Option<AuditWriter>,
    /// Which names `tools/list` shows.
    pub tool_names: ToolNames,
    /// Slow reads as tasks.
    pub tasks: TasksConfig,
}

/// The engine behind every transport. Cheap to clone.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

struct Inner {
    services: Services,
    auth: Authenticator,
    schemas: schemas::Schemas,
    cache: ReadCache,
    limits_by_caller: CallerLimits,
    audit: Option<AuditWriter>,
    tasks: tasks::TaskDesk,
}

impl Gateway {
    pub fn new(parts: GatewayParts) -> Self {
        Self {
            inner: Arc::new(Inner {
                services: parts.services,
                auth: parts.auth,
                schemas: schemas::Schemas::compile(parts.tool_names),
                cache: parts.cache,
                limits_by_caller: parts.caller_limits,
                audit: parts.audit,
                tasks: tasks::TaskDesk::new(parts.tasks),
            }),
        }
    }

    /// Forgets idle callers' quota state (local limiters and the shared
    /// quotas' local shares) once a minute until `cancel` fires
    /// (see [`CallerLimits::forget_idle`]).
    pub fn spawn_quota_sweep(&self, cancel: tokio_util::sync::CancellationToken) {
        let gateway = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
            loop {
                tokio::select! {
                    _ = tick.tick() => gateway.inner.limits_by_caller.forget_idle(),
                    () = cancel.cancelled() => return,
                }
            }
        });
    }

    pub fn authenticator(&self) -> &Authenticator {
        &self.inner.auth
    }

    /// What the tools work with (dealerships, store, lead desk, cursors…).
    pub fn services(&self) -> &Services {
        &self.inner.services
    }

    pub fn dealerships(&self) -> impl Iterator<Item = &Dealership> {
        self.inner.services.dealerships()
    }

    pub fn dealership(&self, id: &str) -> Option<&Dealership> {
        self.inner.services.dealership(id)
    }

    pub fn limits(&self) -> &LimitsConfig {
        &self.inner.services.limits
    }

    pub fn metrics(&self) -> &Metrics {
        &self.inner.services.metrics
    }

    pub fn store(&self) -> &Store {
        &self.inner.services.store
    }

    /// A request refused at the front door, as a security event: counted,
    /// and a row of the audit trail (tool `front_door`, outcome
    /// `refused.<class>`, the method and path in place of the argument shape).
    pub async fn record_refusal(
        &self,
        class: &'static str,
        principal: Option<&str>,
        route: &str,
        door: Option<crate::telemetry::door::Door>,
    ) {
        self.metrics()
            .refusals
            .get_or_create(&crate::telemetry::metrics::KindLabel { kind: class })
            .inc();
        let Some(audit) = &self.inner.audit else {
            return;
        };
        audit
            .record(crate::store::AuditRecord {
                at: chrono::Utc::now(),
                trace_id: crate::telemetry::trace::TraceContext::generate().trace_id,
                door,
                principal: principal.unwrap_or("anonymous").to_owned(),
                dealership: None,
                tool: "front_door".into(),
                adapter: None,
                outcome: format!("refused.{class}"),
                latency_us: 0,
                cache_hit: false,
                arg_shape: vec![route.to_owned()],
            })
            .await;
    }
}
