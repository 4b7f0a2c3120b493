//! Upstream failures of a CDK/Fortellis REST upstream, as a caller sees them:
//! one stable code per fault, a truthful `retryable`, one of the bridge's fixed
//! sentences, nothing of the upstream's text, and always a normal tool result
//! (`isError: true`), never a JSON-RPC error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

/// Appended to the upstream table: no retries, and no read cache.
const SINGLE_ATTEMPT_NO_CACHE: &str =
    "resilience = { retries = { max = 0 } }\n\n[cache]\nenabled = false\n";

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use wiremock::matchers::{bearer_token, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TOKEN_PATH: &str = "/oauth2/token";
const INVENTORY_PATH: &str = "/cdk/sales/inventory/v2/merchandisable-vehicles/";

/// Every sentence the bridge may answer an upstream failure with (src/gateway/error_map.rs and
/// the call deadline in src/gateway/pipeline.rs). Anything else would be upstream text.
const FIXED_SENTENCES: [&str; 7] = [
    "The dealer's system refused the bridge's credentials. The bridge operator has to fix them; retrying will not help.",
    "The dealer's system is throttling requests. Wait and try again.",
    "The dealer's system is unavailable right now. Try again shortly.",
    "The dealer's system did not answer in time. Try again shortly.",
    "The dealer's system refused the request. Retrying the same request will not help.",
    "The dealer's system answered with data the bridge cannot read. The operator has been told through the logs.",
    "The call took longer than the bridge allows. Try again, or narrow the request.",
];

/// Strings from `wiremock-fixtures/cdk/errors/pii-echo-500.json` that must never reach a caller.
const PII: [&str; 7] = [
    "Dana",
    "Whitfield",
    "dana.whitfield@example.com",
    "+15550100188",
    "Elm St",
    "NullPointerException",
    "com.cdk",
];

/// Issues `token-1`, `token-2`, … so tests can tell which token a request carried.
struct CountingTokens(AtomicUsize);

impl Respond for CountingTokens {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        ResponseTemplate::new(200).set_body_json(json!({ "token_type": "Bearer", "expires_in": 3600, "access_token": format!("token-{n}") }))
    }
}

async fn mount_tokens(server: &MockServer, times: u64) {
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(CountingTokens(AtomicUsize::new(0)))
        .expect(times)
        .named("token endpoint")
        .mount(server)
        .await;
}

async fn mount_inventory(server: &MockServer, response: ResponseTemplate, times: u64) {
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(response)
        .expect(times)
        .named("inventory")
        .mount(server)
        .await;
}

async fn bridge_for(upstream: &str) -> (Bridge, Client) {
    // One upstream answer per call: retries and caching are covered by the gateway tests.
    let bridge = with_config(&rest_config(upstream, SINGLE_ATTEMPT_NO_CACHE)).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    (bridge, client)
}

/// `inventory.search` for `acme`; the transport must answer with a tool result.
async fn search(client: &Client) -> CallToolResult {
    let Value::Object(args) = json!({ "dealership_id": "acme", "limit": 100 }) else {
        unreachable!()
    };
    match client
        .call_tool(CallToolRequestParams::new("inventory.search").with_arguments(args))
        .await
    {
        Ok(result) => result,
        Err(e) => panic!(
            "the MCP transport must answer with a tool result, not a JSON-RPC or transport error: {e}"
        ),
    }
}

/// Asserts a failed call's shape and that none of `upstream_text` (or the upstream's address) leaks.
async fn assert_failure(
    client: &Client,
    result: &CallToolResult,
    code: &str,
    retryable: bool,
    upstream_text: &[&str],
    upstream: &str,
) -> Value {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected isError: true, got {result:?}"
    );
    assert!(
        !result.content.is_empty(),
        "an error result still carries text content"
    );
    let error = err(result);
    assert_eq!(error["code"], code, "{error}");
    assert_eq!(error["retryable"], retryable, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        FIXED_SENTENCES.contains(&message),
        "message is not one of the bridge's fixed sentences: {message:?}"
    );
    if let Some(details) = error.get("details") {
        for key in details.as_object().unwrap().keys() {
            assert!(
                ["aap_code", "retry_after_ms"].contains(&key.as_str()),
                "unexpected detail {key:?} in {error}"
            );
        }
    }
    let whole = serde_json::to_string(result).unwrap();
    let address = upstream.trim_start_matches("http://");
    for text in upstream_text.iter().chain([&address]) {
        assert!(
            !whole.contains(text),
            "the result leaks upstream text {text:?}: {whole}"
        );
    }
    // The session is still healthy after the failure.
    let list = ok(&call(client, "dealership.list", json!({})).await);
    assert_eq!(list["items"][0]["id"], "acme");
    error
}

fn listed_in_fixture() -> usize {
    let fixture: Value =
        serde_json::from_str(&fixture("cdk/merchandisable-vehicles.json")).unwrap();
    fixture["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["deleted"] != json!(true) && v["vehicleStatus"]["inventoryStatus"] != "SOLD")
        .count()
}

fn json_body(status: u16, body: String) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body, "application/json")
}

#[tokio::test]
async fn expired_token_is_refreshed_once_and_the_call_succeeds() {
    let server = MockServer::start().await;
    mount_tokens(&server, 2).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .and(bearer_token("token-1"))
        .respond_with(json_body(401, fixture("cdk/errors/token-expired.json")))
        .expect(1)
        .named("inventory with the expired token")
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .and(bearer_token("token-2"))
        .respond_with(json_body(200, fixture("cdk/merchandisable-vehicles.json")))
        .expect(2)
        .named("inventory with the fresh token")
        .mount(&server)
        .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let page = ok(&search(&client).await);
    assert_eq!(page["total"], json!(listed_in_fixture()));
    assert_eq!(
        count(&server, TOKEN_PATH).await,
        2,
        "one refresh after TOKEN-EXPIRED"
    );
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        2,
        "the refused request is retried once"
    );

    // The refreshed token is cached: the next call needs no new one.
    let again = ok(&search(&client).await);
    assert_eq!(again["total"], page["total"]);
    assert_eq!(count(&server, TOKEN_PATH).await, 2);
    assert_eq!(count(&server, INVENTORY_PATH).await, 3);
    server.verify().await;
}

#[tokio::test]
async fn persistent_token_expired_401_is_rejected_after_exactly_one_refresh() {
    let server = MockServer::start().await;
    mount_tokens(&server, 2).await;
    mount_inventory(
        &server,
        json_body(401, fixture("cdk/errors/token-expired.json")),
        2,
    )
    .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    assert_failure(
        &client,
        &result,
        "upstream.rejected",
        false,
        &[
            "TOKEN-EXPIRED",
            "The access token has expired",
            "token-1",
            "token-2",
        ],
        &server.uri(),
    )
    .await;
    assert_eq!(
        count(&server, TOKEN_PATH).await,
        2,
        "exactly one refresh, no token storm"
    );
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
    server.verify().await;
}

#[tokio::test]
async fn persistent_plain_401_is_rejected_after_exactly_one_refresh() {
    let server = MockServer::start().await;
    mount_tokens(&server, 2).await;
    mount_inventory(
        &server,
        ResponseTemplate::new(401).set_body_string("Unauthorized: bad credentials for tenant 4711"),
        2,
    )
    .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    assert_failure(
        &client,
        &result,
        "upstream.rejected",
        false,
        &["bad credentials", "tenant 4711", "token-1", "token-2"],
        &server.uri(),
    )
    .await;
    assert_eq!(
        count(&server, TOKEN_PATH).await,
        2,
        "exactly one refresh, no token storm"
    );
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
    server.verify().await;
}

#[tokio::test]
async fn token_endpoint_invalid_scope_is_rejected() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({ "error": "invalid_scope", "error_description": "scope anonymous is not granted to client id" })))
        .expect(1)
        .mount(&server)
        .await;
    mount_inventory(&server, ResponseTemplate::new(200), 0).await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    assert_failure(
        &client,
        &result,
        "upstream.rejected",
        false,
        &["invalid_scope", "not granted", "error_description"],
        &server.uri(),
    )
    .await;
    assert_eq!(count(&server, TOKEN_PATH).await, 1);
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        0,
        "no API call without a token"
    );
    server.verify().await;
}

#[tokio::test]
async fn status_429_with_retry_after_is_rate_limited() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    mount_inventory(
        &server,
        ResponseTemplate::new(429)
            .insert_header("Retry-After", "7")
            .set_body_string("Slow down, subscriber sub-123 spent its quota"),
        1,
    )
    .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    let error = assert_failure(
        &client,
        &result,
        "upstream.rate_limited",
        true,
        &["Slow down", "spent its quota"],
        &server.uri(),
    )
    .await;
    assert_eq!(error["details"]["retry_after_ms"], 7000, "{error}");
    assert_eq!(error["details"]["aap_code"], "RATE_LIMITED");
    server.verify().await;
}

#[tokio::test]
async fn quota_exceeded_code_on_429_is_rate_limited() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    mount_inventory(
        &server,
        json_body(429, fixture("cdk/errors/quota-exceeded.json")),
        1,
    )
    .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    let error = assert_failure(
        &client,
        &result,
        "upstream.rate_limited",
        true,
        &["QUOTA-EXCEEDED", "Quota exceeded"],
        &server.uri(),
    )
    .await;
    assert!(
        error["details"].get("retry_after_ms").is_none(),
        "no Retry-After, no hint: {error}"
    );
    server.verify().await;
}

#[tokio::test]
async fn quota_exceeded_code_on_403_is_rate_limited() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    mount_inventory(
        &server,
        json_body(403, fixture("cdk/errors/quota-exceeded.json"))
            .insert_header("Retry-After", "30"),
        1,
    )
    .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    let error = assert_failure(
        &client,
        &result,
        "upstream.rate_limited",
        true,
        &["QUOTA-EXCEEDED", "Quota exceeded"],
        &server.uri(),
    )
    .await;
    assert_eq!(error["details"]["retry_after_ms"], 30_000, "{error}");
    // A 403 that is really throttling must not make the bridge throw its token away.
    assert_eq!(count(&server, TOKEN_PATH).await, 1);
    server.verify().await;
}

async fn server_error_is_unavailable(status: u16) {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    let body = format!("HTTP {status}: java.lang.IllegalStateException in com.example.Upstream");
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(ResponseTemplate::new(status).set_body_string(body))
        .expect(1..)
        .mount(&server)
        .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    assert_failure(
        &client,
        &result,
        "upstream.unavailable",
        true,
        &["IllegalStateException", "com.example", "HTTP"],
        &server.uri(),
    )
    .await;
    server.verify().await;
}

#[tokio::test]
async fn status_500_is_unavailable() {
    server_error_is_unavailable(500).await;
}

#[tokio::test]
async fn status_502_is_unavailable() {
    server_error_is_unavailable(502).await;
}

#[tokio::test]
async fn status_503_is_unavailable() {
    server_error_is_unavailable(503).await;
}

#[tokio::test]
async fn answer_slower_than_the_upstream_timeout_is_a_timeout() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    let slow = json_body(200, fixture("cdk/merchandisable-vehicles.json"))
        .set_delay(Duration::from_secs(3));
    mount_inventory(&server, slow, 1).await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let started = Instant::now();
    let result = search(&client).await;
    let elapsed = started.elapsed();
    let error = assert_failure(
        &client,
        &result,
        "upstream.timeout",
        true,
        &["5NMCDKFR3SH382627"],
        &server.uri(),
    )
    .await;
    // The upstream's own 2s timeout fired, not the 5s call deadline.
    assert_eq!(
        error["message"],
        "The dealer's system did not answer in time. Try again shortly."
    );
    assert!(
        elapsed >= Duration::from_millis(1900) && elapsed < Duration::from_millis(2900),
        "took {elapsed:?}"
    );
    server.verify().await;
}

#[tokio::test]
async fn html_error_page_with_200_is_an_invalid_response() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    let html = "<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>Down for maintenance</h1><p>nginx/1.25.3</p></body></html>";
    mount_inventory(
        &server,
        ResponseTemplate::new(200).set_body_raw(html, "text/html"),
        1,
    )
    .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    assert_failure(
        &client,
        &result,
        "upstream.invalid_response",
        false,
        &["<html", "maintenance", "Maintenance", "nginx"],
        &server.uri(),
    )
    .await;
    server.verify().await;
}

#[tokio::test]
async fn results_that_are_not_a_list_are_an_invalid_response() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    let body = json!({ "summary": { "totalCount": 1 }, "results": { "vin": "5NMCDKFR3SH382627", "note": "results-should-be-a-list" } });
    mount_inventory(&server, ResponseTemplate::new(200).set_body_json(body), 1).await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    assert_failure(
        &client,
        &result,
        "upstream.invalid_response",
        false,
        &["5NMCDKFR3SH382627", "results-should-be-a-list"],
        &server.uri(),
    )
    .await;
    server.verify().await;
}

#[tokio::test]
async fn pii_echoing_500_leaks_nothing() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    mount_inventory(
        &server,
        json_body(500, fixture("cdk/errors/pii-echo-500.json")),
        1,
    )
    .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    let mut forbidden = PII.to_vec();
    forbidden.extend(["PROCESSING-ERROR", "VehicleMapper", "Springfield"]);
    assert_failure(
        &client,
        &result,
        "upstream.unavailable",
        true,
        &forbidden,
        &server.uri(),
    )
    .await;
    server.verify().await;
}

/// The same body on a 400: its vendor code `PROCESSING-ERROR` is `unavailable` in the
/// cdk-fortellis code table, and a known vendor code decides over the status.
#[tokio::test]
async fn pii_echoing_400_with_a_known_vendor_code_leaks_nothing() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    mount_inventory(
        &server,
        json_body(400, fixture("cdk/errors/pii-echo-500.json")),
        1,
    )
    .await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    let mut forbidden = PII.to_vec();
    forbidden.extend(["PROCESSING-ERROR", "VehicleMapper", "Springfield"]);
    assert_failure(
        &client,
        &result,
        "upstream.unavailable",
        true,
        &forbidden,
        &server.uri(),
    )
    .await;
    server.verify().await;
}

/// A 400 echoing PII with a code the profile does not know is a rejection, and leaks nothing.
#[tokio::test]
async fn pii_echoing_400_with_an_unknown_vendor_code_is_rejected_and_leaks_nothing() {
    let server = MockServer::start().await;
    mount_tokens(&server, 1).await;
    let mut body: Value = serde_json::from_str(&fixture("cdk/errors/pii-echo-500.json")).unwrap();
    body["code"] = json!("CUSTOMER-LOOKUP-FAILED");
    mount_inventory(&server, ResponseTemplate::new(400).set_body_json(body), 1).await;
    let (_bridge, client) = bridge_for(&server.uri()).await;

    let result = search(&client).await;
    let mut forbidden = PII.to_vec();
    forbidden.extend(["CUSTOMER-LOOKUP-FAILED", "VehicleMapper", "Springfield"]);
    assert_failure(
        &client,
        &result,
        "upstream.rejected",
        false,
        &forbidden,
        &server.uri(),
    )
    .await;
    server.verify().await;
}

#[tokio::test]
async fn connection_refused_is_unavailable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let upstream = format!("http://127.0.0.1:{port}");
    let (_bridge, client) = bridge_for(&upstream).await;

    let started = Instant::now();
    let result = search(&client).await;
    assert_failure(
        &client,
        &result,
        "upstream.unavailable",
        true,
        &["Connection refused", "os error", "tcp connect"],
        &upstream,
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a refused connection fails fast, took {:?}",
        started.elapsed()
    );
}
