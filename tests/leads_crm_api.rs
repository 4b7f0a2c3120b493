//! A CRM that answers back: leads submitted through Activix's REST API (the
//! testkit's Activix-shaped mock on loopback, a real HTTP server), the CRM's
//! id kept as the receipt, what became of each lead read back into
//! `leads.get` and `lead.status_changed` events; refusals and outages the
//! outbox handles as for ADF.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::config::{Upstream, secret};
use common::leads::{lead, leads, wait_delivery};
use common::{Client, call, connect, ok, with_config};
use dms_bridge_testkit::mock_activix::{API_KEY, MockActivix};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(15);

/// The mock on loopback; its base URL.
async fn serve(mock: &MockActivix) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let router = mock.router();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    url
}

/// `acme`'s leads go to Activix at `url` with `key`; statuses read every second.
fn config(url: &str, key: &str) -> String {
    leads("http://127.0.0.1:9/unused")
        .section("leads", r#"status_watch = "1s""#)
        .edit_upstream("crm", |_| {
            Upstream::rest("activix", url)
                .set("client_secret", secret(key))
                .timeout("5s")
        })
        .render()
}

/// Polls `leads.get` until the CRM's status is `status`.
async fn wait_status(client: &Client, lead_id: &str, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let view = ok(&call(
            client,
            "leads.get",
            json!({ "dealership_id": "acme", "lead_id": lead_id }),
        )
        .await);
        if view["crm_status"]["status"] == status {
            return view;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{lead_id} never reached CRM status {status}: {view}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn status_events(client: &Client) -> Vec<Value> {
    let page = ok(&call(client, "events.list", json!({ "dealership_id": "acme" })).await);
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "lead.status_changed")
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_lead_goes_to_the_crm_api_and_its_progress_comes_back_as_status_and_events() {
    let mock = MockActivix::new();
    let url = serve(&mock).await;
    let bridge = with_config(&config(&url, API_KEY)).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut args = lead("acme", 1);
    args["trade_in"] = json!({ "year": 2016, "make": "Mazda", "model": "CX-5" });
    let created = ok(&call(&client, "leads.create", args).await);
    assert_eq!(created["delivery"]["channel"], "crm_api");
    let lead_id = created["lead_id"].as_str().unwrap();

    let view = wait_delivery(&client, "acme", lead_id, "delivered", WAIT).await;
    let submitted = mock.submitted();
    assert_eq!(submitted.len(), 1);
    let crm_id = submitted[0].id;
    assert_eq!(view["delivery"]["receipt"], crm_id.to_string());
    // The body Activix documents, from the stored lead.
    let body = &submitted[0].body;
    assert_eq!(body["type"], "email");
    assert_eq!(body["first_name"], "Dana");
    assert_eq!(body["last_name"], "Whitfield1");
    assert_eq!(body["comment"], "Is it still available?");
    assert_eq!(
        body["emails"],
        json!([{ "type": "home", "address": "dana1@example.com" }])
    );
    assert_eq!(
        body["phones"],
        json!([{ "type": "mobile", "number": "+15125550188" }])
    );
    assert_eq!(
        body["vehicles"],
        json!([
            { "type": "wanted", "year": "2021", "make": "Honda", "model": "Civic" },
            { "type": "exchange", "year": "2016", "make": "Mazda", "model": "CX-5" }
        ])
    );

    // First answer: new, no event (a lead is new until the CRM says otherwise).
    let view = wait_status(&client, lead_id, "new").await;
    assert!(view["crm_status"]["since"].as_str().unwrap().contains('T'));
    assert!(status_events(&client).await.is_empty());

    assert!(mock.advance(crm_id));
    wait_status(&client, lead_id, "contacted").await;
    assert!(mock.advance(crm_id));
    wait_status(&client, lead_id, "appointment_set").await;
    assert!(mock.advance(crm_id));
    wait_status(&client, lead_id, "sold").await;

    let events = status_events(&client).await;
    let moves: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            assert_eq!(e["resource"]["id"], lead_id);
            (
                e["data"]["previous_status"].as_str().unwrap().to_owned(),
                e["data"]["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        moves,
        [
            ("new", "contacted"),
            ("contacted", "appointment_set"),
            ("appointment_set", "sold")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );

    // A sold lead is final: losing it at the CRM afterwards is never read.
    assert!(mock.lose(crm_id));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let view = ok(&call(
        &client,
        "leads.get",
        json!({ "dealership_id": "acme", "lead_id": lead_id }),
    )
    .await);
    assert_eq!(view["crm_status"]["status"], "sold");
    assert_eq!(status_events(&client).await.len(), 3);
}

#[tokio::test]
async fn a_lost_lead_is_reported_lost() {
    let mock = MockActivix::new();
    let url = serve(&mock).await;
    let bridge = with_config(&config(&url, API_KEY)).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let created = ok(&call(&client, "leads.create", lead("acme", 2)).await);
    let lead_id = created["lead_id"].as_str().unwrap();
    wait_delivery(&client, "acme", lead_id, "delivered", WAIT).await;
    let crm_id = mock.submitted()[0].id;
    assert!(mock.lose(crm_id));
    wait_status(&client, lead_id, "lost").await;
    let events = status_events(&client).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["previous_status"], "new");
}

#[tokio::test]
async fn a_wrong_api_key_is_retried_then_failed_and_nothing_reaches_the_crm() {
    let mock = MockActivix::new();
    let url = serve(&mock).await;
    let bridge = with_config(&config(&url, "not-the-key")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let created = ok(&call(&client, "leads.create", lead("acme", 3)).await);
    let lead_id = created["lead_id"].as_str().unwrap();
    // Refused credentials are retried (the operator may fix the key) up to
    // the config's five attempts, as for an ADF intake.
    let view = wait_delivery(&client, "acme", lead_id, "failed", WAIT).await;
    assert_eq!(view["delivery"]["attempts"], 5, "{view}");
    assert_eq!(view["delivery"]["last_error"], "unauthorized", "{view}");
    assert!(view.get("crm_status").is_none(), "{view}");
    assert!(mock.submitted().is_empty());
}

#[tokio::test]
async fn a_lead_the_crm_refuses_is_failed_not_retried() {
    let mock = MockActivix::new();
    let url = serve(&mock).await;
    // A profile that sends a lead type Activix does not have: 422.
    let dir = tempfile::tempdir().unwrap();
    let profile = dms_bridge::config::catalog::builtin_profile("activix")
        .unwrap()
        .replace(r#"type = "email""#, r#"type = "carrier_pigeon""#);
    std::fs::write(dir.path().join("activix.toml"), profile).unwrap();
    let config = config(&url, API_KEY).replace(
        r#"profile = "activix""#,
        &format!(
            "profile = {:?}",
            dir.path().join("activix.toml").display().to_string()
        ),
    );
    let bridge = with_config(&config).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let created = ok(&call(&client, "leads.create", lead("acme", 4)).await);
    let lead_id = created["lead_id"].as_str().unwrap();
    let view = wait_delivery(&client, "acme", lead_id, "failed", WAIT).await;
    assert_eq!(view["delivery"]["attempts"], 1, "{view}");
    assert_eq!(view["delivery"]["last_error"], "rejected", "{view}");
    assert!(mock.submitted().is_empty());
}

/// Answers each submission with the next CRM id, from 1.
struct NextId(std::sync::atomic::AtomicUsize);

impl wiremock::Respond for NextId {
    fn respond(&self, _: &wiremock::Request) -> wiremock::ResponseTemplate {
        let id = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        wiremock::ResponseTemplate::new(201).set_body_json(json!({ "data": { "id": id } }))
    }
}

/// The profile's rules against every lead state the fixtures hold (Activix's
/// documented fields): a sale beats everything, a closed status beats an
/// appointment, an appointment or a visit beats a call.
#[tokio::test]
async fn the_activix_rules_read_every_documented_lead_state() {
    use wiremock::matchers::{method, path};
    let expected = [
        ("lead-new.json", "new"),
        ("lead-contacted.json", "contacted"),
        ("lead-attempted.json", "contacted"),
        ("lead-appointment-set.json", "appointment_set"),
        ("lead-visited.json", "appointment_set"),
        ("lead-sold.json", "sold"),
        ("lead-lost.json", "lost"),
        ("lead-invalid.json", "lost"),
        ("lead-duplicate.json", "lost"),
    ];
    let crm = wiremock::MockServer::start().await;
    wiremock::Mock::given(method("POST"))
        .and(path("/v2/leads"))
        .respond_with(NextId(std::sync::atomic::AtomicUsize::new(0)))
        .mount(&crm)
        .await;
    for (i, (file, _)) in expected.iter().enumerate() {
        let body: Value =
            serde_json::from_str(&common::fixture(&format!("activix/{file}"))).unwrap();
        wiremock::Mock::given(method("GET"))
            .and(path(format!("/v2/leads/{}", i + 1)))
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(body))
            .mount(&crm)
            .await;
    }
    let bridge = with_config(&config(&crm.uri(), API_KEY)).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut leads = Vec::new();
    for n in 0..expected.len() {
        // One at a time, so the CRM's ids follow the fixtures' order.
        let created = ok(&call(&client, "leads.create", lead("acme", 10 + n)).await);
        let lead_id = created["lead_id"].as_str().unwrap().to_owned();
        let view = wait_delivery(&client, "acme", &lead_id, "delivered", WAIT).await;
        assert_eq!(view["delivery"]["receipt"], (n + 1).to_string());
        leads.push(lead_id);
    }
    for (lead_id, (file, status)) in leads.iter().zip(expected) {
        let view = wait_status(&client, lead_id, status).await;
        assert_eq!(view["crm_status"]["status"], status, "{file}");
    }
}
