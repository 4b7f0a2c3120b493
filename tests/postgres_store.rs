//! The store on PostgreSQL, always (whatever DMS_BRIDGE_TEST_STORE says):
//! a throwaway cluster (tests/common/postgres.rs) and a real MCP client
//! against the running bridge. Leads and their events, idempotent retries,
//! bookings cancelled by their owner only, events paged from a cursor, and a
//! bridge restarted on the same database that keeps all of it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::leads::{accepting_intake, lead, leads, wait_delivery};
use common::service::{booking, cancel, open_starts};
use common::{Client, call, connect, err, ok, postgres};
use serde_json::{Value, json};

/// Signs cursors, so one from before a restart still reads after it.
const CURSOR_SECRET: &str = r#"cursor_secret = { value = "postgres-store-test-cursor-secret" }"#;

/// A leads config (dealership `acme`, CRM intake at `intake`) on the store at `url`.
fn leads_on(intake: &str, url: &str) -> String {
    leads(intake)
        .section("server", CURSOR_SECRET)
        .tail(&format!("[store]\nurl = \"{url}\"\n"))
        .render()
}

async fn create(client: &Client, args: Value) -> Value {
    ok(&call(client, "leads.create", args).await)
}

async fn events(client: &Client, args: Value) -> Value {
    let mut args = args;
    args["dealership_id"] = json!("acme");
    ok(&call(client, "events.list", args).await)
}

/// Pages through `acme`'s events from `cursor`, `limit` at a time: the
/// sequences seen and the cursor after the last page.
async fn page_through(
    client: &Client,
    mut cursor: Option<String>,
    limit: u32,
) -> (Vec<u64>, String) {
    let mut sequences = Vec::new();
    for _ in 0..20 {
        let mut args = json!({ "limit": limit });
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = events(client, args).await;
        sequences.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["sequence"].as_u64().unwrap()),
        );
        cursor = Some(page["next_cursor"].as_str().unwrap().to_owned());
        if page["has_more"] == false {
            return (sequences, cursor.unwrap());
        }
    }
    panic!("more than 20 pages");
}

#[tokio::test]
async fn leads_events_and_cursors_live_in_postgres_and_survive_a_restart() {
    let intake = accepting_intake().await;
    let url = postgres::fresh_database().await;
    let config = leads_on(&intake.uri(), &url);
    let bridge = common::with_config(&config).await;
    let agent = connect(&bridge.url, Some("agent-token")).await;
    let staff = connect(&bridge.url, Some("reader-token")).await;

    // A lead, then the same request retried with its key: one lead, replayed.
    let mut first = lead("acme", 1);
    first["idempotency_key"] = json!("pg-key-1");
    let made = create(&agent, first.clone()).await;
    assert_eq!(made["status"], "received");
    let lead_id = made["lead_id"].as_str().unwrap().to_owned();
    let again = create(&agent, first.clone()).await;
    assert_eq!(again["lead_id"], made["lead_id"]);
    assert_eq!(again["replayed"], true);
    let mut changed = first.clone();
    changed["message"] = json!("Another question");
    let conflict = err(&call(&agent, "leads.create", changed).await);
    assert_eq!(conflict["code"], "leads.idempotency_conflict", "{conflict}");

    // More leads, each delivered: a lead.created and a lead.delivery_updated each.
    for n in 2..=4 {
        create(&agent, lead("acme", n)).await;
    }
    let listed = ok(&call(
        &staff,
        "leads.list",
        json!({ "dealership_id": "acme", "limit": 10 }),
    )
    .await);
    let ids: Vec<String> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["lead_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 4, "{listed}");
    for id in &ids {
        wait_delivery(&agent, "acme", id, "delivered", Duration::from_secs(10)).await;
    }

    // Paged from the start, three at a time: gap-free sequences 1..=8.
    let (sequences, cursor) = page_through(&staff, None, 3).await;
    assert_eq!(sequences, (1..=8).collect::<Vec<u64>>());
    drop((agent, staff));
    drop(bridge);
    tokio::time::sleep(Duration::from_millis(300)).await;

    // The same database after a restart: the lead, its replay, and the cursor.
    let bridge = common::with_config(&config).await;
    let agent = connect(&bridge.url, Some("agent-token")).await;
    let staff = connect(&bridge.url, Some("reader-token")).await;
    let kept = ok(&call(
        &agent,
        "leads.get",
        json!({ "dealership_id": "acme", "lead_id": lead_id }),
    )
    .await);
    assert_eq!(kept["delivery"]["state"], "delivered", "{kept}");
    let replayed = create(&agent, first).await;
    assert_eq!(replayed["lead_id"].as_str(), Some(lead_id.as_str()));
    let idle = events(&staff, json!({ "cursor": cursor })).await;
    assert_eq!(idle["items"], json!([]), "nothing new after the cursor");
    let late = create(&agent, lead("acme", 9)).await;
    let late_id = late["lead_id"].as_str().unwrap();
    wait_delivery(
        &agent,
        "acme",
        late_id,
        "delivered",
        Duration::from_secs(10),
    )
    .await;
    let (after, _) = page_through(&staff, Some(cursor), 1).await;
    assert_eq!(after, vec![9, 10], "the sequence goes on where it stopped");
}

#[tokio::test]
async fn concurrent_leads_get_gap_free_sequences_and_one_lead_per_customer() {
    let intake = accepting_intake().await;
    let url = postgres::fresh_database().await;
    let bridge = common::with_config(&leads_on(&intake.uri(), &url)).await;
    let agent = connect(&bridge.url, Some("agent-token")).await;
    let staff = connect(&bridge.url, Some("reader-token")).await;
    // Twelve submissions at once, every customer twice: six leads, six duplicates.
    let answers =
        futures::future::join_all((0..12).map(|n| create(&agent, lead("acme", 100 + n % 6)))).await;
    let received = answers.iter().filter(|a| a["status"] == "received").count();
    let duplicates = answers
        .iter()
        .filter(|a| a["status"] == "duplicate")
        .count();
    assert_eq!((received, duplicates), (6, 6), "{answers:?}");
    let (sequences, _) = page_through(&staff, None, 100).await;
    let created: Vec<u64> = sequences.iter().copied().take(6).collect();
    assert_eq!(created, (1..=6).collect::<Vec<u64>>());
    let mut sorted = sequences.clone();
    sorted.dedup();
    assert_eq!(sorted, (1..=sequences.len() as u64).collect::<Vec<u64>>());
}

#[tokio::test]
async fn a_booking_is_cancelled_by_its_owner_only() {
    let url = postgres::fresh_database().await;
    let bridge = common::demo_edited(|toml| {
        toml.replace("url = \"sqlite::memory:\"", &format!("url = \"{url}\""))
    })
    .await;
    let group = connect(&bridge.url, Some("demo-token-group")).await;
    let cdk = connect(&bridge.url, Some("demo-token-cdk")).await;
    let start = open_starts(&group).await[0].clone();
    let booked = ok(&call(&group, "service.book_appointment", booking(&start)).await);
    let id = booked["appointment_id"].as_str().unwrap().to_owned();
    let foreign = err(&call(&cdk, "service.cancel_appointment", cancel(&id)).await);
    assert_eq!(foreign["code"], "service.appointment_not_found");
    assert!(!open_starts(&cdk).await.contains(&start), "still booked");
    let done = ok(&call(&group, "service.cancel_appointment", cancel(&id)).await);
    assert_eq!(done["status"], "cancelled");
    assert!(open_starts(&group).await.contains(&start));

    let list = json!({ "dealership_id": "demo-cdk", "types": ["appointment.booked", "appointment.cancelled"] });
    let seen = ok(&call(&group, "events.list", list.clone()).await);
    let types: Vec<&str> = seen["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["appointment.booked", "appointment.cancelled"]);
    let theirs = ok(&call(&cdk, "events.list", list).await);
    assert_eq!(theirs["items"], json!([]), "another agent sees none of it");
}
