//! Applies a compiled repair-order mapping to one DMS record (JSON, or XML read
//! into the same tree).

use std::collections::BTreeMap;

use chrono_tz::Tz;
use serde_json::Value;

use super::path::{ValuePath, scalar_text};
use super::ro_spec::{CompiledSource, PayTypeSource, RoMapping};
use super::time::read_time;
use crate::model::money::parse_amount;
use crate::model::repair_order::{
    JobStatus, PayTotal, PayType, RepairOrder, RoJob, RoStatus, RoVehicle,
};
use crate::model::{DistanceUnit, Mileage, Money};

/// The values at `path`: an array's elements, or one object (XML read into a
/// tree has no arrays for a single child).
pub fn list_at<'a>(path: &ValuePath, root: &'a Value) -> Vec<&'a Value> {
    match path.first(root) {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one @ Value::Object(_)) => vec![one],
        _ => Vec::new(),
    }
}

/// Maps one record; `None` when it has no RO number.
pub fn map_repair_order(
    mapping: &RoMapping,
    record: &Value,
    tz: Tz,
    currency: &str,
) -> Option<RepairOrder> {
    let text = |name: &str| mapping.fields.get(name).and_then(|s| joined(s, record));
    let time = |name: &str| {
        let source = mapping.fields.get(name)?;
        read_time(&joined(source, record)?, source.format.as_deref(), tz)
    };
    let ro_number = text("ro_number")?;
    let unit = text("mileage_unit")
        .and_then(|u| distance_unit(&u))
        .unwrap_or(mapping.distance_unit);
    let mileage = |name: &str| {
        let digits: String = text(name)?.chars().filter(char::is_ascii_digit).collect();
        Some(Mileage {
            value: digits.parse().ok()?,
            unit,
        })
    };
    let jobs = map_jobs(mapping, record);
    let closed_at = time("closed_at");
    let vendor_status = text("status").and_then(|s| mapping.status_codes.get(&s.to_uppercase()));
    let status = vendor_status
        .copied()
        .unwrap_or_else(|| derived_status(closed_at.is_some(), &jobs));
    Some(RepairOrder {
        ro_number,
        repair_order_id: text("repair_order_id"),
        status,
        opened_at: time("opened_at"),
        promised_at: time("promised_at"),
        closed_at,
        advisor: text("advisor"),
        vehicle: RoVehicle {
            vin: text("vin").map(|v| v.to_uppercase()),
            year: text("year").and_then(|y| y.parse().ok()),
            make: text("make").map(|m| super::vocabulary::canonical("make", m)),
            model: text("model"),
            mileage_in: mileage("mileage_in"),
            mileage_out: mileage("mileage_out"),
        },
        customer_name: text("customer_name"),
        jobs,
        totals: map_totals(mapping, record, currency),
    })
}

/// Without a vendor status: closed when it has a close time, in progress when
/// work has started on any job, else open.
fn derived_status(closed: bool, jobs: &[RoJob]) -> RoStatus {
    if closed {
        return RoStatus::Closed;
    }
    let started = jobs.iter().any(|j| {
        matches!(
            j.status,
            Some(JobStatus::InProgress | JobStatus::OnHold | JobStatus::Completed)
        )
    });
    if started {
        RoStatus::InProgress
    } else {
        RoStatus::Open
    }
}

fn map_jobs(mapping: &RoMapping, record: &Value) -> Vec<RoJob> {
    let Some(spec) = &mapping.jobs else {
        return Vec::new();
    };
    list_at(&spec.records, record)
        .into_iter()
        .map(|row| {
            let get = |name: &str| field(&spec.fields, name, row);
            RoJob {
                line: get("line"),
                op_code: get("op_code"),
                description: get("description"),
                status: get("status").map(|s| {
                    spec.status_codes
                        .get(&s.to_uppercase())
                        .copied()
                        .unwrap_or(JobStatus::Unknown)
                }),
                pay_type: get("pay_type").map(|p| pay_type(mapping, &p)),
            }
        })
        .filter(|j| j.op_code.is_some() || j.description.is_some() || j.line.is_some())
        .collect()
}

/// Per pay type, in the order pay types are declared (customer first).
fn map_totals(mapping: &RoMapping, record: &Value, currency: &str) -> Vec<PayTotal> {
    #[derive(Default)]
    struct Sum {
        total: Option<i64>,
        labor: Option<i64>,
        parts: Option<i64>,
        tax: Option<i64>,
    }
    let add = |slot: &mut Option<i64>, amount: Option<i64>| {
        if let Some(a) = amount {
            *slot = Some(slot.unwrap_or(0).saturating_add(a));
        }
    };
    let mut sums: BTreeMap<PayType, Sum> = BTreeMap::new();
    for source in &mapping.totals {
        let rows = match &source.records {
            Some(path) => list_at(path, record),
            None => vec![record],
        };
        for row in rows {
            let amount = |name: &str| {
                field(&source.fields, name, row)
                    .and_then(|t| parse_amount(&t, mapping.amounts))
                    .map(|a| a.minor)
            };
            let (total, labor, parts, tax) = (
                amount("total"),
                amount("labor"),
                amount("parts"),
                amount("tax"),
            );
            if total.is_none() && labor.is_none() && parts.is_none() && tax.is_none() {
                continue;
            }
            let pay = match &source.pay_type {
                PayTypeSource::Fixed(p) => *p,
                PayTypeSource::Path(path) => match path.first(row).and_then(scalar_text) {
                    Some(code) => pay_type(mapping, &code),
                    None => continue,
                },
            };
            let sum = sums.entry(pay).or_default();
            add(&mut sum.total, total);
            add(&mut sum.labor, labor);
            add(&mut sum.parts, parts);
            add(&mut sum.tax, tax);
        }
    }
    let money = |amount: i64| Money {
        amount,
        currency: currency.to_owned(),
    };
    sums.into_iter()
        .map(|(pay_type, s)| {
            let parts_sum = [s.labor, s.parts, s.tax].iter().flatten().sum::<i64>();
            PayTotal {
                pay_type,
                total: money(s.total.unwrap_or(parts_sum)),
                labor: s.labor.map(money),
                parts: s.parts.map(money),
                tax: s.tax.map(money),
            }
        })
        .collect()
}

fn pay_type(mapping: &RoMapping, code: &str) -> PayType {
    mapping
        .pay_types
        .get(&code.to_uppercase())
        .copied()
        .or_else(|| PayType::parse(&code.to_lowercase()))
        .unwrap_or(PayType::Other)
}

fn field(fields: &BTreeMap<String, ValuePath>, name: &str, row: &Value) -> Option<String> {
    fields
        .get(name)?
        .first(row)
        .and_then(scalar_text)
        .filter(|t| !t.is_empty())
}

/// The source's values joined; `None` when none is present.
fn joined(source: &CompiledSource, record: &Value) -> Option<String> {
    let parts: Vec<String> = source
        .paths
        .iter()
        .filter_map(|p| p.first(record).and_then(scalar_text))
        .filter(|t| !t.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(&source.join))
}

fn distance_unit(text: &str) -> Option<DistanceUnit> {
    match text.to_ascii_lowercase().as_str() {
        "mi" | "mile" | "miles" => Some(DistanceUnit::Mi),
        "km" | "kilometer" | "kilometers" | "kilometre" | "kilometres" => Some(DistanceUnit::Km),
        _ => None,
    }
}
