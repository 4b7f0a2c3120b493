#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every built-in mapping against the recorded fixtures: each path a mapping
//! reads exists in the fixtures, every fixture record maps, and listed/sold
//! counts match what the raw fixture says. Also: the built-in vendor profiles
//! in `adapters/` parse and name built-in mappings.

use std::collections::BTreeSet;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use dms_bridge::adapters::feed::parse_rows;
use dms_bridge::adapters::mapping::{
    MapContext, MappedUnit, RoMapping, VehicleMapping, map_vehicle,
};
use dms_bridge::adapters::rest::profile::Profile;
use dms_bridge::adapters::soap::profile::SoapProfile;
use dms_bridge::config::catalog::{self, builtin_mapping, builtin_profile};
use dms_bridge::model::Vehicle;
use serde_json::Value;

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo_file(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn compile(name: &str) -> VehicleMapping {
    let text = builtin_mapping(name).unwrap_or_else(|| panic!("{name} is a built-in mapping"));
    VehicleMapping::from_toml(text).unwrap_or_else(|e| panic!("{name} compiles: {e:?}"))
}

/// The `results` records of the CDK fixture.
fn cdk_records() -> Vec<Value> {
    let doc: Value =
        serde_json::from_str(&read("wiremock-fixtures/cdk/merchandisable-vehicles.json")).unwrap();
    let records = doc["results"].as_array().expect("results array").clone();
    assert_eq!(
        records.len() as u64,
        doc["summary"]["totalCount"].as_u64().unwrap(),
        "the fixture holds the whole result set"
    );
    records
}

/// A feed fixture as the bridge reads it.
fn feed_records(path: &str, mapping: &VehicleMapping) -> Vec<Value> {
    parse_rows(read(path).as_bytes(), mapping.feed.as_ref())
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Raw rows of a delimited fixture, read with the csv crate (not the bridge's parser).
fn raw_rows(path: &str, delimiter: u8) -> Vec<csv::StringRecord> {
    let text = read(path);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .quoting(delimiter == b',')
        .from_reader(text.as_bytes());
    reader.records().map(Result::unwrap).collect()
}

fn column(path: &str, delimiter: u8, name: &str) -> Vec<String> {
    let text = read(path);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .quoting(delimiter == b',')
        .from_reader(text.as_bytes());
    let index = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("{path} has {name}"));
    raw_rows(path, delimiter)
        .iter()
        .map(|r| r[index].to_owned())
        .collect()
}

/// Paths of `mapping` that reach no present, non-blank value in any record.
fn missing_paths(mapping: &VehicleMapping, records: &[Value]) -> Vec<String> {
    let mut missing: Vec<String> = mapping
        .all_paths()
        .into_iter()
        .filter(|p| {
            !records
                .iter()
                .any(|r| p.first(r).is_some_and(|v| !v.is_null()))
        })
        .map(|p| p.as_str().to_owned())
        .collect();
    missing.sort();
    missing.dedup();
    missing
}

fn assert_all_paths_present(name: &str, records: &[Value]) {
    let mapping = compile(name);
    assert!(!records.is_empty());
    let paths = mapping.all_paths();
    assert!(paths.len() >= 10, "{name} reads {} paths", paths.len());
    let missing = missing_paths(&mapping, records);
    assert!(
        missing.is_empty(),
        "mapping {name} reads {} path(s) that no fixture record has: {missing:?}",
        missing.len()
    );
}

struct Mapped {
    listed: Vec<Vehicle>,
    /// VINs (or ids when there is no VIN) of sold units.
    sold: BTreeSet<String>,
}

fn map_all(name: &str, records: &[Value]) -> Mapped {
    let mapping = compile(name);
    let verified_at: DateTime<Utc> = "2026-11-21T12:00:00Z".parse().unwrap();
    let ctx = MapContext {
        dealership_id: "fixture",
        currency: "USD",
        timezone: chrono_tz::America::Chicago,
        verified_at,
    };
    let mut listed = Vec::new();
    let mut sold = BTreeSet::new();
    let mut failures = Vec::new();
    for (i, record) in records.iter().enumerate() {
        match map_vehicle(&mapping, record, &ctx) {
            // Works whether the variant holds the vehicle or a box of it.
            Ok(MappedUnit::Listed(v)) => listed.push(Vehicle::clone(&v)),
            Ok(MappedUnit::Sold { id, vin, .. }) => {
                sold.insert(vin.unwrap_or(id));
            }
            Err(e) => failures.push(format!("record {i}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "mapping {name} cannot map {} record(s): {failures:?}",
        failures.len()
    );
    Mapped { listed, sold }
}

/// Every mapped unit keeps the VIN the fixture gives it (so every fixture VIN passes the check digit).
fn assert_vins_kept(name: &str, mapped: &Mapped, fixture_vins: &BTreeSet<String>) {
    let listed: BTreeSet<String> = mapped
        .listed
        .iter()
        .map(|v| {
            v.vin
                .clone()
                .unwrap_or_else(|| panic!("{name}: {} lost its VIN", v.id))
        })
        .collect();
    assert_eq!(
        listed.len(),
        mapped.listed.len(),
        "{name}: listed VINs are unique"
    );
    let all: BTreeSet<String> = listed.union(&mapped.sold).cloned().collect();
    assert_eq!(
        &all, fixture_vins,
        "{name}: mapped VINs are exactly the fixture's"
    );
}

// ---------------------------------------------------------------------------
// cdk-inventory
// ---------------------------------------------------------------------------

#[test]
fn cdk_inventory_paths_exist_in_the_fixture() {
    assert_all_paths_present("cdk-inventory", &cdk_records());
}

#[test]
fn cdk_inventory_maps_every_record_with_the_fixtures_listed_and_sold_counts() {
    let records = cdk_records();
    let is_sold = |r: &Value| {
        r["deleted"] == Value::Bool(true)
            || matches!(
                r["vehicleStatus"]["inventoryStatus"].as_str(),
                Some("SOLD" | "DELIVERED")
            )
    };
    let expected_sold: BTreeSet<String> = records
        .iter()
        .filter(|r| is_sold(r))
        .map(|r| r["vin"].as_str().unwrap().to_owned())
        .collect();
    let mapped = map_all("cdk-inventory", &records);
    assert_eq!(
        mapped.listed.len(),
        records.len() - expected_sold.len(),
        "listed units"
    );
    assert_eq!(mapped.sold, expected_sold, "sold units (deleted or SOLD)");
    let vins: BTreeSet<String> = records
        .iter()
        .map(|r| r["vin"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(vins.len(), records.len());
    assert_vins_kept("cdk-inventory", &mapped, &vins);
    // Spot checks the README calls out.
    let by_vin = |vin: &str| {
        mapped
            .listed
            .iter()
            .find(|v| v.vin.as_deref() == Some(vin))
            .unwrap()
    };
    let km = by_vin("2T3R0MUW6SM789794");
    assert_eq!(
        km.mileage.map(|m| m.unit),
        Some(dms_bridge::model::DistanceUnit::Km)
    );
    for vin in ["KNDSM8ZN0RS404556", "1GNX6HZP9R3353836"] {
        assert!(
            by_vin(vin).price.is_some(),
            "{vin} falls back to its ADVERTISED price"
        );
    }
    assert_eq!(by_vin("5N1DJVJP8SL333793").trim, None);
}

// ---------------------------------------------------------------------------
// homenet-csv
// ---------------------------------------------------------------------------

const HOMENET: &str = "wiremock-fixtures/feed/homenet-inventory.csv";
const HOMENET_NEXT: &str = "wiremock-fixtures/feed/homenet-inventory-next.csv";
const GOOGLE: &str = "wiremock-fixtures/feed/google-vehicle-listings.tsv";

#[test]
fn homenet_csv_paths_exist_in_the_fixture() {
    let mapping = compile("homenet-csv");
    assert_all_paths_present("homenet-csv", &feed_records(HOMENET, &mapping));
}

fn check_homenet(path: &str) {
    let mapping = compile("homenet-csv");
    let records = feed_records(path, &mapping);
    let raw = raw_rows(path, b',');
    assert_eq!(
        records.len(),
        raw.len(),
        "{path}: one parsed row per CSV record"
    );
    let statuses = column(path, b',', "Status");
    let vins = column(path, b',', "VIN");
    let expected_sold: BTreeSet<String> = vins
        .iter()
        .zip(&statuses)
        .filter(|(_, s)| s.eq_ignore_ascii_case("sold") || s.eq_ignore_ascii_case("delivered"))
        .map(|(v, _)| v.clone())
        .collect();
    assert!(!expected_sold.is_empty());
    let mapped = map_all("homenet-csv", &records);
    assert_eq!(
        mapped.listed.len(),
        raw.len() - expected_sold.len(),
        "{path}: listed units"
    );
    assert_eq!(mapped.sold, expected_sold, "{path}: sold units");
    assert_vins_kept("homenet-csv", &mapped, &vins.into_iter().collect());
}

#[test]
fn homenet_csv_maps_every_row_of_both_snapshots() {
    check_homenet(HOMENET);
    check_homenet(HOMENET_NEXT);
}

// ---------------------------------------------------------------------------
// google-vehicle-listings
// ---------------------------------------------------------------------------

#[test]
fn google_vehicle_listings_paths_exist_in_the_fixture() {
    let mapping = compile("google-vehicle-listings");
    assert_all_paths_present("google-vehicle-listings", &feed_records(GOOGLE, &mapping));
}

#[test]
fn google_vehicle_listings_maps_every_row() {
    let mapping = compile("google-vehicle-listings");
    let records = feed_records(GOOGLE, &mapping);
    let raw = raw_rows(GOOGLE, b'\t');
    assert_eq!(records.len(), raw.len());
    let mapped = map_all("google-vehicle-listings", &records);
    assert_eq!(
        mapped.listed.len(),
        raw.len(),
        "the feed lists no sold units"
    );
    assert!(mapped.sold.is_empty());
    assert_vins_kept(
        "google-vehicle-listings",
        &mapped,
        &column(GOOGLE, b'\t', "vin").into_iter().collect(),
    );
    let certified = column(GOOGLE, b'\t', "certified_pre-owned")
        .iter()
        .filter(|c| *c == "yes")
        .count();
    let cpo = mapped
        .listed
        .iter()
        .filter(|v| v.condition == dms_bridge::model::Condition::Cpo)
        .count();
    assert_eq!(cpo, certified);
}

// ---------------------------------------------------------------------------
// The catalog as a whole
// ---------------------------------------------------------------------------

/// SOAP profiles say which SOAP version they speak; REST profiles have no such key.
fn is_soap_profile(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .unwrap()
        .contains_key("version")
}

/// Stems of `*.toml` files in a repo folder.
fn toml_stems(dir: &str) -> BTreeSet<String> {
    std::fs::read_dir(repo_file(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn every_builtin_mapping_is_checked_against_a_fixture_and_matches_its_file() {
    // Repair-order mappings are checked against their fixtures in
    // repair_order_mappings.rs; the issue-32 shapes in soap_inventory.rs,
    // feed_xml.rs, vocabulary_facets.rs and kit_mapping_test.rs.
    let tested: BTreeSet<&str> = [
        "cdk-inventory",
        "tekion-inventory",
        "opentrack-inventory",
        "reynolds-inventory",
        "homenet-csv",
        "google-vehicle-listings",
        "meta-automotive-xml",
        "cdk-repair-orders",
        "tekion-repair-orders",
        "opentrack-repair-orders",
        "reynolds-repair-orders",
    ]
    .into();
    let builtins: BTreeSet<&str> = catalog::MAPPINGS.iter().copied().collect();
    assert_eq!(
        builtins, tested,
        "a new built-in mapping needs a fixture check here"
    );
    // The vocabulary beside the mappings is a table every mapping goes through, not one.
    let mut files = toml_stems("mappings");
    assert!(files.remove("vocabulary"));
    assert_eq!(
        files,
        builtins.iter().map(|s| s.to_string()).collect(),
        "mappings/ holds exactly the built-ins"
    );
    for name in builtins {
        assert_eq!(
            builtin_mapping(name),
            Some(read(&format!("mappings/{name}.toml")).as_str()),
            "{name} embeds its file"
        );
        let compiled_name = if name.ends_with("-repair-orders") {
            RoMapping::from_toml(builtin_mapping(name).unwrap())
                .unwrap()
                .name
        } else {
            compile(name).name
        };
        assert_eq!(
            compiled_name, name,
            "the file's name matches its catalog name"
        );
    }
    assert_eq!(builtin_mapping("no-such-mapping"), None);
}

#[test]
fn every_builtin_profile_parses_and_names_a_builtin_mapping() {
    let files = toml_stems("adapters");
    let builtins: BTreeSet<String> = catalog::PROFILES.iter().map(|s| s.to_string()).collect();
    assert!(!files.is_empty());
    assert_eq!(
        files, builtins,
        "adapters/ holds exactly the built-in profiles"
    );
    for name in &files {
        let text = read(&format!("adapters/{name}.toml"));
        assert_eq!(
            builtin_profile(name),
            Some(text.as_str()),
            "{name} embeds its file"
        );
        if is_soap_profile(&text) {
            let profile = SoapProfile::from_toml(&text)
                .unwrap_or_else(|e| panic!("adapters/{name}.toml: {e}"));
            assert_eq!(&profile.name, name);
            if let Some(inventory) = &profile.inventory {
                let mapping = builtin_mapping(&inventory.mapping)
                    .unwrap_or_else(|| panic!("{name}'s vehicle mapping is a built-in"));
                VehicleMapping::from_toml(mapping)
                    .unwrap_or_else(|e| panic!("{}: {e:?}", inventory.mapping));
            }
            let ros = profile
                .repair_orders
                .expect("a SOAP profile reads repair orders");
            let mapping = builtin_mapping(&ros.mapping)
                .unwrap_or_else(|| panic!("{name}'s repair-order mapping is a built-in"));
            RoMapping::from_toml(mapping).unwrap_or_else(|e| panic!("{}: {e:?}", ros.mapping));
            continue;
        }
        let profile =
            Profile::from_toml(&text).unwrap_or_else(|e| panic!("adapters/{name}.toml: {e}"));
        assert_eq!(&profile.name, name);
        assert!(
            profile.inventory.is_some()
                || profile.trade_value.is_some()
                || profile.availability.is_some()
                || profile.repair_orders.is_some()
                || profile.submit_lead.is_some(),
            "{name} has no operation"
        );
        if let Some(inventory) = &profile.inventory {
            assert!(
                catalog::MAPPINGS.contains(&inventory.mapping.as_str()),
                "{name}'s inventory mapping {:?} is not a built-in ({:?})",
                inventory.mapping,
                catalog::MAPPINGS
            );
            compile(&inventory.mapping);
        }
        if let Some(ros) = &profile.repair_orders {
            let text = builtin_mapping(&ros.mapping)
                .unwrap_or_else(|| panic!("{name}'s repair-order mapping is a built-in"));
            RoMapping::from_toml(text).unwrap_or_else(|e| panic!("{}: {e:?}", ros.mapping));
        }
    }
    assert_eq!(builtin_profile("no-such-profile"), None);
}

#[test]
fn every_path_the_blackbook_profile_reads_exists_in_its_fixture() {
    let profile = Profile::from_toml(&read("adapters/blackbook.toml")).unwrap();
    let spec = profile.trade_value.unwrap();
    let answer: serde_json::Value =
        serde_json::from_str(&read("wiremock-fixtures/blackbook/used-vehicle.json")).unwrap();
    let at = |path: &str, root: &serde_json::Value| {
        dms_bridge::adapters::mapping::ValuePath::parse(path)
            .unwrap()
            .first(root)
            .cloned()
            .unwrap_or_else(|| panic!("{path} is not in the fixture"))
    };
    assert_eq!(at(spec.available.as_deref().unwrap(), &answer), true);
    let record = at(&spec.record, &answer);
    let f = &spec.fields;
    for path in [&f.rough, &f.average, &f.clean].into_iter().chain(
        [&f.year, &f.make, &f.model, &f.series, &f.style]
            .into_iter()
            .flatten(),
    ) {
        at(path, &record);
    }
    let none: serde_json::Value =
        serde_json::from_str(&read("wiremock-fixtures/blackbook/no-data.json")).unwrap();
    assert_eq!(at(spec.available.as_deref().unwrap(), &none), false);
}

#[test]
fn every_path_the_xtime_profile_reads_exists_in_its_fixtures() {
    let profile = Profile::from_toml(&read("adapters/xtime.toml")).unwrap();
    for (spec, file) in [
        (profile.service_menu.unwrap(), "services.json"),
        (profile.availability.unwrap(), "availabilities.json"),
    ] {
        let answer: serde_json::Value =
            serde_json::from_str(&read(&format!("wiremock-fixtures/xtime/{file}"))).unwrap();
        let path = |p: &str| dms_bridge::adapters::mapping::ValuePath::parse(p).unwrap();
        let records = path(&spec.records).first(&answer).cloned().unwrap();
        let first = &records.as_array().unwrap()[0];
        for (name, p) in &spec.fields {
            assert!(
                path(p).first(first).is_some(),
                "{file}: {name} at {p} is missing"
            );
        }
    }
}

#[test]
fn the_opentrack_profile_reads_every_fixture_answer() {
    use dms_bridge::adapters::mapping::{ValuePath, list_at, map_repair_order};
    use dms_bridge::adapters::soap::{envelope, xml};

    let profile = SoapProfile::from_toml(&read("adapters/opentrack.toml")).unwrap();
    let ros = profile.repair_orders.unwrap();
    let mapping = RoMapping::from_toml(builtin_mapping(&ros.mapping).unwrap()).unwrap();
    let closed = ValuePath::parse(&ros.closed.unwrap().records).unwrap();
    let get = ValuePath::parse(&ros.get.unwrap().records).unwrap();
    let dir = repo_file("wiremock-fixtures/opentrack");
    // The repair-order answers (the inventory has its own test, soap_inventory.rs).
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".xml") && !f.starts_with("vehicle-inventory"))
        .collect();
    files.sort();
    let mut mapped = 0;
    for file in &files {
        let raw = read(&format!("wiremock-fixtures/opentrack/{file}"));
        let doc = xml::to_json(raw.as_bytes()).unwrap_or_else(|e| panic!("{file}: {e}"));
        if file.starts_with("fault-") {
            let fault = envelope::fault(&doc).unwrap_or_else(|| panic!("{file} is a fault"));
            let subcode = fault.subcode.unwrap();
            assert!(
                profile.errors.faults.contains_key(&subcode),
                "{file}: {subcode}"
            );
            continue;
        }
        let records_at = if file.starts_with("closed-") {
            &closed
        } else {
            &get
        };
        let records = list_at(records_at, &doc);
        assert_eq!(
            records.len(),
            raw.matches("<RepairOrder>").count(),
            "{file}"
        );
        for record in records {
            let ro = map_repair_order(&mapping, record, chrono_tz::America::Chicago, "USD")
                .unwrap_or_else(|| panic!("{file}: a record without an RO number"));
            assert!(raw.contains(&format!("<RepairOrderNumber>{}<", ro.ro_number)));
            assert!(ro.closed_at.is_some() && ro.opened_at.is_some(), "{file}");
            assert!(
                ro.vehicle.vin.is_some() && ro.customer_name.is_some(),
                "{file}"
            );
            assert!(!ro.jobs.is_empty() && !ro.totals.is_empty(), "{file}");
            mapped += 1;
        }
    }
    assert_eq!(mapped, 8, "four close days and four details");
}
