//! `deals.request_trade_value` through a Black Book-shaped provider: the
//! request it sees (Basic auth, VIN in the path, mileage in miles, the
//! dealership's state), values in minor units, "no data" as
//! `deals.trade_value_unavailable`, and the demo end to end.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::config::{BridgeConfig, Dealership, Token, Upstream, secret};
use common::{call, connect, demo, err, fixture, ok, with_config};
use serde_json::json;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const VIN: &str = "5NMCDKFR3SH382627";
const PATH: &str = "/UsedCarWS/UsedCarWS/UsedVehicle/VIN/5NMCDKFR3SH382627";

fn config(upstream: &str) -> String {
    BridgeConfig::new()
        .dealership(Dealership::acme().route("deals", "bb"))
        .upstream(
            "bb",
            Upstream::rest("blackbook", upstream)
                .set("client_id", secret("bb-user"))
                .set("client_secret", secret("bb-pass"))
                .set("vars", r#"{ template = "11", customer_id = "acme-42" }"#)
                .timeout("2s")
                .resilience("{ retries = { max = 0 } }"),
        )
        .token(Token::new(
            "agent",
            "agent-token",
            &["acme"],
            &["amcp:deals:read"],
        ))
        .render()
}

fn answer(name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .set_body_raw(fixture(&format!("blackbook/{name}")), "application/json")
}

#[tokio::test]
async fn a_vin_and_mileage_get_a_trade_in_range_in_minor_units() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(PATH))
        // 20,000 km asked: the provider takes miles.
        .and(query_param("mileage", "12427"))
        .and(query_param("state", "IL"))
        .and(query_param("template", "11"))
        .and(query_param("customerid", "acme-42"))
        .and(header("authorization", "Basic YmItdXNlcjpiYi1wYXNz"))
        .respond_with(answer("used-vehicle.json"))
        .expect(1)
        .mount(&server)
        .await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let result = ok(&call(
        &client,
        "deals.request_trade_value",
        json!({ "dealership_id": "acme", "vin": VIN.to_lowercase(), "mileage": { "value": 20000, "unit": "km" }, "condition": "fair" }),
    )
    .await);
    assert_eq!(result["vin"], VIN);
    assert_eq!(result["provider"], "blackbook");
    assert_eq!(result["vehicle"]["make"], "Hyundai");
    assert_eq!(result["vehicle"]["year"], 2025);
    assert_eq!(
        result["trade_in"]["low"],
        json!({ "amount": 1_687_500, "currency": "USD" })
    );
    assert_eq!(
        result["trade_in"]["average"],
        json!({ "amount": 2_007_500, "currency": "USD" })
    );
    assert_eq!(
        result["trade_in"]["high"],
        json!({ "amount": 2_280_000, "currency": "USD" })
    );
    assert_eq!(result["value"], result["trade_in"]["average"]);
    let valued =
        chrono::DateTime::parse_from_rfc3339(result["valued_at"].as_str().unwrap()).unwrap();
    let until =
        chrono::DateTime::parse_from_rfc3339(result["valid_until"].as_str().unwrap()).unwrap();
    assert_eq!((until - valued).num_days(), 7);
}

#[tokio::test]
async fn no_data_from_the_provider_is_trade_value_unavailable() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(answer("no-data.json"))
        .mount(&server)
        .await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let error = err(&call(
        &client,
        "deals.request_trade_value",
        json!({ "dealership_id": "acme", "vin": VIN, "mileage": { "value": 30000, "unit": "mi" } }),
    )
    .await);
    assert_eq!(error["code"], "deals.trade_value_unavailable");
    assert_eq!(error["retryable"], false);
    // A lead needs the customer and consent this call never had: a hint, no call
    // that would fail as given.
    assert!(error["recovery"].get("next_tool_call").is_none(), "{error}");
    assert!(
        error["recovery"]["hint"]
            .as_str()
            .unwrap()
            .contains("leads_create")
    );
}

#[tokio::test]
async fn a_vin_that_fails_its_check_digit_never_reaches_the_provider() {
    let server = MockServer::start().await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let error = err(&call(
        &client,
        "deals.request_trade_value",
        json!({ "dealership_id": "acme", "vin": "5NMCDKFR4SH382627", "mileage": { "value": 1, "unit": "mi" } }),
    )
    .await);
    assert_eq!(error["code"], "request.invalid_arguments");
    assert_eq!(error["details"]["problems"][0]["pointer"], "/vin");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn refused_credentials_and_outages_map_to_upstream_errors() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error_count": 1, "message_list": [{ "type": "Error", "code": "INVALID_CREDENTIALS", "message": "bad" }]
        })))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let args =
        json!({ "dealership_id": "acme", "vin": VIN, "mileage": { "value": 30000, "unit": "mi" } });
    let first = err(&call(&client, "deals.request_trade_value", args.clone()).await);
    assert_eq!(first["code"], "upstream.rejected");
    let second = err(&call(&client, "deals.request_trade_value", args).await);
    assert_eq!(second["code"], "upstream.unavailable");
    assert_eq!(second["retryable"], true);
}

#[tokio::test]
async fn the_demo_values_a_trade_in_and_lower_mileage_is_worth_more() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let value = |miles: u64| {
        let client = &client;
        async move {
            ok(&call(
                client,
                "deals.request_trade_value",
                json!({ "dealership_id": "demo-feed", "vin": VIN, "mileage": { "value": miles, "unit": "mi" } }),
            )
            .await)["trade_in"]["average"]["amount"]
                .as_i64()
                .unwrap()
        }
    };
    let low_miles = value(10_000).await;
    let high_miles = value(60_000).await;
    assert!(low_miles > high_miles, "{low_miles} <= {high_miles}");
    // A valid VIN the provider does not know.
    let error = err(&call(
        &client,
        "deals.request_trade_value",
        json!({ "dealership_id": "demo-cdk", "vin": "1HGCM82633A004352", "mileage": { "value": 90000, "unit": "mi" } }),
    )
    .await);
    assert_eq!(error["code"], "deals.trade_value_unavailable");
}
