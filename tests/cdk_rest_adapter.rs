//! The `cdk-fortellis` REST profile against a wiremock CDK/Fortellis upstream:
//! OAuth2 client credentials, per-request headers, limit/offset paging and the
//! `cdk-inventory` mapping on the recorded-style fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine;
use common::inventory::{search_all, vins_of};
use common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TOKEN_PATH: &str = "/oauth2/token";
const INVENTORY_PATH: &str = "/cdk/sales/inventory/v2/merchandisable-vehicles/";
const FIXTURE: &str = "cdk/merchandisable-vehicles.json";
/// A VIN with a valid check digit that is not in the fixture.
const UNKNOWN_VIN: &str = "1HGCM82633A004352";

fn fixture_json() -> Value {
    serde_json::from_str(&fixture(FIXTURE)).unwrap()
}

fn fixture_results() -> Vec<Value> {
    fixture_json()["results"].as_array().unwrap().clone()
}

/// VINs the bridge must list: not deleted and not sold, computed from the fixture.
fn expected_listed_vins() -> BTreeSet<String> {
    fixture_results()
        .iter()
        .filter(|v| v["deleted"] != json!(true))
        .filter(|v| {
            !matches!(
                v["vehicleStatus"]["inventoryStatus"].as_str(),
                Some("SOLD" | "DELIVERED")
            )
        })
        .map(|v| v["vin"].as_str().unwrap().to_owned())
        .collect()
}

/// VINs the upstream knows but the bridge must never list.
fn expected_unlisted_vins() -> BTreeSet<String> {
    let listed = expected_listed_vins();
    fixture_results()
        .iter()
        .map(|v| v["vin"].as_str().unwrap().to_owned())
        .filter(|v| !listed.contains(v))
        .collect()
}

async fn mount_token(server: &MockServer, times: u64) {
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(fixture("cdk/token.json"), "application/json"),
        )
        .expect(times)
        .named("token endpoint")
        .mount(server)
        .await;
}

async fn mount_fixture_inventory(server: &MockServer, times: impl Into<wiremock::Times>) {
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(ResponseTemplate::new(200).set_body_raw(fixture(FIXTURE), "application/json"))
        .expect(times)
        .named("inventory")
        .mount(server)
        .await;
}

async fn requests_to(server: &MockServer, wanted: &str) -> Vec<Request> {
    server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == wanted)
        .collect()
}

fn query_of(request: &Request) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in request.url.query_pairs() {
        out.entry(k.into_owned()).or_default().push(v.into_owned());
    }
    out
}

fn header<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).map(|v| v.to_str().unwrap())
}

fn header_count(request: &Request, name: &str) -> usize {
    request.headers.get_all(name).iter().count()
}

/// Serves the fixture's results by `offset`/`limit`, never more than `cap` per page,
/// with `summary.totalCount` set to the full count, like an upstream with a lower page cap.
struct PagedFixture {
    results: Vec<Value>,
    cap: usize,
}

impl Respond for PagedFixture {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let query = query_of(request);
        let number = |name: &str| {
            query
                .get(name)
                .and_then(|v| v.first())
                .and_then(|v| v.parse::<usize>().ok())
        };
        let (Some(offset), Some(limit)) = (number("offset"), number("limit")) else {
            return ResponseTemplate::new(400).set_body_json(
                json!({ "code": "INVALID-PARAMETER", "message": "offset and limit are required" }),
            );
        };
        let start = offset.min(self.results.len());
        let end = (start + limit.min(self.cap)).min(self.results.len());
        let page = &self.results[start..end];
        ResponseTemplate::new(200).set_body_json(json!({
            "summary": { "count": page.len(), "totalCount": self.results.len(), "limit": limit, "offset": offset },
            "results": page,
        }))
    }
}

#[tokio::test]
async fn token_is_fetched_with_client_credentials_and_basic_auth_then_reused() {
    let server = MockServer::start().await;
    mount_token(&server, 1).await;
    mount_fixture_inventory(&server, 3).await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let listed = expected_listed_vins().len() as u64;
    let page = search_all(&client).await;
    assert_eq!(page["total"], json!(listed));
    let got = ok(&call(
        &client,
        "inventory.get",
        json!({ "dealership_id": "acme", "vin": "19UEY6Z5XTS724613" }),
    )
    .await);
    assert_eq!(got["vehicle"]["vin"], "19UEY6Z5XTS724613");
    let facets = ok(&call(
        &client,
        "inventory.facets",
        json!({ "dealership_id": "acme" }),
    )
    .await);
    assert_eq!(facets["total"], json!(listed));

    let tokens = requests_to(&server, TOKEN_PATH).await;
    assert_eq!(tokens.len(), 1, "one token for three tool calls");
    let t = &tokens[0];
    assert_eq!(t.method.as_str(), "POST");
    let expected_basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("id:secret")
    );
    assert_eq!(header(t, "authorization"), Some(expected_basic.as_str()));
    assert!(
        header(t, "content-type")
            .unwrap()
            .starts_with("application/x-www-form-urlencoded"),
        "{:?}",
        header(t, "content-type")
    );
    let mut form_url = t.url.clone();
    form_url.set_query(Some(std::str::from_utf8(&t.body).unwrap()));
    let form: BTreeMap<String, String> = form_url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    assert_eq!(
        form.get("grant_type").map(String::as_str),
        Some("client_credentials"),
        "form: {form:?}"
    );
    assert_eq!(
        form.get("scope").map(String::as_str),
        Some("anonymous"),
        "form: {form:?}"
    );
    // Basic client authentication: the credentials are not repeated in the form.
    assert!(
        !form.contains_key("client_secret") && !form.contains_key("client_id"),
        "form: {form:?}"
    );

    assert_eq!(requests_to(&server, INVENTORY_PATH).await.len(), 3);
    server.verify().await;
}

#[tokio::test]
async fn every_inventory_request_carries_bearer_subscription_request_id_and_fixed_query() {
    let server = MockServer::start().await;
    mount_token(&server, 1).await;
    // An upstream capped at 30 per page: 3 requests per tool call, 2 tool calls.
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(PagedFixture {
            results: fixture_results(),
            cap: 30,
        })
        .expect(6)
        .mount(&server)
        .await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    search_all(&client).await;
    ok(&call(
        &client,
        "inventory.facets",
        json!({ "dealership_id": "acme" }),
    )
    .await);

    let token: Value = serde_json::from_str(&fixture("cdk/token.json")).unwrap();
    let bearer = format!("Bearer {}", token["access_token"].as_str().unwrap());
    let requests = requests_to(&server, INVENTORY_PATH).await;
    assert_eq!(requests.len(), 6);
    let mut request_ids = BTreeSet::new();
    for r in &requests {
        assert_eq!(r.method.as_str(), "GET");
        assert_eq!(header(r, "authorization"), Some(bearer.as_str()));
        assert_eq!(header(r, "subscription-id"), Some("sub-123"));
        assert_eq!(header_count(r, "request-id"), 1);
        let id = header(r, "request-id").expect("Request-Id header");
        let parsed = uuid::Uuid::parse_str(id)
            .unwrap_or_else(|e| panic!("Request-Id {id:?} is not a UUID: {e}"));
        assert_eq!(
            parsed.hyphenated().to_string(),
            id.to_ascii_lowercase(),
            "Request-Id should be a hyphenated UUID"
        );
        request_ids.insert(id.to_owned());
        let query = query_of(r);
        assert_eq!(
            query.get("deleted"),
            Some(&vec!["true".to_owned()]),
            "query: {query:?}"
        );
        assert_eq!(
            query.get("limit"),
            Some(&vec!["100".to_owned()]),
            "query: {query:?}"
        );
        assert_eq!(
            query.get("offset").map(Vec::len),
            Some(1),
            "query: {query:?}"
        );
    }
    assert_eq!(
        request_ids.len(),
        requests.len(),
        "every request needs its own Request-Id: {request_ids:?}"
    );
    server.verify().await;
}

#[tokio::test]
async fn whole_fixture_fits_one_page_of_100() {
    let server = MockServer::start().await;
    mount_token(&server, 1).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(PagedFixture {
            results: fixture_results(),
            cap: usize::MAX,
        })
        .expect(1)
        .mount(&server)
        .await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    let page = search_all(&client).await;
    let expected = expected_listed_vins();
    assert_eq!(page["total"], json!(expected.len()));
    assert_eq!(vins_of(&page), expected);

    let requests = requests_to(&server, INVENTORY_PATH).await;
    assert_eq!(
        requests.len(),
        1,
        "72 records at 100 per page is one request"
    );
    assert_eq!(
        query_of(&requests[0]).get("offset"),
        Some(&vec!["0".to_owned()])
    );
    server.verify().await;
}

#[tokio::test]
async fn pages_through_an_upstream_that_caps_pages_below_the_limit() {
    let server = MockServer::start().await;
    mount_token(&server, 1).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(PagedFixture {
            results: fixture_results(),
            cap: 30,
        })
        .expect(3)
        .mount(&server)
        .await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;
    let page = search_all(&client).await;

    let expected = expected_listed_vins();
    assert_eq!(page["total"], json!(expected.len()));
    assert_eq!(page["items"].as_array().unwrap().len(), expected.len());
    assert!(
        page.get("next_cursor").is_none(),
        "all listed vehicles fit one page of 100"
    );
    assert_eq!(vins_of(&page), expected);

    let requests = requests_to(&server, INVENTORY_PATH).await;
    let offsets: Vec<String> = requests
        .iter()
        .map(|r| query_of(r)["offset"][0].clone())
        .collect();
    assert_eq!(offsets, ["0", "30", "60"]);
    for r in &requests {
        assert_eq!(query_of(r)["limit"], ["100"]);
    }
    server.verify().await;
}

struct Expected {
    vin: &'static str,
    stock: &'static str,
    condition: &'static str,
    status: &'static str,
    mileage: Value,
    price: i64,
    list_price: i64,
    msrp: Option<i64>,
}

fn usd(amount: i64) -> Value {
    json!({ "amount": amount, "currency": "USD" })
}

fn assert_chicago_timestamp(value: &Value, vin: &str) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{vin}: last_verified_at is not a string: {value}"));
    let at = chrono::DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{vin}: last_verified_at {text:?} is not RFC 3339: {e}"));
    let offset = at.offset().local_minus_utc();
    assert!(
        offset == -6 * 3600 || offset == -5 * 3600,
        "{vin}: last_verified_at {text:?} is not in America/Chicago"
    );
    assert!(
        text.ends_with("-06:00") || text.ends_with("-05:00"),
        "{vin}: {text:?}"
    );
    let age = chrono::Utc::now().signed_duration_since(at);
    assert!(
        age >= chrono::Duration::seconds(-2) && age <= chrono::Duration::minutes(5),
        "{vin}: last_verified_at {text:?} is not recent"
    );
}

#[tokio::test]
async fn maps_fixture_vehicles_to_canonical_fields() {
    let server = MockServer::start().await;
    mount_token(&server, 1).await;
    // Identical reads are served from the bridge's cache, so fewer than one request per call.
    mount_fixture_inventory(&server, 1..=9).await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let cases = [
        // New, every price a JSON string ("37495.00").
        Expected {
            vin: "19UEY6Z5XTS724613",
            stock: "C24340",
            condition: "new",
            status: "available",
            mileage: json!({ "value": 59, "unit": "mi" }),
            price: 3_749_500,
            list_price: 3_849_500,
            msrp: Some(3_875_000),
        },
        // Certified, odometer "28,912" as a string.
        Expected {
            vin: "KM8CDKFR2PH212019",
            stock: "C24916",
            condition: "cpo",
            status: "available",
            mileage: json!({ "value": 28912, "unit": "mi" }),
            price: 2_774_500,
            list_price: 2_799_500,
            msrp: None,
        },
        // The Canadian import: odometer in KILOMETERS.
        Expected {
            vin: "2T3R0MUW6SM789794",
            stock: "C25959",
            condition: "used",
            status: "available",
            mileage: json!({ "value": 14425, "unit": "km" }),
            price: 3_249_500,
            list_price: 3_299_500,
            msrp: None,
        },
        // IN_TRANSIT, SELLING with cents (61245.75).
        Expected {
            vin: "1FTEP4MX8T1192280",
            stock: "C25376",
            condition: "new",
            status: "in_transit",
            mileage: json!({ "value": 8, "unit": "mi" }),
            price: 6_124_575,
            list_price: 6_149_500,
            msrp: Some(6_450_000),
        },
        // PENDING_SALE, MSRP as a string.
        Expected {
            vin: "3C6WTTZY1T1008744",
            stock: "C24434",
            condition: "new",
            status: "pending",
            mileage: json!({ "value": 38, "unit": "mi" }),
            price: 7_199_500,
            list_price: 7_199_500,
            msrp: Some(7_250_000),
        },
        // No SELLING price: price falls back to ADVERTISED; odometer "26,872".
        Expected {
            vin: "KNDSM8ZN0RS404556",
            stock: "C24160",
            condition: "used",
            status: "available",
            mileage: json!({ "value": 26872, "unit": "mi" }),
            price: 2_999_500,
            list_price: 2_999_500,
            msrp: None,
        },
    ];

    let page = search_all(&client).await;
    let items = page["items"].as_array().unwrap();
    let ids: BTreeSet<&str> = items.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), items.len(), "vehicle ids must be unique");
    for v in items {
        let id = v["id"].as_str().unwrap();
        assert!(id.starts_with("veh_"), "{id}");
        assert_ne!(v["id"], v["vin"]);
        assert_eq!(v["dealership_id"], "acme");
    }

    for case in &cases {
        let got = ok(&call(
            &client,
            "inventory.get",
            json!({ "dealership_id": "acme", "vin": case.vin }),
        )
        .await);
        let v = &got["vehicle"];
        let vin = case.vin;
        assert_eq!(v["vin"], vin);
        assert_eq!(v["stock"], case.stock, "{vin}");
        assert_eq!(v["dealership_id"], "acme", "{vin}");
        assert_eq!(v["condition"], case.condition, "{vin}");
        assert_eq!(v["status"], case.status, "{vin}");
        assert_eq!(v["mileage"], case.mileage, "{vin}");
        assert_eq!(v["price"], usd(case.price), "{vin}");
        assert_eq!(v["list_price"], usd(case.list_price), "{vin}");
        match case.msrp {
            Some(m) => assert_eq!(v["msrp"], usd(m), "{vin}"),
            None => assert!(
                v.get("msrp").is_none(),
                "{vin}: used/certified units have no MSRP, got {}",
                v["msrp"]
            ),
        }
        let id = v["id"].as_str().unwrap();
        assert!(id.starts_with("veh_") && id.len() > 4, "{vin}: id {id}");
        assert!(
            !id.to_ascii_uppercase().contains(vin),
            "{vin}: id {id} must not be the VIN"
        );
        assert_chicago_timestamp(&v["last_verified_at"], vin);
        // The same record in the search listing.
        let listed = items
            .iter()
            .find(|x| x["vin"] == vin)
            .unwrap_or_else(|| panic!("{vin} not listed"));
        assert_eq!(listed["id"], v["id"], "{vin}");
        assert_eq!(listed["price"], v["price"], "{vin}");
    }

    // The id is stable and resolves back to the same vehicle.
    let first = &cases[0];
    let by_vin = ok(&call(
        &client,
        "inventory.get",
        json!({ "dealership_id": "acme", "vin": first.vin }),
    )
    .await);
    let id = by_vin["vehicle"]["id"].as_str().unwrap().to_owned();
    let by_id = ok(&call(
        &client,
        "inventory.get",
        json!({ "dealership_id": "acme", "vehicle_id": id }),
    )
    .await);
    assert_eq!(by_id["vehicle"]["vin"], first.vin);
    server.verify().await;
}

#[tokio::test]
async fn deleted_and_sold_units_are_never_listed_and_get_says_unavailable() {
    let unlisted = expected_unlisted_vins();
    // 3 deleted + 2 SOLD in the fixture (see wiremock-fixtures/README.md).
    for vin in [
        "2HGUE4LT8SL993468",
        "2T2GG1NK9SW533686",
        "1GNP8WFM2LR691902",
        "5YJLDEWN2S9951109",
        "1FTEP4MXXN1562325",
    ] {
        assert!(
            unlisted.contains(vin),
            "fixture changed: {vin} should be deleted or sold"
        );
    }
    let server = MockServer::start().await;
    mount_token(&server, 1).await;
    // One search, one facets, then a filtered search and a get per unlisted unit.
    mount_fixture_inventory(&server, 2 + 2 * unlisted.len() as u64).await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let page = search_all(&client).await;
    let listed = vins_of(&page);
    assert!(
        listed.is_disjoint(&unlisted),
        "listed: {:?}",
        listed.intersection(&unlisted).collect::<Vec<_>>()
    );
    let facets = ok(&call(
        &client,
        "inventory.facets",
        json!({ "dealership_id": "acme" }),
    )
    .await);
    assert_eq!(facets["total"], json!(expected_listed_vins().len()));

    for vin in &unlisted {
        let filtered = ok(&call(
            &client,
            "inventory.search",
            json!({ "response_format": "detailed", "dealership_id": "acme", "filters": { "vin": vin } }),
        )
        .await);
        assert_eq!(filtered["total"], 0, "{vin} must not be searchable");
        assert_eq!(filtered["items"], json!([]), "{vin}");

        let error = err(&call(
            &client,
            "inventory.get",
            json!({ "dealership_id": "acme", "vin": vin }),
        )
        .await);
        assert_eq!(
            error["code"], "inventory.vehicle_unavailable",
            "{vin}: {error}"
        );
        assert_eq!(error["retryable"], false, "{vin}");
        assert_eq!(error["details"]["aap_code"], "VEHICLE_UNAVAILABLE", "{vin}");
        assert_eq!(
            error["recovery"]["next_tool_call"]["name"], "inventory_search",
            "{vin}"
        );
        assert_eq!(
            error["recovery"]["next_tool_call"]["arguments"]["dealership_id"], "acme",
            "{vin}"
        );
    }
    server.verify().await;
}

#[tokio::test]
async fn unknown_vin_is_not_found() {
    assert!(
        dms_bridge::model::vin::check(UNKNOWN_VIN).is_ok(),
        "the test VIN must have a valid check digit"
    );
    assert!(fixture_results().iter().all(|v| v["vin"] != UNKNOWN_VIN));
    let server = MockServer::start().await;
    mount_token(&server, 1).await;
    mount_fixture_inventory(&server, 1).await;
    let bridge = with_config(&rest_config(&server.uri(), "")).await;
    let client = connect(&bridge.url, Some("acme-token")).await;

    let error = err(&call(
        &client,
        "inventory.get",
        json!({ "dealership_id": "acme", "vin": UNKNOWN_VIN }),
    )
    .await);
    assert_eq!(error["code"], "inventory.vehicle_not_found", "{error}");
    assert_eq!(error["retryable"], false);
    assert_eq!(error["details"]["aap_code"], "VEHICLE_NOT_FOUND");
    assert_eq!(
        error["recovery"]["next_tool_call"]["name"],
        "inventory_search"
    );
    assert_eq!(
        error["recovery"]["next_tool_call"]["arguments"]["dealership_id"],
        "acme"
    );
    server.verify().await;
}

/// A profile whose `records` path matches nothing in the answers (an outside
/// audit: every read answered an empty list, silently). The reads still
/// answer no records, and the log says so once, with the upstream and the path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_records_path_that_matches_nothing_is_warned_about_once() {
    let server = MockServer::start().await;
    common::mount_token(&server).await;
    Mock::given(method("GET"))
        .and(path(INVENTORY_PATH))
        .respond_with(inventory_ok())
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("cdk-typo.toml");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/adapters/cdk-fortellis.toml"
    ))
    .unwrap()
    .replacen(r#"records = "/results""#, r#"records = "/result""#, 1);
    std::fs::write(&profile, text).unwrap();
    let addr = common::process::free_addr();
    let toml = rest(&server.uri())
        .no_cache()
        .section("server", &format!("listen = \"{addr}\""))
        .section("store", r#"url = "sqlite::memory:""#)
        .edit_upstream("cdk", |u| {
            u.set(
                "profile",
                common::config::quoted(&profile.to_string_lossy()),
            )
        })
        .render();
    let config = dir.path().join("bridge.toml");
    std::fs::write(&config, toml).unwrap();
    let mut bridge = tokio::process::Command::new(env!("CARGO_BIN_EXE_dms-bridge"))
        .args(["serve", "--config"])
        .arg(&config)
        .env("DMS_BRIDGE_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://{addr}/mcp");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while common::http_get(format!("http://{addr}/healthz"))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the bridge did not start"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let client = connect(&url, Some("acme-token")).await;
    for limit in [5, 6] {
        let page = ok(&call(
            &client,
            "inventory.search",
            json!({ "response_format": "detailed", "dealership_id": "acme", "limit": limit }),
        )
        .await);
        assert_eq!(page["items"], json!([]), "{page}");
    }
    assert_eq!(count(&server, INVENTORY_PATH).await, 2);
    drop(client);
    bridge.start_kill().unwrap();
    let output = bridge.wait_with_output().await.unwrap();
    let logs = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("the profile's records path"))
        .collect();
    assert_eq!(warnings.len(), 1, "{logs}");
    assert!(warnings[0].contains(r#"upstream="cdk""#), "{logs}");
    assert!(warnings[0].contains(r#"path="/result""#), "{logs}");
}
