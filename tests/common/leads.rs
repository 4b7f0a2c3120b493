//! Lead helpers: valid `leads.create` arguments and a config whose `acme`
//! dealership delivers leads to an ADF HTTP intake.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use super::config::{BridgeConfig, Dealership, Token, Upstream, secret};
use super::{Client, call, ok};

/// A consent grant given a minute ago for `channels`.
pub fn consent(channels: &[&str]) -> Value {
    json!({
        "granted_at": (Utc::now() - chrono::Duration::minutes(1)).to_rfc3339_opts(SecondsFormat::Secs, true),
        "allowed_channels": channels,
        "consent_text": "I agree that the dealership may contact me about my request by the channels I picked.",
        "scope": ["lead_submission"],
        "source_agent": "test-agent"
    })
}

/// A valid lead from customer number `n` (a distinct e-mail per `n`).
pub fn lead(dealership: &str, n: usize) -> Value {
    json!({
        "dealership_id": dealership,
        "customer": {
            "first_name": "Dana",
            "last_name": format!("Whitfield{n}"),
            "email": format!("dana{n}@example.com"),
            "phone": "+15125550188",
            "preferred_contact": "email"
        },
        "consent": consent(&["email", "sms"]),
        "vehicle_of_interest": { "year": 2021, "make": "Honda", "model": "Civic", "condition": "used" },
        "message": "Is it still available?",
        "source_agent": "test-agent"
    })
}

/// [`leads_config`] with `acme`'s inventory routed to a CDK-shaped REST
/// upstream at `inventory` (`settings`: its timeout, resilience, …).
pub fn leads_with_inventory_config(intake: &str, inventory: &str, settings: &str) -> String {
    leads(intake)
        .edit_dealership("acme", |d| d.route("inventory", "cdk"))
        .upstream(
            "cdk",
            Upstream::cdk(inventory).unset("timeout").line(settings),
        )
        .render()
}

/// An ADF HTTP intake that accepts every lead.
pub async fn accepting_intake() -> wiremock::MockServer {
    let intake = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200))
        .mount(&intake)
        .await;
    intake
}

/// One dealership `acme` whose leads go to an ADF HTTP intake `crm` at
/// `intake`, with fast retries; a lead-writing token and a staff reader.
pub fn leads(intake: &str) -> BridgeConfig {
    BridgeConfig::new()
        .section(
            "leads",
            r#"delivery = { max_attempts = 5, base_delay = "50ms", max_delay = "400ms", lease = "8s", concurrency = 4 }"#,
        )
        .dealership(
            Dealership::acme()
                .set("phones", r#"[{ name = "sales", number = "+12175550100" }]"#)
                .set("hours", r#"[{ department = "sales", weekly = { monday = "09:00-18:00", tuesday = "09:00-18:00", wednesday = "09:00-18:00", thursday = "09:00-18:00", friday = "09:00-18:00" } }]"#)
                .route("leads", "crm"),
        )
        .upstream(
            "crm",
            Upstream::adf_http(intake)
                .set("token", secret("crm-token"))
                .set("hmac_secret", secret("crm-key"))
                // A CRM that answers is never cut off, however slow the
                // machine: a timed-out attempt would be one attempt and
                // event more than a test counts.
                .timeout("5s"),
        )
        .token(Token::new(
            "agent",
            "agent-token",
            &["acme"],
            &["amcp:leads:write", "amcp:leads:read"],
        ))
        // Dealership staff: reads every lead, not only its own.
        .token(Token::new(
            "reader",
            "reader-token",
            &["acme"],
            &["amcp:leads:read", "amcp:leads:staff"],
        ))
}

/// [`leads`] with `extra` appended (more upstreams, a `[store]`…).
pub fn leads_config(intake: &str, extra: &str) -> String {
    leads(intake).tail(extra).render()
}

/// Polls `leads.get` until the lead's delivery reaches `state` (or panics after `within`).
pub async fn wait_delivery(
    client: &Client,
    dealership: &str,
    lead_id: &str,
    state: &str,
    within: Duration,
) -> Value {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let view = ok(&call(
            client,
            "leads.get",
            json!({ "dealership_id": dealership, "lead_id": lead_id }),
        )
        .await);
        if view["delivery"]["state"] == state {
            return view;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "delivery of {lead_id} never reached {state}: {view}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The testkit's CRM intake for `acme` (token `crm-token`, signing key
/// `crm-key`) on loopback, failing every other request; its base URL.
pub async fn failing_crm() -> (String, dms_bridge_testkit::mock_crm::MockCrm) {
    let crm = dms_bridge_testkit::mock_crm::MockCrm::new(
        std::collections::BTreeMap::from([("acme".into(), "crm-token".into())]),
        Some("crm-key".into()),
    );
    crm.fail_every(2);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let router = crm.router();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (url, crm)
}
