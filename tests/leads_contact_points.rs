//! Only the contact points the customer's consent covers reach the CRM: the
//! e-mail address needs `email`, the phone number `phone` or `sms`. The others
//! are neither sent, nor stored, nor shown, and the answer says which were
//! withheld and why, in a dry run exactly as for real.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::leads::{consent, lead, leads_config, wait_delivery};
use common::{Client, call, connect, ok, with_config};
use dms_bridge::adf;
use serde_json::{Value, json};
use wiremock::MockServer;

const WAIT: Duration = Duration::from_secs(10);

async fn intake_and_client() -> (MockServer, common::Bridge, Client) {
    let intake = common::leads::accepting_intake().await;
    let bridge = with_config(&leads_config(&intake.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    (intake, bridge, client)
}

/// Sends `args` as a dry run and for real, checks both answers withhold the
/// same contact points, waits for delivery, and returns the real answer, the
/// document the CRM received and `leads.get`'s view.
async fn send(client: &Client, intake: &MockServer, args: Value) -> (Value, String, Value) {
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let preview = ok(&call(client, "leads.create", dry).await);
    let answer = ok(&call(client, "leads.create", args).await);
    assert_eq!(
        preview.get("withheld_contact_points"),
        answer.get("withheld_contact_points"),
        "a dry run must say what the real call says"
    );
    let lead_id = answer["lead_id"].as_str().unwrap();
    let view = wait_delivery(client, "acme", lead_id, "delivered", WAIT).await;
    let requests = intake.received_requests().await.unwrap();
    let document = String::from_utf8(requests.last().unwrap().body.clone()).unwrap();
    // The dry run showed the document that was then sent (but for the lead id and time).
    let preview_doc = adf::parse(preview["adf_document"].as_str().unwrap().as_bytes()).unwrap();
    let sent_doc = adf::parse(document.as_bytes()).unwrap();
    assert_eq!(preview_doc[0].customer, sent_doc[0].customer);
    (answer, document, view)
}

fn withheld_fields(answer: &Value) -> Vec<&str> {
    answer["withheld_contact_points"]
        .as_array()
        .map(|a| a.iter().map(|w| w["field"].as_str().unwrap()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_phone_the_consent_does_not_cover_is_not_sent_stored_or_shown() {
    let (intake, _bridge, client) = intake_and_client().await;
    let mut args = lead("acme", 1);
    args["consent"] = consent(&["email"]);
    let (answer, document, view) = send(&client, &intake, args).await;

    assert_eq!(answer["status"], "received");
    assert_eq!(withheld_fields(&answer), ["/customer/phone"]);
    let reason = answer["withheld_contact_points"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("phone") && reason.contains("sms"),
        "{reason}"
    );
    assert!(!reason.contains("5550188"), "no customer data: {reason}");

    assert!(!document.contains("5550188"), "{document}");
    let doc = adf::parse(document.as_bytes()).unwrap().remove(0);
    assert!(doc.customer.contact.phones.is_empty());
    assert_eq!(
        doc.customer.contact.email.as_deref(),
        Some("dana1@example.com")
    );
    // The document now says by itself what may be used: no warning line needed.
    let comments = doc.customer.comments.unwrap_or_default();
    assert!(!comments.contains("Contact consent"), "{comments}");

    assert_eq!(view["customer"]["email"], "d***@e***.com");
    assert!(view["customer"].get("phone").is_none(), "{view}");
    // The lead is stored as sent, and stays so in lists and replays.
    let listed = ok(&call(&client, "leads.list", json!({ "dealership_id": "acme" })).await);
    assert!(listed["items"][0]["customer"].get("phone").is_none());
}

#[tokio::test]
async fn an_email_the_consent_does_not_cover_is_withheld_and_texts_only_is_said() {
    let (intake, _bridge, client) = intake_and_client().await;
    let mut args = lead("acme", 2);
    args["customer"]["preferred_contact"] = json!("sms");
    args["consent"] = consent(&["sms"]);
    let (answer, document, view) = send(&client, &intake, args).await;

    assert_eq!(withheld_fields(&answer), ["/customer/email"]);
    assert!(!document.contains("dana2@example.com"), "{document}");
    let doc = adf::parse(document.as_bytes()).unwrap().remove(0);
    assert_eq!(doc.customer.contact.email, None);
    assert_eq!(doc.customer.contact.phones[0].number, "+15125550188");
    // A number alone cannot say "texts, no calls": staff read it in the comments.
    let comments = doc.customer.comments.unwrap_or_default();
    assert!(comments.contains("Contact consent: sms only"), "{comments}");
    assert!(view["customer"].get("email").is_none(), "{view}");
    assert_eq!(view["customer"]["phone"], "+*******0188");
}

#[tokio::test]
async fn nothing_is_withheld_when_the_consent_covers_every_contact_point() {
    let (intake, _bridge, client) = intake_and_client().await;
    let mut args = lead("acme", 3);
    args["consent"] = consent(&["email", "phone", "sms"]);
    let (answer, document, _view) = send(&client, &intake, args).await;
    assert!(answer.get("withheld_contact_points").is_none(), "{answer}");
    let doc = adf::parse(document.as_bytes()).unwrap().remove(0);
    assert_eq!(doc.customer.contact.phones.len(), 1);
    assert!(doc.customer.contact.email.is_some());
    let comments = doc.customer.comments.unwrap_or_default();
    assert!(!comments.contains("Contact consent"), "{comments}");
}

#[tokio::test]
async fn a_replay_answers_with_the_same_withheld_contact_points() {
    let (intake, _bridge, client) = intake_and_client().await;
    let mut args = lead("acme", 4);
    args["consent"] = consent(&["email"]);
    args["idempotency_key"] = json!("contact-points-replay");
    let (first, _, _) = send(&client, &intake, args.clone()).await;
    let again = ok(&call(&client, "leads.create", args).await);
    assert_eq!(again["replayed"], true);
    assert_eq!(again["lead_id"], first["lead_id"]);
    assert_eq!(
        again["withheld_contact_points"],
        first["withheld_contact_points"]
    );
}
