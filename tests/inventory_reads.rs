//! Inventory reads with the tool cache off: every call reaches the upstream,
//! and an answer the upstream sends again byte for byte is not parsed again
//! (`src/adapters/rest/inventory.rs`). That must never hide a change: a price
//! changed on any page shows on the next read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;

use common::inventory::upstream;
use common::{INVENTORY_PATH, connect, count, rest_config};
use serde_json::{Value, json};

/// Every listed vehicle by VIN, from one uncached search.
async fn listed(client: &common::Client) -> BTreeMap<String, Value> {
    let page = common::every_page(client, json!({ "dealership_id": "acme" })).await;
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["vin"].as_str().unwrap().to_owned(), v.clone()))
        .collect()
}

fn without_verified_at(mut vehicles: BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    for v in vehicles.values_mut() {
        v.as_object_mut().unwrap().remove("last_verified_at");
    }
    vehicles
}

const NO_CACHE: &str = "\n[cache]\nenabled = false\n";

#[tokio::test]
async fn every_read_reaches_the_upstream_and_a_change_on_any_page_shows() {
    let (server, inventory) = upstream(30).await;
    let bridge = common::with_config(&rest_config(&server.uri(), NO_CACHE)).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let first = listed(&client).await;
    let second = listed(&client).await;
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        6,
        "3 pages per read, no cache"
    );
    assert_eq!(
        without_verified_at(second.clone()),
        without_verified_at(first.clone())
    );

    // A change on the last page, after two pages that did not change.
    let late = inventory.listed_with_selling_price(60);
    let vin = inventory.raise_price(late);
    let third = listed(&client).await;
    let raised = |before: &BTreeMap<String, Value>, after: &BTreeMap<String, Value>| {
        after[&vin]["price"]["amount"].as_i64().unwrap()
            - before[&vin]["price"]["amount"].as_i64().unwrap()
    };
    assert_eq!(raised(&second, &third), 100_000, "1,000.00 in cents");

    // A change on the first page; the pages after it are read and mapped again too.
    let early = inventory.listed_with_selling_price(0);
    let vin_early = inventory.raise_price(early);
    let fourth = listed(&client).await;
    assert_eq!(
        fourth[&vin_early]["price"]["amount"].as_i64().unwrap()
            - third[&vin_early]["price"]["amount"].as_i64().unwrap(),
        100_000
    );
    // Compared without `last_verified_at`: the two reads may fall in different seconds.
    let (fourth, third) = (without_verified_at(fourth), without_verified_at(third));
    assert_eq!(fourth[&vin], third[&vin], "the unchanged later page");
    assert_eq!(count(&server, INVENTORY_PATH).await, 12);
}

#[tokio::test]
async fn a_reused_answer_is_verified_again() {
    let (server, _inventory) = upstream(100).await;
    let bridge = common::with_config(&rest_config(&server.uri(), NO_CACHE)).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let first = listed(&client).await;
    // last_verified_at has whole seconds: wait into the next one.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let second = listed(&client).await;
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
    let at = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v["last_verified_at"].as_str().unwrap()).unwrap()
    };
    for (vin, vehicle) in &second {
        assert!(
            at(vehicle) > at(&first[vin]),
            "{vin}: the second read verified it again"
        );
    }
    assert_eq!(without_verified_at(second), without_verified_at(first));
}
