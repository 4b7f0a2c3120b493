//! Streamable HTTP: rmcp's tower service under axum, stateless with JSON
//! answers, behind a bearer-token layer that decides who the caller is.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::McpServer;
use crate::gateway::Gateway;

/// What the HTTP layer needs from config.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    pub path: String,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub max_request_bytes: usize,
}

/// The router: MCP at `settings.path`, plus `/healthz`.
pub fn router(gateway: Gateway, settings: &HttpSettings, cancel: CancellationToken) -> Router {
    let service_gateway = gateway.clone();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_allowed_hosts(settings.allowed_hosts.clone())
        .with_allowed_origins(settings.allowed_origins.clone())
        .with_max_request_body_bytes(settings.max_request_bytes)
        .with_cancellation_token(cancel.child_token());
    let mcp = StreamableHttpService::new(
        move || Ok(McpServer::new(service_gateway.clone(), None)),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let mcp = Router::new()
        .nest_service(&settings.path, mcp)
        .layer(middleware::from_fn_with_state(gateway, authenticate));
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .merge(mcp)
}

/// Resolves the caller from `Authorization: Bearer …`. No header: the anonymous
/// caller if any dealership allows one, else 401. A wrong token: always 401.
async fn authenticate(
    State(gateway): State<Gateway>,
    mut request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    let principal = match presented {
        None => gateway.authenticator().anonymous(),
        Some(value) => match value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
        {
            Some(token) => gateway.authenticator().authenticate(token.trim()),
            None => None,
        },
    };
    match principal {
        Some(p) => {
            request.extensions_mut().insert(p);
            next.run(request).await
        }
        None => unauthorized(request.headers().contains_key(header::AUTHORIZATION)),
    }
}

fn unauthorized(token_presented: bool) -> Response {
    let challenge = if token_presented {
        r#"Bearer realm="dms-bridge", error="invalid_token", error_description="The access token is not valid""#
    } else {
        r#"Bearer realm="dms-bridge""#
    };
    let body = json!({ "error": { "code": "auth.unauthorized", "message": "A valid bearer token is required.", "retryable": false } });
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}
