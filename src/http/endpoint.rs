//! MCP's Streamable HTTP transport for any rmcp handler: rmcp's service
//! behind the front-door rules, stateless or with sessions.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{
    SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use tokio_util::sync::CancellationToken;

use super::HttpSettings;
use super::front::{self, McpFront};
use crate::telemetry::door::Door;

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
        let mcp = mcp.layer(middleware::map_response_with_state(
            Door::Mcp,
            super::refusals::mark_door,
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
