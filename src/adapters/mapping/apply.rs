//! Applying a [`VehicleMapping`] to one upstream record.

use chrono::{DateTime, FixedOffset, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;
use serde_json::Value;
use sha2::{Digest, Sha256};

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::path::{scalar_str, scalar_text};
use super::spec::{Field, VehicleMapping};
use crate::model::money::parse_amount;
use crate::model::{Condition, DistanceUnit, Mileage, Money, Vehicle, VehicleStatus, vin};

/// What the mapper needs to know besides the record.
#[derive(Debug, Clone, Copy)]
pub struct MapContext<'a> {
    pub dealership_id: &'a str,
    /// Currency of amounts that do not name one.
    pub currency: &'a str,
    pub timezone: Tz,
    /// When the upstream vouched for this record (the response time, or a feed's Last-Modified).
    pub verified_at: DateTime<Utc>,
}

impl MapContext<'_> {
    /// `last_verified_at` as the mapped vehicles carry it: the dealership's
    /// zone, whole seconds (sub-second precision would claim more than any
    /// upstream knows). Its date is the "today" of `days_in_stock`.
    pub fn verified_stamp(&self) -> DateTime<FixedOffset> {
        let verified = self.verified_at.with_timezone(&self.timezone);
        verified
            .with_nanosecond(0)
            .unwrap_or(verified)
            .fixed_offset()
    }
}

/// One upstream record, mapped.
#[derive(Debug, Clone, PartialEq)]
pub enum MappedUnit {
    Listed(Box<Vehicle>),
    /// Known to the upstream but sold: never listed, but `inventory.get` says so.
    Sold {
        id: String,
        vin: Option<String>,
        stock: Option<String>,
    },
}

/// Why a record could not be mapped; it is skipped and logged (no upstream values in here).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record skipped: {0}")]
pub struct Unmappable(pub &'static str);

pub fn map_vehicle(
    mapping: &VehicleMapping,
    record: &Value,
    ctx: &MapContext<'_>,
) -> Result<MappedUnit, Unmappable> {
    let key = mapping
        .identity
        .iter()
        .find_map(|p| p.first(record).and_then(scalar_text))
        .ok_or(Unmappable("no identity value"))?;
    let id = vehicle_id(ctx.dealership_id, &key);
    let vin = text(mapping, "vin", record)
        .map(|v| vin::normalize(&v))
        .filter(|v| vin::check(v).is_ok());
    let stock = text(mapping, "stock", record);
    let status = enum_value(mapping, "status", record).unwrap_or_else(|| "available".into());
    if status == "sold" || mapping.sold_when.iter().any(|t| t.matches(record)) {
        return Ok(MappedUnit::Sold { id, vin, stock });
    }
    let status = match status.as_str() {
        "available" => VehicleStatus::Available,
        "in_transit" => VehicleStatus::InTransit,
        "pending" => VehicleStatus::Pending,
        _ => return Err(Unmappable("unknown status")),
    };
    let condition = match enum_value(mapping, "condition", record).as_deref() {
        Some("new") => Condition::New,
        Some("used") => Condition::Used,
        Some("cpo") => Condition::Cpo,
        _ => return Err(Unmappable("condition missing or not in the code table")),
    };
    let money = |name| field(mapping, name).and_then(|f| money(f, record, ctx.currency));
    let inventory_date = field(mapping, "inventory_date").and_then(|f| date(f, record));
    let last_verified_at = ctx.verified_stamp();
    let today = last_verified_at.date_naive();
    Ok(MappedUnit::Listed(Box::new(Vehicle {
        id,
        dealership_id: ctx.dealership_id.to_owned(),
        vin,
        stock,
        status,
        condition,
        year: integer(mapping, "year", record)
            .and_then(|y| i32::try_from(y).ok())
            .filter(|y| (1900..=2100).contains(y)),
        make: text(mapping, "make", record),
        model: text(mapping, "model", record),
        trim: text(mapping, "trim", record),
        body: text(mapping, "body", record),
        fuel: text(mapping, "fuel", record),
        transmission: text(mapping, "transmission", record),
        drivetrain: text(mapping, "drivetrain", record),
        engine: text(mapping, "engine", record),
        doors: integer(mapping, "doors", record).and_then(|d| u8::try_from(d).ok()),
        exterior_color: text(mapping, "exterior_color", record),
        interior_color: text(mapping, "interior_color", record),
        mileage: field(mapping, "mileage").and_then(|f| mileage(f, record)),
        price: money("price"),
        list_price: money("list_price"),
        msrp: money("msrp"),
        offered_price: None,
        inventory_date,
        days_in_stock: inventory_date.map(|d| (today - d).num_days().max(0) as u32),
        photos: field(mapping, "photos")
            .map(|f| list(f, record))
            .unwrap_or_default()
            .into(),
        vdp_url: text(mapping, "vdp_url", record),
        description: text(mapping, "description", record),
        last_verified_at,
    })))
}

/// `veh_` + 16 hex digits of SHA-256(dealership, upstream key): stable across
/// refreshes and restarts, and not the VIN (AutomotiveMCP §3.3).
pub fn vehicle_id(dealership_id: &str, key: &str) -> String {
    let digest = Sha256::digest(format!(
        "{dealership_id}\u{1f}{}",
        key.trim().to_ascii_uppercase()
    ));
    format!("veh_{}", hex::encode(&digest[..8]))
}

fn field<'m>(mapping: &'m VehicleMapping, name: &str) -> Option<&'m Field> {
    mapping.field(name)
}

/// The first non-blank value of the field's paths, borrowed from the record.
fn raw_text<'r>(f: &Field, record: &'r Value) -> Option<Cow<'r, str>> {
    f.paths
        .iter()
        .find_map(|p| p.first(record).and_then(scalar_str))
        .filter(|t| !t.is_empty())
}

/// Case-insensitive lookup in a (small) code table.
fn lookup<'t>(table: &'t BTreeMap<String, String>, raw: &str) -> Option<&'t String> {
    table
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(raw))
        .map(|(_, v)| v)
}

fn text(mapping: &VehicleMapping, name: &str, record: &Value) -> Option<String> {
    let f = field(mapping, name)?;
    let raw = raw_text(f, record).or_else(|| f.default.as_deref().map(Cow::Borrowed))?;
    let value = match f.table.as_ref().and_then(|t| lookup(t, &raw)) {
        Some(translated) => translated.clone(),
        None => raw.into_owned(),
    };
    Some(super::vocabulary::canonical(name, value))
}

fn integer(mapping: &VehicleMapping, name: &str, record: &Value) -> Option<i64> {
    let raw = raw_text(field(mapping, name)?, record)?;
    let whole = raw.split('.').next()?;
    if whole.contains(',') {
        whole.replace(',', "").parse().ok()
    } else {
        whole.parse().ok()
    }
}

fn enum_value(mapping: &VehicleMapping, name: &str, record: &Value) -> Option<String> {
    let f = field(mapping, name)?;
    if let Some(rule) = f.rules.iter().find(|r| r.when.matches(record)) {
        return Some(rule.value.clone());
    }
    let translated = raw_text(f, record).and_then(|raw| match &f.table {
        Some(table) => lookup(table, &raw).cloned(),
        None => Some(raw.to_ascii_lowercase()),
    });
    translated.or_else(|| f.default.clone())
}

fn money(f: &Field, record: &Value, default_currency: &str) -> Option<Money> {
    let parsed = parse_amount(&raw_text(f, record)?, f.amount_unit)?;
    // Feeds write 0 for "call for price"; a zero price is never a real offer.
    (parsed.minor > 0).then(|| Money {
        amount: parsed.minor,
        currency: parsed
            .currency
            .unwrap_or_else(|| default_currency.to_owned()),
    })
}

fn mileage(f: &Field, record: &Value) -> Option<Mileage> {
    let raw = raw_text(f, record)?;
    let number_end = raw
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(raw.len());
    let whole = raw[..number_end].split('.').next()?;
    let value: u64 = if whole.contains(',') {
        whole.replace(',', "").parse().ok()?
    } else {
        whole.parse().ok()?
    };
    let rest = raw[number_end..].to_ascii_lowercase();
    let from_unit_path = f
        .unit_path
        .as_ref()
        .and_then(|p| p.first(record))
        .and_then(scalar_str)
        .map(
            |u| match f.unit_table.as_ref().and_then(|t| lookup(t, &u)) {
                Some(unit) => unit.clone(),
                None => u.to_ascii_lowercase(),
            },
        );
    let from_text = if rest.trim_end().ends_with("km") || rest.contains("kilomet") {
        Some("km".to_owned())
    } else if rest.contains("mi") {
        Some("mi".to_owned())
    } else {
        None
    };
    let unit = match from_unit_path
        .or(from_text)
        .or_else(|| f.default_unit.clone())
        .as_deref()
    {
        Some("km") => DistanceUnit::Km,
        _ => DistanceUnit::Mi,
    };
    Some(Mileage { value, unit })
}

const DEFAULT_DATE_FORMATS: &[&str] = &["%Y-%m-%d", "%m/%d/%Y", "%Y%m%d", "%m/%d/%y"];

fn date(f: &Field, record: &Value) -> Option<NaiveDate> {
    let raw = raw_text(f, record)?;
    let raw: &str = &raw;
    if let Ok(dt) = DateTime::parse_from_rfc3339(raw) {
        return Some(dt.date_naive());
    }
    let formats: Vec<&str> = if f.formats.is_empty() {
        DEFAULT_DATE_FORMATS.to_vec()
    } else {
        f.formats.iter().map(String::as_str).collect()
    };
    let date_part = raw.split(['T', ' ']).next().unwrap_or(raw);
    formats
        .iter()
        .find_map(|fmt| NaiveDate::parse_from_str(date_part, fmt).ok())
}

fn list(f: &Field, record: &Value) -> Vec<String> {
    let values = f
        .paths
        .iter()
        .flat_map(|p| p.resolve(record))
        .filter_map(scalar_text);
    let items: Vec<String> = match &f.split {
        Some(delim) => values
            .flat_map(|v| {
                v.split(delim.as_str())
                    .map(|s| s.trim().to_owned())
                    .collect::<Vec<_>>()
            })
            .collect(),
        None => values.collect(),
    };
    items.into_iter().filter(|s| !s.is_empty()).collect()
}
