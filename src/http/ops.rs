//! The operator routes: `/healthz` (the process answers), `/readyz` (the
//! store answers; upstream circuits, inventory freshness, webhook backlogs
//! and shared quotas reported) and `/metrics` (OpenMetrics).

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::adapters::UpstreamAdapter;
use crate::gateway::Gateway;
use crate::quotas::{SharedQuotaStatus, SharedQuotaStore};

/// What `/readyz` reports besides the gateway's own parts: the webhook
/// endpoints' standing and the replicas' shared quotas, from the runtime.
#[derive(Clone, Default)]
pub struct Standing {
    pub webhooks: crate::webhooks::Status,
    /// `[quotas]`, when set.
    pub quotas: Option<Arc<SharedQuotaStore>>,
    /// `[status]`, when set: the status page's credential and path.
    pub status: Option<Arc<super::status::OperatorKey>>,
}

#[derive(Clone)]
struct Ops {
    gateway: Gateway,
    standing: Standing,
}

pub(super) fn routes(gateway: Gateway, standing: Standing) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(Ops { gateway, standing })
}

/// Ready when the store answers; upstream circuits and webhook endpoints'
/// backlogs and dead letters are reported, but an unhealthy dealer system or
/// receiver does not take the whole bridge out of rotation (another replica
/// would not deliver any better).
async fn readyz(State(Ops { gateway, standing }): State<Ops>) -> Response {
    let store = match gateway.store().ping().await {
        Ok(()) => "ok",
        Err(e) => {
            tracing::warn!(error = %e, "Store is not answering.");
            "error"
        }
    };
    let mut upstreams = serde_json::Map::new();
    for dealership in gateway.dealerships() {
        for route in dealership.routes.values() {
            upstreams.insert(
                route.upstream.clone(),
                json!(route.adapter.policy().circuit().as_str()),
            );
        }
    }
    let status = if store == "error" {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    // Stale mirrors are reported, not failed on: the copy still answers, with a notice.
    let inventory = gateway.services().mirror.status();
    let mut body = json!({ "store": store, "upstreams": upstreams, "inventory": inventory });
    if let Some(webhooks) = webhook_standing(&gateway, &standing.webhooks).await {
        body["webhooks"] = webhooks;
    }
    // Like a stale mirror, a local share is a warning: quotas still hold, tighter.
    if let Some(quotas) = &standing.quotas {
        body["quotas"] = quota_standing(quotas.status());
    }
    (status, axum::Json(body)).into_response()
}

/// `shared`, or `local_share` with why Redis could not decide.
fn quota_standing(status: SharedQuotaStatus) -> serde_json::Value {
    match status {
        SharedQuotaStatus::Shared => json!({ "state": "shared" }),
        SharedQuotaStatus::LocalShare { reason } => {
            json!({ "state": "local_share", "reason": reason })
        }
    }
}

/// Each webhook endpoint's backlog and dead letters, with `state`: `ok`,
/// `behind` (events not yet delivered) or `dead_letters` (a warning).
async fn webhook_standing(
    gateway: &Gateway,
    webhooks: &crate::webhooks::Status,
) -> Option<serde_json::Value> {
    let reports = match webhooks.report(gateway.store()).await {
        Ok(r) if r.is_empty() => return None,
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "Cannot read webhook cursors.");
            return Some(json!("error"));
        }
    };
    let endpoints = reports.into_iter().map(|r| {
        let state = match (r.dead_letters, r.undelivered) {
            (0, 0) => "ok",
            (0, _) => "behind",
            _ => "dead_letters",
        };
        let endpoint = r.endpoint.clone();
        let mut value = json!(r);
        value["state"] = json!(state);
        if let Some(fields) = value.as_object_mut() {
            fields.remove("endpoint");
        }
        (endpoint, value)
    });
    Some(serde_json::Value::Object(endpoints.collect()))
}

async fn metrics(State(Ops { gateway, .. }): State<Ops>) -> Response {
    // Bring circuit gauges up to date: an open circuit turns half-open by time alone.
    for route in gateway.dealerships().flat_map(|d| d.routes.values()) {
        route.adapter.policy().circuit();
    }
    let body = gateway.metrics().encode();
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        body,
    )
        .into_response()
}
