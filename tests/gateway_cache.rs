#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The read cache as a caller and an upstream see it: concurrent identical reads
//! collapse into one upstream request, entries are per dealership and per
//! argument set (in any key order), answers stay honest about their age,
//! errors are never kept, TTLs expire, and uncached tools and feed-backed
//! dealerships carry no cache `_meta`.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::config::{BridgeConfig, Dealership, Token, Upstream};
use common::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const CACHE_META: &str = "io.dms-bridge/cache";

async fn mount_inventory(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(response)
        .named("inventory")
        .mount(server)
        .await;
}

async fn upstream(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    mount_token(&server).await;
    mount_inventory(&server, response).await;
    server
}

/// The whole result as JSON, as it travelled (with `_meta`).
fn wire(result: &CallToolResult) -> Value {
    serde_json::to_value(result).unwrap()
}

/// `_meta["io.dms-bridge/cache"]`, if the result carries it.
fn cache_meta(result: &CallToolResult) -> Option<Value> {
    wire(result)
        .get("_meta")
        .and_then(|m| m.get(CACHE_META))
        .cloned()
}

fn hit_of(result: &CallToolResult) -> bool {
    let meta = cache_meta(result).unwrap_or_else(|| panic!("no cache _meta in {result:?}"));
    meta["hit"]
        .as_bool()
        .unwrap_or_else(|| panic!("hit is not a bool: {meta}"))
}

async fn search(client: &Client, args: Value) -> CallToolResult {
    call(client, "inventory.search", args).await
}

async fn get_text(url: &str) -> (u16, String) {
    let response = common::http_get(url).await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hundred_concurrent_identical_searches_make_one_upstream_request() {
    // The upstream takes long enough (3 s) that every call is in flight before
    // it answers on any machine; the timeouts leave it room.
    let server = upstream(inventory_ok().set_delay(Duration::from_secs(3))).await;
    let toml = rest(&server.uri())
        .call_timeout("60s")
        .edit_upstream("cdk", |cdk| cdk.timeout("30s"))
        .render();
    let bridge = with_config(&toml).await;
    let mut clients = Vec::new();
    for _ in 0..5 {
        clients.push(Arc::new(connect(&bridge.url, Some("acme-token")).await));
    }

    let args = json!({ "dealership_id": "acme", "limit": 100, "sort": { "field": "price", "order": "asc" } });
    let start = Arc::new(tokio::sync::Barrier::new(100));
    let mut tasks = Vec::new();
    for i in 0..100 {
        let client = clients[i % clients.len()].clone();
        let (args, start) = (args.clone(), start.clone());
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let began = Instant::now();
            let result = call(&client, "inventory.search", args).await;
            (result, began.elapsed())
        }));
    }
    let mut results = Vec::new();
    let mut overlapping = 0;
    for task in tasks {
        let (result, took) = task.await.unwrap();
        results.push(result);
        overlapping += usize::from(took >= Duration::from_millis(2500));
    }

    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        1,
        "100 identical concurrent reads collapse into one upstream request"
    );
    let first = ok(&results[0]);
    assert!(
        !first["items"].as_array().unwrap().is_empty(),
        "the answer has vehicles: {first}"
    );
    for (i, result) in results.iter().enumerate() {
        assert_eq!(ok(result), first, "result {i} differs from result 0");
    }
    let misses = results.iter().filter(|r| !hit_of(r)).count();
    let hits = results.iter().filter(|r| hit_of(r)).count();
    assert_eq!(
        (misses, hits),
        (1, 99),
        "exactly one caller made the upstream call"
    );
    // Most calls were in flight while the upstream took its 3 s, so the cache
    // had no entry yet when they looked: they were coalesced, not served late.
    assert!(
        overlapping >= 50,
        "only {overlapping} calls overlapped the upstream request"
    );
    // All of them share one entry, stored once.
    let stored: Vec<Value> = results
        .iter()
        .map(|r| cache_meta(r).unwrap()["stored_at"].clone())
        .collect();
    assert!(stored.iter().all(|s| *s == stored[0]), "{stored:?}");
}

#[tokio::test]
async fn different_arguments_are_different_entries_and_key_order_does_not_matter() {
    let server = upstream(inventory_ok()).await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let a = json!({ "dealership_id": "acme", "limit": 5 });
    let b = json!({ "dealership_id": "acme", "limit": 6 });
    let first_a = search(&client, a.clone()).await;
    let first_b = search(&client, b.clone()).await;
    assert!(!hit_of(&first_a));
    assert!(
        !hit_of(&first_b),
        "different arguments must not share an entry"
    );
    assert_eq!(ok(&first_a)["items"].as_array().unwrap().len(), 5);
    assert_eq!(ok(&first_b)["items"].as_array().unwrap().len(), 6);
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);

    let again_a = search(&client, a).await;
    let again_b = search(&client, b).await;
    assert!(hit_of(&again_a) && hit_of(&again_b));
    assert_eq!(ok(&again_a), ok(&first_a));
    assert_eq!(ok(&again_b), ok(&first_b));
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        2,
        "repeats are served from the cache"
    );

    // A nested object; the first call goes through rmcp, the second is sent raw with
    // every object's keys in the opposite order.
    let filtered = json!({ "dealership_id": "acme", "limit": 10,
        "filters": { "condition": ["used"], "year_min": 2015, "year_max": 2030 } });
    let first = search(&client, filtered).await;
    assert!(!hit_of(&first));
    assert_eq!(count(&server, INVENTORY_PATH).await, 3);
    let reordered = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"inventory.search","arguments":{"filters":{"year_max":2030,"year_min":2015,"condition":["used"]},"limit":10,"dealership_id":"acme"}}}"#;
    let response = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(&bridge.url)
        .header("Authorization", "Bearer acme-token")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .body(reordered)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let result = &body["result"];
    assert_ne!(result["isError"], json!(true), "{body}");
    assert_eq!(
        result["_meta"][CACHE_META]["hit"],
        json!(true),
        "same arguments in another key order are the same entry: {}",
        result["_meta"]
    );
    assert_eq!(result["structuredContent"], ok(&first));
    assert_eq!(count(&server, INVENTORY_PATH).await, 3);
}

/// Two dealerships on two upstream ids that point at the same server.
fn two_tenant_config(upstream: &str) -> String {
    let alpha = Dealership::new(
        "alpha",
        "Alpha Motors",
        "America/Chicago",
        ["1 Main St", "Springfield", "IL", "62701"],
    );
    let beta = Dealership::new(
        "beta",
        "Beta Motors",
        "America/New_York",
        ["2 Side St", "Albany", "NY", "12207"],
    );
    let reads = ["amcp:inventory:read"];
    BridgeConfig::new()
        .call_timeout("5s")
        .dealership(alpha.route("inventory", "cdk-alpha"))
        .dealership(beta.route("inventory", "cdk-beta"))
        .upstream("cdk-alpha", Upstream::cdk(upstream))
        .upstream("cdk-beta", Upstream::cdk(upstream))
        .token(Token::new("alpha", "alpha-token", &["alpha"], &reads))
        .token(Token::new(
            "group",
            "group-token",
            &["alpha", "beta"],
            &reads,
        ))
        .render()
}

#[tokio::test]
async fn entries_are_per_dealership_and_scoping_runs_before_the_cache() {
    let server = upstream(inventory_ok()).await;
    let bridge = with_config(&two_tenant_config(&server.uri())).await;
    let group = connect(&bridge.url, Some("group-token")).await;
    let alpha_only = connect(&bridge.url, Some("alpha-token")).await;

    let alpha = search(
        &group,
        json!({ "dealership_id": "alpha", "response_format": "detailed", "limit": 10 }),
    )
    .await;
    let beta = search(
        &group,
        json!({ "dealership_id": "beta", "response_format": "detailed", "limit": 10 }),
    )
    .await;
    assert!(!hit_of(&alpha));
    assert!(
        !hit_of(&beta),
        "another dealership's entry must never answer"
    );
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
    for (result, id) in [(&alpha, "alpha"), (&beta, "beta")] {
        let items = ok(result)["items"].as_array().unwrap().clone();
        assert_eq!(items.len(), 10);
        for item in items {
            assert_eq!(item["dealership_id"], id, "{item}");
        }
    }

    // Beta's answer is cached now; a token for alpha only still gets nothing of it.
    let beta_again = search(
        &group,
        json!({ "dealership_id": "beta", "response_format": "detailed", "limit": 10 }),
    )
    .await;
    assert!(hit_of(&beta_again));
    let refused = search(
        &alpha_only,
        json!({ "dealership_id": "beta", "response_format": "detailed", "limit": 10 }),
    )
    .await;
    let error = err(&refused);
    assert_eq!(error["code"], "auth.forbidden", "{error}");
    assert!(
        cache_meta(&refused).is_none(),
        "a refused call says nothing about the cache: {:?}",
        refused.meta
    );
    let whole = serde_json::to_string(&wire(&refused)).unwrap();
    assert!(!whole.contains("\"items\""), "no data leaks: {whole}");
    assert!(!whole.contains("vin"), "no data leaks: {whole}");
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
}

#[tokio::test]
async fn cached_answers_keep_their_first_verification_time_and_report_their_age() {
    let server = upstream(inventory_ok()).await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    let args = json!({ "dealership_id": "acme", "response_format": "detailed", "limit": 3 });

    let before = chrono::Utc::now();
    let first = search(&client, args.clone()).await;
    let after = chrono::Utc::now();
    let first_meta = cache_meta(&first).unwrap();
    assert_eq!(first_meta["hit"], false);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let second = search(&client, args.clone()).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let third = search(&client, args).await;
    assert_eq!(count(&server, INVENTORY_PATH).await, 1);

    let verified = |r: &CallToolResult| -> Vec<Value> {
        ok(r)["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["last_verified_at"].clone())
            .collect()
    };
    let first_verified = verified(&first);
    assert_eq!(first_verified.len(), 3);
    assert!(first_verified.iter().all(Value::is_string));
    assert_eq!(
        verified(&second),
        first_verified,
        "a cached answer is never fresher than its upstream read"
    );
    assert_eq!(verified(&third), first_verified);

    let second_meta = cache_meta(&second).unwrap();
    let third_meta = cache_meta(&third).unwrap();
    assert_eq!(second_meta["hit"], true);
    assert_eq!(third_meta["hit"], true);
    let stored_at = first_meta["stored_at"].as_str().unwrap();
    let stored = chrono::DateTime::parse_from_rfc3339(stored_at)
        .unwrap_or_else(|e| panic!("stored_at {stored_at:?} is not RFC 3339: {e}"));
    assert!(
        stored >= before - chrono::Duration::milliseconds(1)
            && stored <= after + chrono::Duration::milliseconds(1),
        "stored_at {stored} is not between {before} and {after}"
    );
    assert_eq!(second_meta["stored_at"], first_meta["stored_at"]);
    assert_eq!(third_meta["stored_at"], first_meta["stored_at"]);
    let age = |m: &Value| m["age_ms"].as_u64().unwrap();
    assert!(age(&first_meta) < 1000, "{first_meta}");
    assert!(
        age(&second_meta) >= 1100,
        "age_ms counts from the upstream read: {second_meta}"
    );
    assert!(
        age(&third_meta) >= age(&second_meta) + 150,
        "age_ms grows: {second_meta} then {third_meta}"
    );
    // And the verification time is not after the entry was stored.
    let verified_at =
        chrono::DateTime::parse_from_rfc3339(first_verified[0].as_str().unwrap()).unwrap();
    assert!(
        verified_at <= stored + chrono::Duration::seconds(1),
        "{verified_at} vs {stored}"
    );
}

#[tokio::test]
async fn errors_are_never_cached() {
    let server = MockServer::start().await;
    mount_token(&server).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .up_to_n_times(1)
        .with_priority(1)
        .named("inventory fails once")
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(inventory_ok())
        .with_priority(2)
        .named("inventory recovers")
        .mount(&server)
        .await;
    let bridge = with_config(&rest_config(
        &server.uri(),
        "resilience = { retries = { max = 0 } }",
    ))
    .await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    let args = json!({ "dealership_id": "acme", "limit": 4 });

    let failed = search(&client, args.clone()).await;
    assert_eq!(err(&failed)["code"], "upstream.unavailable");
    assert_eq!(count(&server, INVENTORY_PATH).await, 1);

    let recovered = search(&client, args.clone()).await;
    assert_eq!(ok(&recovered)["items"].as_array().unwrap().len(), 4);
    assert!(!hit_of(&recovered), "the failure was not kept");
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        2,
        "a new upstream request after the failure"
    );

    // The success is cached as usual.
    let cached = search(&client, args).await;
    assert!(hit_of(&cached));
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
}

#[tokio::test]
async fn entries_expire_after_their_ttl() {
    let server = upstream(inventory_ok()).await;
    let bridge = with_config(&rest_config(
        &server.uri(),
        "\n[cache]\nttl = { inventory = \"3s\" }\n",
    ))
    .await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    let args = json!({ "dealership_id": "acme", "limit": 2 });

    assert!(!hit_of(&search(&client, args.clone()).await));
    assert!(hit_of(&search(&client, args.clone()).await));
    assert_eq!(count(&server, INVENTORY_PATH).await, 1);

    tokio::time::sleep(Duration::from_millis(3200)).await;
    let expired = search(&client, args.clone()).await;
    assert!(!hit_of(&expired), "the entry outlived its 3s TTL");
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
    assert!(hit_of(&search(&client, args).await));
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
}

#[tokio::test]
async fn a_disabled_cache_sends_every_call_upstream() {
    let server = upstream(inventory_ok()).await;
    let bridge = with_config(&rest_config(&server.uri(), "\n[cache]\nenabled = false\n")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    let args = json!({ "dealership_id": "acme", "limit": 2 });

    for n in 1..=3 {
        let result = search(&client, args.clone()).await;
        assert_eq!(ok(&result)["items"].as_array().unwrap().len(), 2);
        assert!(
            cache_meta(&result).is_none(),
            "no cache _meta without a cache: {:?}",
            result.meta
        );
        assert_eq!(count(&server, INVENTORY_PATH).await, n);
    }
}

#[tokio::test]
async fn dealership_tools_are_not_cached_and_a_mirror_change_ends_cached_answers() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;

    for _ in 0..2 {
        let list = call(&client, "dealership.list", json!({})).await;
        ok(&list);
        assert!(cache_meta(&list).is_none(), "{:?}", list.meta);
        let trace = wire(&list)["_meta"]["io.dms-bridge/trace_id"].clone();
        assert!(trace.is_string(), "every result carries a trace id");
        let get = call(
            &client,
            "dealership.get",
            json!({ "dealership_id": "demo-cdk" }),
        )
        .await;
        ok(&get);
        assert!(cache_meta(&get).is_none(), "{:?}", get.meta);
    }

    // A mirrored feed: answers are cached while the copy stays the same...
    // (The first answer may be computed while the mirror's first read lands,
    // under the copy's previous generation: it is answered, and not reused.)
    let args = json!({ "dealership_id": "demo-feed", "limit": 5 });
    search(&client, args.clone()).await;
    search(&client, args.clone()).await;
    let again = search(&client, args.clone()).await;
    assert!(hit_of(&again));
    let total = ok(&again)["total"].as_u64().unwrap();

    // ...and end the moment it changes: three units sell, one arrives.
    advance_demo_feed(&bridge).await;
    let after = search(&client, args).await;
    assert!(!hit_of(&after), "a new copy is a new answer");
    assert_eq!(ok(&after)["total"].as_u64().unwrap(), total - 2);
}

#[tokio::test]
async fn metrics_count_cache_hits_and_misses() {
    let server = upstream(inventory_ok()).await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    let a = json!({ "dealership_id": "acme", "limit": 1 });
    let b = json!({ "dealership_id": "acme", "limit": 2 });

    // a: miss, hit, hit; b: miss, hit; facets: miss, hit; dealership.list: not counted.
    for args in [&a, &a, &a, &b, &b] {
        search(&client, args.clone()).await;
    }
    for _ in 0..2 {
        ok(&call(
            &client,
            "inventory.facets",
            json!({ "dealership_id": "acme" }),
        )
        .await);
    }
    ok(&call(&client, "dealership.list", json!({})).await);
    assert_eq!(count(&server, INVENTORY_PATH).await, 3);

    let (status, text) = get_text(&format!("http://{}/metrics", bridge.addr)).await;
    assert_eq!(status, 200);
    let lookups = |tool: &str, result: &str| {
        metric(
            &text,
            "dms_bridge_cache_lookups_total",
            &[("tool", tool), ("result", result)],
        )
    };
    assert_eq!(
        lookups("inventory.search", "hit"),
        Some(3.0),
        "search hits in:\n{text}"
    );
    assert_eq!(
        lookups("inventory.search", "miss"),
        Some(2.0),
        "search misses in:\n{text}"
    );
    assert_eq!(lookups("inventory.facets", "hit"), Some(1.0), "{text}");
    assert_eq!(lookups("inventory.facets", "miss"), Some(1.0), "{text}");
    assert_eq!(
        lookups("dealership.list", "hit").or(lookups("dealership.list", "miss")),
        None,
        "dealership.list does not use the cache:\n{text}"
    );
}

#[tokio::test]
async fn with_the_cache_off_identical_calls_in_flight_still_share_one_result() {
    // The one upstream read lasts long enough for all ten calls to join it on
    // any machine; the timeouts leave it room.
    let server = upstream(inventory_ok().set_delay(Duration::from_secs(5))).await;
    let toml = rest(&server.uri())
        .no_cache()
        .call_timeout("60s")
        .edit_upstream("cdk", |cdk| cdk.timeout("30s"))
        .render();
    let bridge = with_config(&toml).await;
    let client = Arc::new(connect(&bridge.url, Some("acme-token")).await);
    let args = json!({ "dealership_id": "acme", "limit": 2 });

    let calls: Vec<_> = (0..10)
        .map(|_| {
            let (client, args) = (client.clone(), args.clone());
            tokio::spawn(async move { search(&client, args).await })
        })
        .collect();
    let mut joined = 0;
    for call in calls {
        let result = call.await.unwrap();
        assert_eq!(ok(&result)["items"].as_array().unwrap().len(), 2);
        // Only a call that took another's result says so; the one that computed says nothing.
        joined += usize::from(cache_meta(&result).is_some_and(|m| m["hit"] == true));
    }
    assert_eq!(count(&server, INVENTORY_PATH).await, 1);
    assert_eq!(joined, 9);

    let later = search(&client, args).await;
    assert!(cache_meta(&later).is_none(), "nothing was kept");
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
}
