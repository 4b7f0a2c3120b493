#![allow(clippy::unwrap_used, clippy::expect_used)]
//! One vocabulary (`mappings/vocabulary.toml`): the same make, body style or
//! drivetrain written several ways counts as one facet bucket. End to end, a
//! feed that mixes vendors' spellings of makes, bodies, drivetrains and
//! models; at the library level, the Reynolds and Tekion inventory fixtures
//! mapped with their shipped profiles and mappings, counted together as one
//! search over both would count them.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::Utc;
use common::config::{BridgeConfig, Dealership, Token, Upstream};
use common::{call, connect, every_page, fixture, ok, with_config};
use dms_bridge::adapters::mapping::{
    MapContext, MappedUnit, ValuePath, VehicleMapping, list_at, map_vehicle,
};
use dms_bridge::adapters::rest::profile::Profile;
use dms_bridge::adapters::soap::profile::SoapProfile;
use dms_bridge::adapters::soap::xml::to_json;
use dms_bridge::config::catalog::{builtin_mapping, builtin_profile};
use dms_bridge::model::Vehicle;
use dms_bridge::tools::inventory::FacetValue;
use dms_bridge::tools::inventory::query::facets;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "lot-token";
const FEED_PATH: &str = "/exports/mixed/inventory.xml";
const TEST_BUDGET: Duration = Duration::from_secs(60);

// --- End to end: one feed, many spellings ---

/// One Meta-style `<listing>` (the elements `meta-automotive-xml` reads).
#[allow(clippy::too_many_arguments)]
fn listing(
    vin: &str,
    stock: &str,
    year: u16,
    make: &str,
    model: &str,
    body: &str,
    drivetrain: &str,
    state: &str,
    price: &str,
) -> String {
    format!(
        "<listing><vehicle_id>{stock}</vehicle_id><vin>{vin}</vin><year>{year}</year>\
         <make>{make}</make><model>{model}</model><body_style>{body}</body_style>\
         <drivetrain>{drivetrain}</drivetrain><state_of_vehicle>{state}</state_of_vehicle>\
         <availability>AVAILABLE</availability><price>{price}</price>\
         <mileage><value>12</value><unit>MI</unit></mileage></listing>"
    )
}

/// Seven units in the spellings different vendors use: five Chevrolets
/// (`CHEVROLET`, `Chevrolet`, `chevrolet truck`), three SUVs (`SUV 4D`,
/// `Sport Utility`, `SUV`), three pickups (`TRUCK`, `Pickup`), five 4WDs
/// (`FOUR_WD`, `4x4`, `4X4`) and two Silverado 1500s (`SILVERADO 1500`,
/// `Silverado 1500`).
fn mixed_feed() -> String {
    let units = [
        listing(
            "1GCUDDED2SZ481120",
            "M1",
            2025,
            "CHEVROLET",
            "SILVERADO 1500",
            "TRUCK",
            "FOUR_WD",
            "NEW",
            "52990 USD",
        ),
        listing(
            "1GCUDDED0RZ356904",
            "M2",
            2024,
            "Chevrolet",
            "Silverado 1500",
            "Pickup",
            "4x4",
            "USED",
            "44500 USD",
        ),
        listing(
            "1GNSKCKD3SR301775",
            "M3",
            2025,
            "chevrolet truck",
            "Tahoe",
            "SUV 4D",
            "FOUR_WD",
            "NEW",
            "68200 USD",
        ),
        listing(
            "3GNAXHEG2SL227031",
            "M4",
            2025,
            "Chevrolet",
            "Equinox",
            "Sport Utility",
            "AWD",
            "NEW",
            "31400 USD",
        ),
        listing(
            "1GNSKDKD0RR144268",
            "M5",
            2024,
            "CHEVROLET",
            "Suburban",
            "SUV",
            "4X4",
            "USED",
            "61900 USD",
        ),
        listing(
            "1FTFW1E57PF771420",
            "M6",
            2023,
            "Ford",
            "F-150",
            "TRUCK",
            "FOUR_WD",
            "USED",
            "38800 USD",
        ),
        listing(
            "2HGFE2F58PH512378",
            "M7",
            2023,
            "Honda",
            "Civic",
            "SEDAN",
            "FWD",
            "USED",
            "22400 USD",
        ),
    ];
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<listings><title>Mixed spellings</title>{}</listings>\n",
        units.concat()
    )
}

fn config(url: &str) -> String {
    let lot = Dealership::new(
        "lot",
        "Mixed Motors",
        "America/Chicago",
        ["5 Elm St", "Peoria", "IL", "61602"],
    );
    BridgeConfig::new()
        .call_timeout("5s")
        .dealership(lot.route("inventory", "feed"))
        .upstream(
            "feed",
            Upstream::feed(url, "meta-automotive-xml")
                .refresh_interval("1h")
                .timeout("2s"),
        )
        .token(Token::new("lot", TOKEN, &["lot"], &["amcp:inventory:read"]))
        .render()
}

/// `facet`'s buckets as value → count (values as the bridge shows them).
fn counts(facets: &Value, facet: &str) -> BTreeMap<String, u64> {
    facets[facet]
        .as_array()
        .unwrap_or_else(|| panic!("no {facet} in {facets}"))
        .iter()
        .map(|b| {
            (
                b["value"].as_str().unwrap().to_owned(),
                b["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The buckets of `facet` whose value is `value` ignoring case.
fn same_as(facets: &Value, facet: &str, value: &str) -> Vec<(String, u64)> {
    counts(facets, facet)
        .into_iter()
        .filter(|(v, _)| v.eq_ignore_ascii_case(value))
        .collect()
}

#[tokio::test]
async fn facet_counts_of_one_make_written_several_ways_are_one_bucket() {
    tokio::time::timeout(TEST_BUDGET, async {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path(FEED_PATH))
            .respond_with(ResponseTemplate::new(200).set_body_raw(mixed_feed(), "application/xml"))
            .mount(&server)
            .await;
        let bridge = with_config(&config(&format!("{}{FEED_PATH}", server.uri()))).await;
        let client = connect(&bridge.url, Some(TOKEN)).await;
        let facets = ok(&call(
            &client,
            "inventory.facets",
            json!({ "dealership_id": "lot" }),
        )
        .await);
        assert_eq!(facets["total"], 7);

        assert_eq!(
            counts(&facets, "makes"),
            BTreeMap::from([
                ("Chevrolet".to_owned(), 5),
                ("Ford".to_owned(), 1),
                ("Honda".to_owned(), 1)
            ]),
            "CHEVROLET, Chevrolet and chevrolet truck are one make"
        );
        assert_eq!(
            counts(&facets, "bodies"),
            BTreeMap::from([
                ("Pickup".to_owned(), 3),
                ("SUV".to_owned(), 3),
                ("Sedan".to_owned(), 1)
            ]),
            "SUV 4D, Sport Utility and SUV are one body; TRUCK is a pickup"
        );
        assert_eq!(
            counts(&facets, "drivetrains"),
            BTreeMap::from([
                ("4WD".to_owned(), 5),
                ("AWD".to_owned(), 1),
                ("FWD".to_owned(), 1)
            ]),
            "FOUR_WD, 4x4 and 4X4 are one drivetrain"
        );
        // Models are not in the vocabulary: compared ignoring case instead.
        let silverado = same_as(&facets, "models", "silverado 1500");
        assert_eq!(silverado.len(), 1, "one bucket: {}", facets["models"]);
        assert_eq!(silverado[0].1, 2);
        assert_eq!(counts(&facets, "models").values().sum::<u64>(), 7);

        // Every unit carries the canonical spelling, and filters by it find all five.
        let page = every_page(&client, json!({ "dealership_id": "lot" })).await;
        let chevrolets: Vec<&Value> = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| ["M1", "M2", "M3", "M4", "M5"].contains(&v["stock"].as_str().unwrap()))
            .collect();
        assert_eq!(chevrolets.len(), 5);
        for unit in &chevrolets {
            assert_eq!(unit["make"], "Chevrolet", "{unit}");
        }
        let filtered = ok(&call(
            &client,
            "inventory.search",
            json!({ "dealership_id": "lot", "filters": { "make": ["Chevrolet"], "body": ["SUV"] } }),
        )
        .await);
        assert_eq!(filtered["total"], 3, "Tahoe, Equinox, Suburban");
    })
    .await
    .expect("test exceeded its time budget");
}

// --- Library level: two vendors' fixtures, one count ---

fn context() -> MapContext<'static> {
    MapContext {
        dealership_id: "group",
        currency: "USD",
        timezone: chrono_tz::America::Chicago,
        verified_at: Utc::now(),
    }
}

fn mapping(name: &str) -> VehicleMapping {
    let text = builtin_mapping(name).unwrap_or_else(|| panic!("{name} is a built-in mapping"));
    VehicleMapping::from_toml(text).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

/// Each record with what it maps to (`None`: sold, never listed).
fn map_all(mapping: &VehicleMapping, records: &[Value]) -> Vec<(Value, Option<Vehicle>)> {
    let ctx = context();
    records
        .iter()
        .map(|record| {
            let unit = map_vehicle(mapping, record, &ctx)
                .unwrap_or_else(|e| panic!("{}: a record does not map: {e:?}", mapping.name));
            let listed = match unit {
                MappedUnit::Listed(v) => Some(*v),
                MappedUnit::Sold { .. } => None,
            };
            (record.clone(), listed)
        })
        .collect()
}

/// The Reynolds inventory answer's records, found as the `reynolds-rci`
/// profile's `[inventory] records` path finds them in the SOAP answer.
fn reynolds_records() -> Vec<Value> {
    let profile = SoapProfile::from_toml(builtin_profile("reynolds-rci").unwrap()).unwrap();
    let inventory = profile.inventory.expect("reynolds-rci reads inventory");
    assert_eq!(inventory.mapping, "reynolds-inventory");
    let records = ValuePath::parse(&inventory.records).unwrap();
    let tree = to_json(fixture("reynolds/vehicle-inventory.xml").as_bytes()).unwrap();
    let found: Vec<Value> = list_at(&records, &tree).into_iter().cloned().collect();
    assert_eq!(found.len(), 10, "the README's ten VehInvRec");
    found
}

/// Both Tekion inventory pages' records, at the `tekion` profile's records path.
fn tekion_records() -> Vec<Value> {
    let profile = Profile::from_toml(builtin_profile("tekion").unwrap()).unwrap();
    let inventory = profile.inventory.expect("tekion reads inventory");
    assert_eq!(inventory.mapping, "tekion-inventory");
    let records = ValuePath::parse(&inventory.records).unwrap();
    let found: Vec<Value> = [
        "tekion/inventory-page-1.json",
        "tekion/inventory-page-2.json",
    ]
    .iter()
    .flat_map(|page| {
        let doc: Value = serde_json::from_str(&fixture(page)).unwrap();
        list_at(&records, &doc)
            .into_iter()
            .cloned()
            .collect::<Vec<_>>()
    })
    .collect();
    assert_eq!(found.len(), 10, "six units on page 1, four on page 2");
    found
}

/// The make as the vendor wrote it in `record`, at `at`.
fn raw_make(record: &Value, at: &str) -> String {
    ValuePath::parse(at)
        .unwrap()
        .first(record)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn two_vendors_chevrolets_are_one_make_and_one_facet_bucket() {
    let reynolds = map_all(&mapping("reynolds-inventory"), &reynolds_records());
    let tekion = map_all(&mapping("tekion-inventory"), &tekion_records());

    // Every listed Chevrolet of either vendor reads `Chevrolet`, whether the
    // DMS wrote `CHEVROLET`, `CHEVROLET TRUCK` or `Chevrolet`.
    let mut chevrolets = [0u64; 2];
    for (i, (units, make_at)) in [
        (&reynolds, "/Vehicle/@VehicleMake"),
        (&tekion, "/vehicleSpecification/make"),
    ]
    .into_iter()
    .enumerate()
    {
        for (record, unit) in units {
            let raw = raw_make(record, make_at);
            let Some(vehicle) = unit else { continue };
            if raw.to_uppercase().starts_with("CHEVROLET") {
                assert_eq!(vehicle.make.as_deref(), Some("Chevrolet"), "{raw}");
                chevrolets[i] += 1;
            }
            // Every make of these fixtures has a canonical spelling in mixed
            // case (`HONDA` → `Honda`, `FORD TRUCK` → `Ford`).
            let make = vehicle.make.as_deref().unwrap_or_default();
            assert!(
                make.chars().any(char::is_lowercase),
                "{raw} → {make}: not the canonical spelling"
            );
        }
    }
    // Reynolds: five Chevrolets for sale (the CHEVROLET TRUCK loaner is not);
    // Tekion: six (the SOLD Colorado is not).
    assert_eq!(chevrolets, [5, 6]);

    let listed: Vec<&Vehicle> = reynolds
        .iter()
        .chain(&tekion)
        .filter_map(|(_, unit)| unit.as_ref())
        .collect();
    assert_eq!(listed.len(), 9 + 9);
    let counted = facets(&listed);
    let chevrolet: Vec<_> = counted
        .makes
        .iter()
        .filter(|b| matches!(&b.value, FacetValue::Text(t) if t.eq_ignore_ascii_case("chevrolet")))
        .collect();
    assert_eq!(
        chevrolet.len(),
        1,
        "one Chevrolet bucket: {:?}",
        counted.makes
    );
    assert_eq!(chevrolet[0].value, FacetValue::Text("Chevrolet".into()));
    assert_eq!(chevrolet[0].count, chevrolets[0] + chevrolets[1]);
    // No make is counted twice under two spellings.
    let mut spellings: BTreeMap<String, u64> = BTreeMap::new();
    for bucket in &counted.makes {
        if let FacetValue::Text(t) = &bucket.value {
            *spellings.entry(t.to_lowercase()).or_default() += 1;
        }
    }
    assert!(spellings.values().all(|n| *n == 1), "{:?}", counted.makes);
    // `SILVERADO 1500` (Reynolds) and `Silverado 1500` (Tekion): one model bucket.
    let silverado: Vec<_> = counted
        .models
        .iter()
        .filter(
            |b| matches!(&b.value, FacetValue::Text(t) if t.eq_ignore_ascii_case("silverado 1500")),
        )
        .collect();
    assert_eq!(silverado.len(), 1, "{:?}", counted.models);
    assert_eq!(silverado[0].count, 2);
}
