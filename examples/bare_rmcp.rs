//! The ceiling for BENCHMARKS.md: a bare rmcp 3.9 server on the same transport
//! settings as dms-bridge (Streamable HTTP, stateless, JSON responses) with a
//! constant-time bearer check and one trivial structured tool, and nothing else.
//!
//!     cargo run --release --example bare_rmcp -- 127.0.0.1:8790 [RESULT.json | UPSTREAM-URL]
//!
//! With a JSON file, the tool answers that result instead (held in memory and
//! handed to rmcp per call, as a plain rmcp server would): the same-payload
//! ceiling for a cached search. With the URL of the demo's mock CDK inventory
//! request, each call GETs it and answers only how many bytes came back: the
//! floor for an uncached search (one rmcp hop plus one upstream call, and no
//! work on the payload, no sharing, no checks).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use subtle::ConstantTimeEq;

#[derive(Clone)]
enum Answer {
    Echo,
    /// A fixed result, from a file.
    Fixed(Arc<serde_json::Value>),
    /// A GET of this URL on every call; the answer is its size.
    Forward(reqwest::Client, Arc<str>),
}

#[derive(Clone)]
struct Bare {
    tool: Arc<Tool>,
    answer: Answer,
}

/// GETs the mock CDK inventory as the bridge does and answers only its size:
/// the cost of one MCP hop and one upstream call, with no work on the payload.
async fn forward(client: &reqwest::Client, url: &str) -> Result<serde_json::Value, ErrorData> {
    let failed = |e: reqwest::Error| ErrorData::internal_error(e.to_string(), None);
    let body = client
        .get(url)
        .header("Authorization", "Bearer demo-access-token")
        .header("Subscription-Id", "7f1c4c52-5a0e-4c61-9a57-0d6c9d7b0c11")
        .header("Request-Id", "3f2b8f44-0000-4000-8000-000000000000")
        .header("Accept", "application/json")
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(failed)?
        .bytes()
        .await
        .map_err(failed)?;
    Ok(json!({ "upstream_bytes": body.len() }))
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![(*self.tool).clone()]))
    }

    async fn call_tool(
        &self,
        req: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = match &self.answer {
            Answer::Echo => json!({ "echo": req.name, "ok": true }),
            Answer::Fixed(result) => (**result).clone(),
            Answer::Forward(client, url) => forward(client, url).await?,
        };
        Ok(CallToolResult::structured(result).into())
    }
}

async fn bearer(request: Request, next: Next) -> Response {
    let ok = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| bool::from(t.as_bytes().ct_eq(b"bench-token")));
    if ok {
        next.run(request).await
    } else {
        StatusCode::UNAUTHORIZED.into_response()
    }
}

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8790".into());
    let answer = match std::env::args().nth(2) {
        None => Answer::Echo,
        Some(url) if url.starts_with("http://") => Answer::Forward(
            dms_bridge::net::client_builder()
                .build()
                .unwrap_or_default(),
            url.into(),
        ),
        Some(path) => {
            let text = std::fs::read_to_string(&path).unwrap();
            Answer::Fixed(Arc::new(serde_json::from_str(&text).unwrap()))
        }
    };
    let schema = json!({ "type": "object", "properties": {} });
    let tool = Arc::new(Tool::new(
        "ping",
        "Answers ok",
        Arc::new(schema.as_object().unwrap().clone()),
    ));
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        move || {
            Ok(Bare {
                tool: tool.clone(),
                answer: answer.clone(),
            })
        },
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn(bearer));
    let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
    eprintln!("bare rmcp server at http://{addr}/mcp");
    axum::serve(listener, app).await.unwrap();
}
