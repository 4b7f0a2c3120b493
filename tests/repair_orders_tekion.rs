#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Repair orders through a Tekion-shaped DMS: app and dealer id headers, a
//! token wrapped in `data`, epoch-millisecond windows, `meta.nextFetchKey`
//! pages and errors inside HTTP 200.

use crate::common;

use std::collections::BTreeMap;

use common::config::{BridgeConfig, Dealership, Token, Upstream, quoted, secret};
use common::{call, connect, err, fixture, ok, with_config};
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::json;
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ROS: &str = "/openapi/v3.1.0/repair-orders";
const TOKEN: &str = "/openapi/public/tokens";

fn reply(name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(fixture(&format!("tekion/{name}")), "application/json")
}

async fn tekion() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN))
        .respond_with(reply("token.json"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(ROS))
        .and(query_param("nextFetchKey", "fk-2-a81c"))
        .respond_with(reply("repair-orders-page-2.json"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(ROS))
        .and(query_param_is_missing("nextFetchKey"))
        .and(query_param_is_missing("repairOrderNumber"))
        .respond_with(reply("repair-orders-page-1.json"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(ROS))
        .and(query_param("repairOrderNumber", "60102"))
        .respond_with(reply("repair-order-60102.json"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(ROS))
        .and(query_param("repairOrderNumber", "77777"))
        .respond_with(reply("repair-order-none.json"))
        .mount(&server)
        .await;
    server
}

fn config(upstream: &str) -> String {
    let hill = Dealership::new(
        "hill",
        "Hill Country Service",
        "America/Chicago",
        ["410 Ranch Rd", "Dripping Springs", "TX", "78620"],
    );
    BridgeConfig::new()
        .dealership(hill.route("repair_orders", "tekion"))
        .upstream(
            "tekion",
            Upstream::rest("tekion", upstream)
                .set("token_url", quoted(&format!("{upstream}{TOKEN}")))
                .set("client_id", secret("app-42"))
                .set("client_secret", secret("s3cret-key"))
                .set("vars", r#"{ app_id = "app-42", dealer_id = "dealer-7" }"#)
                .timeout("2s"),
        )
        .token(Token::new(
            "advisor",
            "advisor-token",
            &["hill"],
            &["amcp:service:read"],
        ))
        .render()
}

#[tokio::test]
async fn lists_every_page_with_epoch_windows_and_the_vendors_headers() {
    let server = tekion().await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("advisor-token")).await;
    let args = json!({ "dealership_id": "hill", "from": "2026-11-01", "to": "2026-11-20", "response_format": "detailed" });
    let list = ok(&call(&client, "service.list_repair_orders", args).await);
    let numbers: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ro_number"].as_str().unwrap())
        .collect();
    assert_eq!(
        numbers,
        [
            "60104", "60102", "60101", "60103", "60096", "60095", "60090"
        ]
    );

    let ro = |n: &str| {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ro_number"] == n)
            .unwrap()
            .clone()
    };
    let busy = ro("60102");
    assert_eq!(busy["repair_order_id"], "tk-60102");
    assert_eq!(busy["status"], "in_progress");
    assert_eq!(
        busy["opened_at"], "2026-11-16T09:05:00-06:00",
        "epoch ms in the dealership's zone"
    );
    assert_eq!(busy["advisor"], "Sam Okafor");
    assert_eq!(busy["customer_initials"], "L. O.");
    assert_eq!(
        busy["vehicle"]["mileage_in"],
        json!({ "value": 30550, "unit": "mi" })
    );
    assert_eq!(
        busy["jobs"][1],
        json!({ "line": "2", "op_code": "13BRK", "description": "Front brake pads and rotors", "status": "in_progress", "pay_type": "customer" })
    );
    // The same money as the CDK shape gives for this order: one fixture, two vendors.
    assert_eq!(busy["totals"][0]["total"]["amount"], 43487);
    assert_eq!(busy["totals"][0]["tax"]["amount"], 1752);
    assert_eq!(busy["totals"][1]["pay_type"], "warranty");
    let closed = ro("60096");
    assert_eq!(closed["status"], "closed");
    assert_eq!(closed["closed_at"], "2026-11-14T11:45:00-06:00");
    assert!(!list.to_string().contains("Ortega") && !list.to_string().contains("+1512"));

    let requests = server.received_requests().await.unwrap();
    let token = requests.iter().find(|r| r.url.path() == TOKEN).unwrap();
    let form: BTreeMap<String, String> = url_form(&token.body);
    assert_eq!(form.get("app_id").map(String::as_str), Some("app-42"));
    assert_eq!(
        form.get("secret_key").map(String::as_str),
        Some("s3cret-key")
    );
    let pages: Vec<_> = requests.iter().filter(|r| r.url.path() == ROS).collect();
    assert_eq!(pages.len(), 2, "two pages, then no nextFetchKey");
    for page in &pages {
        assert_eq!(page.headers["app_id"], "app-42");
        assert_eq!(page.headers["dealer_id"], "dealer-7");
        assert_eq!(page.headers["authorization"], "Bearer demo-tekion-token");
        let q: BTreeMap<String, String> = page
            .url
            .query_pairs()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        // 2026-11-01T00:00 and 2026-11-20T23:59:59.999 in Chicago (CDT then CST).
        assert_eq!(q["startTime"], "1793509200000");
        assert_eq!(q["endTime"], "1795240799999");
        assert!(!q.contains_key("vin"), "an empty filter is left out");
    }
}

fn url_form(body: &[u8]) -> BTreeMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{}", String::from_utf8_lossy(body)))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

#[tokio::test]
async fn gets_one_order_by_number_with_the_vendors_lookup() {
    let server = tekion().await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("advisor-token")).await;
    let got = ok(&call(
        &client,
        "service.get_repair_order",
        json!({ "dealership_id": "hill", "ro_number": "60102" }),
    )
    .await);
    assert_eq!(got["repair_order"]["jobs"].as_array().unwrap().len(), 3);
    assert_eq!(common::count(&server, ROS).await, 1, "one lookup, no list");
    let missing = err(&call(
        &client,
        "service.get_repair_order",
        json!({ "dealership_id": "hill", "ro_number": "77777" }),
    )
    .await);
    assert_eq!(missing["code"], "service.repair_order_not_found");
}

#[tokio::test]
async fn an_error_inside_a_200_answer_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN))
        .respond_with(reply("token.json"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(ROS))
        .respond_with(reply("error-dealer.json"))
        .mount(&server)
        .await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("advisor-token")).await;
    let error = err(&call(
        &client,
        "service.list_repair_orders",
        json!({ "response_format": "detailed", "dealership_id": "hill" }),
    )
    .await);
    assert_eq!(
        error["code"], "upstream.rejected",
        "the dealer id is not entitled: {error}"
    );
    assert_eq!(error["retryable"], false);
    assert!(
        !error.to_string().contains("entitled"),
        "no vendor text reaches the caller"
    );

    // An unknown failure status without a known code is still an error, not an empty list.
    let odd = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN))
        .respond_with(reply("token.json"))
        .mount(&odd)
        .await;
    Mock::given(method("GET"))
        .and(path(ROS))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({ "meta": { "status": "partial" }, "data": [] })),
        )
        .mount(&odd)
        .await;
    let bridge = with_config(&config(&odd.uri())).await;
    let client = connect(&bridge.url, Some("advisor-token")).await;
    let error = err(&call(
        &client,
        "service.list_repair_orders",
        json!({ "response_format": "detailed", "dealership_id": "hill" }),
    )
    .await);
    assert_eq!(error["code"], "upstream.rejected");
}

#[tokio::test]
async fn the_demo_service_center_reads_its_tekion_dms() {
    let bridge = common::demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let list = ok(&call(
        &client,
        "service.list_repair_orders",
        json!({ "response_format": "detailed", "dealership_id": "demo-tekion", "status": ["open", "in_progress"] }),
    )
    .await);
    assert_eq!(list["total"], 4, "{list}");
    let got = ok(&call(
        &client,
        "service.get_repair_order",
        json!({ "dealership_id": "demo-tekion", "ro_number": "60095" }),
    )
    .await);
    assert_eq!(got["repair_order"]["status"], "closed");

    // The same order as a resource, read through the same pipeline.
    let read = client
        .read_resource(ReadResourceRequestParams::new(
            "dms://dealerships/demo-tekion/repair-orders/60095",
        ))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("not text: {read:?}")
    };
    let resource: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(resource, got);
    let missing = client
        .read_resource(ReadResourceRequestParams::new(
            "dms://dealerships/demo-tekion/repair-orders/99999",
        ))
        .await
        .unwrap_err();
    assert!(
        format!("{missing:?}").contains("service.repair_order_not_found"),
        "{missing:?}"
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(
        templates.iter().any(
            |t| t.uri_template == "dms://dealerships/{dealership_id}/repair-orders/{ro_number}"
        )
    );
}
