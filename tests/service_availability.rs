//! `service.check_availability` through an Xtime-shaped scheduler: the token
//! and `x-api-key` it sees, service codes checked against the menu, in-band
//! errors, slots in the dealership's time zone, and bad ranges refused before
//! any upstream call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, Utc};
use common::config::{BridgeConfig, Dealership, Token, Upstream};
use common::{call, connect, demo, err, fixture, ok, with_config};
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TZ: chrono_tz::Tz = chrono_tz::America::Chicago;
/// The days `wiremock-fixtures/xtime/availabilities.json` has slots on.
const FIXTURE_DAYS: [&str; 3] = ["2026-12-01", "2026-12-02", "2026-12-03"];

fn config(upstream: &str) -> String {
    BridgeConfig::new()
        .dealership(Dealership::acme().route("service", "xt"))
        .upstream(
            "xt",
            Upstream::xtime(upstream).resilience("{ retries = { max = 0 } }"),
        )
        .token(Token::new(
            "agent",
            "agent-token",
            &["acme"],
            &["amcp:service:read"],
        ))
        .render()
}

/// Three days from tomorrow, in the dealership's calendar.
fn days_ahead() -> [NaiveDate; 3] {
    let today = Utc::now().with_timezone(&TZ).date_naive();
    [1, 2, 3].map(|n| today + Duration::days(n))
}

/// The fixture with its days moved to `days` (so its slots are in the future).
fn availabilities_on(days: [NaiveDate; 3]) -> String {
    let mut text = fixture("xtime/availabilities.json");
    for (from, to) in FIXTURE_DAYS.iter().zip(days) {
        text = text.replace(from, &to.to_string());
    }
    text
}

async fn mount_xtime(server: &MockServer, availabilities: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path("/oauth2/token"))
        .and(header("authorization", "Basic eHQtaWQ6eHQtc2VjcmV0"))
        .and(body_string_contains(
            "scope=cai.scheduling.appointments.read",
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("xtime/token.json"), "application/json"),
        )
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/service/services"))
        .and(header("x-api-key", "xt-key"))
        .and(query_param("dealerCode", "ACME01"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("xtime/services.json"), "application/json"),
        )
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/service/appointments-availabilities"))
        .and(header("x-api-key", "xt-key"))
        .and(header("authorization", "Bearer demo-xtime-token"))
        .respond_with(availabilities)
        .mount(server)
        .await;
}

fn args(from: NaiveDate, to: NaiveDate) -> Value {
    json!({ "dealership_id": "acme", "service_codes": ["01LOF", "02ROT"], "vin": "1hgcm82633a004352",
            "from": from.to_string(), "to": to.to_string() })
}

async fn availability_requests(server: &MockServer) -> Vec<wiremock::Request> {
    server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == "/service/appointments-availabilities")
        .collect()
}

#[tokio::test]
async fn slots_come_back_in_the_dealerships_time_zone_within_the_range() {
    let server = MockServer::start().await;
    let days = days_ahead();
    mount_xtime(
        &server,
        ResponseTemplate::new(200).set_body_raw(availabilities_on(days), "application/json"),
    )
    .await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    // Ask for the first two of the three days: the third day's slots are dropped.
    let result = ok(&call(
        &client,
        "service.check_availability",
        args(days[0], days[1]),
    )
    .await);
    assert_eq!(result["timezone"], "America/Chicago");
    let items = result["items"].as_array().unwrap();
    let fixture_slots: Value = serde_json::from_str(&availabilities_on(days)).unwrap();
    let expected: Vec<&Value> = fixture_slots["availableAppointments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            !s["appointmentDateTimeLocal"]
                .as_str()
                .unwrap()
                .starts_with(&days[2].to_string())
        })
        .collect();
    assert_eq!(items.len(), expected.len());
    let mut previous: Option<DateTime<FixedOffset>> = None;
    for (item, want) in items.iter().zip(&expected) {
        let start = DateTime::parse_from_rfc3339(item["start"].as_str().unwrap()).unwrap();
        let end = DateTime::parse_from_rfc3339(item["end"].as_str().unwrap()).unwrap();
        let sent = DateTime::parse_from_str(
            want["appointmentDateTimeLocal"].as_str().unwrap(),
            "%Y-%m-%dT%H:%M%z",
        )
        .unwrap();
        assert_eq!(start, sent);
        assert_eq!(
            *start.offset(),
            start.with_timezone(&TZ).fixed_offset().offset().to_owned()
        );
        assert_eq!(end - start, Duration::minutes(30));
        assert_eq!(item["advisor_id"], want["advisorId"]);
        assert!(previous.is_none_or(|p| p < start), "not sorted");
        previous = Some(start);
    }
    let requests = availability_requests(&server).await;
    assert_eq!(requests.len(), 1);
    let query: std::collections::HashMap<_, _> =
        requests[0].url.query_pairs().into_owned().collect();
    assert_eq!(query["dealerCode"], "ACME01");
    assert_eq!(query["opcode"], "01LOF,02ROT");
    assert_eq!(query["vin"], "1HGCM82633A004352");
    assert_eq!(query["start"], days[0].to_string());
    assert_eq!(query["end"], days[1].to_string());
    assert!(
        !query.contains_key("year"),
        "empty parameters are left out: {query:?}"
    );
}

#[tokio::test]
async fn codes_missing_from_the_menu_are_refused_with_the_menu() {
    let server = MockServer::start().await;
    mount_xtime(
        &server,
        ResponseTemplate::new(200)
            .set_body_raw(availabilities_on(days_ahead()), "application/json"),
    )
    .await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let days = days_ahead();
    let mut a = args(days[0], days[1]);
    a["service_codes"] = json!(["01LOF", "99XYZ"]);
    let error = err(&call(&client, "service.check_availability", a).await);
    assert_eq!(error["code"], "request.invalid_arguments");
    assert_eq!(
        error["details"]["problems"][0]["pointer"],
        "/service_codes/1"
    );
    assert_eq!(error["details"]["service_menu"][0]["code"], "01LOF");
    assert!(availability_requests(&server).await.is_empty());
}

#[tokio::test]
async fn an_in_band_error_on_http_200_is_a_structured_error() {
    let server = MockServer::start().await;
    let refusal = ResponseTemplate::new(200).set_body_raw(
        fixture("xtime/error-invalid-opcode.json"),
        "application/json",
    );
    mount_xtime(&server, refusal).await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let days = days_ahead();
    let error = err(&call(
        &client,
        "service.check_availability",
        args(days[0], days[1]),
    )
    .await);
    assert_eq!(error["code"], "upstream.rejected");
    assert_eq!(error["retryable"], false);
    assert!(
        !error.to_string().contains("not valid for this dealer"),
        "upstream text leaked: {error}"
    );
}

#[tokio::test]
async fn bad_ranges_and_vehicles_are_refused_before_any_upstream_call() {
    let server = MockServer::start().await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    let today = Utc::now().with_timezone(&TZ).date_naive();
    let cases = [
        (args(today - Duration::days(2), today), vec!["/from"]),
        (
            args(today + Duration::days(5), today + Duration::days(2)),
            vec!["/to"],
        ),
        (args(today, today + Duration::days(40)), vec!["/to"]),
        (
            {
                let mut a = args(today, today + Duration::days(1));
                a["vin"] = json!("1HGCM82633A004353");
                a
            },
            vec!["/vin"],
        ),
        (
            {
                let mut a = args(today, today + Duration::days(1));
                a.as_object_mut().unwrap().remove("vin");
                a["from"] = json!("2026-02-30");
                a
            },
            vec!["", "/from"],
        ),
    ];
    for (a, pointers) in cases {
        let error = err(&call(&client, "service.check_availability", a.clone()).await);
        assert_eq!(error["code"], "request.invalid_arguments", "{a}");
        let got: Vec<&str> = error["details"]["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pointer"].as_str().unwrap())
            .collect();
        assert_eq!(got, pointers, "{a}");
    }
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_demo_offers_weekday_slots_at_demo_cdk_only() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let today = Utc::now().with_timezone(&TZ).date_naive();
    let (from, to) = (today + Duration::days(1), today + Duration::days(7));
    let a = json!({ "dealership_id": "demo-cdk", "service_codes": ["01LOF"], "year": 2019, "make": "Honda", "model": "Civic",
                    "from": from.to_string(), "to": to.to_string() });
    let result = ok(&call(&client, "service.check_availability", a.clone()).await);
    let items = result["items"].as_array().unwrap();
    assert!(!items.is_empty());
    for item in items {
        let start = DateTime::parse_from_rfc3339(item["start"].as_str().unwrap()).unwrap();
        let local = start.with_timezone(&TZ);
        assert!(
            local.date_naive() >= from && local.date_naive() <= to,
            "{item}"
        );
        assert!(!matches!(
            chrono::Datelike::weekday(&local),
            chrono::Weekday::Sat | chrono::Weekday::Sun
        ));
    }
    let mut elsewhere = a;
    elsewhere["dealership_id"] = json!("demo-feed");
    let error = err(&call(&client, "service.check_availability", elsewhere).await);
    assert_eq!(error["code"], "capability.unsupported");
}

#[tokio::test]
async fn the_service_menu_is_read_once_and_shared_by_later_checks() {
    let server = MockServer::start().await;
    let days = days_ahead();
    mount_xtime(
        &server,
        ResponseTemplate::new(200).set_body_raw(availabilities_on(days), "application/json"),
    )
    .await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    for (from, to) in [(days[0], days[0]), (days[0], days[1]), (days[1], days[2])] {
        ok(&call(&client, "service.check_availability", args(from, to)).await);
    }
    let requests = server.received_requests().await.unwrap();
    let on = |p: &str| requests.iter().filter(|r| r.url.path() == p).count();
    assert_eq!(on("/service/appointments-availabilities"), 3);
    assert_eq!(
        on("/service/services"),
        1,
        "the menu is kept between checks"
    );
}

#[tokio::test]
async fn a_failed_menu_read_is_not_kept() {
    let server = MockServer::start().await;
    let days = days_ahead();
    // The first menu read fails; the next one works.
    Mock::given(method("GET"))
        .and(path("/service/services"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount_xtime(
        &server,
        ResponseTemplate::new(200).set_body_raw(availabilities_on(days), "application/json"),
    )
    .await;
    let bridge = with_config(&config(&server.uri())).await;
    let client = connect(&bridge.url, Some("agent-token")).await;
    // The bridge retries a 503 on a read, so the first call may already succeed;
    // either way the failure is not kept and the next call succeeds.
    call(
        &client,
        "service.check_availability",
        args(days[0], days[1]),
    )
    .await;
    ok(&call(
        &client,
        "service.check_availability",
        args(days[0], days[1]),
    )
    .await);
    let menu_reads = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/service/services")
        .count();
    assert_eq!(
        menu_reads, 2,
        "one failed read, then one good read kept for later"
    );
}
