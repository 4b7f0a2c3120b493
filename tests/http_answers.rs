//! Tool results over HTTP are written from the bytes the pipeline made once
//! (`src/mcp/splice.rs`). What a client reads must be exactly what rmcp would
//! have serialized: the same JSON-RPC envelope, structured content equal to the
//! text block, a correct Content-Length, and no placeholder ever on the wire.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};

async fn post(url: &str, body: Value) -> (reqwest::header::HeaderMap, String) {
    let response = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .header("Authorization", "Bearer demo-token-group")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    (headers, response.text().await.unwrap())
}

fn tools_call(id: Value, name: &str, arguments: Value, meta: Option<Value>) -> Value {
    let mut params = json!({ "name": name, "arguments": arguments });
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

/// The parsed answer, after the checks every spliced answer must pass.
fn checked(headers: &reqwest::header::HeaderMap, body: &str) -> Value {
    assert!(
        !body.contains("dms-bridge-splice"),
        "a placeholder reached the client"
    );
    let length: usize = headers["content-length"].to_str().unwrap().parse().unwrap();
    assert_eq!(length, body.len());
    let answer: Value = serde_json::from_str(body).expect("one JSON body");
    let result = &answer["result"];
    if result["isError"] == false {
        let text = result["content"][0]["text"].as_str().unwrap();
        let from_text: Value = serde_json::from_str(text).unwrap();
        assert_eq!(result["structuredContent"], from_text);
    }
    answer
}

#[tokio::test]
async fn fresh_and_cached_results_match_what_rmcp_serializes() {
    let bridge = common::demo_reading_through().await;
    let args = json!({ "dealership_id": "demo-cdk", "limit": 5, "sort": { "field": "price", "order": "asc" } });

    let (headers, body) = post(
        &bridge.url,
        tools_call(json!(1), "inventory.search", args.clone(), None),
    )
    .await;
    let fresh = checked(&headers, &body);
    assert_eq!(fresh["id"], 1);
    assert_eq!(
        fresh["result"]["_meta"]["io.dms-bridge/cache"]["hit"],
        false
    );
    assert_eq!(
        fresh["result"]["structuredContent"]["items"]
            .as_array()
            .unwrap()
            .len(),
        5
    );

    // The result borrows the vehicles it sends; it must still be what the contract says.
    let (_, body) = post(
        &bridge.url,
        json!({ "jsonrpc": "2.0", "id": 0, "method": "tools/list" }),
    )
    .await;
    let tools: Value = serde_json::from_str(&body).unwrap();
    let search = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "inventory_search")
        .unwrap();
    let validator = jsonschema::validator_for(&search["outputSchema"]).unwrap();
    let problems: Vec<String> = validator
        .iter_errors(&fresh["result"]["structuredContent"])
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:?}");

    // A string id with quotes, and a cache hit.
    let (headers, body) = post(
        &bridge.url,
        tools_call(json!("req-\"2\""), "inventory.search", args.clone(), None),
    )
    .await;
    let cached = checked(&headers, &body);
    assert_eq!(cached["id"], "req-\"2\"");
    assert_eq!(
        cached["result"]["_meta"]["io.dms-bridge/cache"]["hit"],
        true
    );
    assert_eq!(
        cached["result"]["structuredContent"],
        fresh["result"]["structuredContent"]
    );

    // A progress token keeps rmcp serializing the result itself: the same answer.
    let (headers, body) = post(
        &bridge.url,
        tools_call(
            json!(3),
            "inventory.search",
            args,
            Some(json!({ "progressToken": "p-1" })),
        ),
    )
    .await;
    let by_rmcp = checked(&headers, &body);
    let strip = |mut answer: Value| {
        answer["result"].as_object_mut().unwrap().remove("_meta");
        answer.as_object_mut().unwrap().remove("id");
        answer
    };
    assert_eq!(strip(by_rmcp), strip(cached));
}

#[tokio::test]
async fn errors_and_other_methods_pass_through_untouched() {
    let bridge = common::demo().await;
    let (headers, body) = post(
        &bridge.url,
        tools_call(
            json!(7),
            "inventory.get",
            json!({ "dealership_id": "demo-cdk", "vehicle_id": "no-such-vehicle" }),
            None,
        ),
    )
    .await;
    let answer = checked(&headers, &body);
    assert_eq!(
        common::raw_err(&answer)["code"],
        "inventory.vehicle_not_found"
    );

    let (headers, body) = post(
        &bridge.url,
        json!({ "jsonrpc": "2.0", "id": 8, "method": "tools/list" }),
    )
    .await;
    let listed = checked(&headers, &body);
    assert!(listed["result"]["tools"].as_array().unwrap().len() > 5);

    let (headers, body) = post(
        &bridge.url,
        tools_call(json!(9), "no.such_tool", json!({}), None),
    )
    .await;
    let unknown = checked(&headers, &body);
    assert_eq!(
        unknown["error"]["data"]["error"]["code"],
        "request.unknown_tool"
    );
}
