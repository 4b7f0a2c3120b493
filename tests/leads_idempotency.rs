//! Retries and repeats: an idempotency key replays the original answer, a key
//! reused with another payload is refused, an equivalent lead inside the
//! duplicate window is recognised, and the CRM gets each lead once, even when
//! the calls race.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::leads::{lead, leads, leads_config, wait_delivery};
use common::{call, connect, err, metrics_text, ok, with_config};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn intake() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({ "success": true, "leadId": "crm-1" })),
        )
        .mount(&server)
        .await;
    server
}

async fn posts(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

#[tokio::test]
async fn the_same_key_and_payload_replay_the_original_answer() {
    let server = intake().await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut args = lead("acme", 1);
    args["idempotency_key"] = json!("key-1");
    let first = ok(&call(&client, "leads.create", args.clone()).await);
    wait_delivery(
        &client,
        "acme",
        first["lead_id"].as_str().unwrap(),
        "delivered",
        Duration::from_secs(5),
    )
    .await;
    let again = ok(&call(&client, "leads.create", args).await);
    assert_eq!(again["lead_id"], first["lead_id"]);
    assert_eq!(again["status"], "received");
    assert_eq!(again["replayed"], true);
    // The replay tells where delivery stands now.
    assert_eq!(again["delivery"]["state"], "delivered");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(posts(&server).await, 1);
    let metrics = metrics_text(&bridge).await;
    assert!(
        metrics.contains("dms_bridge_leads_total{status=\"received\"} 1")
            && metrics.contains("dms_bridge_leads_total{status=\"replayed\"} 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn the_same_key_with_another_payload_is_a_conflict_and_sends_nothing() {
    let server = intake().await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut args = lead("acme", 1);
    args["idempotency_key"] = json!("key-2");
    let first = ok(&call(&client, "leads.create", args.clone()).await);
    args["message"] = json!("Actually, a different question");
    let error = err(&call(&client, "leads.create", args).await);
    assert_eq!(error["code"], "leads.idempotency_conflict");
    assert_eq!(error["retryable"], false);
    wait_delivery(
        &client,
        "acme",
        first["lead_id"].as_str().unwrap(),
        "delivered",
        Duration::from_secs(5),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(posts(&server).await, 1);
    let listed = ok(&call(&client, "leads.list", json!({ "dealership_id": "acme" })).await);
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn concurrent_calls_with_one_key_make_one_lead() {
    let server = intake().await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut args = lead("acme", 1);
    args["idempotency_key"] = json!("key-race");
    let calls = (0..20).map(|_| call(&client, "leads.create", args.clone()));
    let answers = futures::future::join_all(calls).await;
    let ids: std::collections::BTreeSet<String> = answers
        .iter()
        .map(|a| ok(a)["lead_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let replays = answers.iter().filter(|a| ok(a)["replayed"] == true).count();
    assert_eq!(replays, 19);
    let id = ids.into_iter().next().unwrap();
    wait_delivery(&client, "acme", &id, "delivered", Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(posts(&server).await, 1);
}

#[tokio::test]
async fn an_equivalent_lead_within_the_window_is_a_duplicate_and_not_sent_again() {
    let server = intake().await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let first = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    // Same customer (e-mail case differs) and vehicle, another message: equivalent.
    let mut again = lead("acme", 1);
    again["customer"]["email"] = json!("DANA1@Example.com");
    again["message"] = json!("Any news?");
    let second = ok(&call(&client, "leads.create", again).await);
    assert_eq!(second["status"], "duplicate");
    assert_eq!(second["lead_id"], first["lead_id"]);
    // Another vehicle is another lead.
    let mut other = lead("acme", 1);
    other["vehicle_of_interest"]["model"] = json!("Accord");
    let third = ok(&call(&client, "leads.create", other).await);
    assert_eq!(third["status"], "received");
    assert_ne!(third["lead_id"], first["lead_id"]);

    let view = wait_delivery(
        &client,
        "acme",
        first["lead_id"].as_str().unwrap(),
        "delivered",
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(view["submissions"], 2);
    wait_delivery(
        &client,
        "acme",
        third["lead_id"].as_str().unwrap(),
        "delivered",
        Duration::from_secs(5),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(posts(&server).await, 2);
}

#[tokio::test]
async fn concurrent_equivalent_leads_make_one_lead() {
    let server = intake().await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let calls = (0..10).map(|_| call(&client, "leads.create", lead("acme", 7)));
    let answers = futures::future::join_all(calls).await;
    let received = answers
        .iter()
        .filter(|a| ok(a)["status"] == "received")
        .count();
    assert_eq!(received, 1);
    let ids: std::collections::BTreeSet<&str> = answers
        .iter()
        .map(|a| {
            a.structured_content.as_ref().unwrap()["lead_id"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(ids.len(), 1);
}

#[tokio::test]
async fn a_short_duplicate_window_lets_the_same_lead_through_again() {
    let server = intake().await;
    let config = leads(&server.uri())
        .section("leads", r#"duplicate_window = "200ms""#)
        .render();
    let bridge = with_config(&config).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let first = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let second = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    assert_eq!(second["status"], "received");
    assert_ne!(second["lead_id"], first["lead_id"]);
}

#[tokio::test]
async fn every_submission_keeps_its_full_consent_grant_as_sent() {
    let server = intake().await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let first = lead("acme", 1);
    let mut duplicate = lead("acme", 1);
    duplicate["consent"]["consent_text"] =
        json!("A second, different disclosure the customer saw.");
    duplicate["consent"]["expires_at"] = json!("2099-01-01T00:00:00Z");
    let a = ok(&call(&client, "leads.create", first.clone()).await);
    let b = ok(&call(&client, "leads.create", duplicate.clone()).await);
    assert_eq!(b["status"], "duplicate");
    assert_eq!(a["lead_id"], b["lead_id"]);

    let pool = bridge.gateway.store().pool();
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT consent FROM lead_submissions WHERE lead_id = $1 ORDER BY received_at",
    )
    .bind(a["lead_id"].as_str().unwrap())
    .fetch_all(pool)
    .await
    .unwrap();
    let stored: Vec<serde_json::Value> = stored
        .iter()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect();
    assert_eq!(
        stored,
        [first["consent"].clone(), duplicate["consent"].clone()]
    );
}
