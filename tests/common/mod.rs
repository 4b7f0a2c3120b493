//! Shared test harness: the real bridge on a loopback port, driven by rmcp's
//! MCP client over Streamable HTTP, with upstreams faked at the HTTP level.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod browser;
pub mod config;
pub mod inventory;
pub mod leads;
pub mod postgres;
pub mod process;
pub mod raw;
pub mod redis_server;
pub mod service;

use std::net::SocketAddr;

use self::config::{BridgeConfig, Dealership, Token, Upstream};
use dms_bridge::cli::demo;
use dms_bridge::config::from_toml_str;
use dms_bridge::http::serve::{self, ServeSettings};
use dms_bridge::http::{HttpSettings, router};
use dms_bridge::runtime;
use dms_bridge_testkit::oauth::{DemoAuthServer, DemoUser};
use dms_bridge_testkit::{MockUpstreams, start_mocks};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub type Client = RunningService<RoleClient, ()>;

/// A running bridge; stops when dropped.
pub struct Bridge {
    pub url: String,
    pub addr: SocketAddr,
    pub gateway: dms_bridge::gateway::Gateway,
    pub mocks: Option<MockUpstreams>,
    cancel: CancellationToken,
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// The demo: mock CDK and feed upstreams plus the embedded demo config.
pub async fn demo() -> Bridge {
    demo_with("").await
}

/// The demo with `extra` TOML appended to its config (more tokens, …).
pub async fn demo_with(extra: &str) -> Bridge {
    demo_edited(|toml| toml + extra).await
}

/// The demo with extra `[server]` settings (TOML lines).
pub async fn demo_with_server(settings: &str) -> Bridge {
    demo_edited(|toml| toml.replacen("[server]\n", &format!("[server]\n{settings}\n"), 1)).await
}

/// The demo with demo-cdk's inventory read through on every cache miss
/// instead of mirrored (`inventory_sync = "off"`), for tests of the read cache;
/// without a mirror, CDK's pushed events have nothing to refresh, so they go too.
pub async fn demo_reading_through() -> Bridge {
    demo_edited(|toml| {
        toml.replacen(
            "[upstreams.cdk-riverside]\n",
            "[upstreams.cdk-riverside]\ninventory_sync = \"off\"\n",
            1,
        )
        .lines()
        .filter(|line| !line.starts_with("inbound_events ="))
        .map(|line| format!("{line}\n"))
        .collect()
    })
    .await
}

/// The demo with its rendered config passed through `edit`.
pub async fn demo_edited(edit: impl FnOnce(String) -> String) -> Bridge {
    let cancel = CancellationToken::new();
    let mocks = start_mocks(std::time::Duration::ZERO, &cancel)
        .await
        .expect("mocks");
    let toml = edit(demo::render(
        mocks.addresses(),
        "127.0.0.1:0".parse().unwrap(),
    ));
    let mut bridge = start(&toml, cancel).await;
    bridge.mocks = Some(mocks);
    bridge
}

/// A config with no upstream at all: dealership `acme` (its profile readable
/// without a token) and the token `acme-token`, plus `server` as the `[server]`
/// section's lines and `anonymous` as the anonymous callers' quota, if the
/// test is about it (else out of reach).
pub fn small_config(server: &str, anonymous: Option<&str>) -> String {
    let config = BridgeConfig::new()
        .section("server", server)
        .dealership(Dealership::acme().set("anonymous_inventory", "true"))
        .token(Token::new(
            "acme",
            "acme-token",
            &["acme"],
            &["amcp:inventory:read"],
        ));
    match anonymous {
        Some(quota) => config.quota("anonymous", quota),
        None => config,
    }
    .render()
}

/// A 2026-07-28 client (`server/discover`, no `initialize`, no session)
/// sending `token`, declaring `capabilities` on every request.
pub async fn modern_client(
    url: &str,
    token: &str,
    capabilities: rmcp::model::ClientCapabilities,
) -> RunningService<RoleClient, rmcp::model::ClientConfig> {
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let info = rmcp::model::ClientConfig::new(
        capabilities,
        rmcp::model::Implementation::new("dms-bridge-tests", "1.0"),
    );
    dms_bridge::net::install_tls_provider();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token.to_owned()),
    );
    info.serve_with_lifecycle(
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("server/discover")
}

/// The demo feed's next snapshot (three units sold, one arrived, one price
/// drop), read into the mirror now.
pub async fn advance_demo_feed(bridge: &Bridge) {
    let feed = &bridge.mocks.as_ref().unwrap().feed_url;
    dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(format!("{feed}/feeds/advance"))
        .send()
        .await
        .unwrap();
    let mirror = &bridge.gateway.services().mirror;
    mirror.sync_now("demo-feed").await.unwrap();
}

/// Asserts that `inventory.get` by `vin` answers the unit is sold.
pub async fn assert_sold(client: &Client, dealership: &str, vin: &str) {
    let gone = err(&call(
        client,
        "inventory.get",
        serde_json::json!({ "dealership_id": dealership, "vin": vin }),
    )
    .await);
    assert_eq!(gone["code"], "inventory.vehicle_unavailable", "{vin}");
}

/// A bridge from a TOML config string.
pub async fn with_config(toml: &str) -> Bridge {
    start(toml, CancellationToken::new()).await
}

/// The demo with OAuth sign-in through the test-kit's demo authorization
/// server (`extra` TOML appended, e.g. more `[oauth]` keys go in `oauth_extra`).
pub async fn demo_signed_in(oauth_extra: &str) -> (Bridge, DemoAuthServer) {
    let cancel = CancellationToken::new();
    let mocks = start_mocks(std::time::Duration::ZERO, &cancel)
        .await
        .expect("mocks");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let auth = DemoAuthServer::start(
        "127.0.0.1:0".parse().unwrap(),
        vec![format!("http://{addr}/mcp")],
        DemoUser::defaults(),
        cancel.child_token(),
    )
    .await
    .expect("authorization server");
    let toml = demo::render(mocks.addresses(), addr)
        + &demo::oauth_section(auth.issuer(), addr, true)
        + oauth_extra;
    let mut bridge = start_on(listener, &toml, cancel).await;
    bridge.mocks = Some(mocks);
    (bridge, auth)
}

async fn start(toml: &str, cancel: CancellationToken) -> Bridge {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    start_on(listener, toml, cancel).await
}

async fn start_on(
    listener: tokio::net::TcpListener,
    toml: &str,
    cancel: CancellationToken,
) -> Bridge {
    let mut config = from_toml_str(toml).unwrap_or_else(|e| panic!("config: {e}"));
    if !toml.contains("[store]") {
        config.store.url = "sqlite::memory:".into();
    }
    // DMS_BRIDGE_TEST_STORE=postgres: a throwaway store on PostgreSQL instead.
    // Stores a test names on purpose (SQLite files it reopens) stay as named.
    if config.store.url == "sqlite::memory:" && postgres::selected() {
        config.store.url = postgres::fresh_database().await;
    }
    let runtime =
        runtime::build(&config, std::path::Path::new(".")).unwrap_or_else(|e| panic!("build: {e}"));
    let started = runtime.start(&cancel).await.expect("store");
    let settings = HttpSettings::for_config(&config);
    let app = router(
        started.gateway.clone(),
        started.standing.clone(),
        &settings,
        cancel.clone(),
    );
    let addr = listener.local_addr().unwrap();
    let stop = cancel.clone();
    // The production accept loop, with the config's timeouts and connection cap.
    let serve_settings = ServeSettings::from_config(&config.server);
    tokio::spawn(async move {
        serve::serve(listener, app, &serve_settings, async move {
            stop.cancelled().await
        })
        .await;
    });
    Bridge {
        url: format!("http://{addr}{}", config.server.path),
        addr,
        mocks: None,
        gateway: started.gateway,
        cancel,
    }
}

/// An MCP client session, with `Authorization: Bearer <token>` when a token is given.
pub async fn connect(url: &str, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(t) = token {
        config = config.auth_header(t.to_owned());
    }
    dms_bridge::net::install_tls_provider();
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve(transport).await.expect("MCP initialize")
}

/// Calls `tool` with `traceparent` in the request's `_meta` (which wins over
/// the HTTP header), as a tracing client would.
pub async fn call_traced(
    client: &Client,
    tool: &str,
    args: Value,
    traceparent: &str,
) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    let mut meta = rmcp::model::MetaObject::new();
    meta.set_traceparent(traceparent);
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(map);
    params.meta = Some(rmcp::model::RequestMetaObject(meta));
    client.call_tool(params).await.expect("tools/call")
}

pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map))
        .await
        .expect("tools/call")
}

/// Every page of an `inventory.search` for `args`, in full records
/// (`response_format: detailed`, unless `args` says otherwise), as the last
/// page holding every page's items: full records of a whole inventory go
/// over one answer's token budget, so the bridge pages them.
pub async fn every_page(client: &Client, args: Value) -> Value {
    let (mut items, mut cursor) = (Vec::new(), None::<String>);
    let mut last = loop {
        let mut page_args = args.clone();
        page_args["limit"] = serde_json::json!(100);
        if page_args.get("response_format").is_none() {
            page_args["response_format"] = serde_json::json!("detailed");
        }
        if let Some(c) = &cursor {
            page_args["cursor"] = serde_json::json!(c);
        }
        let page = ok(&call(client, "inventory.search", page_args).await);
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        match page.get("next_cursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break page,
        }
        assert!(items.len() < 100_000, "paging does not end");
    };
    // The last page's envelope (`total`, `stale`, …) with every page's items.
    last["items"] = Value::Array(items);
    last
}

/// `reqwest::get` on a client with the bridge's TLS provider (`net`): a
/// test may fetch before any bridge in its process has built a client.
pub async fn http_get(url: impl reqwest::IntoUrl) -> reqwest::Result<reqwest::Response> {
    dms_bridge::net::client_builder()
        .build()?
        .get(url)
        .send()
        .await
}

/// The structured result of a successful call.
pub fn ok(result: &CallToolResult) -> Value {
    assert_ne!(
        result.is_error,
        Some(true),
        "expected success, got {:?}",
        result.structured_content
    );
    result
        .structured_content
        .clone()
        .expect("structuredContent")
}

/// The `error` object of a failed call: the envelope travels as JSON in the
/// one text block, with no `structuredContent` (TOOLSET.md "Errors").
pub fn err(result: &CallToolResult) -> Value {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error, got {:?}",
        result.structured_content
    );
    assert_eq!(
        result.structured_content, None,
        "an error result carries no structuredContent"
    );
    assert_eq!(result.content.len(), 1, "an error has one content block");
    let text = &result.content[0].as_text().expect("a text block").text;
    serde_json::from_str::<Value>(text).expect("the error envelope as JSON")["error"].clone()
}

/// The `error` object of a raw JSON-RPC `tools/call` answer (see [`err`]).
pub fn raw_err(answer: &Value) -> Value {
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "expected an error: {answer}");
    assert!(result.get("structuredContent").is_none(), "{answer}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    serde_json::from_str::<Value>(text).expect("the error envelope as JSON")["error"].clone()
}

/// The JSON pointers of an `request.invalid_arguments` error's problems, in order.
pub fn problem_pointers(error: &Value) -> Vec<String> {
    error["details"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pointer"].as_str().unwrap().to_owned())
        .collect()
}

/// Calls and returns the error code (panics on success).
pub async fn error_code(client: &Client, tool: &str, args: Value) -> String {
    err(&call(client, tool, args).await)["code"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Dealership `acme` whose inventory comes from a CDK-shaped REST upstream
/// `cdk` at `upstream`, dealership `other` with no upstream, and a token for each.
pub fn rest(upstream: &str) -> BridgeConfig {
    BridgeConfig::new()
        .call_timeout("5s")
        .dealership(Dealership::acme().route("inventory", "cdk"))
        .dealership(Dealership::other())
        .upstream("cdk", Upstream::cdk(upstream))
        .token(Token::new(
            "acme",
            "acme-token",
            &["acme"],
            &["amcp:inventory:read"],
        ))
        .token(Token::new(
            "other",
            "other-token",
            &["other"],
            &["amcp:inventory:read"],
        ))
}

/// [`rest`] with `extra_upstream` appended to the upstream's table.
pub fn rest_config(upstream: &str, extra_upstream: &str) -> String {
    rest(upstream)
        .edit_upstream("cdk", |u| u.line(extra_upstream))
        .render()
}

/// Reads a fixture file from `wiremock-fixtures/`.
pub fn fixture(path: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/wiremock-fixtures/{path}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

// === A CDK-shaped upstream on wiremock ===

pub const TOKEN_PATH: &str = "/oauth2/token";
pub const INVENTORY_PATH: &str = "/cdk/sales/inventory/v2/merchandisable-vehicles/";

/// The OAuth2 token endpoint, answering with the fixture token.
pub async fn mount_token(server: &wiremock::MockServer) {
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path(TOKEN_PATH))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_raw(fixture("cdk/token.json"), "application/json"),
        )
        .named("token endpoint")
        .mount(server)
        .await;
}

/// Records when each request arrives (in `.0`), then answers with the fixture inventory.
pub struct Arrivals(pub std::sync::Arc<std::sync::Mutex<Vec<std::time::Instant>>>);

impl wiremock::Respond for Arrivals {
    fn respond(&self, _: &wiremock::Request) -> wiremock::ResponseTemplate {
        self.0.lock().unwrap().push(std::time::Instant::now());
        inventory_ok()
    }
}

/// The most of `times` (in arrival order) within any `window` starting at one of them.
pub fn busiest_window(times: &[std::time::Instant], window: std::time::Duration) -> usize {
    times
        .iter()
        .enumerate()
        .map(|(i, start)| {
            times[i..]
                .iter()
                .take_while(|t| t.duration_since(*start) < window)
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// The whole fixture inventory in one answer.
pub fn inventory_ok() -> wiremock::ResponseTemplate {
    wiremock::ResponseTemplate::new(200).set_body_raw(
        fixture("cdk/merchandisable-vehicles.json"),
        "application/json",
    )
}

/// How many requests the upstream received on `wanted`.
pub async fn count(server: &wiremock::MockServer, wanted: &str) -> usize {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == wanted)
        .count()
}

/// The bridge's `/metrics` text.
pub async fn metrics_text(bridge: &Bridge) -> String {
    let response = http_get(format!("http://{}/metrics", bridge.addr))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

/// A `GET` on the MCP endpoint asking for the caller's update stream, as a
/// client of the `initialize` era opens it without a session.
pub async fn open_updates_stream(url: &str, token: Option<&str>) -> reqwest::Response {
    let mut request = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .get(url)
        .header("Accept", "text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.expect("GET the update stream")
}

/// An open update stream: its SSE `data` lines, parsed as they come.
pub struct UpdatesStream {
    response: reqwest::Response,
    buffer: String,
}

pub async fn updates_stream(url: &str, token: Option<&str>) -> UpdatesStream {
    let response = open_updates_stream(url, token).await;
    assert_eq!(response.status(), 200, "the update stream opens");
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    UpdatesStream {
        response,
        buffer: String::new(),
    }
}

/// The next JSON-RPC message on `stream` (keep-alive comments skipped); panics after 20 s.
pub async fn next_stream_message(stream: &mut UpdatesStream) -> Value {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        while let Some(end) = stream.buffer.find("\n\n") {
            let event: String = stream.buffer.drain(..end + 2).collect();
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if !data.is_empty() {
                return serde_json::from_str(&data).expect("a JSON-RPC message");
            }
        }
        let chunk = tokio::time::timeout_at(deadline, stream.response.chunk())
            .await
            .expect("a message within 20 s")
            .expect("a chunk")
            .expect("the stream stays open");
        stream.buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// The URI of the next `notifications/resources/updated` on `stream`.
pub async fn next_stream_update(stream: &mut UpdatesStream) -> String {
    let message = next_stream_message(stream).await;
    assert_eq!(
        message["method"], "notifications/resources/updated",
        "{message}"
    );
    message["params"]["uri"].as_str().unwrap().to_owned()
}

/// Fails unless `text` is an RFC 3339 instant written in `zone`'s offset at that instant.
pub fn assert_in_zone(text: &Value, zone: chrono_tz::Tz) {
    use chrono::Offset;
    let at = chrono::DateTime::parse_from_rfc3339(text.as_str().expect("a time"))
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let wanted = at.with_timezone(&zone).offset().fix();
    assert_eq!(*at.offset(), wanted, "{text} is not in {zone}'s offset");
}
