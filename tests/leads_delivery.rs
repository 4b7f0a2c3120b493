//! Delivery to the CRM: the HTTP request a CRM intake sees (token, signature,
//! ADF body, trace context), retries that resend with the same ADF <id>,
//! terminal failures recorded and visible, and e-mail delivery over real SMTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::config::{Upstream, quoted};
use common::leads::{lead, leads, leads_config, leads_with_inventory_config, wait_delivery};
use common::{assert_in_zone, call, connect, ok, with_config};
use dms_bridge::adf::{self, ProspectStatus};
use dms_bridge_testkit::mock_smtp::MockSmtp;
use hmac::{Hmac, Mac};
use serde_json::json;
use sha2::Sha256;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const WAIT: Duration = Duration::from_secs(10);

fn reply(status: u16) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({ "success": status < 300, "leadId": "crm-7" }))
}

fn prospect(request: &Request) -> adf::AdfLead {
    adf::parse(&request.body).unwrap().remove(0)
}

#[tokio::test]
async fn the_intake_gets_the_adf_body_with_token_signature_and_trace() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/adf/acme"))
        .and(query_param("token", "crm-token"))
        .respond_with(reply(200))
        .expect(1)
        .mount(&server)
        .await;
    let bridge = with_config(&leads_config(&format!("{}/adf/acme", server.uri()), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let answer = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let lead_id = answer["lead_id"].as_str().unwrap();
    let view = wait_delivery(&client, "acme", lead_id, "delivered", WAIT).await;
    assert_eq!(view["delivery"]["receipt"], "crm-7");
    assert_eq!(view["delivery"]["attempts"], 1);

    let requests = server.received_requests().await.unwrap();
    let request = &requests[0];
    assert_eq!(
        request.headers["content-type"],
        "application/xml; charset=utf-8"
    );
    let mut mac = Hmac::<Sha256>::new_from_slice(b"crm-key").unwrap();
    mac.update(&request.body);
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(request.headers["x-adf-signature"], expected.as_str());
    assert!(request.headers.contains_key("traceparent"));
    let doc = prospect(request);
    assert_eq!(doc.status, ProspectStatus::New);
    assert_eq!(doc.ids[0].value, lead_id);
    assert_eq!(doc.ids[0].source.as_deref(), Some("dms-bridge"));
    assert_eq!(doc.vendor.name, "Acme Motors");
}

#[tokio::test]
async fn a_failed_attempt_is_retried_as_a_resend_with_the_same_id() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply(503))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(reply(200))
        .mount(&server)
        .await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let answer = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let lead_id = answer["lead_id"].as_str().unwrap();
    let view = wait_delivery(&client, "acme", lead_id, "delivered", WAIT).await;
    assert_eq!(view["delivery"]["attempts"], 3);
    assert!(view["delivery"].get("last_error").is_none());

    let docs: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(prospect)
        .collect();
    let statuses: Vec<_> = docs.iter().map(|d| d.status).collect();
    assert_eq!(
        statuses,
        [
            ProspectStatus::New,
            ProspectStatus::Resend,
            ProspectStatus::Resend
        ]
    );
    assert!(docs.iter().all(|d| d.ids[0].value == lead_id));
    // Apart from the status, a resend is the same document.
    let mut first = docs[0].clone();
    first.status = ProspectStatus::Resend;
    assert_eq!(first, docs[2]);
}

#[tokio::test]
async fn a_refused_document_fails_for_good_and_shows_in_the_lead() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply(400))
        .mount(&server)
        .await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let answer = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let lead_id = answer["lead_id"].as_str().unwrap();
    let view = wait_delivery(&client, "acme", lead_id, "failed", WAIT).await;
    assert_eq!(view["delivery"]["attempts"], 1);
    assert_eq!(view["delivery"]["last_error"], "rejected");
    assert!(view["delivery"].get("next_attempt_at").is_none());
    // acme's offset (America/Chicago), not the store's UTC.
    assert_in_zone(&view["created_at"], chrono_tz::America::Chicago);
    assert_in_zone(
        &view["delivery"]["last_attempt_at"],
        chrono_tz::America::Chicago,
    );
    let failed = ok(&call(
        &client,
        "leads.list",
        json!({ "dealership_id": "acme", "delivery_state": ["failed"] }),
    )
    .await);
    assert_eq!(failed["items"][0]["lead_id"], lead_id);
}

#[tokio::test]
async fn an_unreachable_intake_is_tried_max_attempts_times() {
    // Nothing listens on port 1.
    let bridge = with_config(&leads_config("http://127.0.0.1:1/adf", "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let answer = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let view = wait_delivery(
        &client,
        "acme",
        answer["lead_id"].as_str().unwrap(),
        "failed",
        WAIT,
    )
    .await;
    assert_eq!(view["delivery"]["attempts"], 5);
    assert_eq!(view["delivery"]["last_error"], "unavailable");
}

#[tokio::test]
async fn a_conflict_reply_means_the_crm_already_has_the_lead() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(409))
        .mount(&server)
        .await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let answer = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let view = wait_delivery(
        &client,
        "acme",
        answer["lead_id"].as_str().unwrap(),
        "delivered",
        WAIT,
    )
    .await;
    assert_eq!(view["delivery"]["attempts"], 1);
}

/// `acme` delivering by e-mail to `smtp` instead of HTTP.
fn email_config(smtp: &MockSmtp) -> String {
    let mail = Upstream::new("adf_email")
        .set("smtp_host", quoted("127.0.0.1"))
        .set("smtp_port", smtp.addr().port().to_string())
        .set("tls", quoted("none"))
        .set("from", quoted("leads@bridge.example"))
        .set("to", r#"["adf@crm.example", "backup@crm.example"]"#)
        .timeout("1s");
    leads("http://127.0.0.1:1")
        .edit_dealership("acme", |d| d.route("leads", "mail"))
        .upstream("mail", mail)
        .render()
}

#[tokio::test]
async fn a_transient_smtp_reply_is_retried_and_the_resend_arrives() {
    let smtp = MockSmtp::start(0).await.unwrap();
    smtp.fail_next(1);
    let bridge = with_config(&email_config(&smtp)).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let answer = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let lead_id = answer["lead_id"].as_str().unwrap();
    let view = wait_delivery(&client, "acme", lead_id, "delivered", WAIT).await;
    assert_eq!(view["delivery"]["attempts"], 2);
    let mails = smtp.messages();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].rcpt_to, ["adf@crm.example", "backup@crm.example"]);
    assert_eq!(mails[0].mail_from, "leads@bridge.example");
    let doc = adf::parse(mails[0].body.as_bytes()).unwrap().remove(0);
    assert_eq!(doc.status, ProspectStatus::Resend);
    assert_eq!(doc.ids[0].value, lead_id);
}

#[tokio::test]
async fn a_permanent_smtp_refusal_fails_for_good() {
    let smtp = MockSmtp::start(0).await.unwrap();
    smtp.reject_next(1);
    let bridge = with_config(&email_config(&smtp)).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let answer = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let view = wait_delivery(
        &client,
        "acme",
        answer["lead_id"].as_str().unwrap(),
        "failed",
        WAIT,
    )
    .await;
    assert_eq!(view["delivery"]["last_error"], "rejected");
    assert_eq!(view["delivery"]["attempts"], 1);
    assert!(smtp.messages().is_empty());
}

#[tokio::test]
async fn delivery_outcomes_are_counted_in_metrics() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply(503))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(reply(200))
        .mount(&server)
        .await;
    let bridge = with_config(&leads_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let answer = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    wait_delivery(
        &client,
        "acme",
        answer["lead_id"].as_str().unwrap(),
        "delivered",
        WAIT,
    )
    .await;
    let metrics = common::metrics_text(&bridge).await;
    assert!(
        metrics.contains("dms_bridge_leads_total{status=\"received\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "dms_bridge_lead_delivery_attempts_total{upstream=\"crm\",outcome=\"delivered\"} 1"
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "dms_bridge_lead_delivery_attempts_total{upstream=\"crm\",outcome=\"unavailable\"} 1"
        ),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_slow_inventory_does_not_hold_a_lead_back() {
    let intake = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply(200))
        .mount(&intake)
        .await;
    let inventory = MockServer::start().await;
    common::mount_token(&inventory).await;
    Mock::given(method("GET"))
        .and(path(common::INVENTORY_PATH))
        .respond_with(common::inventory_ok().set_delay(Duration::from_secs(8)))
        .mount(&inventory)
        .await;
    let config = leads_with_inventory_config(&intake.uri(), &inventory.uri(), r#"timeout = "10s""#);
    let bridge = with_config(&config).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut args = lead("acme", 1);
    args["vehicle_of_interest"] = json!({ "vin": "1HGCM82633A004352" });
    let answer = ok(&call(&client, "leads.create", args).await);
    assert_eq!(answer["status"], "received");
    // The agent learns that availability could not be checked.
    assert_eq!(answer["warnings"][0]["code"], "upstream.timeout");
    wait_delivery(
        &client,
        "acme",
        answer["lead_id"].as_str().unwrap(),
        "delivered",
        WAIT,
    )
    .await;
    let requests = intake.received_requests().await.unwrap();
    let doc = prospect(&requests[0]);
    // Sent as given: the VIN, without the details the inventory would have added.
    assert_eq!(doc.vehicles[0].vin.as_deref(), Some("1HGCM82633A004352"));
    assert_eq!(doc.vehicles[0].make, None);
}

#[tokio::test]
async fn an_operator_can_queue_failed_leads_again_once_the_crm_is_fixed() {
    let server = MockServer::start().await;
    // The CRM refuses the document until it is fixed.
    Mock::given(method("POST"))
        .respond_with(reply(400))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(reply(200))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bridge.db");
    let config = leads_config(
        &server.uri(),
        &format!("[store]\nurl = \"sqlite://{}\"\n", db.display()),
    );
    let config_path = dir.path().join("bridge.toml");
    std::fs::write(&config_path, &config).unwrap();
    let bridge = with_config(&config).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let failed = ok(&call(&client, "leads.create", lead("acme", 1)).await);
    let failed_id = failed["lead_id"].as_str().unwrap();
    wait_delivery(&client, "acme", failed_id, "failed", WAIT).await;
    let kept = ok(&call(&client, "leads.create", lead("acme", 2)).await);
    wait_delivery(
        &client,
        "acme",
        kept["lead_id"].as_str().unwrap(),
        "delivered",
        WAIT,
    )
    .await;

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .args(["leads", "retry", "--dealership", "acme", "--config"])
        .arg(&config_path)
        .env("DMS_BRIDGE_LOG", "error")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .contains("1 failed lead delivery(ies) queued again"),
        "{output:?}"
    );
    let view = wait_delivery(&client, "acme", failed_id, "delivered", WAIT).await;
    assert_eq!(view["delivery"]["attempts"], 2);
    let requests = server.received_requests().await.unwrap();
    let last = prospect(requests.last().unwrap());
    assert_eq!(last.ids[0].value, failed_id);
    assert_eq!(last.status, ProspectStatus::Resend);

    // A named lead: an unknown id is an error (it said "0 queued" and
    // exited 0 before), a delivered one says why nothing was queued.
    let retry_one = |lead: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
            .args(["leads", "retry", "--lead", lead, "--config"])
            .arg(&config_path)
            .env("DMS_BRIDGE_LOG", "error")
            .output()
            .unwrap()
    };
    let unknown = retry_one("ld_no_such_lead");
    assert!(!unknown.status.success(), "{unknown:?}");
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no lead \"ld_no_such_lead\""),
        "{unknown:?}"
    );
    let delivered = retry_one(failed_id);
    assert!(delivered.status.success(), "{delivered:?}");
    assert!(
        String::from_utf8_lossy(&delivered.stdout).contains("its delivery is delivered"),
        "{delivered:?}"
    );
}
