//! `repair_order.updated`: a repair order's status change at the DMS becomes
//! one event, whether the background watch reads it or an agent does, and
//! only callers with the service read scope see it. The DMS is the demo's
//! CDK Drive mock, moved on through its admin endpoint as a shop floor would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{Bridge, Client, call, connect, demo_edited, err, ok};
use serde_json::{Value, json};

const TOKEN: &str = "demo-token-cdk";

/// The demo with its repair orders read every `every` (`"off"`: only by agents),
/// plus `extra` TOML.
async fn demo_watching(every: &str, extra: &str) -> Bridge {
    demo_edited(|toml| {
        let setting = "repair_order_watch = \"20s\"";
        assert!(toml.contains(setting), "the demo config changed");
        toml.replacen(setting, &format!("repair_order_watch = {every:?}"), 1) + extra
    })
    .await
}

/// Moves the CDK mock's first open repair order on; answers its number and new status.
async fn advance(bridge: &Bridge) -> (String, String) {
    let cdk = &bridge.mocks.as_ref().unwrap().cdk_url;
    let moved: Value = dms_bridge::net::client_builder()
        .build()
        .unwrap()
        .post(format!("{cdk}/cdk/admin/repair-orders/advance"))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    let text = |k: &str| moved[k].as_str().unwrap().to_owned();
    (text("ro_number"), text("status"))
}

async fn ro_events(client: &Client) -> Vec<Value> {
    let page = ok(&call(
        client,
        "events.list",
        json!({ "dealership_id": "demo-cdk", "types": ["repair_order.updated"] }),
    )
    .await);
    page["items"].as_array().unwrap().clone()
}

/// Waits (up to 30 s) until `count` repair-order events are recorded.
async fn wait_for_events(client: &Client, count: usize) -> Vec<Value> {
    for _ in 0..300 {
        let events = ro_events(client).await;
        if events.len() >= count {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no {count} repair-order events within 30 s");
}

/// Lists demo-cdk's repair orders: the bridge sees (and records) every status.
async fn list_orders(client: &Client) -> Value {
    ok(&call(
        client,
        "service.list_repair_orders",
        json!({ "dealership_id": "demo-cdk" }),
    )
    .await)
}

fn status_of(list: &Value, ro_number: &str) -> String {
    let found = list["items"].as_array().unwrap().iter();
    let ro = found
        .into_iter()
        .find(|ro| ro["ro_number"] == ro_number)
        .unwrap_or_else(|| panic!("{ro_number} not listed"));
    ro["status"].as_str().unwrap().to_owned()
}

fn watch_reads(bridge: &Bridge) -> u64 {
    let labels = dms_bridge::telemetry::metrics::MirrorSyncLabels {
        dealership: "demo-cdk".to_owned(),
        outcome: "ok",
    };
    let metrics = &bridge.gateway.services().metrics;
    metrics.repair_order_watch.get_or_create(&labels).get()
}

#[tokio::test]
async fn the_watch_turns_status_changes_into_one_event_each() {
    let bridge = demo_watching("1s", "").await;
    let client = connect(&bridge.url, Some(TOKEN)).await;
    // The first sight of each order is its baseline: no event.
    let before = list_orders(&client).await;
    assert!(ro_events(&client).await.is_empty());

    let (number, status) = advance(&bridge).await;
    assert_eq!(status, "in_progress");
    assert_eq!(status_of(&before, &number), "open");
    let events = wait_for_events(&client, 1).await;
    let first = &events[0];
    assert_eq!(first["type"], "repair_order.updated");
    assert_eq!(first["change"], "updated");
    assert_eq!(first["resource"]["kind"], "repair_order");
    assert_eq!(first["resource"]["id"], number.as_str());
    let uri = format!("dms://dealerships/demo-cdk/repair-orders/{number}");
    assert_eq!(first["resource"]["uri"], uri.as_str());
    let expected =
        json!({ "ro_number": number, "status": "in_progress", "previous_status": "open" });
    assert_eq!(first["data"], expected);

    let (again, closed) = advance(&bridge).await;
    assert_eq!(
        (again.as_str(), closed.as_str()),
        (number.as_str(), "closed")
    );
    let events = wait_for_events(&client, 2).await;
    let second =
        json!({ "ro_number": number, "status": "closed", "previous_status": "in_progress" });
    assert_eq!(events[1]["data"], second);
    assert!(events[1]["sequence"].as_u64() > events[0]["sequence"].as_u64());

    // Further reads of unchanged orders add nothing.
    let reads = watch_reads(&bridge);
    for _ in 0..300 {
        if watch_reads(&bridge) >= reads + 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        watch_reads(&bridge) >= reads + 2,
        "two more watch reads within 30 s"
    );
    assert_eq!(ro_events(&client).await.len(), 2);
}

#[tokio::test]
async fn an_agent_read_notices_a_change_without_the_watch() {
    let bridge = demo_watching("off", "").await;
    let client = connect(&bridge.url, Some(TOKEN)).await;
    list_orders(&client).await;
    let (number, status) = advance(&bridge).await;
    assert!(ro_events(&client).await.is_empty(), "no watch, no read yet");

    let got = ok(&call(
        &client,
        "service.get_repair_order",
        json!({ "dealership_id": "demo-cdk", "ro_number": number }),
    )
    .await);
    assert_eq!(got["repair_order"]["status"], status.as_str());
    // Recorded before the answer: no waiting.
    let events = ro_events(&client).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["previous_status"], "open");
    assert_eq!(watch_reads(&bridge), 0, "the watch is off");
}

#[tokio::test]
async fn only_service_readers_see_repair_order_events() {
    let inventory_only = r#"
[[tokens]]
name = "lot-agent"
secret = { value = "lot-token" }
dealerships = ["demo-cdk"]
scopes = ["amcp:inventory:read"]
"#;
    let bridge = demo_watching("off", inventory_only).await;
    let client = connect(&bridge.url, Some(TOKEN)).await;
    list_orders(&client).await;
    let (number, _) = advance(&bridge).await;
    let args = json!({ "dealership_id": "demo-cdk", "ro_number": number });
    ok(&call(&client, "service.get_repair_order", args).await);
    assert_eq!(ro_events(&client).await.len(), 1);

    let lot = connect(&bridge.url, Some("lot-token")).await;
    let refused = err(&call(
        &lot,
        "events.list",
        json!({ "dealership_id": "demo-cdk", "types": ["repair_order.updated"] }),
    )
    .await);
    assert_eq!(refused["code"], "auth.forbidden");
    assert_eq!(refused["details"]["required_scope"], "amcp:service:read");
    let everything = ok(&call(
        &lot,
        "events.list",
        json!({ "dealership_id": "demo-cdk", "resource": { "kind": "repair_order", "id": number } }),
    )
    .await);
    assert_eq!(everything["items"], json!([]), "filtered out, not leaked");
}
