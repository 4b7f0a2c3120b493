#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The repair-order mappings against their fixtures: every record of every
//! shape maps, and the same order read from different DMS shapes comes out
//! the same (status, times, vehicle, jobs, money).

use dms_bridge::adapters::mapping::{RoMapping, map_repair_order};
use dms_bridge::config::catalog::builtin_mapping;
use dms_bridge::model::repair_order::RepairOrder;
use serde_json::Value;

fn fixture(path: &str) -> Value {
    let text = std::fs::read_to_string(format!(
        "{}/wiremock-fixtures/{path}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn map_all(mapping: &str, records: &[Value]) -> Vec<RepairOrder> {
    let mapping = RoMapping::from_toml(builtin_mapping(mapping).unwrap()).unwrap();
    let tz = chrono_tz::America::Chicago;
    let mapped: Vec<RepairOrder> = records
        .iter()
        .filter_map(|r| map_repair_order(&mapping, r, tz, "USD"))
        .collect();
    assert_eq!(mapped.len(), records.len(), "every record maps");
    let mut mapped = mapped;
    mapped.sort_by(|a, b| a.ro_number.cmp(&b.ro_number));
    mapped
}

fn data(path: &str) -> Vec<Value> {
    fixture(path)["data"].as_array().unwrap().clone()
}

fn cdk() -> Vec<RepairOrder> {
    let mut records = data("cdk/repair-orders/result-open.json");
    records.extend(data("cdk/repair-orders/result-closed.json"));
    map_all("cdk-repair-orders", &records)
}

fn tekion() -> Vec<RepairOrder> {
    let mut records = data("tekion/repair-orders-page-1.json");
    records.extend(data("tekion/repair-orders-page-2.json"));
    map_all("tekion-repair-orders", &records)
}

/// What two DMSs must agree on for the same order.
fn essentials(ro: &RepairOrder) -> Value {
    serde_json::json!({
        "ro_number": ro.ro_number,
        "status": ro.status,
        "opened_at": ro.opened_at.map(|t| t.to_rfc3339()),
        "promised_at": ro.promised_at.map(|t| t.to_rfc3339()),
        "closed_at": ro.closed_at.map(|t| t.to_rfc3339()),
        // Vendors differ in letter case only.
        "vehicle": serde_json::to_string(&ro.vehicle).unwrap().to_uppercase(),
        "jobs": ro.jobs.iter().map(|j| (j.op_code.clone(), j.status, j.pay_type)).collect::<Vec<_>>(),
        "totals": ro.totals,
    })
}

#[test]
fn every_fixture_record_maps_with_what_a_caller_needs() {
    for ro in cdk().iter().chain(&tekion()) {
        assert!(ro.opened_at.is_some(), "{}", ro.ro_number);
        assert!(ro.vehicle.vin.as_deref().is_some_and(|v| v.len() == 17));
        assert!(
            !ro.jobs.is_empty() && !ro.totals.is_empty(),
            "{}",
            ro.ro_number
        );
        assert!(ro.advisor.is_some() && ro.customer_name.is_some());
        assert_eq!(
            ro.closed_at.is_some(),
            ro.status == dms_bridge::adapters::RoStatus::Closed,
            "{}",
            ro.ro_number
        );
    }
}

#[test]
fn cdk_and_tekion_shapes_of_one_order_book_agree() {
    let (cdk, tekion) = (cdk(), tekion());
    assert_eq!(cdk.len(), 8);
    assert_eq!(
        cdk.iter().map(essentials).collect::<Vec<_>>(),
        tekion.iter().map(essentials).collect::<Vec<_>>()
    );
}
