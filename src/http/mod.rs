//! The bridge's HTTP server: the accept loop and connection lanes
//! ([`serve`]), the front-door rules every request passes ([`front`]: Host
//! and Origin, body limits, the protocol era), who the caller is
//! ([`caller`], [`forwarded`], [`oauth`]), MCP's Streamable HTTP transport
//! ([`endpoint`]), the endpoint vendors push change events to ([`inbound`]),
//! the operator routes `/healthz`, `/readyz` and `/metrics` ([`ops`]) and
//! the status page for people ([`status`]) and the Auto Agent Protocol door
//! ([`aap`]: agent cards and A2A JSON-RPC).
//! The MCP protocol itself is [`crate::mcp`].

mod aap;
mod caller;
mod endpoint;
mod era;
mod forwarded;
pub mod front;
mod inbound;
mod oauth;
mod ops;
mod refusals;
pub mod serve;
pub mod status;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::middleware;
use axum::routing::get;
use tokio_util::sync::CancellationToken;

pub use endpoint::{McpEndpoint, Sessions, mcp_service};
pub use forwarded::ClientAddress;
pub use ops::Standing;

use crate::config::{AapConfig, Config, ForwardedHeader, ServerConfig, SessionMode};
use crate::gateway::Gateway;
use crate::mcp::McpServer;

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
    /// The AAP door's shared settings (`[aap]`).
    pub aap: AapConfig,
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
            aap: AapConfig::default(),
        }
    }

    /// The settings of a whole config: the server's, and the AAP door's.
    pub fn for_config(config: &Config) -> Self {
        Self {
            aap: config.aap.clone().unwrap_or_default(),
            ..Self::from_config(&config.server)
        }
    }
}

/// The router: MCP at `settings.path`, plus `/healthz`, `/readyz`, `/metrics`
/// and `POST /events/inbound/{upstream}`.
/// `mcp_cancel` ends rmcp's work; cancel it only after the server has drained.
pub fn router(
    gateway: Gateway,
    standing: Standing,
    settings: &HttpSettings,
    mcp_cancel: CancellationToken,
) -> Router {
    let service_gateway = gateway.clone();
    let refusal_gateway = gateway.clone();
    let auth = caller::AuthState {
        gateway: gateway.clone(),
        client_address: Arc::new(ClientAddress::new(
            &settings.trusted_proxies,
            settings.forwarded_header,
        )),
    };
    let scope_gateway = gateway.clone();
    let updates = caller::UpdatesState {
        gateway: gateway.clone(),
        end: settings.streams_end.clone(),
    };
    let inbound = inbound::routes(gateway.clone(), settings.body_read_timeout);
    let [metadata_root, metadata_for_path] = oauth::metadata_paths(&settings.path);
    let status_page = standing
        .status
        .clone()
        .map(|key| status::routes(gateway.clone(), standing.webhooks.clone(), key));
    let aap_front = Arc::new(front::McpFront::new(
        &settings.allowed_hosts,
        &settings.allowed_origins,
        settings.max_request_bytes,
        settings.body_read_timeout,
    ));
    let aap_routes = aap::routes(
        gateway.clone(),
        settings.aap.clone(),
        aap_front,
        auth.clone(),
    );
    let mut others = Router::new()
        .route(&metadata_root, get(oauth::metadata))
        .route(&metadata_for_path, get(oauth::metadata))
        .with_state(gateway.clone())
        .merge(ops::routes(gateway, standing))
        .merge(inbound);
    if let Some(page) = status_page {
        others = others.merge(page);
    }
    if let Some(aap) = aap_routes {
        others = others.merge(aap);
    }
    let sessions = settings.sessions;
    let streams_end = settings.streams_end.clone();
    McpEndpoint::new(settings, mcp_cancel)
        .sessions(sessions)
        .caller_layers(move |mcp| {
            // Without sessions, a `GET` is the caller's stream of resource updates.
            let mcp = match sessions {
                Sessions::Stateless => mcp.layer(middleware::from_fn_with_state(
                    updates,
                    caller::updates_stream,
                )),
                Sessions::Legacy => mcp,
            };
            mcp.layer(middleware::from_fn_with_state(auth, caller::authenticate))
        })
        .message_layers(move |mcp| {
            mcp.layer(middleware::from_fn(crate::mcp::splice_answers))
                .layer(middleware::from_fn_with_state(
                    scope_gateway.clone(),
                    caller::screen_listen,
                ))
                .layer(middleware::from_fn_with_state(
                    scope_gateway,
                    oauth::require_tool_scope,
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
        .layer(middleware::from_fn_with_state(
            refusal_gateway,
            refusals::record,
        ))
}
