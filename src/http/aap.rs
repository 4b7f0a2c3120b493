//! The Auto Agent Protocol door on the bridge's listener: each AAP
//! dealership's agent card and JSON-RPC endpoint, behind the MCP path's own
//! Host and Origin rules, caller resolution and body limits. The protocol
//! itself is [`crate::aap`].

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::caller::{self, AuthState};
use super::front::{self, McpFront, ReadBody};
use super::refusals;
use crate::aap::errors::AuthRefusal;
use crate::aap::{self, EXTENSION_URI, ServiceParameters};
use crate::config::AapConfig;
use crate::gateway::{Caller, Gateway};
use crate::mcp::HttpCaller;
use crate::telemetry::door::Door;
use crate::telemetry::trace::TraceContext;
use crate::tools::Dealership;

/// How long a client may keep a card before asking again (A2A §8.6).
const CARD_MAX_AGE: &str = "public, max-age=300";

#[derive(Clone)]
struct AapRoutes {
    gateway: Gateway,
    config: Arc<AapConfig>,
}

/// The AAP routes, or none when no dealership has `aap = true`.
pub(super) fn routes(
    gateway: Gateway,
    config: AapConfig,
    front: Arc<McpFront>,
    auth: AuthState,
) -> Option<Router> {
    if !gateway.dealerships().any(|d| d.aap) {
        return None;
    }
    let door = AapRoutes {
        gateway,
        config: Arc::new(config),
    };
    let endpoint = Router::new()
        .route("/aap/{dealership}", axum::routing::post(send_message))
        .layer(middleware::from_fn_with_state(
            front.clone(),
            front::read_json_body,
        ))
        .layer(middleware::from_fn_with_state(auth, caller::authenticate))
        .with_state(door.clone());
    let cards = Router::new()
        .route(
            "/aap/{dealership}/.well-known/agent-card.json",
            get(dealership_card),
        )
        .route("/.well-known/agent-card.json", get(well_known_card))
        .with_state(door);
    let routes = endpoint.merge(cards).layer(middleware::from_fn_with_state(
        front,
        front::check_host_and_origin,
    ));
    Some(routes.layer(middleware::map_response_with_state(
        Door::Aap,
        refusals::mark_door,
    )))
}

impl AapRoutes {
    fn dealership(&self, id: &str) -> Option<&Dealership> {
        self.gateway.dealership(id).filter(|d| d.aap)
    }

    /// Where buyers reach the bridge: `[aap] public_url`, else `http://` and
    /// the request's `Host` (checked against `server.allowed_hosts` already).
    fn base(&self, headers: &HeaderMap) -> String {
        if let Some(base) = self.config.base() {
            return base.to_owned();
        }
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost");
        format!("http://{host}")
    }

    fn card(&self, id: &str, headers: &HeaderMap) -> Response {
        let Some(dealership) = self.dealership(id) else {
            return not_found();
        };
        let card = aap::agent_card(&self.gateway, dealership, &self.base(headers));
        let etag = aap::card::etag(&card);
        let fresh = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
        let mut response = if fresh {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            axum::Json(card).into_response()
        };
        let headers = response.headers_mut();
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(CARD_MAX_AGE),
        );
        if let Ok(value) = HeaderValue::from_str(&etag) {
            headers.insert(header::ETAG, value);
        }
        response
    }
}

async fn dealership_card(
    State(door): State<AapRoutes>,
    Path(dealership): Path<String>,
    headers: HeaderMap,
) -> Response {
    door.card(&dealership, &headers)
}

async fn well_known_card(State(door): State<AapRoutes>, headers: HeaderMap) -> Response {
    match door.config.well_known.clone() {
        Some(id) => door.card(&id, &headers),
        None => not_found(),
    }
}

async fn send_message(
    State(door): State<AapRoutes>,
    Path(dealership_id): Path<String>,
    request: Request,
) -> Response {
    let Some(dealership) = door.dealership(&dealership_id) else {
        return not_found();
    };
    let (Some(body), Some(http)) = (
        request.extensions().get::<ReadBody>().cloned(),
        request.extensions().get::<HttpCaller>().cloned(),
    ) else {
        tracing::error!("An AAP request reached its handler without a read body or a caller.");
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let caller = Caller {
        principal: http.principal,
        client_ip: http.client_ip,
        trace: http.trace.unwrap_or_else(TraceContext::generate),
        door: Door::Aap,
        progress: None,
        log: None,
    };
    let service = service_parameters(request.headers());
    match aap::answer(&door.gateway, &caller, dealership, &service, &body.0).await {
        aap::Answer::Rpc { body, activated } => {
            let mut response = json_response(StatusCode::OK, body);
            if activated {
                response
                    .headers_mut()
                    .insert("a2a-extensions", HeaderValue::from_static(EXTENSION_URI));
            }
            response
        }
        aap::Answer::Auth(AuthRefusal::Unauthorized, body) => {
            let presented = request.headers().contains_key(header::AUTHORIZATION);
            let mut response = json_response(StatusCode::UNAUTHORIZED, body);
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                caller::challenge(&door.gateway, presented),
            );
            response
        }
        aap::Answer::Auth(AuthRefusal::Forbidden(_), body) => {
            json_response(StatusCode::FORBIDDEN, body)
        }
    }
}

/// `A2A-Version` and `A2A-Extensions` (and A2A 0.3's `X-A2A-Extensions`).
fn service_parameters(headers: &HeaderMap) -> ServiceParameters {
    let version = headers
        .get("a2a-version")
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    let extensions = ["a2a-extensions", "x-a2a-extensions"]
        .iter()
        .flat_map(|name| headers.get_all(*name).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|e| e.trim().to_owned())
        .filter(|e| !e.is_empty())
        .collect();
    ServiceParameters {
        version,
        extensions,
    }
}

/// JSON text already serialized by the door.
fn json_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(serde_json::json!({ "error": "no AAP agent at this path" })),
    )
        .into_response()
}
