#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The gateway's operator-facing behaviour: one audit record per call,
//! W3C trace context in and out, `/metrics`, `/healthz`, `/readyz`, the
//! result-size limit, and a graceful SIGTERM of the real binary.

use crate::common;

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use common::config::{BridgeConfig, secret};
use common::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolResult;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const TOKEN_PATH: &str = "/oauth2/token";
const INVENTORY_PATH: &str = "/cdk/sales/inventory/v2/merchandisable-vehicles/";

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// Distinctive secrets, so a grep for them means something.
const TOKEN_SECRET: &str = "tok-ACME-ops-5c1f0e9d";
const CLIENT_SECRET: &str = "cs-FORTELLIS-ops-77aa";
const ACCESS_TOKEN: &str = "at-ISSUED-ops-31415";

/// PII planted in argument values.
const PII_NAME: &str = "Zelda Quisenberry";
const PII_EMAIL: &str = "zelda.quisenberry@sentinel.example";

/// Upper bound on every test.
const BUDGET: Duration = Duration::from_secs(60);

async fn bounded<F: Future<Output = ()>>(body: F) {
    tokio::time::timeout(BUDGET, body)
        .await
        .expect("test exceeded its time budget");
}

/// [`rest`] with distinctive secrets in place of the harness's generic ones.
fn config(upstream: &str) -> BridgeConfig {
    rest(upstream)
        .edit_upstream("cdk", |u| u.set("client_secret", secret(CLIENT_SECRET)))
        .edit_token("acme", |t| t.set("secret", secret(TOKEN_SECRET)))
}

/// A CDK-shaped upstream: a token endpoint and the inventory fixture after `delay`.
async fn upstream(delay: Duration) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({ "token_type": "Bearer", "expires_in": 3600, "access_token": ACCESS_TOKEN }),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(
                    fixture("cdk/merchandisable-vehicles.json"),
                    "application/json",
                )
                .set_delay(delay),
        )
        .mount(&server)
        .await;
    server
}

/// An MCP client that sends extra HTTP headers with every request.
async fn connect_with_headers(url: &str, token: &str, headers: &[(&str, &str)]) -> Client {
    let custom: HashMap<http::HeaderName, http::HeaderValue> = headers
        .iter()
        .map(|(k, v)| {
            (
                http::HeaderName::from_str(k).unwrap(),
                http::HeaderValue::from_str(v).unwrap(),
            )
        })
        .collect();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .auth_header(token.to_owned())
        .custom_headers(custom);
    dms_bridge::net::install_tls_provider();
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("MCP initialize")
}

/// `_meta["io.dms-bridge/trace_id"]` of a tool result.
fn trace_of(result: &CallToolResult) -> String {
    result
        .meta
        .as_ref()
        .and_then(|m| m.0.get("io.dms-bridge/trace_id"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no trace id in {:?}", result.meta))
        .to_owned()
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
}

/// The `traceparent` headers the upstream received, in order.
async fn upstream_traceparents(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r: &Request| {
            r.headers
                .get("traceparent")
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_else(|| panic!("upstream request to {} has no traceparent", r.url))
        })
        .collect()
}

/// Checks an outgoing `traceparent`: same trace, a fresh non-zero span, the caller's flags.
fn assert_child(traceparent: &str, trace_id: &str, parent: Option<&str>, flags: &str) {
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    assert_eq!(parts[0], "00", "{traceparent}");
    assert_eq!(parts[1], trace_id, "{traceparent}");
    assert!(is_hex(parts[2], 16), "span id {traceparent}");
    assert_ne!(parts[2], "0000000000000000", "span id must not be zero");
    if let Some(p) = parent {
        assert_ne!(
            parts[2], p,
            "the upstream gets a new span id, not the caller's"
        );
    }
    assert_eq!(parts[3], flags, "{traceparent}");
}

async fn raw_call(url: &str, headers: &[(&str, &str)], body: &Value) -> reqwest::Response {
    let mut request = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(url)
        .header("Authorization", format!("Bearer {TOKEN_SECRET}"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request.send().await.unwrap()
}

fn tools_call(tool: &str, args: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": args } })
}

// ---------------------------------------------------------------------------
// Audit
// ---------------------------------------------------------------------------

#[derive(Debug)]
struct AuditRow {
    at: String,
    trace_id: String,
    principal: String,
    dealership: Option<String>,
    tool: String,
    adapter: Option<String>,
    outcome: String,
    latency_us: i64,
    cache_hit: i64,
    arg_shape: String,
}

async fn open_db(file: &Path) -> SqlitePool {
    let options = SqliteConnectOptions::new()
        .filename(file)
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(5));
    SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap()
}

async fn audit_rows(pool: &SqlitePool) -> Vec<AuditRow> {
    sqlx::query(
        "SELECT at, trace_id, principal, dealership, tool, adapter, outcome, latency_us, cache_hit, arg_shape \
         FROM audit_log ORDER BY id",
    )
    .fetch_all(pool)
    .await
    .unwrap()
    .iter()
    .map(|r| AuditRow {
        at: r.get("at"),
        trace_id: r.get("trace_id"),
        principal: r.get("principal"),
        dealership: r.get("dealership"),
        tool: r.get("tool"),
        adapter: r.get("adapter"),
        outcome: r.get("outcome"),
        latency_us: r.get("latency_us"),
        cache_hit: r.get("cache_hit"),
        arg_shape: r.get("arg_shape"),
    })
    .collect()
}

/// Polls until the table holds at least `n` rows (writes are asynchronous).
async fn wait_for_rows(pool: &SqlitePool, n: i64) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log")
            .fetch_one(pool)
            .await
            .unwrap();
        if count >= n || Instant::now() > deadline {
            return count;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every byte of the database files (main, WAL, shared memory) as text.
fn database_bytes(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        text.push_str(&String::from_utf8_lossy(&bytes));
    }
    text
}

#[tokio::test]
async fn every_call_leaves_exactly_one_audit_record_with_its_facts_and_no_values() {
    bounded(async {
        let server = upstream(Duration::ZERO).await;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("audit.db");
        let store = format!("\n[store]\nurl = \"sqlite://{}\"\n", db.display());
        let bridge = with_config(&config(&server.uri()).tail(&store).render()).await;
        let client = connect(&bridge.url, Some(TOKEN_SECRET)).await;
        let started = chrono::Utc::now();

        // 1–2: dealership tools (no upstream).
        ok(&call(&client, "dealership.list", json!({})).await);
        ok(&call(&client, "dealership.get", json!({ "dealership_id": "acme" })).await);
        // 3–4: the same search twice: a miss, then a cache hit.
        let search = json!({ "dealership_id": "acme", "limit": 5, "filters": { "make": ["Hyundai"] } });
        let first = call(&client, "inventory.search", search.clone()).await;
        ok(&first);
        let second = call(&client, "inventory.search", search).await;
        ok(&second);
        assert_eq!(
            second.meta.as_ref().unwrap().0["io.dms-bridge/cache"]["hit"],
            true,
            "the repeated search is served from the cache"
        );
        // 5: invalid arguments (past the schema, refused by the semantic check), with PII values.
        let invalid = json!({ "dealership_id": "acme", "limit": 1000,
            "filters": { "query": PII_NAME, "make": [PII_EMAIL] } });
        let error = err(&call(&client, "inventory.search", invalid).await);
        assert_eq!(error["code"], "request.invalid_arguments");
        // 6: a dealership this token may not use.
        let error = err(&call(&client, "inventory.search", json!({ "dealership_id": "other" })).await);
        assert_eq!(error["code"], "auth.forbidden");
        // 7: traced by the HTTP header.
        let traced = connect_with_headers(&bridge.url, TOKEN_SECRET, &[("traceparent", TRACEPARENT)]).await;
        let facets = call(&traced, "inventory.facets", json!({ "dealership_id": "acme" })).await;
        ok(&facets);
        assert_eq!(trace_of(&facets), TRACE_ID);
        // 8: a vehicle that does not exist, named by a PII value.
        let error = err(&call(&client, "inventory.get", json!({ "dealership_id": "acme", "vehicle_id": PII_NAME })).await);
        assert_eq!(error["code"], "inventory.vehicle_not_found");
        // 9: a dealership id that is PII (an e-mail): forbidden, and never recorded as such.
        let error = err(&call(&client, "inventory.search", json!({ "dealership_id": PII_EMAIL })).await);
        assert_eq!(error["code"], "auth.forbidden");
        let traces = [&first, &second, &facets].map(trace_of);

        let pool = open_db(&db).await;
        let count = wait_for_rows(&pool, 9).await;
        // A late extra record would show up now.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let rows = audit_rows(&pool).await;
        assert_eq!(count, 9, "{rows:#?}");
        assert_eq!(rows.len(), 9, "one record per call: {rows:#?}");

        type Expected<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a str, i64, Value);
        let expected: [Expected; 9] = [
            ("dealership.list", None, None, "ok", 0, json!([])),
            ("dealership.get", Some("acme"), None, "ok", 0, json!(["dealership_id"])),
            ("inventory.search", Some("acme"), Some("cdk"), "ok", 0, json!(["dealership_id", "filters.make", "limit"])),
            ("inventory.search", Some("acme"), Some("cdk"), "ok", 1, json!(["dealership_id", "filters.make", "limit"])),
            ("inventory.search", Some("acme"), Some("cdk"), "request.invalid_arguments", 0,
                json!(["dealership_id", "filters.make", "filters.query", "limit"])),
            ("inventory.search", Some("other"), None, "auth.forbidden", 0, json!(["dealership_id"])),
            ("inventory.facets", Some("acme"), Some("cdk"), "ok", 0, json!(["dealership_id"])),
            ("inventory.get", Some("acme"), Some("cdk"), "inventory.vehicle_not_found", 0,
                json!(["dealership_id", "vehicle_id"])),
            // The caller's value is not a configured dealership: it must not be stored
            // (checked below, together with the grep of the whole table).
            ("inventory.search", None, None, "auth.forbidden", 0, json!(["dealership_id"])),
        ];
        let mut seen_traces = std::collections::BTreeSet::new();
        for (i, (row, (tool, dealership, adapter, outcome, cache_hit, shape))) in
            rows.iter().zip(expected).enumerate()
        {
            let at = format!("record {} ({tool}): {row:?}", i + 1);
            assert_eq!(row.tool, tool, "{at}");
            assert_eq!(row.principal, "acme", "the token's name, never its secret: {at}");
            if i == 8 {
                assert!(
                    !row.dealership.as_deref().unwrap_or_default().contains('@'),
                    "an unknown dealership id typed by the caller (here an e-mail) is stored verbatim: {at}"
                );
            } else {
                assert_eq!(row.dealership.as_deref(), dealership, "{at}");
            }
            assert_eq!(row.adapter.as_deref(), adapter, "{at}");
            assert_eq!(row.outcome, outcome, "{at}");
            assert_eq!(row.cache_hit, cache_hit, "{at}");
            assert!(row.latency_us > 0, "{at}");
            let recorded: Value = serde_json::from_str(&row.arg_shape)
                .unwrap_or_else(|e| panic!("arg_shape is not JSON ({e}): {at}"));
            assert_eq!(recorded, shape, "{at}");
            let when = chrono::DateTime::parse_from_rfc3339(&row.at)
                .unwrap_or_else(|e| panic!("`at` is not RFC 3339 ({e}): {at}"));
            assert!(
                when >= started - chrono::Duration::seconds(1)
                    && when <= chrono::Utc::now() + chrono::Duration::seconds(1),
                "{at}"
            );
            if i == 6 {
                assert_eq!(row.trace_id, TRACE_ID, "the traced call: {at}");
            } else {
                assert!(is_hex(&row.trace_id, 32), "{at}");
                assert_ne!(row.trace_id, TRACE_ID, "{at}");
            }
            assert!(seen_traces.insert(row.trace_id.clone()), "trace ids are per call: {at}");
        }
        // The records carry the same trace ids the callers were told.
        assert_eq!(rows[2].trace_id, traces[0]);
        assert_eq!(rows[3].trace_id, traces[1]);
        assert_eq!(rows[6].trace_id, traces[2]);

        // No value from the arguments, and no secret, anywhere in the table or its files.
        let dump = format!("{rows:?}");
        let files = database_bytes(dir.path());
        for needle in ["Zelda", "Quisenberry", PII_EMAIL, "sentinel.example", "Hyundai", TOKEN_SECRET, CLIENT_SECRET, ACCESS_TOKEN] {
            assert!(!dump.to_lowercase().contains(&needle.to_lowercase()), "{needle:?} in the audit table: {dump}");
            assert!(!files.contains(needle), "{needle:?} in the database files");
        }
        pool.close().await;
    })
    .await;
}

// ---------------------------------------------------------------------------
// Trace context
// ---------------------------------------------------------------------------

#[tokio::test]
async fn trace_context_is_taken_from_meta_or_header_and_sent_upstream_as_a_child() {
    bounded(async {
        let server = upstream(Duration::ZERO).await;
        let uncached = config(&server.uri())
            .edit_upstream("cdk", |u| u.resilience("{ retries = { max = 0 } }"))
            .no_cache()
            .render();
        let bridge = with_config(&uncached).await;
        let search = json!({ "dealership_id": "acme", "limit": 1 });

        // The HTTP header alone: its trace id is used and continued upstream.
        let traced = connect_with_headers(&bridge.url, TOKEN_SECRET, &[("traceparent", TRACEPARENT)]).await;
        let result = call(&traced, "inventory.search", search.clone()).await;
        ok(&result);
        assert_eq!(trace_of(&result), TRACE_ID);
        let sent = upstream_traceparents(&server).await;
        assert_eq!(sent.len(), 2, "a token request and one inventory request: {sent:?}");
        for tp in &sent {
            assert_child(tp, TRACE_ID, Some(PARENT_ID), "01");
        }
        assert_ne!(sent[0], sent[1], "each upstream request is its own span");

        // Raw HTTP: the header applies to a plain JSON-RPC request as well.
        let response = raw_call(&bridge.url, &[("traceparent", TRACEPARENT)], &tools_call("inventory.search", search.clone())).await;
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["result"]["_meta"]["io.dms-bridge/trace_id"], TRACE_ID, "{body}");
        let sent = upstream_traceparents(&server).await;
        assert_eq!(sent.len(), 3, "{sent:?}");
        assert_child(&sent[2], TRACE_ID, Some(PARENT_ID), "01");

        // An invalid `_meta.traceparent` is ignored: the header applies.
        let result = call_traced(&traced, "inventory.search", search.clone(), "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01").await;
        ok(&result);
        assert_eq!(trace_of(&result), TRACE_ID);
        let sent = upstream_traceparents(&server).await;
        assert_eq!(sent.len(), 4, "{sent:?}");
        assert_child(&sent[3], TRACE_ID, Some(PARENT_ID), "01");

        // Invalid everywhere (or absent): a fresh id, continued upstream.
        let zero = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
        let invalid = connect_with_headers(&bridge.url, TOKEN_SECRET, &[("traceparent", "garbage-trace-header")]).await;
        let mut fresh = Vec::new();
        for tp in [zero, "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"] {
            let result = call_traced(&invalid, "inventory.search", search.clone(), tp).await;
            ok(&result);
            fresh.push(trace_of(&result));
        }
        let plain = connect(&bridge.url, Some(TOKEN_SECRET)).await;
        let result = call(&plain, "inventory.search", search.clone()).await;
        ok(&result);
        fresh.push(trace_of(&result));
        let sent = upstream_traceparents(&server).await;
        assert_eq!(sent.len(), 8, "{sent:?}");
        for (id, tp) in fresh.iter().zip(&sent[4..]) {
            assert!(is_hex(id, 32), "a fresh trace id is 32 lower-case hex digits: {id}");
            assert_ne!(id, TRACE_ID);
            assert_ne!(id, "00000000000000000000000000000000");
            assert_child(tp, id, None, "00");
        }
        let distinct: std::collections::BTreeSet<_> = fresh.iter().collect();
        assert_eq!(distinct.len(), fresh.len(), "fresh ids are not reused: {fresh:?}");

        // `_meta.traceparent` of the MCP request wins over the HTTP header; an
        // unsampled caller stays unsampled upstream.
        let meta_trace = "0af7651916cd43dd8448eb211c80319c";
        let meta_parent = "b7ad6b7169203331";
        let meta_traceparent = format!("00-{meta_trace}-{meta_parent}-00");
        // Raw JSON-RPC first (no rmcp client involved): `_meta` only, then `_meta` and the header.
        for headers in [&[][..], &[("traceparent", TRACEPARENT)][..]] {
            let mut request = tools_call("inventory.search", search.clone());
            request["params"]["_meta"] = json!({ "traceparent": meta_traceparent });
            let response = raw_call(&bridge.url, headers, &request).await;
            assert_eq!(response.status(), 200);
            let body: Value = response.json().await.unwrap();
            assert_eq!(
                body["result"]["_meta"]["io.dms-bridge/trace_id"], meta_trace,
                "params._meta.traceparent must set the trace (HTTP headers {headers:?}); result _meta: {}",
                body["result"]["_meta"]
            );
            let sent = upstream_traceparents(&server).await;
            assert_child(sent.last().unwrap(), meta_trace, Some(meta_parent), "00");
        }
        // Through the rmcp client: `CallToolRequestParams { meta: Some(RequestMetaObject(..)) }`.
        let result = call_traced(&traced, "inventory.search", search.clone(), &meta_traceparent).await;
        ok(&result);
        assert_eq!(trace_of(&result), meta_trace, "the MCP request's _meta wins over the HTTP header");
        let sent = upstream_traceparents(&server).await;
        assert_child(sent.last().unwrap(), meta_trace, Some(meta_parent), "00");
    })
    .await;
}

// ---------------------------------------------------------------------------
// Metrics, health and readiness
// ---------------------------------------------------------------------------

/// The value of the one sample line that starts with `series`.
fn sample(text: &str, series: &str) -> f64 {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.split_once(' ').is_some_and(|(name, _)| name == series))
        .collect();
    assert_eq!(lines.len(), 1, "expected one sample {series} in:\n{text}");
    lines[0].rsplit_once(' ').unwrap().1.parse().unwrap()
}

#[tokio::test]
async fn metrics_count_calls_by_outcome_and_time_them() {
    bounded(async {
        let server = upstream(Duration::ZERO).await;
        let uncached = config(&server.uri())
            .edit_upstream("cdk", |u| u.resilience("{ retries = { max = 0 } }"))
            .no_cache()
            .render();
        let bridge = with_config(&uncached).await;
        let client = connect(&bridge.url, Some(TOKEN_SECRET)).await;
        for _ in 0..3 {
            ok(&call(&client, "inventory.search", json!({ "dealership_id": "acme", "limit": 2 })).await);
        }
        assert_eq!(
            error_code(&client, "inventory.search", json!({ "dealership_id": "acme", "limit": 1000 })).await,
            "request.invalid_arguments"
        );
        assert_eq!(
            error_code(&client, "inventory.search", json!({ "dealership_id": "other" })).await,
            "auth.forbidden"
        );
        ok(&call(&client, "dealership.list", json!({})).await);

        let response = common::http_get(format!("http://{}/metrics", bridge.addr)).await.unwrap();
        assert_eq!(response.status(), 200);
        let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(content_type.starts_with("application/openmetrics-text"), "{content_type}");
        let text = response.text().await.unwrap();
        assert!(text.ends_with("# EOF\n"), "OpenMetrics text ends with # EOF:\n{text}");

        assert_eq!(sample(&text, r#"dms_bridge_tool_calls_total{tool="inventory.search",door="mcp",outcome="ok"}"#), 3.0);
        assert_eq!(
            sample(&text, r#"dms_bridge_tool_calls_total{tool="inventory.search",door="mcp",outcome="request.invalid_arguments"}"#),
            1.0
        );
        assert_eq!(sample(&text, r#"dms_bridge_tool_calls_total{tool="inventory.search",door="mcp",outcome="auth.forbidden"}"#), 1.0);
        assert_eq!(sample(&text, r#"dms_bridge_tool_calls_total{tool="dealership.list",door="mcp",outcome="ok"}"#), 1.0);
        assert_eq!(sample(&text, r#"dms_bridge_upstream_requests_total{upstream="cdk",outcome="ok"}"#), 3.0);

        // The latency histogram: cumulative buckets ending in +Inf, count and sum.
        assert!(text.contains("# TYPE dms_bridge_tool_call_duration_seconds histogram"), "{text}");
        let buckets: Vec<(String, f64)> = text
            .lines()
            .filter(|l| l.starts_with("dms_bridge_tool_call_duration_seconds_bucket{") && l.contains(r#"tool="inventory.search""#))
            .map(|l| {
                let (labels, value) = l.rsplit_once(' ').unwrap();
                let le = labels.split("le=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
                (le, value.parse().unwrap())
            })
            .collect();
        assert!(buckets.len() >= 10, "{buckets:?}");
        assert_eq!(buckets.last().unwrap(), &("+Inf".to_owned(), 5.0), "{buckets:?}");
        assert!(buckets.windows(2).all(|w| w[0].1 <= w[1].1), "buckets are cumulative: {buckets:?}");
        assert_eq!(sample(&text, r#"dms_bridge_tool_call_duration_seconds_count{tool="inventory.search"}"#), 5.0);
        let sum = sample(&text, r#"dms_bridge_tool_call_duration_seconds_sum{tool="inventory.search"}"#);
        assert!(sum > 0.0 && sum < 30.0, "{sum}");
    })
    .await;
}

#[tokio::test]
async fn healthz_and_readyz_report_the_process_store_and_circuits() {
    bounded(async {
        let server = upstream(Duration::ZERO).await;
        let bridge = with_config(&config(&server.uri()).render()).await;
        let health = common::http_get(format!("http://{}/healthz", bridge.addr))
            .await
            .unwrap();
        assert_eq!(health.status(), 200);
        assert_eq!(health.text().await.unwrap(), "ok");

        let ready = common::http_get(format!("http://{}/readyz", bridge.addr))
            .await
            .unwrap();
        assert_eq!(ready.status(), 200);
        assert!(
            ready.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{:?}",
            ready.headers()
        );
        let body: Value = ready.json().await.unwrap();
        assert_eq!(
            body,
            json!({ "store": "ok", "upstreams": { "cdk": "closed" }, "inventory": [] })
        );
    })
    .await;
}

// ---------------------------------------------------------------------------
// Result size limit
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_result_over_max_result_bytes_is_refused_with_a_hint() {
    bounded(async {
        let server = upstream(Duration::ZERO).await;
        let toml = config(&server.uri())
            .section("limits", "max_result_bytes = 4000")
            .render();
        let bridge = with_config(&toml).await;
        let client = connect(&bridge.url, Some(TOKEN_SECRET)).await;

        let result = call(
            &client,
            "inventory.search",
            json!({ "dealership_id": "acme", "limit": 20 }),
        )
        .await;
        let error = err(&result);
        assert_eq!(error["code"], "request.result_too_large", "{error}");
        assert_eq!(error["retryable"], false, "{error}");
        assert_eq!(error["details"]["max_bytes"], 4000, "{error}");
        let size = error["details"]["size_bytes"].as_u64().unwrap();
        assert!(size > 4000, "{error}");
        assert!(
            error["recovery"]["hint"]
                .as_str()
                .is_some_and(|h| !h.is_empty()),
            "{error}"
        );
        assert!(
            serde_json::to_string(&result).unwrap().len() < 4000,
            "the refusal itself is small"
        );

        let page = ok(&call(
            &client,
            "inventory.search",
            json!({ "dealership_id": "acme", "limit": 1 }),
        )
        .await);
        assert_eq!(page["items"].as_array().unwrap().len(), 1);
        assert!(serde_json::to_vec(&page).unwrap().len() <= 4000);
    })
    .await;
}

// ---------------------------------------------------------------------------
// The real binary: JSON logs and graceful shutdown
// ---------------------------------------------------------------------------

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Finds `key` anywhere in a JSON value.
fn find_key<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map
            .get(key)
            .or_else(|| map.values().find_map(|v| find_key(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_key(v, key)),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_the_call_in_flight_writes_its_audit_record_and_exits_zero() {
    bounded(async {
        // The call must still be in flight when SIGTERM comes, on any machine.
        let server = upstream(Duration::from_secs(4)).await;
        let dir = tempfile::tempdir().unwrap();
        let db_dir = dir.path().join("db");
        std::fs::create_dir(&db_dir).unwrap();
        let db = db_dir.join("audit.db");
        let port = free_port();
        let extra = format!(
            "\n[server]\nlisten = \"127.0.0.1:{port}\"\n\n[store]\nurl = \"sqlite://{}\"\n",
            db.display()
        );
        let config_file = dir.path().join("bridge.toml");
        // The upstream's and the call's timeouts leave the slow answer all the
        // room a slow machine needs: only the shutdown is under test.
        let config = config(&server.uri())
            .call_timeout("60s")
            .edit_upstream("cdk", |cdk| cdk.timeout("30s"));
        std::fs::write(&config_file, config.tail(&extra).render()).unwrap();

        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
            .arg("serve")
            .arg("--config")
            .arg(&config_file)
            .arg("--log-format")
            .arg("json")
            // Production's filter, with this crate at debug: stricter than production.
            .env("DMS_BRIDGE_LOG", "info,rmcp=warn,dms_bridge=debug")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let stderr_task = tokio::spawn(async move {
            let mut out = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut stderr, &mut out)
                .await
                .unwrap();
            String::from_utf8(out).unwrap()
        });

        // Wait until it serves.
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(r) = common::http_get(format!("{base}/healthz")).await
                && r.status() == 200
            {
                break;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "the bridge exited early with {status}: {}",
                    stderr_task.await.unwrap()
                );
            }
            assert!(
                Instant::now() < deadline,
                "the bridge did not start serving"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        // A call that needs 4 s of upstream time.
        let url = format!("{base}/mcp");
        let started = Instant::now();
        let in_flight = tokio::spawn(async move {
            let response = raw_call(
                &url,
                &[("traceparent", TRACEPARENT)],
                &tools_call(
                    "inventory.search",
                    json!({ "dealership_id": "acme", "limit": 3 }),
                ),
            )
            .await;
            let status = response.status();
            (status, response.text().await.unwrap())
        });
        // SIGTERM once the upstream has the request (and ~300 ms have passed).
        let deadline = Instant::now() + Duration::from_secs(5);
        while !server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .any(|r| r.url.path() == INVENTORY_PATH)
        {
            assert!(
                Instant::now() < deadline,
                "the call never reached the upstream"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(300).saturating_sub(started.elapsed())).await;
        assert!(
            !in_flight.is_finished(),
            "the call must still be in flight at SIGTERM"
        );
        let killed = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let signalled = Instant::now();

        let (status, body) = tokio::time::timeout(Duration::from_secs(30), in_flight)
            .await
            .expect("the in-flight call did not complete")
            .unwrap();
        assert_eq!(status, 200, "{body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        let result = &body["result"];
        assert_ne!(result["isError"], true, "{body}");
        assert_eq!(
            result["structuredContent"]["items"]
                .as_array()
                .map(Vec::len),
            Some(3),
            "{body}"
        );
        assert_eq!(result["_meta"]["io.dms-bridge/trace_id"], TRACE_ID);
        assert!(
            started.elapsed() >= Duration::from_millis(3900),
            "the upstream delay was honoured"
        );

        let exit = tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .expect("the bridge did not exit within 30 s of SIGTERM")
            .unwrap();
        assert_eq!(exit.code(), Some(0), "exit status {exit}");
        assert!(signalled.elapsed() < Duration::from_secs(30));

        // Logs: JSON lines only, one of them the call's, and no secret.
        let logs = stderr_task.await.unwrap();
        let lines: Vec<Value> = logs
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {l}"))
            })
            .collect();
        let tool_call = lines
            .iter()
            .find(|l| {
                l["message"] == "Tool call."
                    && find_key(l, "tool") == Some(&json!("inventory.search"))
            })
            .unwrap_or_else(|| panic!("no \"Tool call.\" line in:\n{logs}"));
        let trace =
            find_key(tool_call, "trace_id").unwrap_or_else(|| panic!("no trace_id: {tool_call}"));
        assert_eq!(trace, TRACE_ID, "{tool_call}");
        assert_eq!(
            find_key(tool_call, "outcome"),
            Some(&json!("ok")),
            "{tool_call}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l["message"] == "Shutting down: finishing calls in flight."),
            "{logs}"
        );
        for secret in [TOKEN_SECRET, CLIENT_SECRET, ACCESS_TOKEN] {
            assert!(!logs.contains(secret), "{secret:?} in the logs:\n{logs}");
        }

        // The call's audit record was written before the process exited.
        let pool = open_db(&db).await;
        let rows = audit_rows(&pool).await;
        let record = rows
            .iter()
            .find(|r| r.trace_id == TRACE_ID)
            .unwrap_or_else(|| panic!("no audit record of the call: {rows:#?}"));
        assert_eq!(record.tool, "inventory.search");
        assert_eq!(record.outcome, "ok");
        assert_eq!(record.principal, "acme");
        assert_eq!(record.adapter.as_deref(), Some("cdk"));
        assert!(record.latency_us >= 3_900_000, "{record:?}");
        pool.close().await;
    })
    .await;
}

#[tokio::test]
async fn json_logs_of_the_real_binary_never_contain_configured_secrets() {
    // Same binary, debug for this crate, several calls including failures.
    bounded(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(TOKEN_PATH))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({ "token_type": "Bearer", "expires_in": 3600, "access_token": ACCESS_TOKEN }),
            ))
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path(INVENTORY_PATH))
            .respond_with(ResponseTemplate::new(401).set_body_string("bad token"))
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let extra = format!(
            "\n[server]\nlisten = \"127.0.0.1:{port}\"\n\n[store]\nurl = \"sqlite::memory:\"\n"
        );
        let config_file = dir.path().join("bridge.toml");
        std::fs::write(&config_file, config(&server.uri()).tail(&extra).render()).unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
            .args(["--log-format", "json", "serve", "--config"])
            .arg(&config_file)
            .env(
                "DMS_BRIDGE_LOG",
                "debug,hyper=info,hyper_util=info,h2=info,reqwest=info,rmcp=warn",
            )
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let stderr_task = tokio::spawn(async move {
            let mut out = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut stderr, &mut out)
                .await
                .unwrap();
            String::from_utf8(out).unwrap()
        });
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !common::http_get(format!("{base}/healthz"))
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "the bridge exited early with {status}: {}",
                    stderr_task.await.unwrap()
                );
            }
            assert!(
                Instant::now() < deadline,
                "the bridge did not start serving"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let url = format!("{base}/mcp");
        for args in [
            json!({ "dealership_id": "acme" }),
            json!({ "dealership_id": "other" }),
            json!({ "dealership_id": "acme", "limit": 0 }),
        ] {
            let response = raw_call(&url, &[], &tools_call("inventory.search", args)).await;
            assert_eq!(response.status(), 200);
        }
        // A wrong token, too.
        let wrong = dms_bridge::net::client_builder()
            .build()
            .unwrap()
            .post(&url)
            .header("Authorization", format!("Bearer {TOKEN_SECRET}x"))
            .json(&tools_call("dealership.list", json!({})))
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 401);
        std::process::Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .unwrap();
        let exit = tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .expect("exit")
            .unwrap();
        assert_eq!(exit.code(), Some(0));
        let logs = stderr_task.await.unwrap();
        assert!(
            logs.contains("\"Tool call.\"") && logs.contains("\"Upstream call failed.\""),
            "{logs}"
        );
        for line in logs.lines().filter(|l| !l.trim().is_empty()) {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        }
        let basic = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("id:{CLIENT_SECRET}"),
        );
        for secret in [TOKEN_SECRET, CLIENT_SECRET, ACCESS_TOKEN, basic.as_str()] {
            assert!(!logs.contains(secret), "{secret:?} in the logs:\n{logs}");
        }
    })
    .await;
}
