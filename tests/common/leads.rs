//! Lead helpers: valid `leads.create` arguments and a config whose `acme`
//! dealership delivers leads to an ADF HTTP intake.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

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
    let cdk = format!(
        r#"
[upstreams.cdk]
kind = "rest"
profile = "cdk-fortellis"
base_url = "{inventory}/cdk"
token_url = "{inventory}/oauth2/token"
client_id = {{ value = "id" }}
client_secret = {{ value = "secret" }}
vars = {{ subscription_id = "sub-123" }}
{settings}
"#
    );
    leads_config(intake, &cdk).replace(
        "routes = { leads = \"crm\" }",
        "routes = { leads = \"crm\", inventory = \"cdk\" }",
    )
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

/// One dealership `acme` whose leads go to an ADF HTTP intake at `intake`, with
/// fast retries; `extra` is appended (more upstreams, a `[store]`…).
pub fn leads_config(intake: &str, extra: &str) -> String {
    format!(
        r#"
[rate_limits]
per_class = {{ write = {{ requests = 100000, per = "1m", burst = 1000 }} }}

[leads]
delivery = {{ max_attempts = 5, base_delay = "50ms", max_delay = "400ms", lease = "3s", concurrency = 4 }}

[[dealerships]]
id = "acme"
name = "Acme Motors"
timezone = "America/Chicago"
address = {{ line1 = "1 Main St", city = "Springfield", region = "IL", postal_code = "62701", country = "US" }}
phones = [{{ name = "sales", number = "+12175550100" }}]
hours = [{{ department = "sales", weekly = {{ monday = "09:00-18:00", tuesday = "09:00-18:00", wednesday = "09:00-18:00", thursday = "09:00-18:00", friday = "09:00-18:00" }} }}]
routes = {{ leads = "crm" }}

[upstreams.crm]
kind = "adf_http"
url = "{intake}"
token = {{ value = "crm-token" }}
hmac_secret = {{ value = "crm-key" }}
timeout = "1s"

[[tokens]]
name = "agent"
secret = {{ value = "agent-token" }}
dealerships = ["acme"]
scopes = ["amcp:leads:write", "amcp:leads:read"]

[[tokens]]
name = "reader"
secret = {{ value = "reader-token" }}
dealerships = ["acme"]
# Dealership staff: reads every lead, not only its own.
scopes = ["amcp:leads:read", "amcp:leads:staff"]
{extra}
"#
    )
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
