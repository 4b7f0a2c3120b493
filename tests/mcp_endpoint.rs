//! `McpEndpoint`, the bridge's Streamable HTTP transport for any rmcp
//! handler (the conformance fixtures use it): a handler of its own gets the
//! product's front checks, and sessions only when it asks for them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::borrow::Cow;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use common::raw::{self, RawResponse, read_response, send};
use dms_bridge::config::ServerConfig;
use dms_bridge::http::serve::{ServeSettings, serve};
use dms_bridge::http::{HttpSettings, McpEndpoint, Sessions, mcp_service};
use dms_bridge::mcp::served_protocol_versions;
use rmcp::ServerHandler;
use rmcp::model::{ProtocolVersion, ServerCapabilities, ServerConfig as McpServerConfig};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);

/// A handler with nothing but tools/list.
#[derive(Clone)]
struct Bare;

impl ServerHandler for Bare {
    fn get_info(&self) -> McpServerConfig {
        McpServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        served_protocol_versions()
    }
}

/// Serves `app` on a loopback port until the test ends.
async fn start(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let settings = ServeSettings::from_config(&ServerConfig::default());
    tokio::spawn(async move { serve(listener, app, &settings, std::future::pending()).await });
    addr
}

fn settings() -> HttpSettings {
    HttpSettings::from_config(&ServerConfig::default())
}

async fn post(addr: SocketAddr, body: &str, extra: &str) -> RawResponse {
    let mut stream = raw::connect(addr).await;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    send(&mut stream, request.as_bytes()).await;
    read_response(&mut stream, WAIT).await.expect("an answer")
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn another_handler_gets_the_front_checks() {
    let addr = start(mcp_service(|| Bare, &settings(), CancellationToken::new())).await;

    let not_json = post(addr, "{", "").await;
    assert_eq!(not_json.status, 400, "{not_json:?}");
    assert_eq!(not_json.json()["error"]["code"], -32700);

    // 2026-07-28 removed initialize: 404 with -32601 (src/mcp/era.rs).
    let removed = post(addr, INITIALIZE, "MCP-Protocol-Version: 2026-07-28\r\n").await;
    assert_eq!(removed.status, 404, "{removed:?}");
    assert_eq!(removed.json()["error"]["code"], -32601);

    // A port rmcp alone would misread (src/mcp/front.rs).
    let foreign = post(
        addr,
        INITIALIZE,
        "Origin: http://127.0.0.1:8080.evil.example\r\n",
    )
    .await;
    assert_eq!(foreign.status, 403, "{foreign:?}");

    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let answer = post(addr, list, "").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.json()["result"]["tools"], serde_json::json!([]));
}

#[tokio::test]
async fn sessions_only_when_asked_for() {
    let stateless = start(mcp_service(|| Bare, &settings(), CancellationToken::new())).await;
    let answer = post(stateless, INITIALIZE, "").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.header("mcp-session-id").is_none(), "{answer:?}");

    let app = McpEndpoint::new(&settings(), CancellationToken::new())
        .sessions(Sessions::Legacy)
        .serve(|| Bare, Router::new());
    let legacy = start(app).await;
    let answer = post(legacy, INITIALIZE, "").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.header("mcp-session-id").is_some(), "{answer:?}");
}
