//! Retries and repeats: an idempotency key replays the original answer, a key
//! reused with another payload is refused, an equivalent lead inside the
//! duplicate window is recognised, and the CRM gets each lead once, even when
//! the calls race.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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
    assert_eq!(
        error["details"]["aap_code"], "IDEMPOTENCY_CONFLICT",
        "{error}"
    );
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

/// Two agents send the same customer within the duplicate window (issue 27:
/// the second used to get `duplicate` with the first's `lead_id`, became an
/// owner of it and could read it, and the answer alone told that the e-mail
/// had a lead). Now the CRM gets the customer once, the second agent gets a
/// lead of its own and learns nothing of the first, and staff see both, linked.
#[tokio::test]
async fn a_customer_another_agent_sent_is_merged_and_tells_nothing_of_that_lead() {
    let server = intake().await;
    let toml = leads(&server.uri())
        .token(common::config::Token::new(
            "agent-2",
            "agent-2-token",
            &["acme"],
            &["amcp:leads:write", "amcp:leads:read"],
        ))
        .render();
    let bridge = with_config(&toml).await;
    let first_agent = connect(&bridge.url, Some("agent-token")).await;
    let second_agent = connect(&bridge.url, Some("agent-2-token")).await;
    let staff = connect(&bridge.url, Some("reader-token")).await;

    let first = ok(&call(&first_agent, "leads.create", lead("acme", 1)).await);
    let first_id = first["lead_id"].as_str().unwrap().to_owned();
    // Only the customer's e-mail and the same year/make/model, as the audit sent.
    let mut same_customer = lead("acme", 1);
    same_customer["customer"]["last_name"] = json!("W");
    same_customer["customer"]
        .as_object_mut()
        .unwrap()
        .remove("phone");
    same_customer["message"] = json!("Looking for a Civic");
    same_customer["source_agent"] = json!("other-agent");
    let answer = call(&second_agent, "leads.create", same_customer.clone()).await;
    let second = ok(&answer);
    let second_id = second["lead_id"].as_str().unwrap().to_owned();
    assert_eq!(second["status"], "received", "{second}");
    assert_ne!(second_id, first_id);
    let whole = serde_json::to_string(&answer).unwrap();
    assert!(!whole.contains(&first_id), "{whole}");
    assert!(!whole.contains("already"), "{whole}");

    // The second agent reaches its own lead only; the first one is unknown to it.
    let code = |result: &rmcp::model::CallToolResult| err(result)["code"].clone();
    let theirs = call(
        &second_agent,
        "leads.get",
        json!({ "dealership_id": "acme", "lead_id": first_id }),
    )
    .await;
    assert_eq!(code(&theirs), "leads.lead_not_found");
    let own = wait_delivery(&second_agent, "acme", &second_id, "delivered", PATIENCE).await;
    assert_eq!(own["source_agent"], "other-agent");
    assert_eq!(own["submissions"], 1);
    assert!(own.get("merged_into").is_none(), "{own}");
    assert!(own["delivery"].get("receipt").is_none(), "{own}");
    assert!(
        own["delivery"]["delivered_at"].as_str().unwrap() >= own["created_at"].as_str().unwrap(),
        "{own}"
    );
    let listed = ok(&call(
        &second_agent,
        "leads.list",
        json!({ "dealership_id": "acme" }),
    )
    .await);
    let ids: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["lead_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [second_id.as_str()]);
    // Nor does the first agent learn of the second.
    let mine = wait_delivery(&first_agent, "acme", &first_id, "delivered", PATIENCE).await;
    assert_eq!(mine["submissions"], 1, "{mine}");

    // Staff see both, linked; the CRM got the customer once.
    let carried = ok(&call(
        &staff,
        "leads.get",
        json!({ "dealership_id": "acme", "lead_id": second_id }),
    )
    .await);
    assert_eq!(carried["merged_into"], first_id.as_str());
    let carrying = ok(&call(
        &staff,
        "leads.get",
        json!({ "dealership_id": "acme", "lead_id": first_id }),
    )
    .await);
    assert_eq!(carrying["submissions"], 2);
    assert_eq!(posts(&server).await, 1);

    // Each agent sending again meets its own lead, as before.
    let again = ok(&call(&second_agent, "leads.create", same_customer).await);
    assert_eq!(
        (&again["status"], &again["lead_id"]),
        (&json!("duplicate"), &json!(second_id))
    );
    let again = ok(&call(&first_agent, "leads.create", lead("acme", 1)).await);
    assert_eq!(
        (&again["status"], &again["lead_id"]),
        (&json!("duplicate"), &json!(first_id))
    );
    assert_eq!(posts(&server).await, 1);
}

const PATIENCE: Duration = Duration::from_secs(30);
