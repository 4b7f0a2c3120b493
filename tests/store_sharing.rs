//! Two bridge processes on one store are one bridge to a caller: an
//! idempotency key taken by one is seen by the other, so twenty calls with one
//! key, split across both and sent at once, make one lead (or one booking in
//! the scheduler); a different request under the same key is refused by either.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::leads::{lead, leads_config};
use common::process::{free_addr, start_bridge};
use common::{Client, call, connect, err, ok};
use dms_bridge::cli::demo;
use dms_bridge_testkit::start_mocks;
use serde_json::{Value, json};
use tokio::process::Child;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const CALLS: usize = 20;

fn with_key(mut args: Value, key: &str) -> Value {
    args["idempotency_key"] = json!(key);
    args
}

/// Two processes serving `config(listen)` each, one after the other (the first
/// creates and migrates the store); their clients for `token`.
async fn two_replicas(
    dir: &Path,
    token: &str,
    config: impl Fn(std::net::SocketAddr) -> String,
) -> (Vec<Child>, Client, Client) {
    let mut processes = Vec::new();
    let mut clients = Vec::new();
    for replica in ["a", "b"] {
        let addr = free_addr();
        let path = dir.join(format!("bridge-{replica}.toml"));
        std::fs::write(&path, config(addr)).unwrap();
        processes.push(start_bridge(&path, addr).await);
        clients.push(connect(&format!("http://{addr}/mcp"), Some(token)).await);
    }
    let b = clients.pop().unwrap();
    let a = clients.pop().unwrap();
    (processes, a, b)
}

/// `CALLS` calls of `tool` with `args` at once, alternating between the replicas.
async fn race(a: &Client, b: &Client, tool: &str, args: &Value) -> Vec<Value> {
    let calls = (0..CALLS).map(|i| call(if i % 2 == 0 { a } else { b }, tool, args.clone()));
    futures::future::join_all(calls)
        .await
        .iter()
        .map(ok)
        .collect()
}

async fn count(db: &Path, table: &str) -> i64 {
    let store = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
        .fetch_one(&store)
        .await
        .unwrap()
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
    let store = format!("[store]\nurl = \"sqlite://{}\"\n", db.display());
    let (processes, a, b) = two_replicas(dir.path(), "agent-token", |addr| {
        leads_config(
            &crm.uri(),
            &format!("[server]\nlisten = \"{addr}\"\n\n{store}"),
        )
    })
    .await;

    let answers = race(
        &a,
        &b,
        "leads.create",
        &with_key(lead("acme", 7), "one-key"),
    )
    .await;

    let ids: BTreeSet<&str> = answers
        .iter()
        .map(|r| r["lead_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "one lead for one key: {ids:?}");
    let first = answers.iter().filter(|r| r["replayed"] != true).count();
    assert_eq!(first, 1, "one call made the lead, the others replayed it");
    assert_eq!(count(&db, "leads").await, 1);
    assert_eq!(
        count(&db, "lead_submissions").await,
        1,
        "replays are not submissions"
    );

    // The key is bound to its request on both processes.
    let other = with_key(lead("acme", 8), "one-key");
    for client in [&a, &b] {
        let refused = err(&call(client, "leads.create", other.clone()).await);
        assert_eq!(refused["code"], "leads.idempotency_conflict");
    }
    drop(processes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_store_book_once_per_key() {
    let cancel = CancellationToken::new();
    let mocks = start_mocks(std::time::Duration::ZERO, &cancel)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    let store = format!("url = \"sqlite://{}\"", db.display());
    let (_processes, a, b) = two_replicas(dir.path(), "demo-token-cdk", |addr| {
        demo::render(mocks.addresses(), addr).replace("url = \"sqlite::memory:\"", &store)
    })
    .await;
    let tomorrow = chrono::Utc::now().date_naive() + chrono::Duration::days(1);
    let until = tomorrow + chrono::Duration::days(6);
    let open = ok(&call(
        &a,
        "service.check_availability",
        json!({ "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
                "from": tomorrow.to_string(), "to": until.to_string() }),
    )
    .await);
    let start = open["items"][0]["start"].as_str().unwrap();
    let booking = json!({
        "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
        "start": start,
        "customer": { "first_name": "Dana", "last_name": "Whitfield", "email": "dana@example.com" },
        "consent": {
            "granted_at": (chrono::Utc::now() - chrono::Duration::minutes(1)).to_rfc3339(),
            "allowed_channels": ["email"],
            "consent_text": "Riverside may contact me about this appointment.",
            "scope": ["service_appointment"]
        },
        "idempotency_key": "book-once"
    });

    // Without one turn per key across processes, the second process would
    // book too and the scheduler would answer that the slot is taken.
    let answers = race(&a, &b, "service.book_appointment", &booking).await;

    let ids: BTreeSet<&str> = answers
        .iter()
        .map(|r| r["appointment_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "one appointment for one key: {ids:?}");
    assert!(answers.iter().all(|r| r["status"] == "booked"));
    let first = answers.iter().filter(|r| r["replayed"] != true).count();
    assert_eq!(first, 1, "one call booked, the others replayed it");
    assert_eq!(count(&db, "service_bookings").await, 1);
    cancel.cancel();
}
