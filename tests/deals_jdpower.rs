#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `deals.request_trade_value` through J.D. Power-shaped providers: the
//! built-in `jdpower` profile against the test-kit's mock (a VIN lookup for
//! the provider's vehicle id, then mileage-adjusted values; values from
//! `wiremock-fixtures/jdpower/README.md`), and on wiremock a profile written
//! here whose answer says until when its values hold (`valid_until`), and a
//! lookup that finds no vehicle (no valuation is asked for).

use crate::common;

use std::time::Duration;

use chrono::DateTime;
use common::config::{BridgeConfig, Dealership, Token, Upstream, secret};
use common::{Client, call, connect, err, ok, with_config};
use dms_bridge_testkit::mock_jdpower;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "agent-token";
/// The demo's `VALUED_VIN`: a 2025 Hyundai Tucson SEL AWD.
const TUCSON: &str = "5NMCDKFR3SH382627";
/// A 2025 Ford F-150 that J.D. Power decodes to two bodies (bed lengths).
const F150: &str = "1FTKBSLY7SY156716";
/// A valid VIN J.D. Power has no vehicle for.
const UNKNOWN: &str = "WMEFJ5DA5GK417203";
const LOOKUP_PATH: &str = "/valuation/vehiclesByVin";
const VALUES_PATH: &str = "/valuation/vehicleAndValueByVehicleId";
const TEST_BUDGET: Duration = Duration::from_secs(60);

async fn bounded<F: std::future::Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_BUDGET, body)
        .await
        .expect("test exceeded its time budget");
}

async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

/// Dealership `acme` (Central time) valuing trade-ins with `profile` at `base_url`.
fn config(profile: &str, base_url: &str) -> String {
    let upstream = Upstream::rest(profile, base_url)
        .set(
            "secrets",
            format!("{{ api_key = {} }}", secret(mock_jdpower::API_KEY)),
        )
        .set(
            "vars",
            format!("{{ region = \"{}\" }}", mock_jdpower::REGION),
        )
        .timeout("2s")
        .resilience("{ retries = { max = 0 } }");
    BridgeConfig::new()
        .call_timeout("5s")
        .dealership(Dealership::acme().route("deals", "jdp"))
        .upstream("jdp", upstream)
        .token(Token::new("agent", TOKEN, &["acme"], &["amcp:deals:read"]))
        .render()
}

async fn bridge(profile: &str, base_url: &str) -> (common::Bridge, Client) {
    let bridge = with_config(&config(profile, base_url)).await;
    let client = connect(&bridge.url, Some(TOKEN)).await;
    (bridge, client)
}

async fn value(client: &Client, vin: &str, miles: u64) -> rmcp::model::CallToolResult {
    call(
        client,
        "deals.request_trade_value",
        json!({ "dealership_id": "acme", "vin": vin, "mileage": { "value": miles, "unit": "mi" } }),
    )
    .await
}

fn usd(cents: i64) -> Value {
    json!({ "amount": cents, "currency": "USD" })
}

fn time(value: &Value) -> DateTime<chrono::FixedOffset> {
    DateTime::parse_from_rfc3339(value.as_str().unwrap()).unwrap_or_else(|e| panic!("{value}: {e}"))
}

// --- The built-in profile against the test-kit's mock ---

#[tokio::test]
async fn jdpower_values_a_vin_at_its_mileage_in_cents() {
    bounded(async {
        let mock = serve(mock_jdpower::router()).await;
        let (_bridge, client) = bridge("jdpower", &mock).await;
        let result = ok(&value(&client, TUCSON, 15_070).await);
        assert_eq!(result["vin"], TUCSON);
        assert_eq!(result["provider"], "jdpower");
        // Rough / average / clean at 15,070 mi: $19,250 / $21,400 / $23,050.
        assert_eq!(result["trade_in"]["low"], usd(1_925_000));
        assert_eq!(result["trade_in"]["average"], usd(2_140_000));
        assert_eq!(result["trade_in"]["high"], usd(2_305_000));
        assert_eq!(result["vehicle"]["year"], 2025);
        assert_eq!(result["vehicle"]["make"], "Hyundai");
        assert_eq!(result["vehicle"]["model"], "Tucson");
        assert_eq!(result["vehicle"]["series"], "SEL");
        // The answer does not say until when: the profile's seven days.
        let valued = time(&result["valued_at"]);
        let until = time(&result["valid_until"]);
        let held = (until - valued).num_seconds();
        let week = 7 * 24 * 3600;
        assert!(
            (week - 60..=week + 60).contains(&held),
            "valid for {held} s, not about seven days"
        );
        common::assert_in_zone(&result["valid_until"], chrono_tz::America::Chicago);

        // Fewer miles are worth more: the values follow the mileage asked.
        let lower = ok(&value(&client, TUCSON, 5_000).await);
        assert!(
            lower["trade_in"]["average"]["amount"].as_i64().unwrap() > 2_140_000,
            "{lower}"
        );

        // Two bodies for one VIN: the first is valued (5.5 ft box, 9,331 mi).
        let truck = ok(&value(&client, F150, 9_331).await);
        assert_eq!(truck["trade_in"]["low"], usd(3_517_500));
        assert_eq!(truck["trade_in"]["average"], usd(3_832_500));
        assert_eq!(truck["trade_in"]["high"], usd(4_040_000));
    })
    .await;
}

#[tokio::test]
async fn a_vin_jdpower_does_not_know_is_trade_value_unavailable() {
    bounded(async {
        let mock = serve(mock_jdpower::router()).await;
        let (_bridge, client) = bridge("jdpower", &mock).await;
        let error = err(&value(&client, UNKNOWN, 60_000).await);
        assert_eq!(error["code"], "deals.trade_value_unavailable");
        assert_eq!(error["retryable"], false);
    })
    .await;
}

// --- A profile written here, on wiremock ---

/// J.D. Power's two calls, with `valid_until` read from the answer.
const DATED_PROFILE: &str = r#"
name = "dated-valuer"
description = "A J.D. Power-like provider whose answer says until when its values hold"
domains = ["deals"]

[auth]
kind = "none"

[headers]
api-key = "{secrets.api_key}"

[trade_value]
path = "/valuation/vehicleAndValueByVehicleId"
query = { period = "0", ucgvehicleid = "{lookup.vehicle_id}", region = "{vars.region}", mileage = "{mileage_mi}" }
record = "/result/0"
amounts = "major"
valid_until = "/result/0/validThrough"

[trade_value.fields]
rough = "/adjustedroughtrade"
average = "/adjustedaveragetrade"
clean = "/adjustedcleantrade"
make = "/make"

[trade_value.lookup]
path = "/valuation/vehiclesByVin"
query = { period = "0", vin = "{vin}" }
extract = { vehicle_id = "/result/0/ucgvehicleid" }
"#;

/// The profile in a file of its own; the directory lives as long as the guard.
fn dated_profile() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dated-valuer.toml");
    std::fs::write(&file, DATED_PROFILE).unwrap();
    let name = file.display().to_string();
    (dir, name)
}

/// The lookup of `vin` answering vehicle `id`.
async fn mount_lookup(server: &MockServer, vin: &str, answer: Value) {
    Mock::given(method("GET"))
        .and(path(LOOKUP_PATH))
        .and(query_param("vin", vin))
        .and(header("api-key", mock_jdpower::API_KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(server)
        .await;
}

async fn mount_values(server: &MockServer, id: &str, valid_through: &str) {
    Mock::given(method("GET"))
        .and(path(VALUES_PATH))
        .and(query_param("ucgvehicleid", id))
        .and(query_param("region", mock_jdpower::REGION))
        .and(query_param("mileage", "15070"))
        .and(header("api-key", mock_jdpower::API_KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "requestId": "r-2",
            "result": [{
                "make": "Hyundai",
                "adjustedroughtrade": 19250,
                "adjustedaveragetrade": 21400,
                "adjustedcleantrade": 23050,
                "validThrough": valid_through
            }]
        })))
        .expect(1)
        .mount(server)
        .await;
}

#[tokio::test]
async fn a_date_in_the_answer_holds_to_the_end_of_that_day_in_the_dealerships_zone() {
    bounded(async {
        let server = MockServer::start().await;
        mount_lookup(
            &server,
            TUCSON,
            json!({ "result": [{ "ucgvehicleid": 202514731 }] }),
        )
        .await;
        mount_values(&server, "202514731", "2031-01-15").await;
        mount_lookup(
            &server,
            F150,
            json!({ "result": [{ "ucgvehicleid": 202530418 }] }),
        )
        .await;
        mount_values(&server, "202530418", "2031-07-01T17:00:00Z").await;
        let (_dir, profile) = dated_profile();
        let (_bridge, client) = bridge(&profile, &server.uri()).await;

        let dated = ok(&value(&client, TUCSON, 15_070).await);
        assert_eq!(dated["provider"], "dated-valuer");
        assert_eq!(dated["trade_in"]["average"], usd(2_140_000));
        // Chicago is on CST (UTC-6) in January.
        assert_eq!(dated["valid_until"], "2031-01-15T23:59:59-06:00");

        // An RFC 3339 time is that instant, written in the dealership's zone (CDT in July).
        let timed = ok(&value(&client, F150, 15_070).await);
        assert_eq!(timed["valid_until"], "2031-07-01T12:00:00-05:00");
        server.verify().await;
    })
    .await;
}

#[tokio::test]
async fn a_lookup_that_finds_no_vehicle_is_unavailable_and_asks_for_no_values() {
    bounded(async {
        let server = MockServer::start().await;
        mount_lookup(
            &server,
            UNKNOWN,
            json!({ "requestId": "r-9", "result": [] }),
        )
        .await;
        Mock::given(method("GET"))
            .and(path(VALUES_PATH))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "result": [] })))
            .expect(0)
            .named("the values call")
            .mount(&server)
            .await;
        let (_dir, profile) = dated_profile();
        let (_bridge, client) = bridge(&profile, &server.uri()).await;
        let error = err(&value(&client, UNKNOWN, 15_070).await);
        assert_eq!(error["code"], "deals.trade_value_unavailable");
        let lookups = server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.url.path() == LOOKUP_PATH)
            .count();
        assert_eq!(lookups, 1, "the VIN was looked up");
        server.verify().await;
    })
    .await;
}
