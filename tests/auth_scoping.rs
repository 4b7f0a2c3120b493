//! Who may see and call what: bearer tokens bound to dealerships and scopes,
//! anonymous inventory reads, 401 with WWW-Authenticate on HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use serde_json::json;

async fn post(url: &str, token: Option<&str>, body: serde_json::Value) -> reqwest::Response {
    let mut request = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(&body);
    if let Some(t) = token {
        request = request.header("Authorization", format!("Bearer {t}"));
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn a_wrong_token_gets_401_with_a_bearer_challenge() {
    let bridge = demo().await;
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    for token in ["demo-token-groupX", "", "demo-token-cd"] {
        let response = post(&bridge.url, Some(token), list.clone()).await;
        assert_eq!(response.status(), 401, "token {token:?}");
        let challenge = response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            challenge.starts_with("Bearer realm=\"dms-bridge\""),
            "{challenge}"
        );
        assert!(challenge.contains("invalid_token"));
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "auth.unauthorized");
    }
    let basic = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(&bridge.url)
        .header("Authorization", "Basic abc")
        .json(&list)
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), 401);
}

#[tokio::test]
async fn without_anonymous_dealerships_a_missing_token_gets_401() {
    let upstream = wiremock::MockServer::start().await;
    let bridge = with_config(&rest_config(&upstream.uri(), "")).await;
    let response = post(
        &bridge.url,
        None,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }),
    )
    .await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"dms-bridge\""
    );
}

#[tokio::test]
async fn tools_list_shows_only_what_the_caller_can_use() {
    let bridge = demo().await;
    let names = |tools: Vec<rmcp::model::Tool>| {
        tools
            .into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };
    let reads = [
        "dealership_list",
        "dealership_get",
        "inventory_search",
        "inventory_get",
        "inventory_facets",
    ];
    let leads = [
        "leads_create",
        "leads_get",
        "leads_list",
        "deals_request_trade_value",
        "service_check_availability",
        "service_book_appointment",
        "service_cancel_appointment",
        "service_get_appointment",
        "service_get_repair_order",
        "service_list_repair_orders",
        "events_list",
    ];
    let all: Vec<&str> = reads.iter().chain(&leads).copied().collect();
    for token in ["demo-token-group", "demo-token-cdk"] {
        let client = connect(&bridge.url, Some(token)).await;
        assert_eq!(
            names(client.list_all_tools().await.unwrap()),
            all,
            "{token}"
        );
    }
    // Anonymous callers may read public inventory but never send or read leads.
    let client = connect(&bridge.url, None).await;
    assert_eq!(names(client.list_all_tools().await.unwrap()), reads);
    // A token whose dealership routes no inventory sees only the dealership tools.
    let upstream = wiremock::MockServer::start().await;
    let bridge = with_config(&rest_config(&upstream.uri(), "")).await;
    let client = connect(&bridge.url, Some("other-token")).await;
    assert_eq!(
        names(client.list_all_tools().await.unwrap()),
        ["dealership_list", "dealership_get"]
    );
}

#[tokio::test]
async fn a_token_never_reads_another_dealership() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let list = ok(&call(&client, "dealership.list", json!({})).await);
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(list["items"][0]["id"], "demo-cdk");
    for (tool, args) in [
        ("inventory.search", json!({ "dealership_id": "demo-feed" })),
        ("inventory.facets", json!({ "dealership_id": "demo-feed" })),
        (
            "inventory.get",
            json!({ "dealership_id": "demo-feed", "stock": "F10762" }),
        ),
        ("dealership.get", json!({ "dealership_id": "demo-feed" })),
        (
            "inventory.search",
            json!({ "dealership_id": "no-such-dealership" }),
        ),
    ] {
        let result = call(&client, tool, args.clone()).await;
        let error = err(&result);
        assert_eq!(error["code"], "auth.forbidden", "{tool} {args}");
        assert_eq!(
            error["recovery"]["next_tool_call"]["name"],
            "dealership_list"
        );
        // No data leaks alongside the error.
        let text = serde_json::to_string(&result).unwrap();
        assert!(
            !text.contains("F10762\"") && !text.contains("Lakeside"),
            "{text}"
        );
    }
    // Unknown and forbidden dealerships are indistinguishable.
    let a = err(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-feed" }),
    )
    .await);
    let b = err(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "nope" }),
    )
    .await);
    assert_eq!(a["message"], b["message"]);
}

#[tokio::test]
async fn anonymous_callers_read_public_inventory_only() {
    let bridge = demo().await;
    let client = connect(&bridge.url, None).await;
    let list = ok(&call(&client, "dealership.list", json!({})).await);
    let ids: Vec<_> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    // The two feeds the demo publishes to everyone.
    assert_eq!(ids, ["demo-feed", "demo-xmlfeed"]);
    let page = ok(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-feed", "limit": 3 }),
    )
    .await);
    assert_eq!(page["items"].as_array().unwrap().len(), 3);
    let denied = err(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk" }),
    )
    .await);
    assert_eq!(denied["code"], "auth.unauthorized");
    assert!(
        denied["recovery"]["hint"]
            .as_str()
            .unwrap()
            .contains("Bearer")
    );
}

#[tokio::test]
async fn a_foreign_host_header_is_refused() {
    let bridge = demo().await;
    let response = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(&bridge.url)
        .header("Host", "evil.example")
        .header("Authorization", "Bearer demo-token-group")
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn browser_origins_must_be_allowed() {
    let bridge = demo().await;
    let send = |origin: &'static str| {
        dms_bridge::net::client_builder()
            .build()
            .unwrap()
            .post(&bridge.url)
            .header("Origin", origin)
            .header("Authorization", "Bearer demo-token-group")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
            .send()
    };
    assert_eq!(send("https://evil.example").await.unwrap().status(), 403);
    assert_eq!(send("http://localhost:6274").await.unwrap().status(), 200);
}
