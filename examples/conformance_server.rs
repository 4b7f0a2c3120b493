//! The fixtures of the MCP conformance suite (`conformance/`), served on the
//! bridge's own transport: `dms_bridge::http::McpEndpoint` (the same
//! front checks, rmcp settings and answer path as the product's router) and
//! the bridge's accept loop. The product serves none of the suite's `test_*`
//! tools, `test://` resources or `test_*` prompts, so the scenarios that call
//! them run here instead; CI runs the suite against both (`.ci/run`, step d2).
//!
//!     cargo run --example conformance_server -- --listen 127.0.0.1:8788
//!
//! MCP is at `/mcp`, `GET /healthz` answers `ok`. Both protocol eras are
//! served: 2025-11-25 clients initialize and get a session (the only way a
//! server can ask a pre-2026 client for sampling or elicitation), 2026-07-28
//! requests stand alone and get input-required results instead.

// Sampling, roots, logging and `resources/subscribe` are deprecated in rmcp
// (SEP-2577) but still part of the 2025-11-25 revision the suite tests.
#![allow(deprecated)]

#[path = "conformance/fixture.rs"]
mod fixture;
#[path = "conformance/flows.rs"]
mod flows;
#[path = "conformance/inputs.rs"]
mod inputs;
#[path = "conformance/media.rs"]
mod media;
#[path = "conformance/prompts.rs"]
mod prompts;
#[path = "conformance/resources.rs"]
mod resources;
#[path = "conformance/rounds.rs"]
mod rounds;
#[path = "conformance/seal.rs"]
mod seal;
#[path = "conformance/tools.rs"]
mod tools;

use std::error::Error;
use std::net::SocketAddr;

use axum::Router;
use axum::routing::get;
use clap::Parser;
use dms_bridge::config::ServerConfig;
use dms_bridge::http::serve::{ServeSettings, serve};
use dms_bridge::http::{HttpSettings, McpEndpoint, Sessions};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;

/// The MCP conformance suite's fixture server, on dms-bridge's HTTP layer.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8788")]
    listen: SocketAddr,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    // The bridge's own defaults: loopback hosts and origins, body limit and
    // deadline, connection cap and timeouts.
    let server = ServerConfig::default();
    let cancel = CancellationToken::new();
    let app = app(&HttpSettings::from_config(&server), cancel.clone())?;
    let listener = TcpListener::bind(args.listen).await?;
    tracing::info!(address = %listener.local_addr()?, "Conformance fixtures listening; MCP at /mcp.");
    // Unlike the bridge, which cancels rmcp only once its connections have
    // drained: a session's stream stays open until rmcp is cancelled, so
    // waiting for it would wait forever. Sessions die with the process
    // anyway.
    let stop = async move {
        shutdown_signal().await;
        tracing::info!("Shutting down: ending sessions.");
        cancel.cancel();
    };
    serve(listener, app, &ServeSettings::from_config(&server), stop).await;
    tracing::info!("Stopped.");
    Ok(())
}

fn app(settings: &HttpSettings, cancel: CancellationToken) -> Result<Router, String> {
    let sealer = seal::Sealer::random()?;
    let health = Router::new().route("/healthz", get(|| async { "ok" }));
    Ok(McpEndpoint::new(settings, cancel)
        .sessions(Sessions::Legacy)
        .serve(move || fixture::Fixture::new(sealer.clone()), health))
}

/// Ctrl-C or SIGTERM: CI stops the server with SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "Cannot listen for Ctrl-C.");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "Cannot listen for SIGTERM.");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
