//! What a mapping made of each record, field by field, and what is wrong with
//! the mapping as a whole: paths that matched nothing, required fields that no
//! record has. The same report is printed for people and written as JSON.

use serde::Serialize;
use serde_json::Value;

use crate::adapters::mapping::explain::{self, FieldTrace, Source};
use crate::adapters::mapping::{
    FieldKind, MapContext, MappedUnit, RoMapping, VEHICLE_FIELDS, ValuePath, VehicleMapping,
    map_repair_order, map_vehicle,
};

#[derive(Debug, Serialize)]
pub struct Report {
    pub mapping: String,
    pub entity: &'static str,
    pub profile: Option<String>,
    pub responses: Vec<String>,
    /// The profile section (or option) the records path came from, and the path.
    pub records_from: String,
    pub records_path: String,
    pub records: Vec<RecordReport>,
    pub paths: Vec<PathUse>,
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether any finding fails the test.
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

#[derive(Debug, Serialize)]
pub struct RecordReport {
    /// 1-based, in answer order.
    pub index: usize,
    /// `listed`, `sold` (never listed), `skipped` (not mappable), or `mapped`
    /// (repair orders).
    pub outcome: String,
    pub id: Option<String>,
    pub fields: Vec<FieldReport>,
}

#[derive(Debug, Serialize)]
pub struct FieldReport {
    pub field: String,
    /// The canonical value, as the tools answer it.
    pub value: Option<Value>,
    /// The path (or rule, or default) it came from.
    pub source: Option<String>,
    /// Why there is no value.
    pub reason: Option<String>,
}

/// How many records a mapping path found a value in.
#[derive(Debug, Serialize)]
pub struct PathUse {
    pub path: String,
    /// What reads it: a canonical field, `identity`, `sold_when`, a rule.
    pub role: String,
    /// Paths of one group are alternatives: one of them matching is enough.
    #[serde(skip)]
    pub group: String,
    pub matched: usize,
    pub of: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub message: String,
}

impl Finding {
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            message: message.into(),
        }
    }
    pub fn warning(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            message: message.into(),
        }
    }
}

/// Canonical vehicle fields a listing cannot do without (beyond an identity),
/// and those agents and AAP buyers expect of every listing.
const VEHICLE_REQUIRED: &[&str] = &["condition", "status"];
const VEHICLE_EXPECTED: &[&str] = &["year", "make", "model", "price"];
const RO_REQUIRED: &[&str] = &["ro_number"];
const RO_EXPECTED: &[&str] = &["opened_at", "vin"];

/// The vehicle fields of each record.
pub fn vehicle_records(
    mapping: &VehicleMapping,
    records: &[Value],
    ctx: &MapContext<'_>,
) -> Vec<RecordReport> {
    records
        .iter()
        .enumerate()
        .map(|(i, record)| {
            let traces = explain::explain_vehicle(mapping, record);
            let (outcome, id, mapped) = match map_vehicle(mapping, record, ctx) {
                Ok(MappedUnit::Listed(v)) => (
                    "listed".to_owned(),
                    Some(v.id.clone()),
                    serde_json::to_value(&*v).unwrap_or(Value::Null),
                ),
                Ok(MappedUnit::Sold { id, vin, stock }) => (
                    "sold (never listed)".to_owned(),
                    Some(id),
                    serde_json::json!({ "vin": vin, "stock": stock }),
                ),
                Err(e) => (format!("skipped: {}", e.0), None, Value::Null),
            };
            let listed = outcome == "listed";
            let fields = VEHICLE_FIELDS
                .iter()
                .map(|(name, kind)| {
                    let canonical = mapped.get(name).cloned().filter(|v| !v.is_null());
                    let mut report = trace_report(name, *kind, &traces, canonical);
                    if !listed && report.value.is_none() && report.source.is_some() {
                        report.reason = Some(format!("not produced: the record is {outcome}"));
                    }
                    report
                })
                .collect();
            RecordReport {
                index: i + 1,
                outcome,
                id,
                fields,
            }
        })
        .collect()
}

/// The repair-order fields of each record.
pub fn repair_order_records(
    mapping: &RoMapping,
    records: &[Value],
    ctx: &MapContext<'_>,
) -> Vec<RecordReport> {
    records
        .iter()
        .enumerate()
        .map(|(i, record)| {
            let traces = explain::explain_repair_order(mapping, record);
            let mapped = map_repair_order(mapping, record, ctx.timezone, ctx.currency);
            let (outcome, id) = match &mapped {
                Some(ro) => ("mapped".to_owned(), Some(ro.ro_number.clone())),
                None => ("skipped: no RO number".to_owned(), None),
            };
            let value = mapped
                .as_ref()
                .map(repair_order_value)
                .unwrap_or(Value::Null);
            let mut fields: Vec<FieldReport> = crate::adapters::mapping::RO_FIELDS
                .iter()
                .map(|(name, _)| {
                    let at = match *name {
                        "vin" | "year" | "make" | "model" | "mileage_in" | "mileage_out" => {
                            format!("/vehicle/{name}")
                        }
                        other => format!("/{other}"),
                    };
                    let canonical = value.pointer(&at).cloned().filter(|v| !v.is_null());
                    trace_report(name, FieldKind::Text, &traces, canonical)
                })
                .collect();
            for (name, at) in [("jobs", "/jobs"), ("totals", "/totals")] {
                let count = value.pointer(at).and_then(Value::as_array).map(Vec::len);
                fields.push(FieldReport {
                    field: name.to_owned(),
                    value: count.map(|n| Value::from(format!("{n} row(s)"))),
                    source: None,
                    reason: count
                        .filter(|n| *n == 0)
                        .map(|_| "no rows mapped".to_owned()),
                });
            }
            RecordReport {
                index: i + 1,
                outcome,
                id,
                fields,
            }
        })
        .collect()
}

/// A mapped repair order as JSON, for the report only: the tools never
/// answer a customer's name (they show initials), but its mapping is tested here.
fn repair_order_value(ro: &crate::model::repair_order::RepairOrder) -> Value {
    serde_json::json!({
        "ro_number": ro.ro_number,
        "repair_order_id": ro.repair_order_id,
        "status": ro.status,
        "opened_at": ro.opened_at,
        "promised_at": ro.promised_at,
        "closed_at": ro.closed_at,
        "advisor": ro.advisor,
        "customer_name": ro.customer_name,
        "vehicle": ro.vehicle,
        "jobs": ro.jobs,
        "totals": ro.totals,
    })
}

/// One field: its value and source, or why it has none.
fn trace_report(
    name: &str,
    kind: FieldKind,
    traces: &[FieldTrace],
    canonical: Option<Value>,
) -> FieldReport {
    let Some(trace) = traces.iter().find(|t| t.field == name) else {
        // Not mapped, but some fields are derived (a repair order's status).
        let (source, reason) = match canonical {
            Some(_) => (Some("derived".to_owned()), None),
            None => (None, Some("not in the mapping".to_owned())),
        };
        return FieldReport {
            field: name.to_owned(),
            value: canonical,
            source,
            reason,
        };
    };
    let source = describe(&trace.source);
    let reason = match (&canonical, &trace.source) {
        (Some(_), _) => None,
        (None, Source::Nothing) => Some(format!("no value at {}", trace.tried.join(" or "))),
        (None, Source::Path { raw, .. }) => Some(format!("{raw:?} {}", unreadable_as(kind))),
        (None, Source::Gathered { raw, .. }) => Some(format!("{raw:?} {}", unreadable_as(kind))),
        (None, _) => Some("not produced".into()),
    };
    FieldReport {
        field: name.to_owned(),
        value: canonical,
        source,
        reason,
    }
}

fn describe(source: &Source) -> Option<String> {
    match source {
        Source::Path { path, .. } => Some(path.clone()),
        Source::Gathered { paths, .. } => Some(paths.join(" + ")),
        Source::Rule { when, .. } => Some(format!("rule when {when}")),
        Source::Default { .. } => Some("default".into()),
        Source::Nothing => None,
    }
}

fn unreadable_as(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Integer => "is not a whole number in range",
        FieldKind::Money => "is not an amount above zero",
        FieldKind::Date => "matches none of the date formats",
        FieldKind::Mileage => "is not a distance",
        FieldKind::Condition | FieldKind::Status => "is not in the code table",
        FieldKind::Text | FieldKind::List => {
            "did not read (e.g. not a valid VIN, or a time in no known format)"
        }
    }
}

/// How often each path of a vehicle mapping found a value.
pub fn vehicle_paths(mapping: &VehicleMapping, records: &[Value]) -> Vec<PathUse> {
    let mut uses = Vec::new();
    let mut add = |p: &ValuePath, role: String, group: String| {
        uses.push(PathUse {
            path: p.as_str().to_owned(),
            role,
            group,
            matched: records.iter().filter(|r| explain::reaches(p, r)).count(),
            of: records.len(),
        })
    };
    for p in &mapping.identity {
        add(p, "identity".into(), "identity".into());
    }
    for t in &mapping.sold_when {
        add(
            &t.path,
            "sold_when".into(),
            format!("sold_when {}", t.path.as_str()),
        );
    }
    for f in &mapping.fields {
        for p in &f.paths {
            add(p, f.name.to_owned(), f.name.to_owned());
        }
        for r in &f.rules {
            let role = format!("{} rule", f.name);
            add(
                &r.when.path,
                role.clone(),
                format!("{role} {}", r.when.path.as_str()),
            );
        }
        if let Some(p) = &f.unit_path {
            add(p, format!("{} unit", f.name), format!("{} unit", f.name));
        }
    }
    uses
}

/// How often each path of a repair-order mapping found a value, counted over
/// the rows it reads (job and totals rows for their fields).
pub fn repair_order_paths(mapping: &RoMapping, records: &[Value]) -> Vec<PathUse> {
    let mut uses: Vec<PathUse> = Vec::new();
    for record in records {
        for read in explain::repair_order_paths(mapping, record) {
            let matched = read
                .rows
                .iter()
                .filter(|r| explain::reaches(read.path, r))
                .count();
            let known = uses
                .iter_mut()
                .find(|u| u.path == read.path.as_str() && u.group == read.group);
            match known {
                Some(u) => {
                    u.matched += matched;
                    u.of += read.rows.len();
                }
                None => uses.push(PathUse {
                    path: read.path.as_str().to_owned(),
                    role: read.role,
                    group: read.group,
                    matched,
                    of: read.rows.len(),
                }),
            }
        }
    }
    uses
}

/// Paths that matched nothing, and required or expected fields that no record has.
pub fn findings(
    entity: &str,
    records: &[RecordReport],
    paths: &[PathUse],
    allowed: &[String],
) -> Vec<Finding> {
    let mut out = Vec::new();
    if records.is_empty() {
        out.push(Finding::error("the answer has no records to map"));
        return out;
    }
    for p in paths.iter().filter(|p| p.matched == 0 && p.of > 0) {
        let message = format!(
            "path {} ({}) matched nothing in {} row(s)",
            p.path, p.role, p.of
        );
        let alternative_matched = paths.iter().any(|o| o.group == p.group && o.matched > 0);
        if alternative_matched {
            out.push(Finding::warning(format!(
                "{message}; an alternative did, so it is unused here"
            )));
        } else if allowed.iter().any(|a| a == &p.path) {
            out.push(Finding::warning(format!(
                "{message}; allowed by --allow-unmatched"
            )));
        } else {
            out.push(Finding::error(message));
        }
    }
    let (required, expected) = match entity {
        "vehicle" => (VEHICLE_REQUIRED, VEHICLE_EXPECTED),
        _ => (RO_REQUIRED, RO_EXPECTED),
    };
    let nowhere = |name: &str| {
        records.iter().all(|r| {
            r.fields
                .iter()
                .find(|f| f.field == name)
                .is_none_or(|f| f.value.is_none())
        })
    };
    for name in required.iter().filter(|n| nowhere(n)) {
        out.push(Finding::error(format!(
            "required field {name} is missing from every record"
        )));
    }
    if entity == "vehicle" && nowhere("vin") && nowhere("stock") {
        out.push(Finding::error(
            "no record has a VIN or a stock number (a listing needs one)",
        ));
    }
    for name in expected.iter().filter(|n| nowhere(n)) {
        out.push(Finding::warning(format!(
            "{name} is missing from every record (agents expect it)"
        )));
    }
    let skipped = records
        .iter()
        .filter(|r| r.outcome.starts_with("skipped"))
        .count();
    if skipped == records.len() {
        out.push(Finding::error("no record could be mapped"));
    } else if skipped > 0 {
        out.push(Finding::warning(format!(
            "{skipped} of {} record(s) could not be mapped and would be left out",
            records.len()
        )));
    }
    out
}
