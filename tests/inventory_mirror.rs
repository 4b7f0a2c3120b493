//! The inventory mirror: reads answered from the copy whatever the agent
//! traffic, the differences between two upstream reads as `vehicle.*`
//! events, the mass-removal guard, staleness, and a restart that compares
//! with what was seen before it. Upstreams are wiremock CDK inventories the
//! tests change between reads; reads of the mirror are made on demand
//! (`Mirror::sync_now`) so that nothing waits on a timer, except across a
//! process kill, where the real background interval runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use common::config::Upstream;
use common::inventory::{Inventory, index_of, search_all, summary, upstream, vins_of};
use common::process::{free_addr, start_bridge};
use common::{Bridge, Client, INVENTORY_PATH, call, connect, count, ok};
use serde_json::{Value, json};

/// `acme` on a mirrored CDK upstream at `server` (no retries), with `tail` appended.
fn mirrored(server: &str, every: &str, tail: &str) -> String {
    common::rest(server)
        .edit_upstream("cdk", |u: Upstream| {
            u.set("inventory_sync", format!("\"{every}\""))
                .resilience("{ retries = { max = 0 } }")
        })
        .tail(tail)
        .render()
}

/// A CDK inventory served in pages of `cap`, a bridge mirroring it every
/// `every`, and a client with acme's token.
async fn started(cap: usize, every: &str) -> (wiremock::MockServer, Inventory, Bridge, Client) {
    let (server, inventory) = upstream(cap).await;
    let bridge = common::with_config(&mirrored(&server.uri(), every, "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    (server, inventory, bridge, client)
}

async fn events_after(client: &Client, cursor: Option<&str>) -> Value {
    let mut args = json!({ "dealership_id": "acme", "limit": 100 });
    if let Some(c) = cursor {
        args["cursor"] = json!(c);
    }
    ok(&call(client, "events.list", args).await)
}

/// Reads acme's inventory into the mirror now; panics if the read fails.
async fn sync(bridge: &Bridge) {
    try_sync(bridge).await.unwrap();
}

async fn try_sync(bridge: &Bridge) -> Result<(), dms_bridge::mirror::MirrorError> {
    bridge.gateway.services().mirror.sync_now("acme").await
}

#[tokio::test]
async fn reads_come_from_the_mirror_whatever_the_agent_traffic() {
    let (server, _inventory, _bridge, client) = started(100, "1h").await;
    let first = search_all(&client).await;
    let after_first = count(&server, INVENTORY_PATH).await;
    assert!(after_first >= 1, "the first read reached the upstream");
    for i in 0..60 {
        let page = search_all(&client).await;
        assert_eq!(page["total"], first["total"]);
        let vin = first["items"][i % 10]["vin"].as_str().unwrap();
        let got = ok(&call(
            &client,
            "inventory.get",
            json!({ "dealership_id": "acme", "vin": vin }),
        )
        .await);
        assert_eq!(got["vehicle"]["vin"], vin);
        assert!(got.get("stale").is_none());
    }
    assert_eq!(
        count(&server, INVENTORY_PATH).await,
        after_first,
        "120 agent reads cost the upstream nothing more"
    );
}

#[tokio::test]
async fn steady_reads_are_conditional_and_a_change_is_still_seen() {
    let (server, inventory, bridge, client) = started(30, "1h").await;
    let listed: Vec<String> = vins_of(&search_all(&client).await).into_iter().collect();
    sync(&bridge).await;
    sync(&bridge).await;
    let requests = server.received_requests().await.unwrap();
    let reads: Vec<_> = requests
        .iter()
        .filter(|r| r.url.path() == INVENTORY_PATH)
        .collect();
    let conditional = reads
        .iter()
        .filter(|r| r.headers.contains_key("if-none-match"))
        .count();
    // Three pages per read: the first read plain, the next two conditional (304s).
    assert_eq!((reads.len(), conditional), (9, 6));

    let raised = inventory.raise_price(index_of(&inventory, &listed[40]));
    sync(&bridge).await;
    let events = events_after(&client, None).await;
    assert_eq!(
        summary(&events),
        vec![("vehicle.updated".to_owned(), raised)]
    );
}

#[tokio::test]
async fn background_reads_ask_only_for_changes_since_the_last_one() {
    let (server, inventory, _bridge, client) = started(30, "1s").await;
    let listed: Vec<String> = vins_of(&search_all(&client).await).into_iter().collect();
    let raised = inventory.raise_price(index_of(&inventory, &listed[5]));
    let sold = inventory.mark_deleted(index_of(&inventory, &listed[6]));
    let events = wait_events(&client, None, 2).await;
    assert_eq!(
        summary(&events),
        vec![
            ("vehicle.updated".to_owned(), raised),
            ("vehicle.deleted".to_owned(), sold.clone()),
        ]
    );
    let reads = server.received_requests().await.unwrap();
    let windows: Vec<String> = reads
        .iter()
        .filter_map(|r| {
            r.url
                .query_pairs()
                .find(|(k, _)| k == "modifiedTimeRange")
                .map(|(_, v)| v.into_owned())
        })
        .collect();
    assert!(
        !windows.is_empty(),
        "reads after the first ask for changes only"
    );
    assert!(
        windows.iter().all(|w| w.contains("Z:") && w.ends_with('Z')),
        "{windows:?}"
    );
    common::assert_sold(&client, "acme", &sold).await;
    assert_eq!(
        search_all(&client).await["total"].as_u64().unwrap(),
        listed.len() as u64 - 1
    );
}

#[tokio::test]
async fn changes_between_reads_become_vehicle_events_once() {
    let (_server, inventory, bridge, client) = started(30, "1h").await;
    let before = search_all(&client).await;
    let listed: Vec<String> = vins_of(&before).into_iter().collect();
    let baseline = events_after(&client, None).await;
    assert_eq!(
        baseline["items"].as_array().unwrap().len(),
        0,
        "the first read of an inventory is its baseline, not a flood of created events"
    );
    let cursor = baseline["next_cursor"].as_str().unwrap().to_owned();

    // One price rises, one unit sells.
    let raised = inventory.raise_price(index_of(&inventory, &listed[3]));
    let sold_at = index_of(&inventory, &listed[7]);
    let records = inventory.records();
    let sold_record = records[sold_at].clone();
    let sold = inventory.remove(sold_at);
    sync(&bridge).await;
    sync(&bridge).await; // a read that sees nothing new adds nothing
    let changed = events_after(&client, Some(&cursor)).await;
    assert_eq!(
        summary(&changed),
        vec![
            ("vehicle.updated".to_owned(), raised.clone()),
            ("vehicle.deleted".to_owned(), sold.clone()),
        ]
    );
    let update = &changed["items"][0];
    assert!(
        update["data"]["changed"]
            .as_array()
            .unwrap()
            .contains(&json!("price")),
        "{update}"
    );
    assert_eq!(update["change"], "updated");
    assert_eq!(update["resource"]["kind"], "vehicle");
    let uri = update["resource"]["uri"].as_str().unwrap();
    assert!(uri.starts_with("dms://dealerships/acme/vehicles/"), "{uri}");
    let after = search_all(&client).await;
    let new_price = after["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vin"] == raised.as_str())
        .unwrap()["price"]
        .clone();
    assert_eq!(update["data"]["price"], new_price);
    assert!(!vins_of(&after).contains(&sold));
    common::assert_sold(&client, "acme", &sold).await;

    // The deal falls through: the unit is back.
    let mut records = inventory.records();
    records.insert(sold_at, sold_record);
    inventory.replace(records);
    sync(&bridge).await;
    let next = changed["next_cursor"].as_str().unwrap();
    let back = events_after(&client, Some(next)).await;
    assert_eq!(
        summary(&back),
        vec![("vehicle.created".to_owned(), sold.clone())]
    );
    assert_eq!(back["has_more"], false);
    let sequences: Vec<u64> = changed["items"]
        .as_array()
        .unwrap()
        .iter()
        .chain(back["items"].as_array().unwrap())
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(sequences, vec![1, 2, 3], "gap-free per dealership");
}

#[tokio::test]
async fn a_truncated_read_is_held_back_until_reads_agree() {
    let (_server, inventory, bridge, client) = started(100, "1h").await;
    let full = search_all(&client).await;
    let total = full["total"].as_u64().unwrap();
    assert!(total > 20);
    let cursor = events_after(&client, None).await["next_cursor"]
        .as_str()
        .unwrap()
        .to_owned();

    // A vendor hiccup: only the first five records come back.
    let records = inventory.records();
    inventory.replace(records[..5].to_vec());
    sync(&bridge).await;
    sync(&bridge).await;
    assert_eq!(search_all(&client).await["total"], total, "held back");
    assert_eq!(
        events_after(&client, Some(&cursor)).await["items"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let ready: Value = common::http_get(format!("http://{}/readyz", bridge.addr))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        ready["inventory"][0]["held_back_removals"]
            .as_u64()
            .unwrap()
            > 0,
        "{ready}"
    );

    // The vendor recovers before a third read agrees: nothing was lost.
    inventory.replace(records.clone());
    sync(&bridge).await;
    assert_eq!(search_all(&client).await["total"], total);

    // A real clearance: three reads in a row agree (mirror.confirm_removals).
    inventory.replace(records[..5].to_vec());
    for _ in 0..3 {
        sync(&bridge).await;
    }
    let cleared = search_all(&client).await["total"].as_u64().unwrap();
    assert!(cleared < total && cleared <= 5, "{cleared}");
    let deleted = events_after(&client, Some(&cursor)).await;
    let deletions = summary(&deleted)
        .iter()
        .filter(|(t, _)| t == "vehicle.deleted")
        .count() as u64;
    assert_eq!(deletions, total - cleared);
}

#[tokio::test]
async fn a_failing_upstream_makes_answers_stale_and_readyz_says_so() {
    let (server, inventory) = upstream(100).await;
    let config = mirrored(&server.uri(), "1h", "[mirror]\nstale_after = \"3s\"\n");
    let bridge = common::with_config(&config).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    let fresh = search_all(&client).await;
    assert!(fresh.get("stale").is_none());
    inventory.fail(true);
    tokio::time::sleep(Duration::from_millis(3200)).await;
    assert!(try_sync(&bridge).await.is_err());
    let stale = search_all(&client).await;
    assert_eq!(stale["total"], fresh["total"], "the copy still answers");
    assert!(stale["stale"]["last_synced_at"].is_string(), "{stale}");
    assert!(
        stale["stale"]["message"]
            .as_str()
            .unwrap()
            .contains("may have changed")
    );
    let facets = ok(&call(
        &client,
        "inventory.facets",
        json!({ "dealership_id": "acme" }),
    )
    .await);
    assert!(facets["stale"].is_object());
    let ready: Value = common::http_get(format!("http://{}/readyz", bridge.addr))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready["inventory"][0]["stale"], true, "{ready}");
    assert_eq!(
        ready["inventory"][0]["last_error"], "unavailable",
        "{ready}"
    );

    inventory.fail(false);
    sync(&bridge).await;
    assert!(search_all(&client).await.get("stale").is_none());
}

/// Polls `events.list` from `cursor` until `wanted` events arrived.
async fn wait_events(client: &Client, cursor: Option<&str>, wanted: usize) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let page = events_after(client, cursor).await;
        if page["items"].as_array().unwrap().len() >= wanted {
            return page;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {page} after 20 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_killed_bridge_reports_changes_made_while_it_was_down_exactly_once() {
    let (server, inventory) = upstream(100).await;
    let dir = tempfile::tempdir().unwrap();
    let addr: SocketAddr = free_addr();
    let config = mirrored(&server.uri(), "1s", "")
        + &format!(
            "\n[server]\nlisten = \"{addr}\"\n\n[store]\nurl = \"sqlite://{}\"\n",
            dir.path().join("bridge.db").display()
        );
    let config_path = dir.path().join("bridge.toml");
    std::fs::write(&config_path, config).unwrap();
    let url = format!("http://{addr}/mcp");

    let mut bridge = start_bridge(&config_path, addr).await;
    let client = connect(&url, Some("acme-token")).await;
    let listed: Vec<String> = vins_of(&search_all(&client).await).into_iter().collect();
    let start = events_after(&client, None).await;
    let cursor = start["next_cursor"].as_str().unwrap().to_owned();
    let raised = inventory.raise_price(index_of(&inventory, &listed[0]));
    let seen = wait_events(&client, Some(&cursor), 1).await;
    assert_eq!(
        summary(&seen),
        vec![("vehicle.updated".to_owned(), raised.clone())]
    );

    bridge.start_kill().unwrap();
    bridge.wait().await.unwrap();
    let sold = inventory.remove(index_of(&inventory, &listed[1]));
    let _bridge = start_bridge(&config_path, addr).await;
    let client = connect(&url, Some("acme-token")).await;
    let all = wait_events(&client, Some(&cursor), 2).await;
    // One more interval: a restart must not report anything else.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let all_again = events_after(&client, Some(&cursor)).await;
    assert_eq!(
        all_again["items"], all["items"],
        "nothing more, nothing changed"
    );
    assert_eq!(
        summary(&all),
        vec![
            ("vehicle.updated".to_owned(), raised),
            ("vehicle.deleted".to_owned(), sold),
        ]
    );
    let ids: BTreeSet<&str> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        all["items"][0], seen["items"][0],
        "the same event, same content"
    );
}
