//! Two bridge processes on one store are one bridge to a caller: an
//! idempotency key taken by one is seen by the other, so twenty calls with one
//! key, split across both and sent at once, make one lead and one CRM
//! delivery; a different lead under the same key is refused by either.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;

use common::leads::{lead, leads_config};
use common::process::{free_addr, start_bridge};
use common::{call, connect, err, ok};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const CALLS: usize = 20;

fn with_key(mut args: Value, key: &str) -> Value {
    args["idempotency_key"] = json!(key);
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_store_make_one_lead_per_key() {
    let crm = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&crm)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    let mut urls = Vec::new();
    let mut processes = Vec::new();
    for replica in ["a", "b"] {
        let addr = free_addr();
        let config = leads_config(
            &crm.uri(),
            &format!(
                "[server]\nlisten = \"{addr}\"\n\n[store]\nurl = \"sqlite://{}\"\n",
                db.display()
            ),
        );
        let path = dir.path().join(format!("bridge-{replica}.toml"));
        std::fs::write(&path, config).unwrap();
        // One after the other: the first creates and migrates the store.
        processes.push(start_bridge(&path, addr).await);
        urls.push(format!("http://{addr}/mcp"));
    }
    let a = connect(&urls[0], Some("agent-token")).await;
    let b = connect(&urls[1], Some("agent-token")).await;
    let args = with_key(lead("acme", 7), "one-key");

    let calls = (0..CALLS).map(|i| {
        let client = if i % 2 == 0 { &a } else { &b };
        call(client, "leads.create", args.clone())
    });
    let answers: Vec<Value> = futures::future::join_all(calls)
        .await
        .iter()
        .map(ok)
        .collect();

    let ids: BTreeSet<&str> = answers
        .iter()
        .map(|r| r["lead_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "one lead for one key: {ids:?}");
    let first = answers.iter().filter(|r| r["replayed"] != true).count();
    assert_eq!(first, 1, "one call made the lead, the others replayed it");
    let store = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let leads: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM leads")
        .fetch_one(&store)
        .await
        .unwrap();
    assert_eq!(leads, 1);
    let submissions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM lead_submissions")
        .fetch_one(&store)
        .await
        .unwrap();
    assert_eq!(submissions, 1, "replays are not submissions");

    // The key is bound to its request on both processes.
    let other = with_key(lead("acme", 8), "one-key");
    for client in [&a, &b] {
        let refused = err(&call(client, "leads.create", other.clone()).await);
        assert_eq!(refused["code"], "leads.idempotency_conflict");
    }
    drop(processes);
}
