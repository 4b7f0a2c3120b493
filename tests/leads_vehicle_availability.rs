//! A lead for a vehicle the dealership has sold still goes to the CRM (the
//! customer wants something like it), and the agent is told the vehicle is no
//! longer available. An inventory that cannot be read loses no lead either:
//! the agent is told availability is unknown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::leads::{lead, leads_with_inventory_config, wait_delivery};
use common::{Client, call, connect, demo, ok, with_config};
use dms_bridge::adf;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const WAIT: Duration = Duration::from_secs(10);
/// Sold units in the demo data (wiremock-fixtures/README.md).
const CDK_SOLD_VIN: &str = "5YJLDEWN2S9951109";
const FEED_SOLD_VIN: &str = "JTDCXSX67L9781713";

/// A dry run, then the real call; both must carry the same warnings.
async fn create_after_dry_run(client: &Client, args: Value) -> Value {
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let preview = ok(&call(client, "leads.create", dry).await);
    let answer = ok(&call(client, "leads.create", args).await);
    assert_eq!(
        preview.get("warnings"),
        answer.get("warnings"),
        "a dry run must say what the real call says"
    );
    answer
}

fn codes(answer: &Value) -> Vec<&str> {
    answer["warnings"]
        .as_array()
        .map(|a| a.iter().map(|w| w["code"].as_str().unwrap()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_lead_for_a_sold_vin_is_kept_and_the_agent_is_told() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let mut args = lead("demo-cdk", 1);
    args["vehicle_of_interest"] = json!({ "vin": CDK_SOLD_VIN });
    let answer = create_after_dry_run(&client, args).await;

    assert_eq!(answer["status"], "received");
    assert_eq!(codes(&answer), ["inventory.vehicle_unavailable"]);
    let message = answer["warnings"][0]["message"].as_str().unwrap();
    assert!(message.contains("sold"), "{message}");

    let lead_id = answer["lead_id"].as_str().unwrap();
    wait_delivery(&client, "demo-cdk", lead_id, "delivered", WAIT).await;
    let received = bridge.mocks.as_ref().unwrap().crm.leads();
    assert_eq!(received.len(), 1);
    let doc = adf::parse(received[0].document.as_bytes())
        .unwrap()
        .remove(0);
    assert_eq!(doc.vehicles[0].vin.as_deref(), Some(CDK_SOLD_VIN));
    let comments = doc.customer.comments.unwrap();
    assert!(
        comments.contains("no longer listed as available"),
        "{comments}"
    );
}

#[tokio::test]
async fn a_lead_for_a_unit_sold_in_a_feed_is_kept_and_the_agent_is_told() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let mut args = lead("demo-feed", 2);
    args["vehicle_of_interest"] = json!({ "vin": FEED_SOLD_VIN.to_lowercase() });
    let answer = create_after_dry_run(&client, args).await;
    assert_eq!(answer["status"], "received");
    assert_eq!(codes(&answer), ["inventory.vehicle_unavailable"]);
    let lead_id = answer["lead_id"].as_str().unwrap();
    wait_delivery(&client, "demo-feed", lead_id, "delivered", WAIT).await;
}

#[tokio::test]
async fn a_lead_for_a_listed_vehicle_has_no_warning() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let search = ok(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "demo-cdk", "limit": 1 }),
    )
    .await);
    let mut args = lead("demo-cdk", 3);
    args["vehicle_of_interest"] = json!({ "vin": search["items"][0]["vin"] });
    let answer = create_after_dry_run(&client, args).await;
    assert!(answer.get("warnings").is_none(), "{answer}");
}

#[tokio::test]
async fn an_inventory_that_fails_loses_no_lead_and_says_availability_is_unknown() {
    let intake = common::leads::accepting_intake().await;
    let inventory = MockServer::start().await;
    common::mount_token(&inventory).await;
    Mock::given(method("GET"))
        .and(path(common::INVENTORY_PATH))
        .respond_with(ResponseTemplate::new(503))
        .mount(&inventory)
        .await;
    let config = leads_with_inventory_config(
        &intake.uri(),
        &inventory.uri(),
        r#"timeout = "1s"
resilience = { retries = { max = 0 } }"#,
    );
    let bridge = with_config(&config).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut args = lead("acme", 4);
    args["vehicle_of_interest"] = json!({ "vin": "1HGCM82633A004352" });
    let answer = create_after_dry_run(&client, args).await;
    assert_eq!(answer["status"], "received");
    assert_eq!(codes(&answer), ["upstream.unavailable"]);
    let lead_id = answer["lead_id"].as_str().unwrap();
    wait_delivery(&client, "acme", lead_id, "delivered", WAIT).await;
    assert_eq!(intake.received_requests().await.unwrap().len(), 1);
}
