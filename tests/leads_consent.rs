//! AAP consent and lead rules: every refusal is a structured error with the
//! AAP code, and nothing is stored or sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::leads::{consent, lead, leads_config};
use common::{call, connect, err, ok, problem_pointers, with_config};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Sends `args` and returns the error, after checking nothing was stored.
async fn refused(args: Value) -> Value {
    let intake = common::leads::accepting_intake().await;
    let bridge = with_config(&leads_config(&intake.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let error = err(&call(&client, "leads.create", args).await);
    let listed = ok(&call(&client, "leads.list", json!({ "dealership_id": "acme" })).await);
    assert_eq!(listed["items"], json!([]), "a refused lead was stored");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        intake.received_requests().await.unwrap().is_empty(),
        "a refused lead was sent"
    );
    error
}

#[tokio::test]
async fn customer_data_without_consent_is_refused() {
    let mut args = lead("acme", 1);
    args.as_object_mut().unwrap().remove("consent");
    let error = refused(args).await;
    assert_eq!(error["code"], "leads.consent_required");
    assert_eq!(error["details"]["aap_code"], "CONTACT_CONSENT_REQUIRED");
    assert_eq!(error["retryable"], false);
}

#[tokio::test]
async fn a_preferred_channel_the_customer_did_not_allow_is_refused() {
    let mut args = lead("acme", 1);
    args["customer"]["preferred_contact"] = json!("phone");
    args["consent"] = consent(&["email", "sms"]);
    let error = refused(args).await;
    assert_eq!(error["code"], "leads.consent_required");
    assert_eq!(error["details"]["missing_channels"], json!(["phone"]));
}

#[tokio::test]
async fn without_a_preferred_channel_one_reachable_channel_must_be_allowed() {
    let mut args = lead("acme", 1);
    args["customer"]
        .as_object_mut()
        .unwrap()
        .remove("preferred_contact");
    args["customer"].as_object_mut().unwrap().remove("phone");
    args["consent"] = consent(&["sms"]);
    let error = refused(args).await;
    assert_eq!(error["code"], "leads.consent_required");
    assert_eq!(error["details"]["missing_channels"], json!(["email"]));
}

#[tokio::test]
async fn a_malformed_grant_lists_every_problem() {
    let mut args = lead("acme", 1);
    args["consent"]["scope"] = json!(["marketing"]);
    args["consent"]["consent_text"] = json!("  ");
    args["consent"]["granted_at"] = json!("2999-01-01T00:00:00Z");
    args["consent"]["expires_at"] = json!("2020-01-01T00:00:00Z");
    args["consent"]["allowed_channels"] = json!(["email", "fax"]);
    let error = refused(args).await;
    assert_eq!(error["code"], "leads.invalid_consent");
    assert_eq!(error["details"]["aap_code"], "INVALID_CONSENT");
    let mut got = problem_pointers(&error);
    got.sort();
    assert_eq!(
        got,
        [
            "/consent/allowed_channels/1",
            "/consent/consent_text",
            "/consent/expires_at",
            "/consent/granted_at",
            "/consent/scope"
        ]
    );
}

#[tokio::test]
async fn a_time_without_an_offset_is_an_invalid_grant() {
    let mut args = lead("acme", 1);
    args["consent"]["granted_at"] = json!("2026-01-01T10:00:00");
    let error = refused(args).await;
    assert_eq!(error["code"], "leads.invalid_consent");
    assert_eq!(problem_pointers(&error), ["/consent/granted_at"]);
}

#[tokio::test]
async fn a_test_drive_without_a_vehicle_names_the_missing_field() {
    let mut args = lead("acme", 1);
    args.as_object_mut().unwrap().remove("vehicle_of_interest");
    args["appointment"] = json!({ "appointment_type": "test_drive" });
    let error = refused(args).await;
    assert_eq!(error["code"], "request.invalid_arguments");
    assert_eq!(problem_pointers(&error), ["/vehicle_of_interest"]);
}

#[tokio::test]
async fn a_trade_in_condition_outside_the_vocabulary_is_refused() {
    let mut args = lead("acme", 1);
    args["trade_in"] = json!({ "make": "Honda", "model": "Civic", "condition": "like new" });
    let error = refused(args).await;
    assert_eq!(error["code"], "request.invalid_arguments");
    assert_eq!(problem_pointers(&error), ["/trade_in/condition"]);
}

#[tokio::test]
async fn bad_contact_points_and_times_are_all_reported_at_once() {
    let mut args = lead("acme", 1);
    args["customer"]["email"] = json!("not-an-email");
    args["vehicle_of_interest"]["vin"] = json!("1HGCM82633A004353");
    args["appointment"] =
        json!({ "appointment_type": "sales", "appointment_at": "2020-01-01T10:00:00Z" });
    args["submitted_at"] = json!("yesterday");
    let error = refused(args).await;
    assert_eq!(error["code"], "request.invalid_arguments");
    let mut got = problem_pointers(&error);
    got.sort();
    assert_eq!(
        got,
        [
            "/appointment/appointment_at",
            "/customer/email",
            "/submitted_at",
            "/vehicle_of_interest/vin"
        ]
    );
}

#[tokio::test]
async fn a_token_without_the_write_scope_cannot_send_leads() {
    let intake = MockServer::start().await;
    let bridge = with_config(&leads_config(&intake.uri(), "")).await;
    let client = connect(&bridge.url, Some("reader-token")).await;
    let error = err(&call(&client, "leads.create", lead("acme", 1)).await);
    assert_eq!(error["code"], "auth.forbidden");
    assert_eq!(error["details"]["required_scope"], "amcp:leads:write");
}

#[tokio::test]
async fn an_aap_lead_submit_payload_is_accepted_with_only_the_dealership_added() {
    let intake = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({ "success": true, "leadId": "L1" })),
        )
        .mount(&intake)
        .await;
    let bridge = with_config(&leads_config(&intake.uri(), "")).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    // Shaped like AAP v1.0's lead-submit-request example.
    let aap = json!({
        "dealership_id": "acme",
        "type": "lead.submit.request",
        "customer": { "first_name": "Alex", "last_name": "Rivera", "email": "alex@example.com", "phone": "+14155550123", "preferred_contact": "email",
                      "address": { "city": "Springfield", "state": "IL", "zip": "62701" } },
        "consent": consent(&["email", "phone"]),
        "vehicle_of_interest": { "vin": "1HGCM82633A004352", "year": 2003, "make": "Honda", "model": "Accord", "condition": "used" },
        "trade_in": { "year": 2012, "make": "Toyota", "model": "Camry", "mileage": 98000, "condition": "fair" },
        "appointment": { "appointment_type": "trade_in", "duration_minutes": 45, "notes": "After work" },
        "message": "Can I trade my Camry?",
        "source_agent": "chatgpt-shopping",
        "submitted_at": "2026-04-30T11:05:08Z",
        "idempotency_key": "0b0f6a5e-5a8c-4e61-9d3e-2f1f1b6d1c11"
    });
    let answer = ok(&call(&client, "leads.create", aap).await);
    assert_eq!(answer["status"], "received");
    assert_eq!(answer["appointment"]["status"], "requested");
    assert_eq!(answer["appointment"]["appointment_type"], "trade_in");
}
