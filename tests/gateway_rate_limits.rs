#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Quotas: per token (or a token's own), per token and tool class, per
//! anonymous client address, and the vendor's quota on an upstream, which the
//! bridge never exceeds even under 10x load. Refused calls never reach the
//! upstream and are counted in `/metrics` by scope.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::config::{BridgeConfig, Dealership, Token, Upstream};
use common::*;
use rmcp::model::CallToolResult;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

async fn upstream() -> MockServer {
    let server = MockServer::start().await;
    mount_token(&server).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(inventory_ok())
        .named("inventory")
        .mount(&server)
        .await;
    server
}

/// A config for dealership `acme` (anonymous inventory optional) on a CDK REST
/// upstream, with the read cache off so every allowed call reaches the upstream.
/// `resilience` is the upstream's resilience table, `quotas` the caller quotas
/// under test (`[rate_limits]` keys; the others are out of reach).
fn config(
    upstream: &str,
    anonymous_inventory: bool,
    resilience: &str,
    quotas: &[(&str, &str)],
) -> String {
    let reader =
        |name: &str, secret: &str| Token::new(name, secret, &["acme"], &["amcp:inventory:read"]);
    let acme = Dealership::acme().set("anonymous_inventory", anonymous_inventory.to_string());
    let config = BridgeConfig::new()
        .call_timeout("5s")
        .no_cache()
        .dealership(acme.route("inventory", "cdk"))
        .upstream("cdk", Upstream::cdk(upstream).resilience(resilience))
        .token(reader("acme", "acme-token"))
        .token(reader("acme-2", "acme-2-token"))
        .token(
            reader("special", "special-token")
                .set("rate_limit", r#"{ requests = 2, per = "1h", burst = 2 }"#),
        );
    quotas
        .iter()
        .fold(config, |config, (key, value)| config.quota(key, value))
        .render()
}

/// Caller quotas under test refill once in minutes at the soonest, so a
/// test's calls meet exactly the refusals its schedule names, however fast
/// or slow the machine runs them.
const HOUR: u64 = 3_600_000;

const NO_RETRIES: &str = "{ retries = { max = 0 } }";

async fn search(client: &Client, limit: u32) -> CallToolResult {
    call(
        client,
        "inventory.search",
        json!({ "dealership_id": "acme", "limit": limit }),
    )
    .await
}

/// Asserts a caller-quota refusal and returns its `retry_after_ms`.
fn assert_rate_limited(result: &CallToolResult, scope: &str, max_wait_ms: u64) -> u64 {
    let error = err(result);
    assert_eq!(error["code"], "rate_limited", "{error}");
    assert_eq!(error["retryable"], true, "{error}");
    assert_eq!(error["details"]["scope"], scope, "{error}");
    assert_eq!(error["details"]["aap_code"], "RATE_LIMITED", "{error}");
    let wait = error["details"]["retry_after_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("retry_after_ms is not a number: {error}"));
    assert!(
        (1..=max_wait_ms).contains(&wait),
        "retry_after_ms {wait} not in 1..={max_wait_ms}: {error}"
    );
    wait
}

/// The value of the sample `name{labels…}` in an OpenMetrics text (labels in any order).
fn metric(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines().find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (metric_name, label_text) = match series.split_once('{') {
            Some((n, rest)) => (n, rest.strip_suffix('}')?),
            None => (series, ""),
        };
        if metric_name != name {
            return None;
        }
        let present: Vec<&str> = label_text.split(',').filter(|s| !s.is_empty()).collect();
        let all = labels
            .iter()
            .all(|(k, v)| present.contains(&format!("{k}=\"{v}\"").as_str()));
        (all && present.len() == labels.len())
            .then(|| value.parse().ok())
            .flatten()
    })
}

fn rate_limited_metric(text: &str, scope: &str) -> Option<f64> {
    metric(text, "dms_bridge_rate_limited_total", &[("scope", scope)])
}

#[tokio::test]
async fn per_token_quota_refuses_the_sixth_call_and_leaves_other_tokens_alone() {
    let server = upstream().await;
    let quotas = [("per_token", r#"{ requests = 5, per = "1h", burst = 5 }"#)];
    let bridge = with_config(&config(&server.uri(), false, NO_RETRIES, &quotas)).await;
    let acme = connect(&bridge.url, Some("acme-token")).await;
    let acme_2 = connect(&bridge.url, Some("acme-2-token")).await;
    let special = connect(&bridge.url, Some("special-token")).await;

    for i in 1..=5 {
        ok(&search(&acme, i).await);
    }
    assert_eq!(count(&server, INVENTORY_PATH).await, 5);
    let refused = search(&acme, 6).await;
    // 5 an hour: one call comes back every 12 minutes.
    let wait = assert_rate_limited(&refused, "token", HOUR);
    assert!(
        wait > 600_000,
        "the quota refills at 1 per 12 minutes, got {wait}"
    );
    // Dealership tools count against the same quota.
    assert_rate_limited(
        &call(&acme, "dealership.list", json!({})).await,
        "token",
        HOUR,
    );
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        5,
        "refused calls never reach the upstream"
    );

    // Another token has its own full quota.
    for i in 1..=5 {
        ok(&search(&acme_2, i).await);
    }
    assert_rate_limited(&search(&acme_2, 6).await, "token", HOUR);
    assert_eq!(count(&server, INVENTORY_PATH).await, 10);

    // A token's own rate_limit replaces per_token.
    ok(&search(&special, 1).await);
    ok(&search(&special, 2).await);
    assert_rate_limited(&search(&special, 3).await, "token", HOUR);
    assert_eq!(count(&server, INVENTORY_PATH).await, 12);

    let text = metrics_text(&bridge).await;
    assert_eq!(rate_limited_metric(&text, "token"), Some(4.0), "{text}");
    assert_eq!(
        rate_limited_metric(&text, "tool_class"),
        Some(0.0),
        "{text}"
    );
    assert_eq!(rate_limited_metric(&text, "upstream"), Some(0.0), "{text}");
}

#[tokio::test]
async fn per_class_quota_refuses_the_fourth_read() {
    let server = upstream().await;
    let quotas = [(
        "per_class",
        r#"{ read = { requests = 3, per = "1h", burst = 3 } }"#,
    )];
    let bridge = with_config(&config(&server.uri(), false, NO_RETRIES, &quotas)).await;
    let acme = connect(&bridge.url, Some("acme-token")).await;
    let acme_2 = connect(&bridge.url, Some("acme-2-token")).await;

    ok(&search(&acme, 1).await);
    ok(&call(&acme, "dealership.list", json!({})).await);
    ok(&search(&acme, 2).await);
    let refused = search(&acme, 3).await;
    let wait = assert_rate_limited(&refused, "tool_class", HOUR);
    assert!(
        wait > 1_000_000,
        "the class quota refills at 1 per 20 minutes, got {wait}"
    );
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);

    // The class quota is per token.
    for i in 1..=3 {
        ok(&search(&acme_2, i).await);
    }
    assert_rate_limited(&search(&acme_2, 4).await, "tool_class", HOUR);
    assert_eq!(count(&server, INVENTORY_PATH).await, 5);

    let text = metrics_text(&bridge).await;
    assert_eq!(
        rate_limited_metric(&text, "tool_class"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(rate_limited_metric(&text, "token"), Some(0.0), "{text}");
}

#[tokio::test]
async fn anonymous_callers_are_limited_per_client_address() {
    let server = upstream().await;
    let quotas = [("anonymous", r#"{ requests = 3, per = "1h", burst = 3 }"#)];
    let bridge = with_config(&config(&server.uri(), true, NO_RETRIES, &quotas)).await;
    let anonymous = connect(&bridge.url, None).await;

    for i in 1..=3 {
        ok(&search(&anonymous, i).await);
    }
    assert_eq!(count(&server, INVENTORY_PATH).await, 3);
    assert_rate_limited(&search(&anonymous, 4).await, "anonymous", HOUR);
    // A new session from the same address shares the quota.
    let again = connect(&bridge.url, None).await;
    assert_rate_limited(&search(&again, 5).await, "anonymous", HOUR);
    assert_rate_limited(
        &call(&again, "dealership.list", json!({})).await,
        "anonymous",
        HOUR,
    );
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        3,
        "refused calls never reach the upstream"
    );

    // A token holder from the same address is not an anonymous caller.
    let holder = connect(&bridge.url, Some("acme-token")).await;
    for i in 1..=4 {
        ok(&search(&holder, i).await);
    }
    assert_eq!(count(&server, INVENTORY_PATH).await, 7);

    let text = metrics_text(&bridge).await;
    assert_eq!(rate_limited_metric(&text, "anonymous"), Some(3.0), "{text}");
    assert_eq!(rate_limited_metric(&text, "token"), Some(0.0), "{text}");
}

#[tokio::test]
async fn metrics_count_refusals_by_scope() {
    let server = upstream().await;
    let quotas = [
        ("per_token", r#"{ requests = 5, per = "1h", burst = 5 }"#),
        (
            "per_class",
            r#"{ read = { requests = 3, per = "1h", burst = 3 } }"#,
        ),
        ("anonymous", r#"{ requests = 1, per = "1h", burst = 1 }"#),
    ];
    let bridge = with_config(&config(&server.uri(), true, NO_RETRIES, &quotas)).await;
    let text = metrics_text(&bridge).await;
    for scope in ["token", "tool_class", "anonymous", "upstream"] {
        assert_eq!(rate_limited_metric(&text, scope), Some(0.0), "{text}");
    }

    // acme: 3 reads allowed by its class quota; the 4th and 5th are refused by
    // the class quota, and from the 6th on its token quota (5) is spent too.
    let acme = connect(&bridge.url, Some("acme-token")).await;
    for i in 1..=3 {
        ok(&search(&acme, i).await);
    }
    assert_rate_limited(&search(&acme, 4).await, "tool_class", HOUR);
    assert_rate_limited(&search(&acme, 5).await, "tool_class", HOUR);
    assert_rate_limited(&search(&acme, 6).await, "token", HOUR);
    assert_rate_limited(&search(&acme, 7).await, "token", HOUR);
    // The anonymous caller: 1 allowed, 3 refused.
    let anonymous = connect(&bridge.url, None).await;
    ok(&search(&anonymous, 1).await);
    for i in 2..=4 {
        assert_rate_limited(&search(&anonymous, i).await, "anonymous", HOUR);
    }
    assert_eq!(count(&server, INVENTORY_PATH).await, 4);

    let text = metrics_text(&bridge).await;
    assert_eq!(
        rate_limited_metric(&text, "tool_class"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(rate_limited_metric(&text, "token"), Some(2.0), "{text}");
    assert_eq!(rate_limited_metric(&text, "anonymous"), Some(3.0), "{text}");
    assert_eq!(rate_limited_metric(&text, "upstream"), Some(0.0), "{text}");
    let type_line = text
        .lines()
        .find(|l| l.starts_with("# TYPE dms_bridge_rate_limited "))
        .unwrap_or_else(|| panic!("no TYPE line for dms_bridge_rate_limited in:\n{text}"));
    assert!(type_line.ends_with("counter"), "{type_line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_upstream_quota_holds_under_ten_times_its_load() {
    let server = MockServer::start().await;
    mount_token(&server).await;
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(Arrivals(arrivals.clone()))
        .named("inventory")
        .mount(&server)
        .await;
    // 4 in any second, with 400 ms of headroom for the arrivals' jitter on a
    // loaded machine (requests go out every 350 ms).
    let resilience = r#"{ rate_limit = { requests = 4, per = "1s", burst = 1 }, quota_margin = "400ms", max_queue_wait = "1500ms", retries = { max = 0 } }"#;
    let bridge = with_config(&config(&server.uri(), false, resilience, &[])).await;
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(Arc::new(connect(&bridge.url, Some("acme-token")).await));
    }
    // Fetch the OAuth token first, then let the quota refill completely.
    ok(&search(&clients[0], 100).await);
    tokio::time::sleep(Duration::from_millis(1100)).await;

    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..40u32 {
        let client = clients[i as usize % clients.len()].clone();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(25) * i).await;
            search(&client, i + 1).await
        }));
    }
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(30),
        "bounded by the queue wait, took {took:?}"
    );

    let mut succeeded = 0;
    let mut refused = 0;
    for result in &results {
        if result.is_error == Some(true) {
            let error = err(result);
            assert_eq!(
                error["code"], "rate_limited",
                "only the bridge's own quota may refuse: {error}"
            );
            assert_eq!(error["details"]["scope"], "upstream", "{error}");
            assert_eq!(error["retryable"], true, "{error}");
            let wait = error["details"]["retry_after_ms"].as_u64().unwrap();
            assert!((1..=1_500).contains(&wait), "{error}");
            refused += 1;
        } else {
            ok(result);
            succeeded += 1;
        }
    }
    assert_eq!(succeeded + refused, 40);
    assert!(succeeded >= 1, "{succeeded} ok, {refused} refused");
    // Concurrent reads of one dealership's inventory share an upstream request,
    // so 40 calls in ~1 s need only a handful of requests, within the quota.
    let times = arrivals.lock().unwrap().clone();
    assert!(
        times.len() < 40,
        "{} upstream requests for 40 calls",
        times.len()
    );
    assert_eq!(count(&server, INVENTORY_PATH).await, times.len());
    let worst = busiest_window(&times, Duration::from_secs(1));
    assert!(
        worst <= 4,
        "{worst} upstream requests within one second (quota 4 in any second): {:?}",
        times
            .iter()
            .map(|t| t.duration_since(times[0]).as_millis())
            .collect::<Vec<_>>()
    );

    let text = metrics_text(&bridge).await;
    let expected = refused as f64;
    assert_eq!(
        rate_limited_metric(&text, "upstream"),
        Some(expected),
        "{text}"
    );
    assert_eq!(rate_limited_metric(&text, "token"), Some(0.0), "{text}");
}

/// Eight rooftops on one DMS share its quota: their reads cannot be joined
/// (each dealership has its own adapter), so the quota must queue or refuse them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rooftops_sharing_an_upstream_share_its_quota() {
    let server = MockServer::start().await;
    mount_token(&server).await;
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(Arrivals(arrivals.clone()))
        .mount(&server)
        .await;
    let rooftops: Vec<String> = (0..8).map(|i| format!("roof{i}")).collect();
    // One request in 10 s: no queue wait can reach a second one.
    let shared_quota = r#"{ rate_limit = { requests = 1, per = "10s", burst = 1 }, max_queue_wait = "300ms", retries = { max = 0 } }"#;
    let mut config = BridgeConfig::new()
        .call_timeout("5s")
        .no_cache()
        .upstream(
            "cdk",
            Upstream::cdk(&server.uri())
                .unset("timeout")
                .resilience(shared_quota),
        )
        .token(Token::new(
            "group",
            "group-token",
            &["*"],
            &["amcp:inventory:read"],
        ));
    for id in &rooftops {
        let address = ["1 Main St", "Springfield", "IL", "62701"];
        let rooftop = Dealership::new(id, id, "America/Chicago", address);
        config = config.dealership(rooftop.route("inventory", "cdk"));
    }
    let toml = config.render();
    let bridge = with_config(&toml).await;
    let client = Arc::new(connect(&bridge.url, Some("group-token")).await);
    let tasks: Vec<_> = rooftops
        .iter()
        .map(|id| {
            let (client, id) = (client.clone(), id.clone());
            tokio::spawn(async move {
                call(
                    &client,
                    "inventory.search",
                    json!({ "dealership_id": id, "limit": 1 }),
                )
                .await
            })
        })
        .collect();
    let (mut succeeded, mut refused) = (0, 0);
    for task in tasks {
        let result = task.await.unwrap();
        if result.is_error == Some(true) {
            let error = err(&result);
            assert_eq!(error["code"], "rate_limited", "{error}");
            assert_eq!(error["details"]["scope"], "upstream", "{error}");
            refused += 1;
        } else {
            succeeded += 1;
        }
    }
    // Burst 1: one gets through, the quota refuses the other seven.
    assert_eq!(succeeded, 1, "{succeeded} ok, {refused} refused");
    assert_eq!(succeeded + refused, 8);
    assert_eq!(
        arrivals.lock().unwrap().len(),
        succeeded,
        "refused calls never reach the upstream"
    );
}

/// `dealership.list`, anonymously, as a proxy forwarding for `forwarded_for`
/// would send it; the error code, or `None` on success.
async fn anonymous_list(bridge: &Bridge, forwarded_for: Option<&str>) -> Option<String> {
    let mut request = dms_bridge::net::client_builder().build().unwrap()
        .post(&bridge.url)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "dealership.list", "arguments": {} } }));
    if let Some(client) = forwarded_for {
        request = request.header("X-Forwarded-For", client);
    }
    let answer: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
    let result = &answer["result"];
    assert!(result.is_object(), "{answer}");
    (result["isError"] == true).then(|| raw_err(&answer)["code"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn anonymous_callers_behind_a_trusted_proxy_get_their_own_quotas() {
    let quota = Some(r#"{ requests = 1, per = "1h", burst = 1 }"#);
    // This test's requests come from 127.0.0.1: the proxy.
    let behind = with_config(&small_config(r#"trusted_proxies = ["127.0.0.0/8"]"#, quota)).await;
    assert_eq!(anonymous_list(&behind, Some("203.0.113.1")).await, None);
    assert_eq!(
        anonymous_list(&behind, Some("203.0.113.1"))
            .await
            .as_deref(),
        Some("rate_limited")
    );
    assert_eq!(anonymous_list(&behind, Some("203.0.113.2")).await, None);
    // The client may write what it likes left of the proxy's entry: ignored.
    assert_eq!(
        anonymous_list(&behind, Some("198.51.100.9, 203.0.113.1"))
            .await
            .as_deref(),
        Some("rate_limited")
    );
    // No header: the proxy's own address is the client.
    assert_eq!(anonymous_list(&behind, None).await, None);

    // From a peer that is not a trusted proxy the header is ignored: one quota.
    let direct = with_config(&small_config("", quota)).await;
    assert_eq!(anonymous_list(&direct, Some("203.0.113.1")).await, None);
    assert_eq!(
        anonymous_list(&direct, Some("203.0.113.2"))
            .await
            .as_deref(),
        Some("rate_limited")
    );
}
