//! The repair-order mapping format (`mappings/*-repair-orders.toml`): which
//! paths of a DMS record feed which canonical field, how its times are
//! written, and code tables for statuses and pay types. The same format maps
//! JSON answers and SOAP/XML answers (read into the same tree first).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::path::ValuePath;
use crate::model::repair_order::{JobStatus, PayType, RoStatus};
use crate::model::{AmountUnit, DistanceUnit};

/// A repair-order mapping file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoMappingFile {
    pub name: String,
    #[serde(default)]
    #[allow(dead_code)]
    pub description: String,
    #[allow(dead_code)]
    pub entity: RoEntity,
    /// How the DMS writes amounts.
    #[serde(default)]
    pub amounts: AmountUnit,
    /// The unit of mileage readings when the record does not say.
    #[serde(default = "default_distance")]
    pub distance_unit: DistanceUnit,
    /// Canonical field → where it is in the record.
    pub fields: BTreeMap<String, FieldSource>,
    /// Vendor RO status (case-insensitive) → `open`, `in_progress` or `closed`.
    #[serde(default)]
    pub status_codes: BTreeMap<String, String>,
    /// Vendor pay-type code → `customer`, `warranty`, `internal`, `insurance`,
    /// `service_contract` or `other` (used by jobs and totals).
    #[serde(default)]
    pub pay_types: BTreeMap<String, String>,
    pub jobs: Option<JobsSpec>,
    #[serde(default)]
    pub totals: Vec<TotalsSpec>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoEntity {
    RepairOrder,
}

fn default_distance() -> DistanceUnit {
    DistanceUnit::Mi
}

/// One path, or several whose values are joined (a date and a time in two
/// fields, a first and a last name) and then read with `format`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum FieldSource {
    Path(String),
    Joined {
        paths: Vec<String>,
        /// For times: `epoch_ms`, `epoch_s`, `rfc3339` (the default: RFC 3339,
        /// offsets without a colon, or local time) or a chrono format such as
        /// `%Y%m%d%H%M` read as the dealership's local time; alternatives are
        /// separated by `|` (`%Y-%m-%d %H:%M|%Y-%m-%d`).
        format: Option<String>,
        #[serde(default = "default_join")]
        join: String,
    },
}

fn default_join() -> String {
    " ".into()
}

/// Job lines: a list of records inside the repair order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobsSpec {
    pub records: String,
    pub fields: BTreeMap<String, String>,
    /// Vendor job status → `not_started`, `in_progress`, `on_hold`, `completed`.
    #[serde(default)]
    pub status_codes: BTreeMap<String, String>,
}

/// Rows of money inside the repair order (`records = ""`: the order itself is
/// the row), summed per pay type. `pay_type` is a
/// path to the row's vendor pay-type code (`/payType`), or a canonical pay
/// type when every row of this source has the same one (`customer`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TotalsSpec {
    pub records: String,
    pub pay_type: String,
    /// `total`, `labor`, `parts`, `tax` → path inside the row.
    pub fields: BTreeMap<String, String>,
}

/// Canonical fields of a repair order and whether a mapping must give them.
pub const RO_FIELDS: [(&str, bool); 15] = [
    ("ro_number", true),
    ("repair_order_id", false),
    ("status", false),
    ("opened_at", false),
    ("promised_at", false),
    ("closed_at", false),
    ("advisor", false),
    ("customer_name", false),
    ("vin", false),
    ("year", false),
    ("make", false),
    ("model", false),
    ("mileage_in", false),
    ("mileage_out", false),
    ("mileage_unit", false),
];

const JOB_FIELDS: [&str; 5] = ["line", "op_code", "description", "status", "pay_type"];
const TOTAL_FIELDS: [&str; 4] = ["total", "labor", "parts", "tax"];

/// A field source compiled: its paths and how to read the joined text.
#[derive(Debug, Clone)]
pub struct CompiledSource {
    pub paths: Vec<ValuePath>,
    pub format: Option<String>,
    pub join: String,
}

#[derive(Debug, Clone)]
pub struct CompiledJobs {
    pub records: ValuePath,
    pub fields: BTreeMap<String, ValuePath>,
    pub status_codes: BTreeMap<String, JobStatus>,
}

#[derive(Debug, Clone)]
pub enum PayTypeSource {
    Path(ValuePath),
    Fixed(PayType),
}

#[derive(Debug, Clone)]
pub struct CompiledTotals {
    /// `None`: the order itself is the one row.
    pub records: Option<ValuePath>,
    pub pay_type: PayTypeSource,
    pub fields: BTreeMap<String, ValuePath>,
}

/// A compiled repair-order mapping.
#[derive(Debug, Clone)]
pub struct RoMapping {
    pub name: String,
    pub amounts: AmountUnit,
    pub distance_unit: DistanceUnit,
    pub fields: BTreeMap<String, CompiledSource>,
    /// Keys upper-cased: vendor codes compare case-insensitively.
    pub status_codes: BTreeMap<String, RoStatus>,
    pub pay_types: BTreeMap<String, PayType>,
    pub jobs: Option<CompiledJobs>,
    pub totals: Vec<CompiledTotals>,
}

impl RoMapping {
    /// Parses and checks a mapping file; every problem is reported with its key.
    pub fn from_toml(text: &str) -> Result<Self, Vec<String>> {
        let file: RoMappingFile =
            toml::from_str(text).map_err(|e| vec![crate::config::locate::described(text, &e)])?;
        let mut errors = Vec::new();
        let mut path = |at: &str, text: &str| {
            ValuePath::parse(text)
                .map_err(|e| errors.push(format!("{at}: {e}")))
                .ok()
        };
        let mut fields = BTreeMap::new();
        for (name, source) in &file.fields {
            let (texts, format, join) = match source {
                FieldSource::Path(p) => (std::slice::from_ref(p), None, " ".to_owned()),
                FieldSource::Joined {
                    paths,
                    format,
                    join,
                } => (paths.as_slice(), format.clone(), join.clone()),
            };
            let paths: Vec<_> = texts
                .iter()
                .filter_map(|t| path(&format!("fields.{name}"), t))
                .collect();
            fields.insert(
                name.clone(),
                CompiledSource {
                    paths,
                    format,
                    join,
                },
            );
        }
        let jobs = file.jobs.as_ref().and_then(|spec| {
            let records = path("jobs.records", &spec.records)?;
            let fields = spec
                .fields
                .iter()
                .filter_map(|(k, v)| path(&format!("jobs.fields.{k}"), v).map(|p| (k.clone(), p)))
                .collect();
            Some(CompiledJobs {
                records,
                fields,
                status_codes: BTreeMap::new(),
            })
        });
        let totals: Vec<_> = file
            .totals
            .iter()
            .enumerate()
            .filter_map(|(i, spec)| {
                let records = match spec.records.as_str() {
                    "" => None,
                    p => Some(path(&format!("totals[{i}].records"), p)?),
                };
                let pay_type = if spec.pay_type.starts_with('/') {
                    PayTypeSource::Path(path(&format!("totals[{i}].pay_type"), &spec.pay_type)?)
                } else {
                    PayTypeSource::Fixed(PayType::parse(&spec.pay_type).unwrap_or(PayType::Other))
                };
                let fields = spec
                    .fields
                    .iter()
                    .filter_map(|(k, v)| {
                        path(&format!("totals[{i}].fields.{k}"), v).map(|p| (k.clone(), p))
                    })
                    .collect();
                Some(CompiledTotals {
                    records,
                    pay_type,
                    fields,
                })
            })
            .collect();
        check_names(&file, &mut errors);
        let mut mapping = RoMapping {
            name: file.name.clone(),
            amounts: file.amounts,
            distance_unit: file.distance_unit,
            fields,
            status_codes: table(
                &file.status_codes,
                "status_codes",
                RoStatus::parse,
                &mut errors,
            ),
            pay_types: table(&file.pay_types, "pay_types", PayType::parse, &mut errors),
            jobs,
            totals,
        };
        if let (Some(jobs), Some(spec)) = (mapping.jobs.as_mut(), &file.jobs) {
            jobs.status_codes = table(
                &spec.status_codes,
                "jobs.status_codes",
                JobStatus::parse,
                &mut errors,
            );
        }
        if errors.is_empty() {
            Ok(mapping)
        } else {
            Err(errors)
        }
    }
}

/// Reports unknown or missing canonical names.
fn check_names(file: &RoMappingFile, errors: &mut Vec<String>) {
    for (name, required) in RO_FIELDS {
        if required && !file.fields.contains_key(name) {
            errors.push(format!("fields: {name} is required"));
        }
    }
    for name in file.fields.keys() {
        if !RO_FIELDS.iter().any(|(f, _)| f == name) {
            errors.push(format!("fields.{name}: not a repair-order field"));
        }
    }
    if let Some(jobs) = &file.jobs {
        for name in jobs
            .fields
            .keys()
            .filter(|n| !JOB_FIELDS.contains(&n.as_str()))
        {
            errors.push(format!("jobs.fields.{name}: not a job field"));
        }
    }
    for (i, totals) in file.totals.iter().enumerate() {
        for name in totals
            .fields
            .keys()
            .filter(|n| !TOTAL_FIELDS.contains(&n.as_str()))
        {
            errors.push(format!("totals[{i}].fields.{name}: not a total field"));
        }
        let fixed = !totals.pay_type.starts_with('/');
        if fixed && PayType::parse(&totals.pay_type).is_none() {
            errors.push(format!("totals[{i}].pay_type: not a pay type or a path"));
        }
    }
}

/// A code table with canonical values checked and vendor codes upper-cased.
fn table<T>(
    codes: &BTreeMap<String, String>,
    at: &str,
    parse: fn(&str) -> Option<T>,
    errors: &mut Vec<String>,
) -> BTreeMap<String, T> {
    codes
        .iter()
        .filter_map(|(vendor, canonical)| match parse(canonical) {
            Some(v) => Some((vendor.to_uppercase(), v)),
            None => {
                errors.push(format!("{at}.{vendor}: {canonical:?} is not a known value"));
                None
            }
        })
        .collect()
}
