#![allow(clippy::unwrap_used, clippy::expect_used)]
//! XML inventory feeds (`kind = "feed"` with a mapping whose `source` is
//! `{ format = "xml", records = … }`): the Meta automotive inventory feed of
//! the test-kit's mock feed read with `meta-automotive-xml`, end to end
//! through the MCP client; and, on wiremock, documents that are not the feed
//! (an HTML page, a `<listings>` without any `<listing>`), at start and after
//! a good read. Expected values are read from the fixture with roxmltree (not
//! the bridge's XML reader) and checked against
//! `wiremock-fixtures/feed-xml/README.md`.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::config::{BridgeConfig, Dealership, Token, Upstream};
use common::{Client, call, connect, err, every_page, fixture, ok, with_config};
use dms_bridge_testkit::mock_feed;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TOKEN: &str = "lot-token";
const MAPPING: &str = "meta-automotive-xml";
const FIXTURE: &str = "feed-xml/meta-automotive-inventory.xml";
const FEED_PATH: &str = "/exports/meta/inventory.xml";
const TEST_BUDGET: Duration = Duration::from_secs(120);
const POLL_BUDGET: Duration = Duration::from_secs(20);

/// `4T1G11AK2LU917354`: `NOT_AVAILABLE` (sold, still in the file).
const SOLD: &str = "4T1G11AK2LU917354";
const KM_UNIT: &str = "2HKRW2H89KH603188";
const NO_PRICE: &str = "1GNS6PRLXTR161427";
const PENDING: &str = "1FTFW1E53MF604712";
const CPO: &str = "1GNERHKW7PJ208531";
const SINGLE_PHOTO: &str = "1G1ZD5ST4JF219745";

const NGINX_502: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
/// Well-formed, the feed's root and header, and not one `<listing>`.
const NO_LISTINGS: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<listings>\n  <title>Cedar Ridge Chevrolet (Demo) - vehicle inventory</title>\n  <link rel=\"self\" href=\"https://www.cedarridgechevy.example\"/>\n</listings>\n";

async fn bounded<F: Future<Output = ()>>(body: F) {
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

/// Dealership `lot` (Central time, USD) whose inventory is the XML feed at `url`.
fn config(url: &str, refresh: &str) -> String {
    let lot = Dealership::new(
        "lot",
        "Cedar Ridge Chevrolet",
        "America/Chicago",
        ["1800 Cedar Ridge Pkwy", "Des Moines", "IA", "50309"],
    );
    BridgeConfig::new()
        .call_timeout("5s")
        .dealership(lot.route("inventory", "feed"))
        .upstream(
            "feed",
            Upstream::feed(url, MAPPING)
                .refresh_interval(refresh)
                .timeout("2s")
                .resilience(r#"{ circuit_breaker = { failures = 5, open_for = "500ms" }, retries = { max = 1, base_delay = "10ms", max_delay = "50ms" } }"#),
        )
        .token(Token::new(
            "lot",
            TOKEN,
            &["lot"],
            &["amcp:inventory:read"],
        ))
        .render()
}

async fn bridge(url: &str, refresh: &str) -> (common::Bridge, Client) {
    let bridge = with_config(&config(url, refresh)).await;
    let client = connect(&bridge.url, Some(TOKEN)).await;
    (bridge, client)
}

/// The bridge on the test-kit's mock feed, at its Meta XML path.
async fn on_mock_feed() -> (common::Bridge, Client) {
    let base = serve(mock_feed::MockFeed::new().router()).await;
    bridge(&format!("{base}{}", mock_feed::META_XML_PATH), "1h").await
}

async fn listed(client: &Client) -> Vec<Value> {
    let page = every_page(client, json!({ "dealership_id": "lot" })).await;
    let items = page["items"].as_array().unwrap().clone();
    assert_eq!(page["total"].as_u64().unwrap() as usize, items.len());
    items
}

fn by_vin(items: &[Value]) -> BTreeMap<String, Value> {
    items
        .iter()
        .map(|v| (v["vin"].as_str().unwrap().to_owned(), v.clone()))
        .collect()
}

async fn get(client: &Client, vin: &str) -> rmcp::model::CallToolResult {
    call(
        client,
        "inventory.get",
        json!({ "dealership_id": "lot", "vin": vin }),
    )
    .await
}

// --- The fixture, read with roxmltree ---

/// One `<listing>`: its VIN, `availability` and number of `<image>`s.
struct Listing {
    vin: String,
    availability: String,
    images: usize,
}

fn child_text(node: roxmltree::Node<'_, '_>, name: &str) -> String {
    node.children()
        .find(|c| c.has_tag_name(name))
        .and_then(|c| c.text())
        .unwrap_or_default()
        .trim()
        .to_owned()
}

fn fixture_listings() -> Vec<Listing> {
    let text = fixture(FIXTURE);
    let doc = roxmltree::Document::parse(&text).unwrap();
    doc.root_element()
        .children()
        .filter(|c| c.has_tag_name("listing"))
        .map(|l| Listing {
            vin: child_text(l, "vin"),
            availability: child_text(l, "availability"),
            images: l.children().filter(|c| c.has_tag_name("image")).count(),
        })
        .collect()
}

// --- The Meta feed of the mock ---

#[tokio::test]
async fn every_listing_but_the_not_available_one_is_listed() {
    bounded(async {
        let listings = fixture_listings();
        assert_eq!(listings.len(), 12, "the README's 12 units");
        let expected: BTreeSet<String> = listings
            .iter()
            .filter(|l| !l.availability.eq_ignore_ascii_case("NOT_AVAILABLE"))
            .map(|l| l.vin.clone())
            .collect();
        assert_eq!(expected.len(), 11);
        assert!(!expected.contains(SOLD));

        let (_bridge, client) = on_mock_feed().await;
        let items = listed(&client).await;
        assert_eq!(items.len(), 11);
        let units = by_vin(&items);
        assert_eq!(units.keys().cloned().collect::<BTreeSet<_>>(), expected);
        assert!(!units.contains_key(SOLD), "NOT_AVAILABLE is never listed");
        assert_eq!(
            err(&get(&client, SOLD).await)["code"],
            "inventory.vehicle_unavailable"
        );

        assert_eq!(units[PENDING]["status"], "pending");
        assert_eq!(units[CPO]["condition"], "cpo");
        // `used` / `available` in lower case: Meta's enums ignore case.
        assert_eq!(units[KM_UNIT]["condition"], "used");
        assert_eq!(units[KM_UNIT]["status"], "available");
        let equinox = &units["3GNAXKEG4TL318204"];
        assert_eq!(
            equinox["stock"], "CR26114",
            "vehicle_id is the stock number"
        );
        assert_eq!(equinox["make"], "Chevrolet");
        assert_eq!(equinox["condition"], "new");
        assert_eq!(equinox["inventory_date"], "2026-10-02");

        let facets = ok(&call(
            &client,
            "inventory.facets",
            json!({ "dealership_id": "lot" }),
        )
        .await);
        assert_eq!(facets["total"], 11);
        let makes: BTreeMap<&str, u64> = facets["makes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| (b["value"].as_str().unwrap(), b["count"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            makes,
            BTreeMap::from([
                ("Chevrolet", 7),
                ("Ford", 1),
                ("Honda", 1),
                ("Jeep", 1),
                ("Subaru", 1)
            ])
        );
    })
    .await;
}

#[tokio::test]
async fn kilometres_missing_prices_sale_prices_and_photos() {
    bounded(async {
        let (_bridge, client) = on_mock_feed().await;
        let units = by_vin(&listed(&client).await);

        assert_eq!(
            units[KM_UNIT]["mileage"],
            json!({ "value": 88400, "unit": "km" }),
            "<unit>KM</unit> stays in kilometres"
        );
        assert_eq!(
            units["1GNERHKW7PJ208531"]["mileage"],
            json!({ "value": 28410, "unit": "mi" })
        );

        // `0 USD`: call for price, no price at all.
        let tahoe = &units[NO_PRICE];
        assert!(tahoe.get("price").is_none(), "{tahoe}");
        assert!(tahoe.get("list_price").is_none(), "{tahoe}");
        // `sale_price` is what the buyer pays; `price` the regular price.
        let equinox = &units["3GNAXKEG4TL318204"];
        assert_eq!(
            equinox["price"],
            json!({ "amount": 3_199_500, "currency": "USD" })
        );
        assert_eq!(
            equinox["list_price"],
            json!({ "amount": 3_349_500, "currency": "USD" })
        );
        // `24,195.00 USD`: separators and cents.
        assert_eq!(units["KL77LHEP9TB104938"]["price"]["amount"], 2_419_500);
        assert_eq!(units["1G1ZD5ST4JF219745"]["price"]["amount"], 1_345_000);

        // Every photo of every unit, in the feed's order; a single `<image>` too.
        for listing in fixture_listings() {
            let Some(unit) = units.get(&listing.vin) else {
                continue;
            };
            let photos = unit["photos"].as_array().map_or(0, Vec::len);
            assert_eq!(photos, listing.images, "{}", listing.vin);
        }
        assert_eq!(units[SINGLE_PHOTO]["photos"].as_array().unwrap().len(), 1);
        assert_eq!(
            units[SINGLE_PHOTO]["photos"][0],
            "https://images.cedarridgechevy.example/1G1ZD5ST4JF219745/1.jpg"
        );
        let wrangler = units["1C4HJXEG4NW274160"]["photos"].as_array().unwrap();
        assert_eq!(wrangler.len(), 5);
        assert_eq!(
            wrangler[4],
            "https://images.cedarridgechevy.example/1C4HJXEG4NW274160/5.jpg"
        );
        assert_eq!(
            units["3GNAXKEG4TL318204"]["photos"]
                .as_array()
                .unwrap()
                .len(),
            4
        );
    })
    .await;
}

// --- Documents that are not the feed, on wiremock ---

/// A feed whose answer the test switches: (body, content type).
#[derive(Clone)]
struct Switch(Arc<Mutex<(String, &'static str)>>);

impl Switch {
    fn new(body: &str, content_type: &'static str) -> Self {
        Self(Arc::new(Mutex::new((body.to_owned(), content_type))))
    }

    fn set(&self, body: &str, content_type: &'static str) {
        *self.0.lock().unwrap() = (body.to_owned(), content_type);
    }
}

impl Respond for Switch {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let (body, content_type) = self.0.lock().unwrap().clone();
        ResponseTemplate::new(200).set_body_raw(body, content_type)
    }
}

async fn switched_feed(answer: &Switch) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(FEED_PATH))
        .respond_with(answer.clone())
        .mount(&server)
        .await;
    server
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

/// Waits until the feed has been read `more` more times than `seen`.
async fn reads_after(server: &MockServer, seen: usize, more: usize) {
    let deadline = tokio::time::Instant::now() + POLL_BUDGET;
    while requests(server).await < seen + more {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the feed was not read again within {POLL_BUDGET:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn an_html_page_or_a_document_without_listings_is_an_upstream_error() {
    bounded(async {
        for (body, content_type, what) in [
            (NGINX_502, "text/html", "an HTML error page"),
            (
                NO_LISTINGS,
                "application/xml",
                "a <listings> without <listing>",
            ),
        ] {
            let answer = Switch::new(body, content_type);
            let server = switched_feed(&answer).await;
            let (_bridge, client) = bridge(&format!("{}{FEED_PATH}", server.uri()), "1h").await;
            let result = call(
                &client,
                "inventory.search",
                json!({ "dealership_id": "lot" }),
            )
            .await;
            assert_eq!(
                result.is_error,
                Some(true),
                "{what} is not an empty inventory: {:?}",
                result.structured_content
            );
            let error = err(&result);
            assert_eq!(error["code"], "upstream.invalid_response", "{what}");
            let text = error.to_string();
            assert!(!text.contains("nginx") && !text.contains("Cedar"), "{text}");
            assert!(requests(&server).await >= 1, "{what}: the feed was read");
        }
    })
    .await;
}

#[tokio::test]
async fn a_bad_document_after_a_good_read_keeps_the_last_good_copy() {
    bounded(async {
        let answer = Switch::new(&fixture(FIXTURE), "application/xml");
        let server = switched_feed(&answer).await;
        let (_bridge, client) = bridge(&format!("{}{FEED_PATH}", server.uri()), "1s").await;
        let good = by_vin(&listed(&client).await);
        assert_eq!(good.len(), 11);

        for (body, content_type, what) in [
            (NGINX_502, "text/html", "an HTML error page"),
            (
                NO_LISTINGS,
                "application/xml",
                "a <listings> without <listing>",
            ),
        ] {
            answer.set(body, content_type);
            let seen = requests(&server).await;
            reads_after(&server, seen, 2).await;
            let now = by_vin(&listed(&client).await);
            assert_eq!(
                now.keys().collect::<Vec<_>>(),
                good.keys().collect::<Vec<_>>(),
                "after {what}: the last good copy is still served"
            );
            let got = get(&client, "3GNAXKEG4TL318204").await;
            assert_eq!(
                got.is_error,
                Some(false),
                "after {what}: a listed unit is not made sold: {:?}",
                got.structured_content
            );
            assert_eq!(
                err(&get(&client, SOLD).await)["code"],
                "inventory.vehicle_unavailable",
                "after {what}: the sold unit is still known as sold"
            );
        }
    })
    .await;
}
