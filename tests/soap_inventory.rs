#![allow(clippy::unwrap_used, clippy::expect_used)]
//! SOAP upstreams that serve an inventory (`[inventory]` in a SOAP profile),
//! through the real MCP client against the test-kit's mocks on loopback: the
//! Reynolds & Reynolds RCI mock (`reynolds-rci`: inventory and repair orders,
//! a WS-Security fault for a wrong password, an in-band `TransStatus` error
//! for an unknown dealer) and the OpenTrack mock's `VehicleInventory`.
//! Expected values are the fixtures' (`wiremock-fixtures/reynolds/README.md`,
//! `wiremock-fixtures/opentrack/INVENTORY-SOURCES.md`).

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::config::{BridgeConfig, Dealership, Token, Upstream, quoted, secret};
use common::{Client, call, connect, err, every_page, ok, with_config};
use dms_bridge_testkit::{mock_opentrack, mock_reynolds};
use serde_json::{Value, json};

const TOKEN: &str = "acme-token";
/// Every test finishes well inside this (the mocks answer at once).
const TEST_BUDGET: Duration = Duration::from_secs(60);

/// The Reynolds fixture's ten `VehInvRec`: nine for sale, and the
/// `CHEVROLET TRUCK` Colorado loaner (`StatCode 9`, `CO VEH`), never listed.
const REYNOLDS_LISTED: [&str; 9] = [
    "3GNAXHEG0SL418205", // CHEVROLET Equinox
    "1GCUDDED6SZ137760", // CHEVROLET TRUCK Silverado 1500
    "1G1ZD5ST7RF209318", // CHEVROLET Malibu
    "1GNEVKRS4SJ154027", // CHEVROLET Traverse, ListPrice 0.00
    "1GNSKCKD5SR226691", // CHEVROLET Tahoe
    "2HKRW2H59MH650214", // HONDA CR-V, certified
    "1FTEW1E57KF530476", // FORD TRUCK F-150
    "4T1G11AK9LU962338", // TOYOTA Camry
    "KNMAT2MV4JP543812", // NISSAN Rogue
];
const REYNOLDS_LOANER: &str = "1GCGTCEN5N1178404";
/// Chevrolets among the listed units (`CHEVROLET` and `CHEVROLET TRUCK`).
const REYNOLDS_CHEVROLETS: u64 = 5;

/// The OpenTrack fixture's eight `Result`s: seven `Status I`, one sold (`S`).
const OPENTRACK_LISTED: [&str; 7] = [
    "JF2GUADC6T8216407",
    "4S4BTGPD0T3170925",
    "JF1VBAF62S9801342",
    "4S3GTAV64R3715528",
    "5TDKDRBH7PS047196",
    "1C4RJKBG5N8531147",
    "3VW5T7BUXL1026594",
];
const OPENTRACK_SOLD: &str = "JF2SKAJC8M1408863";

/// Serves `router` on a loopback port for the rest of the test.
async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

async fn bounded<F: std::future::Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_BUDGET, body)
        .await
        .expect("test exceeded its time budget");
}

/// Dealership `acme` (Central time) whose inventory and repair orders come
/// from `upstream`.
fn config(upstream: Upstream) -> String {
    BridgeConfig::new()
        .call_timeout("5s")
        .dealership(
            Dealership::acme()
                .route("inventory", "dms")
                .route("repair_orders", "dms"),
        )
        .upstream("dms", upstream)
        .token(Token::new(
            "acme",
            TOKEN,
            &["acme"],
            &["amcp:inventory:read", "amcp:service:read"],
        ))
        .render()
}

/// The Reynolds mock's instance: `base_url` is its RCI URL up to `/Receive.ashx`.
fn reynolds(mock: &str, password: &str, dealer_number: &str) -> Upstream {
    let path = mock_reynolds::PATH
        .strip_suffix("/Receive.ashx")
        .expect("the mock's path ends in /Receive.ashx");
    let vars = format!(
        "{{ dealer_number = {}, store_number = {}, area_number = {} }}",
        quoted(dealer_number),
        quoted(mock_reynolds::STORE_NUMBER),
        quoted(mock_reynolds::AREA_NUMBER)
    );
    Upstream::soap("reynolds-rci", &format!("{mock}{path}"))
        .set("username", secret(mock_reynolds::USERNAME))
        .set("password", secret(password))
        .set("vars", vars)
        .timeout("2s")
}

fn opentrack(mock: &str) -> Upstream {
    let vars = format!(
        "{{ enterprise_code = {}, company_number = {} }}",
        quoted(mock_opentrack::ENTERPRISE_CODE),
        quoted(mock_opentrack::COMPANY_NUMBER)
    );
    Upstream::soap("opentrack", mock)
        .set("username", secret(mock_opentrack::USERNAME))
        .set("password", secret(mock_opentrack::PASSWORD))
        .set("vars", vars)
        .timeout("2s")
}

async fn bridge_on(upstream: Upstream) -> (common::Bridge, Client) {
    let bridge = with_config(&config(upstream)).await;
    let client = connect(&bridge.url, Some(TOKEN)).await;
    (bridge, client)
}

/// Every listed unit, in full records.
async fn listed(client: &Client) -> Vec<Value> {
    let page = every_page(client, json!({ "dealership_id": "acme" })).await;
    let items = page["items"].as_array().unwrap().clone();
    assert_eq!(page["total"].as_u64().unwrap() as usize, items.len());
    items
}

fn vins(items: &[Value]) -> BTreeSet<String> {
    items
        .iter()
        .map(|v| v["vin"].as_str().expect("every unit has a VIN").to_owned())
        .collect()
}

fn unit<'a>(items: &'a [Value], vin: &str) -> &'a Value {
    items
        .iter()
        .find(|v| v["vin"] == vin)
        .unwrap_or_else(|| panic!("{vin} is listed"))
}

/// The facet buckets of `facet` whose value equals `value` ignoring case.
fn buckets<'a>(facets: &'a Value, facet: &str, value: &str) -> Vec<&'a Value> {
    facets[facet]
        .as_array()
        .unwrap_or_else(|| panic!("no {facet} in {facets}"))
        .iter()
        .filter(|b| {
            b["value"]
                .as_str()
                .is_some_and(|v| v.eq_ignore_ascii_case(value))
        })
        .collect()
}

async fn get_code(client: &Client, vin: &str) -> Option<String> {
    let result = call(
        client,
        "inventory.get",
        json!({ "dealership_id": "acme", "vin": vin }),
    )
    .await;
    (result.is_error == Some(true)).then(|| err(&result)["code"].as_str().unwrap().to_owned())
}

fn total_for<'a>(order: &'a Value, pay_type: &str) -> &'a Value {
    order["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["pay_type"] == pay_type)
        .unwrap_or_else(|| panic!("no {pay_type} total in {order}"))
}

// --- Reynolds & Reynolds RCI ---

#[tokio::test]
async fn reynolds_inventory_lists_the_units_for_sale_with_canonical_makes() {
    bounded(async {
        let mock = serve(mock_reynolds::router()).await;
        let (_bridge, client) = bridge_on(reynolds(
            &mock,
            mock_reynolds::PASSWORD,
            mock_reynolds::DEALER_NUMBER,
        ))
        .await;
        let items = listed(&client).await;
        assert_eq!(items.len(), 9, "the README's nine units for sale");
        assert_eq!(
            vins(&items),
            REYNOLDS_LISTED
                .iter()
                .map(|v| (*v).to_owned())
                .collect::<BTreeSet<String>>()
        );

        // One spelling per make: the accounting make `CHEVROLET TRUCK` and the
        // upper-case `CHEVROLET` are both the brand `Chevrolet`.
        for item in &items {
            let make = item["make"].as_str().unwrap();
            assert!(
                !["CHEVROLET", "CHEVROLET TRUCK", "FORD TRUCK", "HONDA"].contains(&make),
                "{make} is not in canonical spelling: {item}"
            );
        }
        let makes: BTreeSet<&str> = items.iter().map(|v| v["make"].as_str().unwrap()).collect();
        assert_eq!(
            makes,
            BTreeSet::from(["Chevrolet", "Ford", "Honda", "Nissan", "Toyota"])
        );
        let silverado = unit(&items, "1GCUDDED6SZ137760");
        assert_eq!(silverado["make"], "Chevrolet", "was CHEVROLET TRUCK");
        assert_eq!(silverado["stock"], "C26131");
        assert_eq!(silverado["condition"], "new");
        assert_eq!(
            silverado["price"],
            json!({ "amount": 6_148_000, "currency": "USD" })
        );
        assert_eq!(silverado["mileage"], json!({ "value": 14, "unit": "mi" }));
        assert_eq!(
            unit(&items, "1FTEW1E57KF530476")["make"],
            "Ford",
            "was FORD TRUCK"
        );
        // `ListPrice="0.00"`: no price rather than a free car.
        let traverse = unit(&items, "1GNEVKRS4SJ154027");
        assert!(traverse.get("price").is_none(), "{traverse}");
        let honda = unit(&items, "2HKRW2H59MH650214");
        assert_eq!(honda["condition"], "cpo", "Certified=\"Y\"");
        assert_eq!(honda["mileage"], json!({ "value": 38214, "unit": "mi" }));
        assert_eq!(honda["inventory_date"], "2026-10-21", "RcptDate 10/21/2026");

        let facets = ok(&call(
            &client,
            "inventory.facets",
            json!({ "dealership_id": "acme" }),
        )
        .await);
        assert_eq!(facets["total"], 9);
        let chevrolet = buckets(&facets, "makes", "chevrolet");
        assert_eq!(
            chevrolet.len(),
            1,
            "one Chevrolet bucket: {}",
            facets["makes"]
        );
        assert_eq!(chevrolet[0]["value"], "Chevrolet");
        assert_eq!(chevrolet[0]["count"], REYNOLDS_CHEVROLETS);
    })
    .await;
}

#[tokio::test]
async fn a_reynolds_loaner_is_not_listed_and_reported_unavailable() {
    bounded(async {
        let mock = serve(mock_reynolds::router()).await;
        let (_bridge, client) = bridge_on(reynolds(
            &mock,
            mock_reynolds::PASSWORD,
            mock_reynolds::DEALER_NUMBER,
        ))
        .await;
        assert!(!vins(&listed(&client).await).contains(REYNOLDS_LOANER));
        assert_eq!(
            get_code(&client, REYNOLDS_LOANER).await.as_deref(),
            Some("inventory.vehicle_unavailable"),
            "a company vehicle is answered as a sold one is"
        );
        assert_eq!(
            get_code(&client, "1GCUDDED6SZ137760").await,
            None,
            "a unit for sale is found by VIN"
        );
    })
    .await;
}

#[tokio::test]
async fn reynolds_repair_orders_list_by_posting_day_and_get_by_number() {
    bounded(async {
        let mock = serve(mock_reynolds::router()).await;
        let (_bridge, client) = bridge_on(reynolds(
            &mock,
            mock_reynolds::PASSWORD,
            mock_reynolds::DEALER_NUMBER,
        ))
        .await;
        let closed = ok(&call(
            &client,
            "service.list_repair_orders",
            json!({ "dealership_id": "acme", "response_format": "detailed",
                    "from": "2026-11-12", "to": "2026-11-16", "status": ["closed"] }),
        )
        .await);
        let items = closed["items"].as_array().unwrap().clone();
        let numbers: BTreeSet<&str> = items
            .iter()
            .map(|o| o["ro_number"].as_str().unwrap())
            .collect();
        assert_eq!(
            numbers,
            BTreeSet::from(["610201", "610204", "610210", "610212", "610215"]),
            "the orders finally posted on 11/12, 11/13 and 11/16"
        );
        assert_eq!(closed["total"], 5);
        assert_eq!(closed["timezone"], "America/Chicago");
        let first = items.iter().find(|o| o["ro_number"] == "610201").unwrap();
        assert_eq!(first["status"], "closed");
        assert_eq!(first["vehicle"]["vin"], "1GC4YNEY7MF322871");
        assert_eq!(first["vehicle"]["make"], "Chevrolet", "was CHEVROLET TRUCK");
        assert_eq!(
            total_for(first, "customer")["total"],
            json!({ "amount": 14208, "currency": "USD" }),
            "CustRoTotalAmt 142.08"
        );
        let text = closed.to_string();
        for private in ["OYELARAN", "MARCUS", "5551088213", "example.invalid"] {
            assert!(!text.contains(private), "{private} leaked");
        }

        // Each listed order, looked up by its number, is the same order.
        for order in &items {
            let number = order["ro_number"].as_str().unwrap();
            let got = ok(&call(
                &client,
                "service.get_repair_order",
                json!({ "dealership_id": "acme", "ro_number": number }),
            )
            .await);
            let ro = &got["repair_order"];
            assert_eq!(ro["ro_number"], number);
            assert_eq!(ro["totals"], order["totals"], "{number}");
            assert_eq!(ro["vehicle"], order["vehicle"], "{number}");
        }
        let got = ok(&call(
            &client,
            "service.get_repair_order",
            json!({ "dealership_id": "acme", "ro_number": "610212" }),
        )
        .await);
        let ro = &got["repair_order"];
        assert_eq!(ro["vehicle"]["vin"], "1GNSKRKD5PR101846");
        assert_eq!(ro["opened_at"], "2026-11-12T13:22:47-06:00");
        assert!(
            ro["closed_at"].as_str().unwrap().starts_with("2026-11-13"),
            "FinalPostDate 11/13/2026: {ro}"
        );
        assert_eq!(total_for(ro, "customer")["total"]["amount"], 14995);
        assert_eq!(total_for(ro, "warranty")["total"]["amount"], 3600);
        assert!(!got.to_string().contains("BANKOLE"), "no customer name");

        // Without a status: the open orders opened in the range too
        // (610220 opened 11/16; 610222 opened 11/17, after it).
        let all = ok(&call(
            &client,
            "service.list_repair_orders",
            json!({ "dealership_id": "acme", "from": "2026-11-12", "to": "2026-11-16" }),
        )
        .await);
        let numbers: BTreeSet<&str> = all["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["ro_number"].as_str().unwrap())
            .collect();
        assert!(numbers.contains("610220"), "{numbers:?}");
        assert!(!numbers.contains("610222"), "{numbers:?}");
        assert_eq!(numbers.len(), 6, "{numbers:?}");
    })
    .await;
}

/// The error a refused instance's calls get, read straight through (no mirror).
async fn refused(upstream: Upstream) -> (Value, Value) {
    let upstream = upstream
        .set("inventory_sync", quoted("off"))
        .resilience("{ retries = { max = 0 } }");
    let (_bridge, client) = bridge_on(upstream).await;
    let inventory = err(&call(
        &client,
        "inventory.search",
        json!({ "dealership_id": "acme" }),
    )
    .await);
    let orders = err(&call(
        &client,
        "service.list_repair_orders",
        json!({ "dealership_id": "acme", "from": "2026-11-13", "to": "2026-11-13" }),
    )
    .await);
    (inventory, orders)
}

/// An unauthorized upstream, as the caller sees it: refused, not retryable,
/// the operator's credentials to fix, and nothing of the vendor's text.
fn assert_refused_credentials(error: &Value, what: &str) {
    assert_eq!(error["code"], "upstream.rejected", "{what}: {error}");
    assert_eq!(error["retryable"], false, "{what}: {error}");
    assert!(
        error["message"].as_str().unwrap().contains("credentials"),
        "{what}: the message names the credentials: {error}"
    );
    let text = error.to_string();
    for vendor in [
        "FailedAuthentication",
        "security token",
        "TransStatus",
        "Failure",
    ] {
        assert!(!text.contains(vendor), "{what}: {vendor} leaked: {text}");
    }
}

#[tokio::test]
async fn a_wrong_reynolds_password_is_refused_credentials() {
    bounded(async {
        let mock = serve(mock_reynolds::router()).await;
        let (inventory, orders) = refused(reynolds(
            &mock,
            "not-the-password",
            mock_reynolds::DEALER_NUMBER,
        ))
        .await;
        assert_refused_credentials(&inventory, "inventory (SOAP fault)");
        assert_refused_credentials(&orders, "repair orders (SOAP fault)");
    })
    .await;
}

#[tokio::test]
async fn an_unknown_reynolds_dealer_is_refused_through_the_in_band_status() {
    bounded(async {
        let mock = serve(mock_reynolds::router()).await;
        // HTTP 200 with `TransStatus/StatusCode 401`: not an empty inventory.
        let (inventory, orders) = refused(reynolds(&mock, mock_reynolds::PASSWORD, "NOPE99")).await;
        assert_refused_credentials(&inventory, "inventory (TransStatus)");
        assert_refused_credentials(&orders, "repair orders (TransStatus)");
    })
    .await;
}

// --- Dealertrack OpenTrack ---

#[tokio::test]
async fn opentrack_inventory_lists_units_in_stock_and_not_the_sold_one() {
    bounded(async {
        let mock = serve(mock_opentrack::router()).await;
        let (_bridge, client) = bridge_on(opentrack(&mock)).await;
        let items = listed(&client).await;
        assert_eq!(items.len(), 7, "eight units, one sold");
        assert_eq!(
            vins(&items),
            OPENTRACK_LISTED
                .iter()
                .map(|v| (*v).to_owned())
                .collect::<BTreeSet<String>>()
        );
        assert!(!vins(&items).contains(OPENTRACK_SOLD));
        assert_eq!(
            get_code(&client, OPENTRACK_SOLD).await.as_deref(),
            Some("inventory.vehicle_unavailable"),
            "Status S: sold"
        );
        for item in &items {
            let make = item["make"].as_str().unwrap();
            assert_ne!(make, "SUBARU", "{item}");
        }
        let facets = ok(&call(
            &client,
            "inventory.facets",
            json!({ "dealership_id": "acme" }),
        )
        .await);
        assert_eq!(facets["total"], 7);
        let subaru = buckets(&facets, "makes", "subaru");
        assert_eq!(subaru.len(), 1, "{}", facets["makes"]);
        assert_eq!(subaru[0]["value"], "Subaru");
        assert_eq!(subaru[0]["count"], 4, "Forester, Outback, WRX, Impreza");
    })
    .await;
}
