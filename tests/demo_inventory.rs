//! The demo end to end: dealerships from different kinds of upstream, through a real MCP client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use serde_json::json;

#[tokio::test]
async fn demo_serves_every_dealership_to_the_group_token() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let list = ok(&call(&client, "dealership.list", json!({})).await);
    let ids: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    // In id order.
    assert_eq!(
        ids,
        [
            "demo-cdk",
            "demo-dealertrack",
            "demo-feed",
            "demo-reynolds",
            "demo-tekion",
            "demo-xmlfeed"
        ]
    );
    // The service center's used lot is in its Tekion DMS, its values from J.D. Power.
    let domains = &list["items"][4]["domains"];
    assert_eq!(
        domains,
        &json!(["inventory", "repair_orders", "deals"]),
        "{list}"
    );
    // Each inventory shape the demo serves, with at least the units its fixtures hold for sale.
    let inventories = [
        ("demo-cdk", 60),
        ("demo-feed", 60),
        ("demo-tekion", 7),
        ("demo-reynolds", 9),
        ("demo-dealertrack", 7),
        ("demo-xmlfeed", 11),
    ];
    for (id, at_least) in inventories {
        let page = every_page(&client, json!({ "dealership_id": id })).await;
        let items = page["items"].as_array().unwrap();
        assert!(
            items.len() >= at_least,
            "{id} lists {} vehicles",
            items.len()
        );
        assert_eq!(page["total"].as_u64().unwrap() as usize, items.len());
        for v in items {
            assert!(
                ["available", "in_transit", "pending"].contains(&v["status"].as_str().unwrap())
            );
            assert!(v["last_verified_at"].as_str().unwrap().len() >= 20);
            assert_ne!(v["id"], v["vin"], "vin must never be the primary id");
        }
    }
}

#[tokio::test]
async fn the_demo_feed_advancing_becomes_vehicle_events() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    // A search waits for the first read, the baseline; the feed advances after it.
    let search = json!({ "dealership_id": "demo-feed", "limit": 1 });
    ok(&call(&client, "inventory.search", search).await);
    let list = json!({ "dealership_id": "demo-feed", "limit": 100 });
    let before = ok(&call(&client, "events.list", list.clone()).await);
    assert_eq!(before["items"], json!([]), "the first read is the baseline");

    advance_demo_feed(&bridge).await;
    let after = ok(&call(&client, "events.list", list).await);
    let events = after["items"].as_array().unwrap();
    let of = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(
        (of("vehicle.deleted"), of("vehicle.created")),
        (3, 1),
        "three units sold, one arrived: {after}"
    );
    let price_drop = events
        .iter()
        .find(|e| e["type"] == "vehicle.updated")
        .unwrap_or_else(|| panic!("no price change in {after}"));
    assert!(
        price_drop["data"]["changed"]
            .as_array()
            .unwrap()
            .contains(&json!("price")),
        "{price_drop}"
    );
    // A sold unit now answers as sold, by the VIN the event names.
    let sold = events
        .iter()
        .find(|e| e["type"] == "vehicle.deleted")
        .unwrap();
    let vin = sold["data"]["vin"].as_str().unwrap();
    assert_sold(&client, "demo-feed", vin).await;
}
