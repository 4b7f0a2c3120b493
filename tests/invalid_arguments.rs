//! Bad input gets one structured error listing every problem, each with a JSON
//! pointer; nothing reaches the upstream and nothing panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use serde_json::{Value, json};

async fn invalid(client: &Client, tool: &str, args: Value) -> Value {
    let error = err(&call(client, tool, args).await);
    assert_eq!(error["code"], "request.invalid_arguments");
    assert_eq!(error["retryable"], false);
    assert_eq!(error["details"]["aap_code"], "SCHEMA_VALIDATION_FAILED");
    error
}

#[tokio::test]
async fn every_schema_problem_is_listed_with_its_pointer() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let error = invalid(
        &client,
        "inventory.search",
        json!({
            "dealership_id": "demo-cdk",
            "colour": "red",
            "limit": "ten",
            "filters": { "condition": ["brand-new"], "year_min": 1800, "mileage_max": { "value": -5, "unit": "mi" }, "wheels": 4 },
            "sort": { "field": "horsepower" }
        }),
    )
    .await;
    let mut got = problem_pointers(&error);
    got.sort();
    assert_eq!(
        got,
        [
            "/colour",
            "/filters/condition/0",
            "/filters/mileage_max/value",
            "/filters/wheels",
            "/filters/year_min",
            "/limit",
            "/sort/field"
        ]
    );
    // Unknown fields are named by their pointers, never in a message.
    for problem in error["details"]["problems"].as_array().unwrap() {
        let message = problem["message"].as_str().unwrap();
        assert!(
            !message.contains("colour") && !message.contains("wheels"),
            "{problem}"
        );
    }
}

/// Arguments that are not an object, and unknown argument names, are
/// reported by pointer and expected type: the caller's text is never echoed
/// (an outside audit saw both come back in the error messages).
#[tokio::test]
async fn a_callers_text_is_never_echoed_in_an_argument_problem() {
    let bridge = demo().await;
    let body = |arguments: Value| {
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "inventory_search", "arguments": arguments } })
        .to_string()
    };
    let post = |body: String| {
        let url = bridge.url.clone();
        async move {
            dms_bridge::net::client_builder()
                .build()
                .unwrap()
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("authorization", "Bearer demo-token-group")
                .body(body)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        }
    };
    let answer = post(body(json!("SECRET-STRING-ARGUMENT"))).await;
    assert!(!answer.contains("SECRET-STRING-ARGUMENT"), "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "Invalid params for tools/call: /arguments must be an object"
    );

    let answer = post(body(
        json!({ "dealership_id": "demo-cdk", "SECRET_NAME": 1 }),
    ))
    .await;
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let problems = raw_err(&answer)["details"]["problems"].clone();
    assert_eq!(problems[0]["pointer"], "/SECRET_NAME", "{answer}");
    assert!(
        !problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("SECRET_NAME")
    );
}

#[tokio::test]
async fn semantic_problems_are_reported_together() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let error = invalid(
        &client,
        "inventory.search",
        json!({
            "dealership_id": "demo-cdk",
            "limit": 500,
            "filters": {
                "year_min": 2024, "year_max": 2020,
                "price_min": { "amount": 3000000, "currency": "USD" },
                "price_max": { "amount": 1000000, "currency": "EUR" },
                "vin": "1HD1KRM12PB600001"
            }
        }),
    )
    .await;
    let got = problem_pointers(&error);
    for expected in [
        "/filters/price_max",
        "/filters/price_max/currency",
        "/filters/vin",
        "/filters/year_max",
        "/limit",
    ] {
        assert!(
            got.contains(&expected.to_owned()),
            "missing {expected} in {got:?}"
        );
    }
    let vin_problem = error["details"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pointer"] == "/filters/vin")
        .unwrap();
    assert!(
        vin_problem["message"]
            .as_str()
            .unwrap()
            .contains("check digit")
    );
}

#[tokio::test]
async fn limits_and_negative_amounts_are_refused() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let zero = invalid(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "limit": 0 }),
    )
    .await;
    assert_eq!(problem_pointers(&zero), ["/limit"]);
    let max = invalid(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "limit": 101 }),
    )
    .await;
    assert!(
        max["details"]["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("between 1 and 100")
    );
    let negative = invalid(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "filters": { "price_min": { "amount": -1, "currency": "USD" } } }),
    )
    .await;
    assert_eq!(problem_pointers(&negative), ["/filters/price_min/amount"]);
}

#[tokio::test]
async fn inventory_get_needs_an_identifier_and_a_valid_vin() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let none = invalid(
        &client,
        "inventory.get",
        json!({ "dealership_id": "demo-cdk" }),
    )
    .await;
    assert_eq!(problem_pointers(&none), [""]);
    for bad in ["1M8GDM9AXKP04278", "1M8GDM9AXKP04278O", "5YJ3E1EA7KF317000"] {
        let e = invalid(
            &client,
            "inventory.get",
            json!({ "dealership_id": "demo-cdk", "vin": bad }),
        )
        .await;
        assert_eq!(problem_pointers(&e), ["/vin"], "{bad}");
    }
    // Only a required field absent: AAP's MISSING_REQUIRED_FIELD.
    let missing_dealership = err(&call(
        &client,
        "inventory.get",
        json!({ "vin": "1HGBH41JXMN109186" }),
    )
    .await);
    assert_eq!(
        missing_dealership["details"]["aap_code"],
        "MISSING_REQUIRED_FIELD"
    );
    assert!(
        missing_dealership["details"]["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("dealership_id")
    );
}

#[tokio::test]
async fn cursors_cannot_be_tampered_with_or_reused_elsewhere() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let search = |dealership: &str, make: &str, cursor: Option<&str>| {
        let mut args =
            json!({ "dealership_id": dealership, "limit": 5, "filters": { "make": [make] } });
        if let Some(c) = cursor {
            args["cursor"] = json!(c);
        }
        args
    };
    let first = ok(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "limit": 5 }),
    )
    .await);
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();

    let mut tampered = cursor.clone();
    tampered.replace_range(2..3, if &cursor[2..3] == "A" { "B" } else { "A" });
    let with = |c: &str| json!({ "dealership_id": "demo-cdk", "limit": 5, "cursor": c });
    for (args, needle) in [
        (with(&tampered), "not one this server issued"),
        (with("not-a-cursor"), "not one this server issued"),
        (
            json!({ "dealership_id": "demo-feed", "limit": 5, "cursor": cursor }),
            "another dealership",
        ),
        (
            search("demo-cdk", "Honda", Some(&cursor)),
            "different search",
        ),
    ] {
        let e = invalid(&client, "inventory.search", args).await;
        assert_eq!(problem_pointers(&e), ["/cursor"]);
        assert!(
            e["details"]["problems"][0]["message"]
                .as_str()
                .unwrap()
                .contains(needle),
            "{e}"
        );
    }
    // The genuine cursor still works, with a different page size too.
    let second = ok(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "limit": 7, "cursor": cursor }),
    )
    .await);
    assert_eq!(second["items"].as_array().unwrap().len(), 7);
}

#[tokio::test]
async fn unknown_tools_are_a_protocol_error_naming_the_tool() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let params = rmcp::model::CallToolRequestParams::new("inventory.delete_everything");
    let error = client.call_tool(params).await.unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("-32602") || text.contains("Unknown tool"),
        "{text}"
    );
}

#[tokio::test]
async fn oversized_request_bodies_are_refused_before_parsing() {
    let bridge = demo().await;
    let huge = "x".repeat(2 * 1024 * 1024);
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "inventory.search", "arguments": { "dealership_id": "demo-cdk", "filters": { "query": huge } } } });
    let response = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(&bridge.url)
        .header("Authorization", "Bearer demo-token-group")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    // The server is still healthy afterwards.
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    ok(&call(&client, "dealership.list", json!({})).await);
}

/// Every problem message reads as a phrase after its field: no debug output,
/// no unbalanced brackets, nothing a model cannot act on.
fn assert_readable(error: &Value) {
    for p in error["details"]["problems"].as_array().unwrap() {
        let message = p["message"].as_str().unwrap();
        for junk in ["multiple(", "single(", "Some(", "wrong type"] {
            assert!(
                !message.to_lowercase().contains(&junk.to_lowercase()),
                "{message}"
            );
        }
        let open = message.matches('(').count();
        assert_eq!(open, message.matches(')').count(), "unbalanced: {message}");
    }
}

#[tokio::test]
async fn type_problems_name_the_types_in_words() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    // `limit` is an optional integer: `anyOf [integer, null]` in the schema.
    let error = invalid(
        &client,
        "leads.list",
        json!({ "dealership_id": "demo-cdk", "limit": "ten", "delivery_state": "pending" }),
    )
    .await;
    assert_readable(&error);
    let messages: Vec<(String, String)> = error["details"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["pointer"].as_str().unwrap().to_owned(),
                p["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        messages
            .iter()
            .any(|(at, m)| at == "/limit" && m.contains("an integer")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|(at, m)| at == "/delivery_state" && m.contains("an array")),
        "{messages:?}"
    );
}

#[tokio::test]
async fn schema_and_semantic_problems_come_back_in_one_round() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    // A phone that breaks the schema's pattern, and a blank name and a bad VIN
    // that only the semantic checks see: one answer lists all three.
    let error = invalid(
        &client,
        "leads.create",
        json!({
            "dealership_id": "demo-cdk", "source_agent": "test-agent",
            "customer": { "first_name": "  ", "last_name": "Whitfield", "email": "dana@example.com", "phone": "555-0100" },
            "consent": { "granted_at": "2026-11-01T10:00:00Z", "allowed_channels": ["email"], "scope": ["lead_submission"],
                         "consent_text": "I agree that the dealership may email me about this request." },
            "vehicle_of_interest": { "vin": "1HGCM82633A004353" }
        }),
    )
    .await;
    assert_readable(&error);
    let mut got = problem_pointers(&error);
    got.sort();
    assert_eq!(
        got,
        [
            "/customer/first_name",
            "/customer/phone",
            "/vehicle_of_interest/vin"
        ]
    );
}

/// A field of the wrong type keeps the arguments from parsing; the other
/// fields still get their semantic checks, in the same answer.
#[tokio::test]
async fn a_field_of_the_wrong_type_does_not_hide_the_other_fields_problems() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let error = invalid(
        &client,
        "inventory.search",
        json!({
            "dealership_id": "demo-cdk",
            "limit": 0,
            "sort": "price",
            "filters": { "vin": "1HD1KRM12PB600001" }
        }),
    )
    .await;
    let got = problem_pointers(&error);
    assert_eq!(got, ["/filters/vin", "/limit", "/sort"], "{error}");
}

#[tokio::test]
async fn required_fields_alone_missing_are_aap_missing_required_field() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let only_missing = err(&call(
        &client,
        "inventory.get",
        json!({ "vin": "1HGCM82633A004352" }),
    )
    .await);
    assert_eq!(only_missing["code"], "request.invalid_arguments");
    assert_eq!(
        only_missing["details"]["aap_code"], "MISSING_REQUIRED_FIELD",
        "{only_missing}"
    );
    // With anything else wrong as well, it is the general schema failure.
    invalid(&client, "inventory.get", json!({ "vin": 5 })).await;
}

#[tokio::test]
async fn a_tool_without_arguments_names_each_unexpected_one() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let error = invalid(&client, "dealership.list", json!({ "unexpected": true })).await;
    assert_eq!(problem_pointers(&error), ["/unexpected"], "{error}");
}
