#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The feed adapter end to end: a CSV/TSV feed faked with wiremock (conditional
//! GET, Last-Modified, failures), the real bridge on loopback, a real MCP client.
//! Expected values are computed from the fixture files with the `csv` crate, not
//! with the bridge's own parser.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Offset, TimeZone, Utc};
use common::config::{BridgeConfig, Dealership, Token, Upstream, quoted};
use common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TOKEN: &str = "lot-token";
const FEED_PATH: &str = "/exports/lot/inventory.csv";
const PRIVATE_PATH: &str = "/exports/private/inventory.csv";
const ZONE: &str = "America/Denver";
/// Upper bound on every test; each waits for at most a few refresh intervals.
const TEST_BUDGET: Duration = Duration::from_secs(120);
/// Upper bound on waiting for the bridge's 1 s refresh loop to do something.
const POLL_BUDGET: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------
// The fake feed
// ---------------------------------------------------------------------------

/// What the fake feed answers.
#[derive(Clone)]
enum Answer {
    /// A feed file with validators; a request whose If-None-Match equals `etag` gets 304.
    Feed {
        body: String,
        etag: String,
        last_modified: Option<String>,
    },
    /// A bare status with a short text body.
    Status(u16),
    /// HTTP 200 with something that is not a feed.
    Garbage {
        body: String,
        content_type: &'static str,
    },
}

/// One request as the fake feed saw it.
#[derive(Debug, Clone)]
struct Seen {
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
    status: u16,
}

struct FeedState {
    answer: Answer,
    /// Full 200 answers with a feed body.
    full: usize,
    requests: Vec<Seen>,
}

/// A feed whose answer the test can switch; shared with the mock server.
#[derive(Clone)]
struct FakeFeed(Arc<Mutex<FeedState>>);

impl FakeFeed {
    fn new(answer: Answer) -> Self {
        Self(Arc::new(Mutex::new(FeedState {
            answer,
            full: 0,
            requests: Vec::new(),
        })))
    }

    fn set(&self, answer: Answer) {
        self.0.lock().unwrap().answer = answer;
    }

    fn full_reads(&self) -> usize {
        self.0.lock().unwrap().full
    }

    fn requests(&self) -> Vec<Seen> {
        self.0.lock().unwrap().requests.clone()
    }
}

impl Respond for FakeFeed {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let header = |name: &str| {
            request
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (if_none_match, if_modified_since) =
            (header("if-none-match"), header("if-modified-since"));
        let mut state = self.0.lock().unwrap();
        let (status, template) = match state.answer.clone() {
            Answer::Feed { etag, .. } if if_none_match.as_deref() == Some(etag.as_str()) => (
                304,
                ResponseTemplate::new(304).insert_header("ETag", etag.as_str()),
            ),
            Answer::Feed {
                body,
                etag,
                last_modified,
            } => {
                state.full += 1;
                let mut t = ResponseTemplate::new(200)
                    .set_body_raw(body, "text/csv; charset=utf-8")
                    .insert_header("ETag", etag.as_str());
                if let Some(lm) = last_modified {
                    t = t.insert_header("Last-Modified", lm.as_str());
                }
                (200, t)
            }
            Answer::Status(code) => (
                code,
                ResponseTemplate::new(code).set_body_string("Internal Server Error"),
            ),
            Answer::Garbage { body, content_type } => (
                200,
                ResponseTemplate::new(200).set_body_raw(body, content_type),
            ),
        };
        state.requests.push(Seen {
            if_none_match,
            if_modified_since,
            status,
        });
        template
    }
}

fn feed(body: &str, etag: &str, last_modified: Option<&str>) -> Answer {
    Answer::Feed {
        body: body.to_owned(),
        etag: etag.to_owned(),
        last_modified: last_modified.map(str::to_owned),
    }
}

fn homenet() -> String {
    fixture("feed/homenet-inventory.csv")
}

fn homenet_next() -> String {
    fixture("feed/homenet-inventory-next.csv")
}

/// An HTTP-date (RFC 7231 IMF-fixdate, which RFC 2822 parsers read).
fn http_date(t: DateTime<Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

// ---------------------------------------------------------------------------
// The bridge
// ---------------------------------------------------------------------------

/// `lot` (anonymous inventory, feed at `feed_path` read with `mapping`) and
/// `private` (token only, its own feed that always answers the HomeNet fixture).
fn config(server: &str, feed_path: &str, mapping: &str, currency: &str) -> String {
    let lot = Dealership::new(
        "lot",
        "Lakeside Lot",
        ZONE,
        ["88 Lakeshore Blvd", "Boulder", "CO", "80301"],
    )
    .set("currency", quoted(currency))
    .set("anonymous_inventory", "true");
    let private = Dealership::new(
        "private",
        "Private Motors",
        "America/Chicago",
        ["2 Side St", "Springfield", "IL", "62701"],
    );
    let feed = Upstream::feed(&format!("{server}{feed_path}"), mapping)
        .refresh_interval("1s")
        .timeout("2s")
        // A short-lived breaker so a feed that recovers is read again within the test.
        .resilience(r#"{ circuit_breaker = { failures = 5, open_for = "500ms" }, retries = { max = 1, base_delay = "10ms", max_delay = "50ms" } }"#);
    let private_feed = Upstream::feed(&format!("{server}{PRIVATE_PATH}"), "homenet-csv")
        .refresh_interval("1h")
        .timeout("2s");
    BridgeConfig::new()
        .call_timeout("5s")
        .dealership(lot.route("inventory", "feed"))
        .dealership(private.route("inventory", "private-feed"))
        .upstream("feed", feed)
        .upstream("private-feed", private_feed)
        .token(Token::new(
            "lot",
            TOKEN,
            &["lot", "private"],
            &["amcp:inventory:read"],
        ))
        .render()
}

struct Setup {
    /// Kept alive for the test's duration.
    _server: MockServer,
    feed: FakeFeed,
    bridge: Bridge,
}

async fn setup_with(answer: Answer, feed_path: &str, mapping: &str, currency: &str) -> Setup {
    let server = MockServer::start().await;
    let feed = FakeFeed::new(answer);
    Mock::given(method("GET"))
        .and(path(feed_path))
        .respond_with(feed.clone())
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(PRIVATE_PATH))
        .respond_with(ResponseTemplate::new(200).set_body_raw(homenet(), "text/csv"))
        .mount(&server)
        .await;
    let bridge = with_config(&config(&server.uri(), feed_path, mapping, currency)).await;
    Setup {
        _server: server,
        feed,
        bridge,
    }
}

async fn setup(answer: Answer) -> Setup {
    setup_with(answer, FEED_PATH, "homenet-csv", "USD").await
}

/// Runs a test body with an overall deadline.
async fn bounded<F: Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_BUDGET, body)
        .await
        .expect("test exceeded its time budget");
}

/// Polls `probe` every 100 ms until it yields a value, for at most [`POLL_BUDGET`].
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + POLL_BUDGET;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every listed vehicle of a dealership (one page: all fixtures hold fewer than 100).
async fn listed(client: &Client, dealership: &str) -> Vec<Value> {
    let page = every_page(client, json!({ "dealership_id": dealership })).await;
    let items = page["items"].as_array().unwrap().clone();
    assert_eq!(
        page["total"].as_u64().unwrap() as usize,
        items.len(),
        "all vehicles fit one page"
    );
    assert!(page.get("next_cursor").is_none(), "no second page expected");
    items
}

fn by_vin(items: &[Value]) -> BTreeMap<String, Value> {
    items
        .iter()
        .map(|v| {
            (
                v["vin"]
                    .as_str()
                    .expect("every fixture row has a valid VIN")
                    .to_owned(),
                v.clone(),
            )
        })
        .collect()
}

async fn get_vin(client: &Client, vin: &str) -> rmcp::model::CallToolResult {
    call(
        client,
        "inventory.get",
        json!({ "dealership_id": "lot", "vin": vin }),
    )
    .await
}

// ---------------------------------------------------------------------------
// Reading the fixtures independently
// ---------------------------------------------------------------------------

type Row = BTreeMap<String, String>;

/// Rows keyed by the exact header names.
fn rows(text: &str, delimiter: u8) -> Vec<Row> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .quoting(delimiter == b',')
        .from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            assert_eq!(r.len(), headers.len(), "fixture rows are rectangular");
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

fn csv_rows(text: &str) -> Vec<Row> {
    rows(text, b',')
}

fn is_sold(row: &Row) -> bool {
    row["Status"].eq_ignore_ascii_case("sold")
}

/// `"$24,995"`, `"24995.00"`, `"24995"`, `"18,995.00 USD"` → cents; empty → `None`.
fn cents(raw: &str) -> Option<i64> {
    let number = raw.trim().trim_end_matches("USD").trim();
    let cleaned: String = number.chars().filter(|c| !matches!(c, '$' | ',')).collect();
    if cleaned.is_empty() {
        return None;
    }
    let (whole, fraction) = cleaned.split_once('.').unwrap_or((&cleaned, ""));
    let fraction = format!("{fraction:0<2}");
    Some(whole.parse::<i64>().unwrap() * 100 + fraction[..2].parse::<i64>().unwrap())
}

fn money(raw: &str) -> Value {
    cents(raw).map_or(
        Value::Null,
        |amount| json!({ "amount": amount, "currency": "USD" }),
    )
}

/// `"12,345"` / `"12345"` / `"12000 miles"` → 12345.
fn miles(raw: &str) -> u64 {
    raw.split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

/// `MM/DD/YYYY` → `YYYY-MM-DD`.
fn us_date(raw: &str) -> String {
    let parts: Vec<&str> = raw.split('/').collect();
    assert_eq!(parts.len(), 3, "{raw} is MM/DD/YYYY");
    format!("{}-{}-{}", parts[2], parts[0], parts[1])
}

fn homenet_condition(row: &Row) -> &'static str {
    if row["Certified"].eq_ignore_ascii_case("yes") {
        return "cpo";
    }
    match row["Type"].as_str() {
        "New" => "new",
        "Used" => "used",
        other => panic!("unexpected Type {other}"),
    }
}

fn homenet_status(row: &Row) -> &'static str {
    match row["Status"].as_str() {
        "In Stock" => "available",
        "In Transit" => "in_transit",
        "Pending" => "pending",
        other => panic!("unexpected Status {other}"),
    }
}

fn row_by_vin<'a>(rows: &'a [Row], vin: &str) -> &'a Row {
    rows.iter()
        .find(|r| r["VIN"] == vin)
        .unwrap_or_else(|| panic!("{vin} is in the fixture"))
}

/// `field` of `v`, or null when absent.
fn opt(v: &Value, field: &str) -> Value {
    v.get(field).cloned().unwrap_or(Value::Null)
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[tokio::test]
async fn every_unsold_row_is_listed_and_sold_rows_are_unavailable() {
    bounded(async {
        let csv = homenet();
        let rows = csv_rows(&csv);
        let unsold: BTreeSet<&str> = rows
            .iter()
            .filter(|r| !is_sold(r))
            .map(|r| r["VIN"].as_str())
            .collect();
        let sold: Vec<&str> = rows
            .iter()
            .filter(|r| is_sold(r))
            .map(|r| r["VIN"].as_str())
            .collect();
        assert!(
            !sold.is_empty() && !unsold.is_empty(),
            "the fixture has sold and unsold rows"
        );

        let s = setup(feed(&csv, "\"v1\"", None)).await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let items = listed(&client, "lot").await;
        assert_eq!(
            items.len(),
            unsold.len(),
            "one listed vehicle per row that is not Sold"
        );
        let listed_vins: BTreeSet<&str> =
            items.iter().map(|v| v["vin"].as_str().unwrap()).collect();
        assert_eq!(listed_vins, unsold);
        let ids: BTreeSet<&str> = items.iter().map(|v| v["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), items.len(), "vehicle ids are unique");
        for vin in &sold {
            assert!(
                !listed_vins.contains(vin),
                "sold {vin} must never be listed"
            );
            assert_eq!(
                err(&get_vin(&client, vin).await)["code"],
                "inventory.vehicle_unavailable",
                "inventory.get on sold {vin}"
            );
        }
        // Filtering for the stock number of a sold unit finds nothing either.
        let stock = &rows.iter().find(|r| is_sold(r)).unwrap()["Stock"];
        let page = ok(&call(
            &client,
            "inventory.search",
            json!({ "response_format": "detailed", "dealership_id": "lot", "filters": { "stock": stock } }),
        )
        .await);
        assert_eq!(page["total"], 0);
        // A listed unit is found by VIN, a VIN that was never in the feed is not found.
        let first = *unsold.iter().next().unwrap();
        assert_eq!(ok(&get_vin(&client, first).await)["vehicle"]["vin"], first);
        assert_eq!(
            err(&get_vin(&client, "1HGBH41JXMN109186").await)["code"],
            "inventory.vehicle_not_found"
        );
    })
    .await;
}

#[tokio::test]
async fn every_field_is_mapped_from_the_csv() {
    bounded(async {
        let csv = homenet();
        let rows = csv_rows(&csv);
        let s = setup(feed(&csv, "\"v1\"", None)).await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let vehicles = by_vin(&listed(&client, "lot").await);

        // Whole-table check: every unsold row, every mapped field.
        for row in rows.iter().filter(|r| !is_sold(r)) {
            let vin = row["VIN"].as_str();
            let v = &vehicles[vin];
            let text = |field: &str| json!(row[field]);
            assert_eq!(v["dealership_id"], "lot", "{vin}");
            assert!(
                v["id"].as_str().unwrap().starts_with("veh_") && v["id"] != v["vin"],
                "{vin}: id {}",
                v["id"]
            );
            assert_eq!(v["stock"], text("Stock"), "{vin} stock");
            assert_eq!(v["condition"], homenet_condition(row), "{vin} condition");
            assert_eq!(v["status"], homenet_status(row), "{vin} status");
            assert_eq!(
                v["year"],
                json!(row["Year"].parse::<i64>().unwrap()),
                "{vin} year"
            );
            assert_eq!(
                v["doors"],
                json!(row["Doors"].parse::<i64>().unwrap()),
                "{vin} doors"
            );
            for (canonical, column) in [
                ("make", "Make"),
                ("model", "Model"),
                ("trim", "Trim"),
                ("body", "Body"),
                ("exterior_color", "ExteriorColor"),
                ("interior_color", "InteriorColor"),
                ("engine", "EngineDescription"),
                ("transmission", "Transmission"),
                ("drivetrain", "Drivetrain"),
                ("fuel", "FuelType"),
                ("vdp_url", "VDP"),
                ("description", "Description"),
            ] {
                assert_eq!(v[canonical], text(column), "{vin} {canonical}");
            }
            assert_eq!(
                v["mileage"],
                json!({ "value": miles(&row["Miles"]), "unit": "mi" }),
                "{vin} mileage"
            );
            assert_eq!(
                opt(v, "price"),
                money(&row["SellingPrice"]),
                "{vin} price from {:?}",
                row["SellingPrice"]
            );
            assert_eq!(
                opt(v, "list_price"),
                money(&row["InternetPrice"]),
                "{vin} list_price"
            );
            assert_eq!(opt(v, "msrp"), money(&row["MSRP"]), "{vin} msrp");
            assert_eq!(
                v["inventory_date"],
                json!(us_date(&row["DateInStock"])),
                "{vin} inventory_date"
            );
            let photos: Vec<&str> = row["ImageList"].split('|').collect();
            assert_eq!(v["photos"], json!(photos), "{vin} photos");
        }

        // Specific rows, spelled out.
        let raw = |vin: &str, column: &str| row_by_vin(&rows, vin)[column].clone();
        // "$40,745" (dollar sign and thousands separator).
        assert_eq!(raw("1C6ZJDXK1NW723404", "SellingPrice"), "$40,745");
        assert_eq!(
            vehicles["1C6ZJDXK1NW723404"]["price"],
            json!({ "amount": 4_074_500, "currency": "USD" })
        );
        // "24995.00" (decimals, no symbol).
        assert_eq!(raw("4S3P9WNE6MK933388", "SellingPrice"), "24995.00");
        assert_eq!(
            vehicles["4S3P9WNE6MK933388"]["price"],
            json!({ "amount": 2_499_500, "currency": "USD" })
        );
        // Empty SellingPrice: call for price, no `price` at all (the MSRP stays).
        for vin in ["1FASK6ZL9R3381111", "JTDCXSX64T9792197"] {
            assert_eq!(raw(vin, "SellingPrice"), "");
            assert!(
                vehicles[vin].get("price").is_none(),
                "{vin} has no price: {}",
                vehicles[vin]
            );
        }
        assert_eq!(
            vehicles["JTDCXSX64T9792197"]["msrp"],
            json!({ "amount": 2_479_500, "currency": "USD" })
        );
        // Miles "10,565" and "25989".
        assert_eq!(raw("JTNCXTM71SN700564", "Miles"), "10,565");
        assert_eq!(
            vehicles["JTNCXTM71SN700564"]["mileage"],
            json!({ "value": 10565, "unit": "mi" })
        );
        assert_eq!(
            vehicles["JF2DW7XH3R8007836"]["mileage"],
            json!({ "value": 25989, "unit": "mi" })
        );
        // Used + Certified Yes = certified pre-owned; Used + No = used; New = new.
        assert_eq!(
            (
                raw("JF2DW7XH3R8007836", "Type"),
                raw("JF2DW7XH3R8007836", "Certified")
            ),
            ("Used".into(), "Yes".into())
        );
        assert_eq!(vehicles["JF2DW7XH3R8007836"]["condition"], "cpo");
        assert_eq!(vehicles["JTNCXTM71SN700564"]["condition"], "used");
        assert_eq!(vehicles["7MUCHBEK8TJ441238"]["condition"], "new");
        let cpo_rows = rows
            .iter()
            .filter(|r| !is_sold(r) && r["Certified"] == "Yes")
            .count();
        let cpo_listed = vehicles
            .values()
            .filter(|v| v["condition"] == "cpo")
            .count();
        assert_eq!(cpo_listed, cpo_rows);
        assert!(cpo_rows >= 2);
        // "In Transit" and "Pending".
        assert_eq!(vehicles["5TDXBRW82TF880669"]["status"], "in_transit");
        assert_eq!(vehicles["JF1CMKTN8NT664207"]["status"], "pending");
        let in_transit_rows = rows.iter().filter(|r| r["Status"] == "In Transit").count();
        assert_eq!(
            vehicles
                .values()
                .filter(|v| v["status"] == "in_transit")
                .count(),
            in_transit_rows
        );
        // MM/DD/YYYY → YYYY-MM-DD.
        assert_eq!(raw("7MUCHBEK8TJ441238", "DateInStock"), "11/09/2026");
        assert_eq!(
            vehicles["7MUCHBEK8TJ441238"]["inventory_date"],
            "2026-11-09"
        );
        // ImageList split on |.
        assert_eq!(
            vehicles["JTNCXTM71SN700564"]["photos"],
            json!([
                "https://images.demo-feed.example/JTNCXTM71SN700564/1.jpg",
                "https://images.demo-feed.example/JTNCXTM71SN700564/2.jpg",
                "https://images.demo-feed.example/JTNCXTM71SN700564/3.jpg",
                "https://images.demo-feed.example/JTNCXTM71SN700564/4.jpg"
            ])
        );
        // Commas and doubled quotes in a quoted field round-trip exactly; so does an em dash.
        assert_eq!(
            vehicles["JTNCXTM71SN700564"]["description"],
            "Priced to move, \"no haggle\" pricing, financing available."
        );
        assert_eq!(
            vehicles["4S3P9WNE6MK933388"]["description"],
            "Moonroof, alloy wheels \u{2014} a great commuter, test drive today."
        );
        // The same vehicle from inventory.get.
        let got = ok(&get_vin(&client, "JTNCXTM71SN700564").await);
        assert_eq!(got["vehicle"], vehicles["JTNCXTM71SN700564"]);
    })
    .await;
}

#[tokio::test]
async fn last_verified_at_is_the_feeds_last_modified_in_the_dealerships_zone() {
    bounded(async {
        let modified =
            DateTime::<Utc>::from_timestamp(Utc::now().timestamp() - 2 * 3600, 0).unwrap();
        let s = setup(feed(&homenet(), "\"v1\"", Some(&http_date(modified)))).await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let items = listed(&client, "lot").await;
        assert!(!items.is_empty());
        let zone: chrono_tz::Tz = ZONE.parse().unwrap();
        let expected_offset = zone.offset_from_utc_datetime(&modified.naive_utc()).fix();
        let one = ok(&get_vin(&client, items[0]["vin"].as_str().unwrap()).await);
        for v in items.iter().chain([&one["vehicle"]]) {
            let raw = v["last_verified_at"].as_str().unwrap();
            let at = DateTime::parse_from_rfc3339(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(
                at.with_timezone(&Utc),
                modified,
                "{} last_verified_at {raw}",
                v["vin"]
            );
            assert_eq!(*at.offset(), expected_offset, "{raw} is in {ZONE}");
        }
    })
    .await;
}

#[tokio::test]
async fn last_verified_at_is_never_later_than_the_fetch() {
    bounded(async {
        // A feed that claims to have been modified tomorrow vouches for nothing after we read it.
        let future =
            DateTime::<Utc>::from_timestamp(Utc::now().timestamp() + 24 * 3600, 0).unwrap();
        let before = DateTime::<Utc>::from_timestamp(Utc::now().timestamp(), 0).unwrap();
        let s = setup(feed(&homenet(), "\"v1\"", Some(&http_date(future)))).await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let items = listed(&client, "lot").await;
        let after = Utc::now();
        for v in &items {
            let at = DateTime::parse_from_rfc3339(v["last_verified_at"].as_str().unwrap())
                .unwrap()
                .with_timezone(&Utc);
            assert!(
                before <= at && at <= after,
                "{} last_verified_at {at} outside [{before}, {after}]",
                v["vin"]
            );
        }
    })
    .await;
}

#[tokio::test]
async fn refreshes_are_conditional_and_304_keeps_the_snapshot() {
    bounded(async {
        let etag = "\"homenet-1\"";
        let modified =
            http_date(DateTime::<Utc>::from_timestamp(Utc::now().timestamp() - 600, 0).unwrap());
        let s = setup(feed(&homenet(), etag, Some(&modified))).await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let first = listed(&client, "lot").await;
        let expected = csv_rows(&homenet()).iter().filter(|r| !is_sold(r)).count();
        assert_eq!(first.len(), expected);

        // The 1 s refresh loop keeps asking; wait for at least two more requests.
        let seen = eventually("two refreshes after the first load", || {
            let requests = s.feed.requests();
            async move { (requests.len() >= 3).then_some(requests) }
        })
        .await;
        assert_eq!(
            seen[0].status, 200,
            "the first request reads the whole feed"
        );
        assert_eq!(
            seen[0].if_none_match, None,
            "nothing to validate against yet"
        );
        for (i, r) in seen.iter().enumerate().skip(1) {
            assert_eq!(
                r.if_none_match.as_deref(),
                Some(etag),
                "request {i} carries If-None-Match"
            );
            assert_eq!(
                r.if_modified_since.as_deref(),
                Some(modified.as_str()),
                "request {i} carries If-Modified-Since"
            );
            assert_eq!(r.status, 304, "request {i}");
        }
        assert_eq!(s.feed.full_reads(), 1, "the body is served once");

        let again = listed(&client, "lot").await;
        assert_eq!(again, first, "a 304 keeps the snapshot as it was");
        assert_eq!(s.feed.full_reads(), 1);
    })
    .await;
}

#[tokio::test]
async fn units_gone_from_the_next_snapshot_are_sold_new_arrivals_listed_prices_updated() {
    bounded(async {
        let (before_csv, after_csv) = (homenet(), homenet_next());
        let (before, after) = (csv_rows(&before_csv), csv_rows(&after_csv));
        let after_vins: BTreeSet<&str> = after.iter().map(|r| r["VIN"].as_str()).collect();
        let before_vins: BTreeSet<&str> = before.iter().map(|r| r["VIN"].as_str()).collect();
        let gone: Vec<&str> = before_vins.difference(&after_vins).copied().collect();
        let arrived: Vec<&str> = after_vins.difference(&before_vins).copied().collect();
        let repriced: Vec<(&str, &str)> = after
            .iter()
            .filter(|r| before_vins.contains(r["VIN"].as_str()))
            .filter(|r| row_by_vin(&before, &r["VIN"])["SellingPrice"] != r["SellingPrice"])
            .map(|r| (r["VIN"].as_str(), r["SellingPrice"].as_str()))
            .collect();
        assert_eq!(gone.len(), 3, "the README says three units sold: {gone:?}");
        assert!(
            gone.iter().all(|v| !is_sold(row_by_vin(&before, v))),
            "the gone units were listed before"
        );
        assert_eq!(arrived.len(), 1, "{arrived:?}");
        assert_eq!(repriced.len(), 1, "{repriced:?}");
        let expected_after = after.iter().filter(|r| !is_sold(r)).count();

        let s = setup(feed(&before_csv, "\"snap-1\"", None)).await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let first = by_vin(&listed(&client, "lot").await);
        assert_eq!(first.len(), before.iter().filter(|r| !is_sold(r)).count());
        for vin in &gone {
            assert!(
                first.contains_key(*vin),
                "{vin} is listed in the first snapshot"
            );
        }
        assert!(!first.contains_key(arrived[0]));
        let gone_ids: Vec<String> = gone
            .iter()
            .map(|v| first[*v]["id"].as_str().unwrap().to_owned())
            .collect();

        // The dealer's next export.
        s.feed.set(feed(&after_csv, "\"snap-2\"", None));
        let now = eventually("the next snapshot to be served", || {
            let c = &client;
            async move {
                let items = listed(c, "lot").await;
                (items.len() == expected_after).then(|| by_vin(&items))
            }
        })
        .await;
        assert_eq!(s.feed.full_reads(), 2);
        let listed_now: BTreeSet<&str> = now.keys().map(String::as_str).collect();
        let expected_now: BTreeSet<&str> = after
            .iter()
            .filter(|r| !is_sold(r))
            .map(|r| r["VIN"].as_str())
            .collect();
        assert_eq!(listed_now, expected_now);
        for (vin, id) in gone.iter().zip(&gone_ids) {
            assert_eq!(
                err(&get_vin(&client, vin).await)["code"],
                "inventory.vehicle_unavailable",
                "{vin} by VIN"
            );
            let by_id = call(
                &client,
                "inventory.get",
                json!({ "dealership_id": "lot", "vehicle_id": id }),
            )
            .await;
            assert_eq!(
                err(&by_id)["code"],
                "inventory.vehicle_unavailable",
                "{vin} by id {id}"
            );
        }
        let new = &now[arrived[0]];
        let new_row = row_by_vin(&after, arrived[0]);
        assert_eq!(new["stock"], json!(new_row["Stock"]));
        assert_eq!(opt(new, "price"), money(&new_row["SellingPrice"]));
        let (repriced_vin, new_price) = repriced[0];
        assert_eq!(now[repriced_vin]["price"], money(new_price));
        assert_ne!(now[repriced_vin]["price"], first[repriced_vin]["price"]);
        assert_eq!(
            now[repriced_vin]["id"], first[repriced_vin]["id"],
            "ids are stable across refreshes"
        );

        // A later full load of the same contents (new ETag) still remembers the sold units.
        s.feed.set(feed(&after_csv, "\"snap-3\"", None));
        eventually("a third full read", || {
            let n = s.feed.full_reads();
            async move { (n >= 3).then_some(()) }
        })
        .await;
        for vin in &gone {
            assert_eq!(
                err(&get_vin(&client, vin).await)["code"],
                "inventory.vehicle_unavailable",
                "{vin} after another load"
            );
        }
        assert_eq!(listed(&client, "lot").await.len(), expected_after);
    })
    .await;
}

#[tokio::test]
async fn a_feed_failing_at_start_up_is_unavailable_then_recovers() {
    bounded(async {
        let s = setup(Answer::Status(500)).await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let failure = err(&call(
            &client,
            "inventory.search",
            json!({ "response_format": "detailed", "dealership_id": "lot" }),
        )
        .await);
        assert_eq!(failure["code"], "upstream.unavailable");
        assert_eq!(failure["retryable"], true);
        assert!(
            !failure["message"]
                .as_str()
                .unwrap()
                .contains("Internal Server Error"),
            "no upstream text: {failure}"
        );
        assert_eq!(
            err(&get_vin(&client, "JTNCXTM71SN700564").await)["code"],
            "upstream.unavailable",
            "inventory.get cannot answer from a feed never read"
        );

        s.feed.set(feed(&homenet(), "\"v1\"", None));
        let expected = csv_rows(&homenet()).iter().filter(|r| !is_sold(r)).count();
        let items = eventually("the feed to recover", || {
            let c = &client;
            async move {
                let result = call(
                    c,
                    "inventory.search",
                    json!({ "response_format": "detailed", "dealership_id": "lot", "limit": 100 }),
                )
                .await;
                (result.is_error != Some(true))
                    .then(|| ok(&result)["items"].as_array().unwrap().len())
            }
        })
        .await;
        assert_eq!(items, expected);
        assert!(
            s.feed.requests().iter().any(|r| r.status == 500),
            "the feed did fail first"
        );
    })
    .await;
}

const NGINX_502: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

/// A minified sign-in page, as CDNs and login walls serve it: one line, with commas.
const MINIFIED_LOGIN: &str = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Sign in</title></head><body><form action=\"/login\" method=\"post\"><input name=\"user\"><input name=\"password\" type=\"password\"></form></body></html>";

#[tokio::test]
async fn an_html_page_instead_of_the_feed_is_an_invalid_response() {
    bounded(async {
        let s = setup(Answer::Garbage {
            body: NGINX_502.into(),
            content_type: "text/html",
        })
        .await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let failure = err(&call(
            &client,
            "inventory.search",
            json!({ "response_format": "detailed", "dealership_id": "lot" }),
        )
        .await);
        assert_eq!(failure["code"], "upstream.invalid_response");
        assert!(
            !failure.to_string().contains("nginx"),
            "no upstream text: {failure}"
        );

        // Once the feed is good, garbage on a later refresh does not replace the last good copy.
        s.feed.set(feed(&homenet(), "\"v1\"", None));
        let expected = csv_rows(&homenet()).iter().filter(|r| !is_sold(r)).count();
        assert_eq!(listed(&client, "lot").await.len(), expected);
        let seen = s.feed.requests().len();
        s.feed.set(Answer::Garbage {
            body: NGINX_502.into(),
            content_type: "text/html",
        });
        eventually("a refresh that reads the HTML page", || {
            let n = s.feed.requests().len();
            async move { (n >= seen + 2).then_some(()) }
        })
        .await;
        assert_eq!(
            listed(&client, "lot").await.len(),
            expected,
            "the last good copy is still served"
        );
    })
    .await;
}

#[tokio::test]
async fn a_one_line_html_page_at_start_up_is_an_invalid_response_not_an_empty_inventory() {
    bounded(async {
        let s = setup(Answer::Garbage {
            body: MINIFIED_LOGIN.into(),
            content_type: "text/html; charset=utf-8",
        })
        .await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let result = call(
            &client,
            "inventory.search",
            json!({ "response_format": "detailed", "dealership_id": "lot" }),
        )
        .await;
        assert_eq!(
            result.is_error,
            Some(true),
            "a sign-in page is not an empty inventory; got {:?}",
            result.structured_content
        );
        assert_eq!(err(&result)["code"], "upstream.invalid_response");
    })
    .await;
}

#[tokio::test]
async fn a_one_line_html_page_after_a_good_load_does_not_make_every_vehicle_sold() {
    bounded(async {
        let rows = csv_rows(&homenet());
        let expected = rows.iter().filter(|r| !is_sold(r)).count();
        let s = setup(feed(&homenet(), "\"v1\"", None)).await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        assert_eq!(listed(&client, "lot").await.len(), expected);
        let seen = s.feed.requests().len();
        s.feed.set(Answer::Garbage {
            body: MINIFIED_LOGIN.into(),
            content_type: "text/html; charset=utf-8",
        });
        eventually("a refresh that reads the sign-in page", || {
            let n = s.feed.requests().len();
            async move { (n >= seen + 2).then_some(()) }
        })
        .await;
        let vin = &rows.iter().find(|r| !is_sold(r)).unwrap()["VIN"];
        let got = get_vin(&client, vin).await;
        assert_eq!(
            got.is_error,
            Some(false),
            "{vin} was listed and the feed never said otherwise; got {:?}",
            got.structured_content
        );
        assert_eq!(
            listed(&client, "lot").await.len(),
            expected,
            "the last good copy is still served"
        );
    })
    .await;
}

#[tokio::test]
async fn google_vehicle_listings_tsv_maps_every_row() {
    bounded(async {
        let tsv = fixture("feed/google-vehicle-listings.tsv");
        let rows = rows(&tsv, b'\t');
        assert_eq!(rows.len(), 12, "the README says 12 rows");
        // The dealership prices in CAD: the USD written in the feed must win.
        let s = setup_with(
            feed(&tsv, "\"vla-1\"", None),
            "/feeds/vla.tsv",
            "google-vehicle-listings",
            "CAD",
        )
        .await;
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        let vehicles = by_vin(&listed(&client, "lot").await);
        assert_eq!(vehicles.len(), rows.len(), "all rows listed");

        for row in &rows {
            let vin = row["vin"].as_str();
            let v = &vehicles[vin];
            assert_eq!(v["stock"], json!(row["id"]), "{vin}");
            assert_eq!(v["make"], json!(row["make"]), "{vin}");
            assert_eq!(v["model"], json!(row["model"]), "{vin}");
            assert_eq!(
                v["year"],
                json!(row["year"].parse::<i64>().unwrap()),
                "{vin}"
            );
            assert_eq!(v["exterior_color"], json!(row["color"]), "{vin}");
            assert!(row["price"].ends_with(" USD"), "{vin} {}", row["price"]);
            assert_eq!(
                v["price"],
                money(&row["price"]),
                "{vin} price from {:?}",
                row["price"]
            );
            assert_eq!(opt(v, "msrp"), money(&row["vehicle_msrp"]), "{vin} msrp");
            assert!(row["mileage"].ends_with(" miles"));
            assert_eq!(
                v["mileage"],
                json!({ "value": miles(&row["mileage"]), "unit": "mi" }),
                "{vin}"
            );
            let condition = if row["certified_pre-owned"] == "yes" {
                "cpo"
            } else {
                row["condition"].as_str()
            };
            assert_eq!(v["condition"], condition, "{vin}");
            assert_eq!(v["status"], "available", "{vin}");
            assert_eq!(v["inventory_date"], json!(row["date_in_stock"]), "{vin}");
            assert_eq!(v["vdp_url"], json!(row["link"]), "{vin}");
            let mut photos = vec![row["image_link"].as_str()];
            photos.extend(
                row["additional_image_link"]
                    .split(',')
                    .filter(|p| !p.is_empty()),
            );
            assert_eq!(v["photos"], json!(photos), "{vin}");
        }
        // Spelled out: "42,995.00 USD", "36995 USD", "28279 miles", certified yes → cpo, suv → SUV.
        assert_eq!(
            vehicles["1C6ZJDXK1PW700983"]["price"],
            json!({ "amount": 4_299_500, "currency": "USD" })
        );
        assert_eq!(
            vehicles["7MMJW1XU2TM175851"]["price"],
            json!({ "amount": 3_699_500, "currency": "USD" })
        );
        assert_eq!(
            vehicles["1C6ZJDXK1PW700983"]["mileage"],
            json!({ "value": 28279, "unit": "mi" })
        );
        let certified: Vec<&str> = rows
            .iter()
            .filter(|r| r["certified_pre-owned"] == "yes")
            .map(|r| r["vin"].as_str())
            .collect();
        assert_eq!(certified.len(), 2);
        assert_eq!(
            vehicles
                .values()
                .filter(|v| v["condition"] == "cpo")
                .count(),
            certified.len()
        );
        assert_eq!(vehicles["JM1FGRPAXNX761366"]["condition"], "cpo");
        let suvs: Vec<&str> = rows
            .iter()
            .filter(|r| r["body_style"] == "suv")
            .map(|r| r["vin"].as_str())
            .collect();
        assert!(!suvs.is_empty());
        for vin in suvs {
            assert_eq!(vehicles[vin]["body"], "SUV", "{vin}");
        }
        assert_eq!(vehicles["1C6ZJDXK1PW700983"]["body"], "Pickup", "truck");
        assert_eq!(vehicles["3MZE31UEXL4264124"]["body"], "Sedan");
    })
    .await;
}

#[tokio::test]
async fn anonymous_callers_read_only_anonymous_inventory() {
    bounded(async {
        let s = setup(feed(&homenet(), "\"v1\"", None)).await;
        let expected = csv_rows(&homenet()).iter().filter(|r| !is_sold(r)).count();
        let anonymous = connect(&s.bridge.url, None).await;
        assert_eq!(
            listed(&anonymous, "lot").await.len(),
            expected,
            "anonymous search on lot"
        );
        assert_eq!(
            ok(&get_vin(&anonymous, "JTNCXTM71SN700564").await)["vehicle"]["stock"],
            "F10762"
        );
        let denied = err(&call(
            &anonymous,
            "inventory.search",
            json!({ "response_format": "detailed", "dealership_id": "private" }),
        )
        .await);
        assert_eq!(denied["code"], "auth.unauthorized");
        assert_eq!(denied["retryable"], false);
        // The same search with the token works, so the refusal is about the missing token.
        let client = connect(&s.bridge.url, Some(TOKEN)).await;
        assert_eq!(listed(&client, "private").await.len(), expected);
    })
    .await;
}
