//! `service.book_appointment` and `service.cancel_appointment` through an
//! Xtime-shaped scheduler on wiremock: the exact request the vendor receives,
//! in-band refusals mapped to canonical errors, opening hours, consent,
//! idempotency, dry runs, cache invalidation, and no customer data in errors
//! or logs. The demo's mock scheduler books and cancels for real.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex, OnceLock};

use chrono::{Datelike, Duration, NaiveDate, SecondsFormat, TimeZone, Utc, Weekday};
use common::config::{BridgeConfig, Dealership, Token, Upstream, quoted};
use common::{call, connect, demo, err, fixture, ok, with_config};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TZ: chrono_tz::Tz = chrono_tz::America::Chicago;
/// The days `wiremock-fixtures/xtime/availabilities.json` has slots on.
const FIXTURE_DAYS: [&str; 3] = ["2026-12-01", "2026-12-02", "2026-12-03"];
const BOOKINGS: &str = "/service/appointments-bookings";
const AVAILABILITY: &str = "/service/appointments-availabilities";
/// Customer data planted in every booking: it must never reach an error or a log.
const FIRST: &str = "Philippa";
const LAST: &str = "Hollowaythorne";
const EMAIL: &str = "philippa.h@sentinel-booking.example";
const PHONE: &str = "+15125550188";
const COMMENT: &str = "Rattle near the left rear wheel";

/// `acme` (service open weekdays 07:00-18:00) on an Xtime scheduler at
/// `upstream`, an agent and a service desk; `cache` is the `[cache]` line.
fn config(upstream: &str, resilience: &str, cache: &str) -> BridgeConfig {
    let hours = r#"[{ department = "service", weekly = { monday = "07:00-18:00", tuesday = "07:00-18:00", wednesday = "07:00-18:00", thursday = "07:00-18:00", friday = "07:00-18:00" } }]"#;
    let service = ["amcp:service:read", "amcp:service:write"];
    let desk = [
        "amcp:service:read",
        "amcp:service:write",
        "amcp:service:staff",
    ];
    BridgeConfig::new()
        .section("cache", cache)
        .dealership(
            Dealership::acme()
                .set("hours", hours)
                .route("service", "xt"),
        )
        .upstream("xt", Upstream::xtime(upstream).resilience(resilience))
        .token(Token::new("agent", "agent-token", &["acme"], &service))
        .token(Token::new("service-desk", "staff-token", &["acme"], &desk))
}

const NO_RETRIES: &str = "{ retries = { max = 0 } }";

/// The next three weekdays after today, in the dealership's calendar.
fn weekdays_ahead() -> [NaiveDate; 3] {
    let mut day = Utc::now().with_timezone(&TZ).date_naive();
    let mut found = Vec::new();
    while found.len() < 3 {
        day += Duration::days(1);
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            found.push(day);
        }
    }
    [found[0], found[1], found[2]]
}

/// The availability fixture with its days moved to `days`.
fn availabilities_on(days: [NaiveDate; 3]) -> String {
    let mut text = fixture("xtime/availabilities.json");
    for (from, to) in FIXTURE_DAYS.iter().zip(days) {
        text = text.replace(from, &to.to_string());
    }
    // The fixture is written for UTC-6; keep the local times right in summer too.
    let offset = TZ
        .from_local_datetime(&days[0].and_hms_opt(9, 0, 0).unwrap())
        .unwrap()
        .format("%z")
        .to_string();
    text.replace("-0600", &offset)
}

/// `hh:mm` on `day`, Chicago time, as RFC 3339.
fn at(day: NaiveDate, hh: u32, mm: u32) -> String {
    TZ.from_local_datetime(&day.and_hms_opt(hh, mm, 0).unwrap())
        .unwrap()
        .fixed_offset()
        .to_rfc3339_opts(SecondsFormat::Secs, false)
}

/// A JSON answer with HTTP 200, as Xtime gives even its refusals.
fn json_200(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "application/json")
}

async fn mount_xtime(server: &MockServer, days: [NaiveDate; 3]) {
    for (verb, at, body) in [
        ("POST", "/oauth2/token", fixture("xtime/token.json")),
        ("GET", "/service/services", fixture("xtime/services.json")),
        ("GET", AVAILABILITY, availabilities_on(days)),
    ] {
        Mock::given(method(verb))
            .and(path(at))
            .respond_with(json_200(body))
            .mount(server)
            .await;
    }
}

/// The scheduler answers bookings with the fixture `answer`.
async fn mount_booking(server: &MockServer, answer: &str) {
    Mock::given(method("POST"))
        .and(path(BOOKINGS))
        .and(header("x-api-key", "xt-key"))
        .and(header("authorization", "Bearer demo-xtime-token"))
        .and(query_param("dealerCode", "ACME01"))
        .respond_with(json_200(fixture(&format!("xtime/{answer}"))))
        .mount(server)
        .await;
}

fn consent(scope: &str) -> Value {
    json!({
        "granted_at": (Utc::now() - Duration::minutes(1)).to_rfc3339_opts(SecondsFormat::Secs, true),
        "allowed_channels": ["email", "sms"],
        "consent_text": "I agree that Acme Motors may contact me about this service appointment.",
        "scope": [scope]
    })
}

fn booking(start: &str) -> Value {
    json!({
        "dealership_id": "acme", "service_codes": ["01LOF", "02ROT"], "vin": "1hgcm82633a004352",
        "start": start,
        "customer": { "first_name": FIRST, "last_name": LAST, "email": EMAIL, "phone": PHONE },
        "consent": consent("service_appointment"),
        "comment": COMMENT
    })
}

async fn requests_to(server: &MockServer, wanted: &str) -> Vec<wiremock::Request> {
    server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path().starts_with(wanted))
        .collect()
}

/// Fails when any planted customer datum is in `text`.
fn assert_no_customer_data(text: &str, place: &str) {
    for sentinel in [
        FIRST,
        LAST,
        EMAIL,
        "sentinel-booking",
        "5125550188",
        COMMENT,
    ] {
        assert!(
            !text.to_lowercase().contains(&sentinel.to_lowercase()),
            "{sentinel} leaked into {place}: {text}"
        );
    }
}

/// A wiremock Xtime (answering bookings with the fixture `answer`), a bridge
/// without retries or cache in front of it, and a client.
async fn harness(
    answer: Option<&str>,
) -> (MockServer, common::Bridge, common::Client, [NaiveDate; 3]) {
    let (server, bridge, days) = setup(NO_RETRIES, "enabled = false").await;
    if let Some(answer) = answer {
        mount_booking(&server, answer).await;
    }
    let client = connect(&bridge.url, Some("agent-token")).await;
    (server, bridge, client, days)
}

/// The lead as the bridge stored it (whoever submitted it).
async fn stored_lead(bridge: &common::Bridge, lead_id: &str) -> dms_bridge::leads::StoredLead {
    let desk = &bridge.gateway.services().leads;
    desk.get("acme", lead_id, None).await.unwrap().unwrap()
}

async fn book(client: &common::Client, args: Value) -> rmcp::model::CallToolResult {
    call(client, "service.book_appointment", args).await
}

/// Starts a wiremock Xtime and a bridge in front of it.
async fn setup(resilience: &str, cache: &str) -> (MockServer, common::Bridge, [NaiveDate; 3]) {
    logs();
    let server = MockServer::start().await;
    let days = weekdays_ahead();
    mount_xtime(&server, days).await;
    let bridge = with_config(&config(&server.uri(), resilience, cache).render()).await;
    (server, bridge, days)
}

#[tokio::test]
async fn a_booking_sends_the_vendor_body_and_answers_booked() {
    let (server, _bridge, client, days) = harness(Some("booking-ok.json")).await;
    let start = at(days[0], 9, 30);
    let result = ok(&book(&client, booking(&start)).await);
    assert_eq!(result["status"], "booked");
    assert_eq!(result["appointment_id"], "XT-7001");
    assert_eq!(result["start"], start);
    assert_eq!(result["end"], at(days[0], 10, 0));
    assert_no_customer_data(&result["message"].to_string(), "the message");

    let sent = requests_to(&server, BOOKINGS).await;
    assert_eq!(sent.len(), 1);
    let request = &sent[0];
    assert_eq!(request.method.as_str(), "POST");
    assert_eq!(request.headers["x-api-key"], "xt-key");
    assert_eq!(request.headers["authorization"], "Bearer demo-xtime-token");
    assert!(
        request.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let query: std::collections::HashMap<_, _> = request.url.query_pairs().into_owned().collect();
    assert_eq!(query["dealerCode"], "ACME01");
    assert_eq!(query["vin"], "1HGCM82633A004352");
    assert!(!query.contains_key("year"), "{query:?}");
    let mut body: Value = serde_json::from_slice(&request.body).unwrap();
    let local = chrono::DateTime::parse_from_rfc3339(&start)
        .unwrap()
        .format("%Y-%m-%dT%H:%M%z")
        .to_string();
    // The bridge's reference for the booking, the same on every send of it.
    let reference = body
        .as_object_mut()
        .unwrap()
        .remove("externalReference")
        .unwrap();
    assert!(
        reference.as_str().unwrap().starts_with("bk_"),
        "{reference}"
    );
    assert_eq!(
        body,
        json!({
            "appointmentDateTimeLocal": local,
            "firstName": FIRST, "lastName": LAST, "emailAddress": EMAIL, "phoneNumber": "5125550188",
            "comment": COMMENT,
            "services": [{ "opcode": "01LOF" }, { "opcode": "02ROT" }],
            "label": { "value": "dms-bridge", "context": "booked through an AI agent" }
        })
    );
}

#[tokio::test]
async fn a_waitlist_answer_is_waitlisted_and_empty_optionals_stay_out_of_the_body() {
    let (server, _bridge, client, days) = harness(Some("booking-waitlist.json")).await;
    let mut args = booking(&at(days[1], 8, 0));
    args["customer"].as_object_mut().unwrap().remove("phone");
    args.as_object_mut().unwrap().remove("comment");
    let result = ok(&book(&client, args).await);
    assert_eq!(result["status"], "waitlisted");
    assert_eq!(result["appointment_id"], "XT-7002");
    let body: Value =
        serde_json::from_slice(&requests_to(&server, BOOKINGS).await[0].body).unwrap();
    assert!(
        body.get("phoneNumber").is_none() && body.get("comment").is_none(),
        "{body}"
    );
}

#[tokio::test]
async fn a_taken_slot_is_slot_unavailable_with_open_slots_to_offer() {
    let (_server, _bridge, client, days) = harness(Some("error-slot-unavailable.json")).await;
    let error = err(&book(&client, booking(&at(days[0], 9, 30))).await);
    assert_eq!(error["code"], "service.slot_unavailable");
    assert_eq!(error["retryable"], false);
    let slots = error["recovery"]["slots"].as_array().unwrap();
    assert_eq!(slots.len(), 5);
    // The fixture's first open slot from 09:30 on day one is 09:30 itself
    // (the scheduler's availability is what it is; the booking said taken).
    let fixture_starts: Vec<String> = serde_json::from_str::<Value>(&availabilities_on(days))
        .unwrap()["availableAppointments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let t = chrono::DateTime::parse_from_str(
                s["appointmentDateTimeLocal"].as_str().unwrap(),
                "%Y-%m-%dT%H:%M%z",
            )
            .unwrap();
            t.to_rfc3339_opts(SecondsFormat::Secs, false)
        })
        .filter(|s| s.as_str() >= at(days[0], 9, 30).as_str())
        .collect();
    let offered: Vec<&str> = slots.iter().map(|s| s["start"].as_str().unwrap()).collect();
    assert_eq!(offered, fixture_starts[..5]);
    let next = &error["recovery"]["next_tool_call"];
    assert_eq!(next["name"], "service_book_appointment");
    // The caller's own booking at the first open start: complete as given.
    let mut expected = booking(&at(days[0], 9, 30));
    expected["start"] = json!(offered[0]);
    assert_eq!(next["arguments"], expected);
    // Customer data is only in the call handed back to its sender.
    let mut rest = error.clone();
    rest["recovery"]["next_tool_call"].take();
    assert_no_customer_data(&rest.to_string(), "the error");
    assert!(
        !error.to_string().contains("no longer available"),
        "vendor text leaked"
    );
}

#[tokio::test]
async fn a_start_outside_opening_hours_proposes_open_slots_without_booking() {
    let (server, _bridge, client, days) = harness(Some("booking-ok.json")).await;
    let result = ok(&book(&client, booking(&at(days[0], 19, 0))).await);
    assert_eq!(result["status"], "proposed");
    assert!(result.get("appointment_id").is_none());
    let proposed: Vec<&str> = result["proposed_times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    // Day two's first three open slots (every third half hour is taken).
    assert_eq!(
        proposed,
        [at(days[1], 7, 30), at(days[1], 8, 0), at(days[1], 9, 0)]
    );
    assert!(requests_to(&server, BOOKINGS).await.is_empty());
}

#[tokio::test]
async fn consent_is_required_scoped_to_service_appointments_and_checked_first() {
    let (server, _bridge, client, days) = harness(None).await;
    let start = at(days[0], 9, 30);
    let mut missing = booking(&start);
    missing.as_object_mut().unwrap().remove("consent");
    let error = err(&book(&client, missing).await);
    assert_eq!(error["code"], "leads.consent_required");

    let mut lead_scope = booking(&start);
    lead_scope["consent"] = consent("lead_submission");
    let error = err(&book(&client, lead_scope).await);
    assert_eq!(error["code"], "leads.invalid_consent");
    assert_eq!(
        error["details"]["expected_scope"],
        json!(["service_appointment"])
    );
    assert_eq!(error["details"]["problems"][0]["pointer"], "/consent/scope");

    let mut phone_only = booking(&start);
    phone_only["consent"]["allowed_channels"] = json!(["phone"]);
    phone_only["customer"]
        .as_object_mut()
        .unwrap()
        .remove("phone");
    let error = err(&book(&client, phone_only).await);
    assert_eq!(error["code"], "leads.consent_required");
    assert_no_customer_data(&error.to_string(), "a consent error");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn bad_vins_past_starts_and_unknown_codes_are_refused_before_booking() {
    let (server, _bridge, client, days) = harness(Some("booking-ok.json")).await;
    let start = at(days[0], 9, 30);
    let mut bad_vin = booking(&start);
    bad_vin["vin"] = json!("1HGCM82633A004353");
    let mut past = booking(&start);
    past["start"] = json!((Utc::now() - Duration::hours(1)).to_rfc3339());
    let mut no_offset = booking(&start);
    no_offset["start"] = json!(format!("{}T09:30:00", days[0]));
    for (args, pointer) in [(bad_vin, "/vin"), (past, "/start"), (no_offset, "/start")] {
        let error = err(&book(&client, args).await);
        assert_eq!(error["code"], "request.invalid_arguments");
        assert_eq!(error["details"]["problems"][0]["pointer"], pointer);
    }
    let mut unknown = booking(&start);
    unknown["service_codes"] = json!(["01LOF", "99XYZ"]);
    let error = err(&book(&client, unknown).await);
    assert_eq!(error["code"], "request.invalid_arguments");
    assert_eq!(
        error["details"]["problems"][0]["pointer"],
        "/service_codes/1"
    );
    assert_eq!(error["details"]["service_menu"][0]["code"], "01LOF");
    assert!(requests_to(&server, BOOKINGS).await.is_empty());
}

#[tokio::test]
async fn a_replay_calls_the_scheduler_once_and_a_changed_payload_conflicts() {
    let (server, _bridge, client, days) = harness(Some("booking-ok.json")).await;
    let mut args = booking(&at(days[0], 9, 30));
    args["idempotency_key"] = json!("bk-key-1");
    let first = ok(&book(&client, args.clone()).await);
    let (a, b) = tokio::join!(book(&client, args.clone()), book(&client, args.clone()));
    for again in [ok(&a), ok(&b)] {
        assert_eq!(again["replayed"], true);
        assert_eq!(again["appointment_id"], first["appointment_id"]);
    }
    assert_eq!(requests_to(&server, BOOKINGS).await.len(), 1);
    args["start"] = json!(at(days[0], 10, 0));
    let error = err(&book(&client, args).await);
    assert_eq!(error["code"], "service.idempotency_conflict");
    assert_eq!(
        error["details"]["aap_code"], "IDEMPOTENCY_CONFLICT",
        "{error}"
    );
    assert_eq!(error["retryable"], false);
    assert_eq!(requests_to(&server, BOOKINGS).await.len(), 1);
}

#[tokio::test]
async fn a_dry_run_answers_the_booking_and_books_nothing() {
    let (server, _bridge, client, days) = harness(Some("booking-ok.json")).await;
    let mut args = booking(&at(days[0], 9, 30));
    args["dry_run"] = json!(true);
    args["idempotency_key"] = json!("dry-1");
    let result = ok(&book(&client, args.clone()).await);
    assert_eq!(result["dry_run"], true);
    assert!(result.get("appointment_id").is_none());
    assert_eq!(
        result["booking"]["service_codes"],
        json!(["01LOF", "02ROT"])
    );
    assert_eq!(result["booking"]["vehicle"]["vin"], "1HGCM82633A004352");
    assert!(requests_to(&server, BOOKINGS).await.is_empty());
    // Nothing was stored under the key: the real call books.
    args["dry_run"] = json!(false);
    let real = ok(&book(&client, args).await);
    assert_eq!(real["status"], "booked");
    assert!(real.get("replayed").is_none());
}

#[tokio::test]
async fn cancel_frees_the_appointment_and_an_unknown_id_is_not_found() {
    let (server, bridge, agent, _) = harness(None).await;
    // XT-7001 is in the scheduler but was not booked through the bridge:
    // only the dealership's staff may cancel it.
    let client = connect(&bridge.url, Some("staff-token")).await;
    for (id, answer) in [
        ("XT-7001", "cancel-ok.json"),
        ("XT-9999", "error-appointment-not-found.json"),
    ] {
        Mock::given(method("DELETE"))
            .and(path(format!("{BOOKINGS}/{id}")))
            .and(query_param("dealerCode", "ACME01"))
            .respond_with(json_200(fixture(&format!("xtime/{answer}"))))
            .mount(&server)
            .await;
    }
    let result = ok(&call(
        &client,
        "service.cancel_appointment",
        json!({ "dealership_id": "acme", "appointment_id": "XT-7001", "reason": "car sold" }),
    )
    .await);
    assert_eq!(
        result,
        json!({
            "appointment_id": "XT-7001", "status": "cancelled", "message": result["message"],
            "dealer": { "name": "Acme Motors" }
        })
    );
    let sent = requests_to(&server, BOOKINGS).await;
    assert_eq!(
        serde_json::from_slice::<Value>(&sent[0].body).unwrap(),
        json!({ "reason": "car sold" })
    );
    let error = err(&call(
        &client,
        "service.cancel_appointment",
        json!({ "dealership_id": "acme", "appointment_id": "XT-9999" }),
    )
    .await);
    assert_eq!(error["code"], "service.appointment_not_found");
    assert_eq!(error["retryable"], false);
    let before = requests_to(&server, BOOKINGS).await.len();
    let refused = err(&call(
        &agent,
        "service.cancel_appointment",
        json!({ "dealership_id": "acme", "appointment_id": "XT-7001" }),
    )
    .await);
    assert_eq!(
        (&refused["code"], &refused["message"]),
        (&error["code"], &error["message"]),
        "an appointment the agent did not book looks like an unknown one"
    );
    assert_eq!(
        requests_to(&server, BOOKINGS).await.len(),
        before,
        "the scheduler is not asked"
    );
    let error = err(&call(
        &client,
        "service.cancel_appointment",
        json!({ "dealership_id": "acme", "appointment_id": "../../admin" }),
    )
    .await);
    assert_eq!(error["code"], "request.invalid_arguments");
}

#[tokio::test]
async fn a_booking_drops_cached_availability() {
    let (server, bridge, days) = setup(NO_RETRIES, r#"ttl = { service = "60s" }"#).await;
    mount_booking(&server, "booking-ok.json").await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let check = json!({ "dealership_id": "acme", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
                        "from": days[0].to_string(), "to": days[1].to_string() });
    ok(&call(&client, "service.check_availability", check.clone()).await);
    ok(&call(&client, "service.check_availability", check.clone()).await);
    assert_eq!(
        requests_to(&server, AVAILABILITY).await.len(),
        1,
        "the second read is cached"
    );
    ok(&book(&client, booking(&at(days[0], 9, 30))).await);
    ok(&call(&client, "service.check_availability", check).await);
    assert_eq!(
        requests_to(&server, AVAILABILITY).await.len(),
        2,
        "the booking retired the entry"
    );
}

#[tokio::test]
async fn in_band_failures_map_to_truthful_canonical_errors_and_bookings_are_not_retried() {
    let retries = r#"{ retries = { max = 2, base_delay = "10ms", max_delay = "20ms" } }"#;
    let cases = [
        (
            json!({ "success": false, "code": "INVALID_OPCODE", "message": "x" }),
            "upstream.rejected",
            false,
        ),
        (
            json!({ "success": false, "code": "TOO_MANY_REQUESTS" }),
            "upstream.rate_limited",
            true,
        ),
        (
            json!({ "success": false, "code": "SERVICE_UNAVAILABLE" }),
            "upstream.unavailable",
            true,
        ),
        (
            json!({ "success": false, "code": "SOMETHING_NEW" }),
            "upstream.rejected",
            false,
        ),
        (
            json!({ "success": true }),
            "upstream.invalid_response",
            false,
        ),
    ];
    for (answer, code, retryable) in cases {
        let (server, bridge, days) = setup(retries, "enabled = false").await;
        Mock::given(method("POST"))
            .and(path(BOOKINGS))
            .respond_with(ResponseTemplate::new(200).set_body_json(&answer))
            .mount(&server)
            .await;
        let client = connect(&bridge.url, Some("agent-token")).await;
        let error = err(&call(
            &client,
            "service.book_appointment",
            booking(&at(days[0], 9, 30)),
        )
        .await);
        assert_eq!(error["code"], code, "{answer}");
        assert_eq!(error["retryable"], retryable, "{answer}");
        assert_eq!(
            requests_to(&server, BOOKINGS).await.len(),
            1,
            "{answer}: a booking is sent once"
        );
    }
}

#[tokio::test]
async fn the_demo_books_and_cancels_for_real() {
    logs();
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-cdk")).await;
    let days = weekdays_ahead();
    let check = json!({ "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "vin": "1HGCM82633A004352",
                        "from": days[0].to_string(), "to": days[0].to_string() });
    let open = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["start"].as_str().unwrap().to_owned())
            .collect()
    };
    let before = open(&ok(&call(
        &client,
        "service.check_availability",
        check.clone(),
    )
    .await));
    let mut args = booking(&before[0]);
    args["dealership_id"] = json!("demo-cdk");
    args["service_codes"] = json!(["01LOF"]);
    let booked = ok(&book(&client, args.clone()).await);
    assert_eq!(booked["status"], "booked");
    let id = booked["appointment_id"].as_str().unwrap().to_owned();
    let taken = err(&book(&client, args).await);
    assert_eq!(taken["code"], "service.slot_unavailable");
    assert_ne!(taken["recovery"]["slots"][0]["start"], before[0]);
    let during = open(&ok(&call(
        &client,
        "service.check_availability",
        check.clone(),
    )
    .await));
    assert!(!during.contains(&before[0]));
    let cancel = json!({ "dealership_id": "demo-cdk", "appointment_id": id });
    ok(&call(&client, "service.cancel_appointment", cancel.clone()).await);
    ok(&call(&client, "service.cancel_appointment", cancel).await);
    let after = open(&ok(
        &call(&client, "service.check_availability", check).await
    ));
    assert_eq!(after, before);
    let unknown = json!({ "dealership_id": "demo-cdk", "appointment_id": "XT-1" });
    let error = err(&call(&client, "service.cancel_appointment", unknown).await);
    assert_eq!(error["code"], "service.appointment_not_found");

    // The booking and its cancellation are events (once, though cancelled twice),
    // for the agent that booked; another agent without the staff scope sees none.
    let list = json!({ "dealership_id": "demo-cdk", "types": ["appointment.booked", "appointment.cancelled"] });
    let events = ok(&call(&client, "events.list", list.clone()).await);
    let seen: Vec<(&str, &str, &str)> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["resource"]["id"].as_str().unwrap(),
                e["data"]["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            ("appointment.booked", id.as_str(), "booked"),
            ("appointment.cancelled", id.as_str(), "cancelled"),
        ]
    );
    let other = connect(&bridge.url, Some("demo-token-group")).await;
    let theirs = ok(&call(&other, "events.list", list).await);
    assert_eq!(theirs["items"], json!([]));
}

#[tokio::test]
async fn customer_data_never_reaches_the_logs() {
    let buffer = logs();
    let (_server, _bridge, client, days) = harness(Some("error-slot-unavailable.json")).await;
    err(&book(&client, booking(&at(days[0], 9, 30))).await);
    let mut bad = booking(&at(days[0], 9, 30));
    bad["consent"]["scope"] = json!([FIRST]);
    bad["customer"]["email"] = json!(format!("{LAST} {EMAIL}"));
    err(&book(&client, bad).await);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let text = String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned();
    assert!(text.contains("Tool call."), "the capture is empty");
    assert_no_customer_data(&text, "the logs");
}

// ---------------------------------------------------------------------------
// One global subscriber for this test binary, capturing every line as JSON.
// ---------------------------------------------------------------------------

#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Debug for this crate; HTTP stacks and rmcp (whose own client would log the
/// test's requests) at info.
fn logs() -> Arc<Mutex<Vec<u8>>> {
    static BUFFER: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    BUFFER
        .get_or_init(|| {
            let buffer = Arc::new(Mutex::new(Vec::new()));
            let sink = Sink(buffer.clone());
            let filter = "debug,hyper=info,hyper_util=info,h2=info,reqwest=info,rmcp=info";
            let subscriber = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
                .with_writer(move || sink.clone())
                .json()
                .flatten_event(true)
                .finish();
            tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
            buffer
        })
        .clone()
}

/// The xtime profile without its booking and cancelling operations: a
/// scheduler that can only show availability.
fn read_only_profile(dir: &std::path::Path) -> String {
    let xtime =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/adapters/xtime.toml"))
            .unwrap();
    let (head, rest) = xtime.split_once("[book_appointment]").unwrap();
    let errors = &rest[rest.find("[errors]").unwrap()..];
    let file = dir.join("xtime-read-only.toml");
    std::fs::write(&file, format!("{head}{errors}")).unwrap();
    file.to_str().unwrap().to_owned()
}

/// A bridge whose scheduler cannot book; with `leads`, acme's leads go to an
/// ADF intake on the same wiremock.
async fn without_booking(leads: bool) -> (MockServer, common::Bridge, tempfile::TempDir) {
    logs();
    let server = MockServer::start().await;
    mount_xtime(&server, weekdays_ahead()).await;
    Mock::given(method("POST"))
        .and(path("/adf/intake"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&server.uri(), NO_RETRIES, "enabled = false")
        .edit_upstream("xt", |u| {
            u.set("profile", quoted(&read_only_profile(dir.path())))
        });
    if leads {
        let intake = Upstream::adf_http(&format!("{}/adf/intake", server.uri())).timeout("1s");
        config = config
            .edit_dealership("acme", |d| d.route("leads", "crm"))
            .upstream("crm", intake);
    }
    let toml = config.render();
    let bridge = with_config(&toml).await;
    (server, bridge, dir)
}

#[tokio::test]
async fn a_scheduler_that_cannot_book_hands_the_request_over_as_a_lead() {
    let (server, bridge, _dir) = without_booking(true).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let days = weekdays_ahead();
    let mut args = booking(&at(days[0], 9, 30));
    args["idempotency_key"] = json!("lead-1");
    let result = ok(&book(&client, args.clone()).await);
    assert_eq!(result["status"], "requested");
    assert!(result.get("appointment_id").is_none());
    let lead_id = result["lead_id"].as_str().unwrap();
    assert_no_customer_data(&result["message"].to_string(), "the message");
    let again = ok(&book(&client, args).await);
    assert_eq!(
        (again["lead_id"].as_str(), &again["replayed"]),
        (Some(lead_id), &json!(true))
    );

    let stored = stored_lead(&bridge, lead_id).await;
    let request: Value = serde_json::from_str(&stored.request).unwrap();
    assert_eq!(request["appointment"]["appointment_type"], "service");
    assert_eq!(request["appointment"]["appointment_at"], at(days[0], 9, 30));
    assert!(
        request["appointment"]["notes"]
            .as_str()
            .unwrap()
            .contains("01LOF, 02ROT"),
        "{request}"
    );
    let consent: Value = serde_json::from_str(&stored.consent).unwrap();
    assert_eq!(
        consent["scope"],
        json!(["service_appointment"]),
        "kept verbatim"
    );
    assert!(requests_to(&server, BOOKINGS).await.is_empty());
}

#[tokio::test]
async fn a_scheduler_that_cannot_book_and_no_lead_route_is_unsupported() {
    let (_server, bridge, _dir) = without_booking(false).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let error = err(&book(&client, booking(&at(weekdays_ahead()[0], 9, 30))).await);
    assert_eq!(error["code"], "capability.unsupported");
    assert_eq!(error["retryable"], false);
}

/// Books `args` after a dry run of it; both answers withhold the same contact
/// points. Returns the answer and the body the scheduler received.
async fn book_after_dry_run(
    server: &MockServer,
    client: &common::Client,
    args: Value,
) -> (Value, Value) {
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let preview = ok(&book(client, dry).await);
    let result = ok(&book(client, args).await);
    assert_eq!(
        preview["withheld_contact_points"], result["withheld_contact_points"],
        "a dry run must say what the real call says"
    );
    let sent = requests_to(server, BOOKINGS).await;
    assert_eq!(sent.len(), 1);
    (result, serde_json::from_slice(&sent[0].body).unwrap())
}

#[tokio::test]
async fn a_phone_the_consent_does_not_cover_never_reaches_the_scheduler() {
    let (server, _bridge, client, days) = harness(Some("booking-ok.json")).await;
    let mut args = booking(&at(days[0], 9, 30));
    args["consent"]["allowed_channels"] = json!(["email"]);
    let (result, body) = book_after_dry_run(&server, &client, args).await;
    assert_eq!(result["status"], "booked");
    assert_eq!(
        result["withheld_contact_points"][0]["field"],
        "/customer/phone"
    );
    assert_eq!(
        result["withheld_contact_points"].as_array().unwrap().len(),
        1
    );
    assert_no_customer_data(&result["withheld_contact_points"].to_string(), "the answer");
    assert!(body.get("phoneNumber").is_none(), "{body}");
    assert_eq!(body["emailAddress"], EMAIL);
}

#[tokio::test]
async fn an_email_the_consent_does_not_cover_never_reaches_the_scheduler() {
    let (server, _bridge, client, days) = harness(Some("booking-ok.json")).await;
    let mut args = booking(&at(days[0], 9, 30));
    args["consent"]["allowed_channels"] = json!(["sms"]);
    let (result, body) = book_after_dry_run(&server, &client, args).await;
    assert_eq!(
        result["withheld_contact_points"][0]["field"],
        "/customer/email"
    );
    assert!(body.get("emailAddress").is_none(), "{body}");
    assert_eq!(body["phoneNumber"], "5125550188");
}

#[tokio::test]
async fn a_request_handed_over_as_a_lead_carries_only_consented_contact_points() {
    let (server, bridge, _dir) = without_booking(true).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let mut args = booking(&at(weekdays_ahead()[0], 9, 30));
    args["consent"]["allowed_channels"] = json!(["email"]);
    let result = ok(&book(&client, args).await);
    assert_eq!(result["status"], "requested");
    assert_eq!(
        result["withheld_contact_points"][0]["field"],
        "/customer/phone"
    );
    let lead_id = result["lead_id"].as_str().unwrap();
    let stored = stored_lead(&bridge, lead_id).await;
    assert!(!stored.request.contains("5125550188"), "{}", stored.request);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let document = loop {
        if let Some(sent) = requests_to(&server, "/adf/intake").await.pop() {
            break String::from_utf8(sent.body).unwrap();
        }
        assert!(tokio::time::Instant::now() < deadline, "no lead delivered");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(!document.contains("5125550188"), "{document}");
    assert!(document.contains(EMAIL), "{document}");
}
