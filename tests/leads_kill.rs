//! Nothing lost: the real binary takes a burst of leads while the CRM intake
//! fails every other request, is killed with SIGKILL in the middle of the
//! burst, and restarted on the same store. Every lead it accepted reaches the
//! CRM, none twice after the CRM's dedupe by ADF id, none that was not taken.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::leads::{failing_crm, lead, leads_config};
use common::process::{free_port, start_bridge};
use common::{Client, connect};
use rmcp::model::CallToolRequestParams;

const WORKERS: usize = 8;
const LEADS_PER_WORKER: usize = 25;
/// Accepted leads after which the bridge is killed.
const KILL_AFTER: usize = 60;

/// Sends leads `[from, from + count)` one after another; records the ids answered `received`.
async fn worker(client: Arc<Client>, from: usize, count: usize, accepted: Arc<Mutex<Vec<String>>>) {
    for n in from..from + count {
        let serde_json::Value::Object(args) = lead("acme", n) else {
            unreachable!()
        };
        let call =
            client.call_tool(CallToolRequestParams::new("leads.create").with_arguments(args));
        match call.await {
            Ok(result) => {
                // An answer is an acceptance: a refusal (a quota, say) would
                // end the burst early and pass for the kill.
                assert_ne!(
                    result.is_error,
                    Some(true),
                    "lead {n}: {:?}",
                    result.content
                );
                let content = result.structured_content.unwrap();
                assert_eq!(content["status"], "received");
                accepted
                    .lock()
                    .unwrap()
                    .push(content["lead_id"].as_str().unwrap().to_owned());
            }
            // The process died under the call: its outcome is unknown to the caller.
            Err(_) => return,
        }
    }
}

async fn open_store(db: &std::path::Path) -> sqlx::SqlitePool {
    sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap()
}

async fn pending_deliveries(store: &sqlx::SqlitePool) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM lead_deliveries WHERE state <> 'delivered'")
        .fetch_one(store)
        .await
        .unwrap()
}

async fn stored_lead_ids(store: &sqlx::SqlitePool) -> BTreeSet<String> {
    let ids: Vec<String> = sqlx::query_scalar("SELECT lead_id FROM leads")
        .fetch_all(store)
        .await
        .unwrap();
    ids.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_bridge_loses_no_accepted_lead_and_invents_none() {
    let (crm_url, crm) = failing_crm().await;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let config = leads_config(
        &format!("{crm_url}/adf/acme"),
        &format!(
            "[server]\nlisten = \"{addr}\"\n\n[store]\nurl = \"sqlite://{}\"\n",
            db.display()
        ),
    )
    .replace("max_attempts = 5", "max_attempts = 50");
    let config_path = dir.path().join("bridge.toml");
    std::fs::write(&config_path, config).unwrap();
    let url = format!("http://{addr}/mcp");

    // The burst, and SIGKILL once KILL_AFTER leads were accepted.
    let mut bridge = start_bridge(&config_path, addr).await;
    let client = Arc::new(connect(&url, Some("agent-token")).await);
    let accepted = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            tokio::spawn(worker(
                client.clone(),
                w * LEADS_PER_WORKER,
                LEADS_PER_WORKER,
                accepted.clone(),
            ))
        })
        .collect();
    tokio::time::timeout(Duration::from_secs(60), async {
        while accepted.lock().unwrap().len() < KILL_AFTER {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .expect("the burst got going");
    bridge.start_kill().unwrap();
    bridge.wait().await.unwrap();
    for w in workers {
        w.await.unwrap();
    }
    let accepted: BTreeSet<String> = accepted.lock().unwrap().iter().cloned().collect();
    let delivered_before_restart = crm.leads().len();
    assert!(
        accepted.len() < WORKERS * LEADS_PER_WORKER,
        "the kill came mid-burst"
    );

    // Restart on the same store: pending deliveries resume by themselves.
    let _bridge = start_bridge(&config_path, addr).await;
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let received: BTreeSet<String> = crm.leads().into_iter().map(|l| l.adf_id).collect();
            if accepted.is_subset(&received) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("every accepted lead reached the CRM after the restart");
    // Leads committed under calls the kill interrupted are delivered too, after
    // retries of their own (the CRM fails some requests): wait for all of them
    // rather than a fixed time, which a slow machine overran.
    let store = open_store(&db).await;
    tokio::time::timeout(Duration::from_secs(60), async {
        while pending_deliveries(&store).await > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("every stored lead was delivered after the restart");

    let received = crm.leads();
    let received_ids: BTreeSet<String> = received.iter().map(|l| l.adf_id.clone()).collect();
    assert_eq!(
        received_ids.len(),
        received.len(),
        "the CRM took a lead twice"
    );
    let stored = stored_lead_ids(&store).await;
    assert!(
        received_ids.is_subset(&stored),
        "the CRM got a lead the bridge never took"
    );
    assert_eq!(received_ids, stored, "a stored lead was not delivered");
    assert!(accepted.is_subset(&received_ids));
    assert!(
        crm.requests() > received.len(),
        "the CRM failed some requests"
    );

    // The event log survived the kill: sequences 1..=n with no gap or repeat,
    // exactly one lead.created per stored lead, and a delivered event for each.
    let events: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT sequence, event_type, resource_id FROM events WHERE dealership = 'acme' ORDER BY sequence",
    )
    .fetch_all(&store)
    .await
    .unwrap();
    let sequences: Vec<i64> = events.iter().map(|e| e.0).collect();
    assert_eq!(sequences, (1..=events.len() as i64).collect::<Vec<_>>());
    let of = |kind: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.1 == kind)
            .map(|e| e.2.clone())
            .collect()
    };
    let created = of("lead.created");
    assert_eq!(created.len(), stored.len(), "one lead.created per lead");
    assert_eq!(created.iter().cloned().collect::<BTreeSet<_>>(), stored);
    let updates: BTreeSet<String> = of("lead.delivery_updated").into_iter().collect();
    assert_eq!(updates, stored, "every lead's delivery has events");
    eprintln!(
        "kill test: {} accepted before SIGKILL, {} stored, {} delivered before the kill, {} requests, {} resends dropped as duplicates",
        accepted.len(),
        stored.len(),
        delivered_before_restart,
        crm.requests(),
        crm.duplicates()
    );
}
