//! Streamable HTTP: rmcp's tower service under axum, stateless with JSON
//! answers, behind a bearer-token layer that decides who the caller is; plus
//! the operator endpoints `/healthz`, `/readyz` and `/metrics`, and the
//! endpoint vendors push inventory change events to ([`inbound`]). The transport
//! itself is [`McpEndpoint`], which serves any rmcp handler the same way (the
//! MCP conformance suite's fixtures, `examples/conformance_server.rs`).

mod inbound;

use std::borrow::Cow;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::ServerHandler;
use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{
    SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::McpServer;
use super::forwarded::ClientAddress;
use super::front::{self, McpFront};
use crate::adapters::UpstreamAdapter;
use crate::config::{ForwardedHeader, ServerConfig, SessionMode};
use crate::contract::Principal;
use crate::gateway::Gateway;
use crate::quotas::SharedQuotaStatus;
use crate::telemetry::trace::TraceContext;

/// What the HTTP layer needs from config.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    pub path: String,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub max_request_bytes: usize,
    /// Time a request body has to arrive in full.
    pub body_read_timeout: Duration,
    /// Proxies whose forwarded header names the client (IPs and CIDR blocks).
    pub trusted_proxies: Vec<String>,
    pub forwarded_header: ForwardedHeader,
    /// Sessions for clients of the `initialize` era.
    pub sessions: Sessions,
    /// Fired when the server starts shutting down: it ends the long-lived
    /// `GET` update streams, which would otherwise hold the drain open.
    pub streams_end: CancellationToken,
}

impl HttpSettings {
    pub fn from_config(server: &ServerConfig) -> Self {
        Self {
            path: server.path.clone(),
            allowed_hosts: server.allowed_hosts.clone(),
            allowed_origins: server.allowed_origins.clone(),
            max_request_bytes: server.max_request_bytes,
            body_read_timeout: server.body_read_timeout,
            trusted_proxies: server.trusted_proxies.clone(),
            forwarded_header: server.forwarded_header,
            sessions: match server.sessions {
                SessionMode::Stateless => Sessions::Stateless,
                SessionMode::Stateful => Sessions::Legacy,
            },
            streams_end: CancellationToken::new(),
        }
    }
}

/// The caller as the HTTP layer resolved it, handed to the MCP handler.
#[derive(Debug, Clone)]
pub struct HttpCaller {
    pub principal: Arc<Principal>,
    /// Signed in with an OAuth access token (not a static token, not anonymous).
    pub signed_in: bool,
    pub client_ip: Option<IpAddr>,
    /// From the `traceparent` header, if valid.
    pub trace: Option<TraceContext>,
}

/// The router: MCP at `settings.path`, plus `/healthz`, `/readyz`, `/metrics`
/// and `POST /events/inbound/{upstream}`.
/// `mcp_cancel` ends rmcp's work; cancel it only after the server has drained.
pub fn router(gateway: Gateway, settings: &HttpSettings, mcp_cancel: CancellationToken) -> Router {
    let service_gateway = gateway.clone();
    let auth = AuthState {
        gateway: gateway.clone(),
        client_address: Arc::new(ClientAddress::new(
            &settings.trusted_proxies,
            settings.forwarded_header,
        )),
    };
    let scope_gateway = gateway.clone();
    let updates = UpdatesState {
        gateway: gateway.clone(),
        end: settings.streams_end.clone(),
    };
    let inbound = inbound::routes(gateway.clone(), settings.body_read_timeout);
    let [metadata_root, metadata_for_path] = super::oauth::metadata_paths(&settings.path);
    let others = Router::new()
        .route(&metadata_root, get(super::oauth::metadata))
        .route(&metadata_for_path, get(super::oauth::metadata))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(gateway)
        .merge(inbound);
    let sessions = settings.sessions;
    let streams_end = settings.streams_end.clone();
    McpEndpoint::new(settings, mcp_cancel)
        .sessions(sessions)
        .caller_layers(move |mcp| {
            // Without sessions, a `GET` is the caller's stream of resource updates.
            let mcp = match sessions {
                Sessions::Stateless => {
                    mcp.layer(middleware::from_fn_with_state(updates, updates_stream))
                }
                Sessions::Legacy => mcp,
            };
            mcp.layer(middleware::from_fn_with_state(auth, authenticate))
        })
        .message_layers(move |mcp| {
            mcp.layer(middleware::from_fn(super::splice::splice_answers))
                .layer(middleware::from_fn_with_state(
                    scope_gateway.clone(),
                    screen_listen,
                ))
                .layer(middleware::from_fn_with_state(
                    scope_gateway,
                    super::oauth::require_tool_scope,
                ))
        })
        .serve(
            move || {
                McpServer::new(service_gateway.clone(), None)
                    .with_sessions(sessions == Sessions::Legacy)
                    .with_streams_end(streams_end.clone())
            },
            others,
        )
}

/// The protocol revisions an MCP handler behind [`McpEndpoint`] should
/// serve: both eras from the same handlers, 2026-07-28 clients discovering
/// and sending per-request metadata, older ones initializing.
pub fn served_protocol_versions() -> Cow<'static, [ProtocolVersion]> {
    Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
}

/// Whether clients of the revisions before 2026-07-28 (the `initialize`
/// era) get a session. 2026-07-28 requests are always served statelessly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sessions {
    /// Every request stands alone: no `Mcp-Session-Id`, `DELETE` answers
    /// 405, a result that needs no stream is one JSON body. The bridge serves
    /// this way, so any instance can answer any request; its router makes a
    /// `GET` the caller's stream of resource updates (rmcp alone answers 405).
    #[default]
    Stateless,
    /// An `initialize` opens a session (`Mcp-Session-Id`, held in memory),
    /// answers stream as SSE and `GET` opens the session's stream. Only this
    /// lets a handler send a request to a pre-2026 client (sampling,
    /// elicitation) and read its answer.
    Legacy,
}

/// A stack of layers wrapped around the MCP route at one point.
type Wrap = Box<dyn FnOnce(Router) -> Router>;

/// The Streamable HTTP transport at `settings.path`, for any rmcp
/// `ServerHandler`: rmcp's service with the configured host and origin lists
/// and body limit, behind the front checks (host and origin parsed strictly,
/// the body read within its deadline and size limit and checked as
/// JSON-RPC, the 2026-07-28 removed methods), all routes behind
/// `front::http_rules`. The product's router is one of these; so is any
/// other server that must answer exactly as the bridge does.
pub struct McpEndpoint {
    settings: HttpSettings,
    cancel: CancellationToken,
    sessions: Sessions,
    caller: Option<Wrap>,
    message: Option<Wrap>,
}

impl McpEndpoint {
    /// `cancel` ends rmcp's work (and any sessions); cancel it only after the
    /// server has drained.
    pub fn new(settings: &HttpSettings, cancel: CancellationToken) -> Self {
        Self {
            settings: settings.clone(),
            cancel,
            sessions: Sessions::default(),
            caller: None,
            message: None,
        }
    }

    pub fn sessions(mut self, sessions: Sessions) -> Self {
        self.sessions = sessions;
        self
    }

    /// Layers run after the host and origin checks and before the body is
    /// read: deciding who the caller is, so an unknown caller is refused
    /// without its body being read.
    pub fn caller_layers(mut self, wrap: impl FnOnce(Router) -> Router + 'static) -> Self {
        self.caller = Some(Box::new(wrap));
        self
    }

    /// Layers run once the body has been read and checked, right before rmcp.
    pub fn message_layers(mut self, wrap: impl FnOnce(Router) -> Router + 'static) -> Self {
        self.message = Some(Box::new(wrap));
        self
    }

    /// The MCP route serving the handlers `factory` makes (one per request,
    /// or per session), merged with `others`, every route behind
    /// `front::http_rules`.
    pub fn serve<H, F>(self, factory: F, others: Router) -> Router
    where
        H: ServerHandler,
        F: Fn() -> H + Send + Sync + 'static,
    {
        let config = rmcp_config(&self.settings, self.cancel, self.sessions);
        let factory = move || Ok(factory());
        let path = &self.settings.path;
        let mcp = match self.sessions {
            Sessions::Stateless => rmcp_route(
                path,
                StreamableHttpService::new(
                    factory,
                    Arc::new(NeverSessionManager::default()),
                    config,
                ),
            ),
            Sessions::Legacy => rmcp_route(
                path,
                StreamableHttpService::new(
                    factory,
                    Arc::new(LocalSessionManager::default()),
                    config,
                ),
            ),
        };
        let front = Arc::new(McpFront::new(
            &self.settings.allowed_hosts,
            &self.settings.allowed_origins,
            self.settings.max_request_bytes,
            self.settings.body_read_timeout,
        ));
        // The last layer added runs first: host and origin, then the caller, then the body.
        let mcp = match self.message {
            Some(wrap) => wrap(mcp),
            None => mcp,
        };
        let mcp = mcp.layer(middleware::from_fn_with_state(
            front.clone(),
            front::read_jsonrpc,
        ));
        let mcp = match self.caller {
            Some(wrap) => wrap(mcp),
            None => mcp,
        };
        let mcp = mcp.layer(middleware::from_fn_with_state(
            front.clone(),
            front::check_host_and_origin,
        ));
        let others = others.layer(middleware::from_fn_with_state(front, front::check_host));
        others
            .merge(mcp)
            .layer(middleware::from_fn(front::http_rules))
    }
}

/// Streamable HTTP alone for `factory`'s handlers at `settings.path`: the
/// bridge's transport, stateless, with no caller and nothing else routed.
pub fn mcp_service<H, F>(factory: F, settings: &HttpSettings, cancel: CancellationToken) -> Router
where
    H: ServerHandler,
    F: Fn() -> H + Send + Sync + 'static,
{
    McpEndpoint::new(settings, cancel).serve(factory, Router::new())
}

/// rmcp's settings: JSON answers where no stream is needed, the host and
/// origin lists (rmcp checks them again, more loosely, after the front), the
/// body limit.
fn rmcp_config(
    settings: &HttpSettings,
    cancel: CancellationToken,
    sessions: Sessions,
) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(sessions == Sessions::Legacy)
        .with_json_response(true)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_allowed_hosts(settings.allowed_hosts.clone())
        .with_allowed_origins(settings.allowed_origins.clone())
        // An empty list refuses every browser Origin rather than switching the check off.
        .enforce_origin_validation()
        .with_max_request_body_bytes(settings.max_request_bytes)
        .with_cancellation_token(cancel)
}

/// rmcp's service at `path`. Shared, not cloned per request as a tower
/// service would be: a clone copies the whole config (host and origin
/// lists, a cancellation token).
fn rmcp_route<H, M>(path: &str, service: StreamableHttpService<H, M>) -> Router
where
    H: ServerHandler,
    M: SessionManager,
{
    let service = Arc::new(service);
    let service = tower::service_fn(move |request: Request| {
        let service = service.clone();
        async move { Ok::<_, Infallible>(service.handle(request).await) }
    });
    Router::new().nest_service(path, service)
}

#[derive(Clone)]
struct AuthState {
    gateway: Gateway,
    client_address: Arc<ClientAddress>,
}

/// Resolves the caller from `Authorization: Bearer …`. No header: the anonymous
/// caller if any dealership allows one, else 401. A wrong token: always 401.
async fn authenticate(
    State(AuthState {
        gateway,
        client_address,
    }): State<AuthState>,
    mut request: Request,
    next: Next,
) -> Response {
    // Two credentials are one too many: which one the caller meant is not guessed.
    if request
        .headers()
        .get_all(header::AUTHORIZATION)
        .iter()
        .count()
        > 1
    {
        return (
            StatusCode::BAD_REQUEST,
            "Bad Request: more than one Authorization header",
        )
            .into_response();
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    let caller = match presented {
        None => gateway
            .authenticator()
            .anonymous()
            .map(|principal| (principal, false)),
        Some(value) => match value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
        {
            Some(token) => gateway
                .authenticator()
                .authenticate_bearer(token.trim())
                .await
                .ok()
                .map(|a| (a.principal, a.signed_in)),
            None => None,
        },
    };
    let Some((principal, signed_in)) = caller else {
        return unauthorized(
            &gateway,
            request.headers().contains_key(header::AUTHORIZATION),
        );
    };
    let client_ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| client_address.resolve(c.0.ip(), request.headers()));
    let trace = request
        .headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .and_then(TraceContext::from_traceparent);
    request.extensions_mut().insert(HttpCaller {
        principal,
        signed_in,
        client_ip,
        trace,
    });
    next.run(request).await
}

/// `subscriptions/listen` under the rules of `events.list`: events need a
/// token (an anonymous caller gets the 401 that starts sign-in), only the
/// caller's dealerships are watched and acknowledged, and one listen names
/// at most [`super::subscriptions::MAX_LISTEN_URIS`] resources.
async fn screen_listen(State(gateway): State<Gateway>, request: Request, next: Next) -> Response {
    use super::front::ReadBody;
    use super::subscriptions::{ListenScreen, MAX_LISTEN_URIS, screen_listen as screen};
    let (Some(body), Some(caller)) = (
        request.extensions().get::<ReadBody>().cloned(),
        request.extensions().get::<HttpCaller>().cloned(),
    ) else {
        return next.run(request).await;
    };
    match screen(&body.0, &caller.principal) {
        ListenScreen::NotListen => next.run(request).await,
        _ if caller.principal.anonymous => unauthorized(&gateway, false),
        ListenScreen::TooMany(id) => {
            let error = json!({ "code": -32602, "message": format!(
                "Invalid params for subscriptions/listen: at most {MAX_LISTEN_URIS} resources per listen"
            ) });
            axum::Json(json!({ "jsonrpc": "2.0", "id": id, "error": error })).into_response()
        }
        ListenScreen::Screened(screened) => {
            let (mut parts, _) = request.into_parts();
            let screened = bytes::Bytes::from(screened);
            parts.extensions.insert(ReadBody(screened.clone()));
            parts.headers.remove(header::CONTENT_LENGTH);
            next.run(Request::from_parts(parts, axum::body::Body::from(screened)))
                .await
        }
    }
}

#[derive(Clone)]
struct UpdatesState {
    gateway: Gateway,
    end: CancellationToken,
}

/// How often an idle update stream sends a comment, so proxies keep it open.
const UPDATES_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A `GET` without a session from a client of the `initialize` era: its
/// stream of `notifications/resources/updated` for what its principal
/// subscribed to with `resources/subscribe` (through any replica). A
/// 2026-07-28 client uses `subscriptions/listen`; its `GET` goes on to rmcp
/// (405), as does anything that is not a `GET` asking for an event stream.
async fn updates_stream(
    State(state): State<UpdatesState>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let asks = request.method() == axum::http::Method::GET
        && headers.get("mcp-session-id").is_none()
        && headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"))
        && headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|v| v < "2026-07-28");
    let caller = request.extensions().get::<HttpCaller>().cloned();
    let Some(caller) = caller.filter(|_| asks) else {
        return next.run(request).await;
    };
    if caller.principal.anonymous {
        return unauthorized(&state.gateway, false);
    }
    // The watcher stops at its next look once the stream (its receiver) is gone.
    let (sender, updates) = futures::channel::mpsc::channel::<String>(16);
    tokio::spawn(super::subscriptions::tell_principal(
        state.gateway,
        caller.principal,
        sender,
    ));
    let end = state.end;
    let events = futures::StreamExt::map(updates, |text| {
        Ok::<_, std::convert::Infallible>(axum::response::sse::Event::default().data(text))
    });
    let events = futures::StreamExt::take_until(events, async move { end.cancelled().await });
    axum::response::sse::Sse::new(events)
        .keep_alive(axum::response::sse::KeepAlive::new().interval(UPDATES_KEEP_ALIVE))
        .into_response()
}

fn unauthorized(gateway: &Gateway, token_presented: bool) -> Response {
    let signed_in_challenge = gateway
        .authenticator()
        .oauth()
        .and_then(|oauth| super::oauth::challenge(oauth, token_presented));
    let static_challenge = if token_presented {
        r#"Bearer realm="dms-bridge", error="invalid_token", error_description="The access token is not valid""#
    } else {
        r#"Bearer realm="dms-bridge""#
    };
    let body = json!({ "error": { "code": "auth.unauthorized", "message": "A valid bearer token is required.", "retryable": false } });
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        signed_in_challenge.unwrap_or(HeaderValue::from_static(static_challenge)),
    );
    response
}

/// Ready when the store answers; upstream circuits and webhook endpoints'
/// backlogs and dead letters are reported, but an unhealthy dealer system or
/// receiver does not take the whole bridge out of rotation (another replica
/// would not deliver any better).
async fn readyz(State(gateway): State<Gateway>) -> Response {
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
    if let Some(webhooks) = webhook_standing(&gateway).await {
        body["webhooks"] = webhooks;
    }
    // Like a stale mirror, a local share is a warning: quotas still hold, tighter.
    if let Some(quotas) = gateway.shared_quotas() {
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
async fn webhook_standing(gateway: &Gateway) -> Option<serde_json::Value> {
    let reports = match gateway.webhooks().report(gateway.store()).await {
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

async fn metrics(State(gateway): State<Gateway>) -> Response {
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
