//! `inventory.search`, `inventory.facets` and `inventory.vehicle` as the
//! canonical `inventory.search`, `inventory.facets` and `inventory.get`.

use serde::de::Error as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::vehicle::{AapVehicle, status, to_aap, whole_dollars};
use crate::contract::Payload;
use crate::model::{Money, Vehicle};
use crate::tools::inventory::{SearchArgs, cursor_at};
use crate::tools::{Dealership, Services};

/// AAP filters the canonical filters share, by the same name.
const SAME_NAME: &[&str] = &[
    "make",
    "model",
    "trim",
    "condition",
    "body",
    "fuel",
    "transmission",
    "exterior_color",
    "interior_color",
    "year_min",
    "year_max",
    "vin",
    "stock",
    "query",
];

/// Filters on fields no unit here carries (the canonical model has no vehicle
/// class, EV or engine-size data): present, they match nothing, as a price
/// filter matches no unpriced unit.
const UNCARRIED: &[&str] = &[
    "electric_range_mi_min",
    "electric_range_mi_max",
    "dc_fast_charge",
    "charge_port",
    "displacement_cc_min",
    "displacement_cc_max",
];

/// The canonical filters for AAP's, and whether they can match any unit at all.
pub fn filters(aap: Option<&Value>, dealership: &Dealership) -> (Value, bool) {
    let mut out = Map::new();
    let Some(aap) = aap.and_then(Value::as_object) else {
        return (Value::Object(out), true);
    };
    for name in SAME_NAME {
        if let Some(v) = aap.get(*name) {
            out.insert((*name).to_owned(), v.clone());
        }
    }
    if let Some(v) = aap.get("driveline") {
        out.insert("drivetrain".into(), v.clone());
    }
    let currency = &dealership.profile.currency;
    for name in ["price_min", "price_max"] {
        if let Some(dollars) = aap.get(name).and_then(Value::as_i64) {
            let money = Money {
                amount: dollars.saturating_mul(100),
                currency: currency.clone(),
            };
            out.insert(name.into(), json!(money));
        }
    }
    if let Some(miles) = aap.get("mileage_max").and_then(Value::as_u64) {
        out.insert(
            "mileage_max".into(),
            json!({ "value": miles, "unit": "mi" }),
        );
    }
    let any_of = |name: &str, wanted: &str| {
        aap.get(name)
            .and_then(Value::as_array)
            .is_none_or(|values| {
                values
                    .iter()
                    .any(|v| v.as_str().is_some_and(|v| v.eq_ignore_ascii_case(wanted)))
            })
    };
    // Every unit here is a car (AAP: no vehicle_type means car), at this rooftop.
    let possible = any_of("vehicle_type", "car")
        && any_of("rooftops", &dealership.profile.name)
        && UNCARRIED.iter().all(|name| !aap.contains_key(*name));
    (Value::Object(out), possible)
}

/// AAP's sort field under its canonical name.
fn sort(aap: Option<&Value>) -> Option<Value> {
    let aap = aap?;
    let field = match aap["field"].as_str()? {
        "updated_at" => "last_verified_at",
        other => other,
    };
    Some(json!({ "field": field, "order": aap["order"] }))
}

/// What an AAP search is on the canonical tool.
pub struct Search {
    pub args: Map<String, Value>,
    /// False when AAP's filters can match no unit here: the canonical call
    /// still runs (scoping, quotas and audit are the pipeline's), and the
    /// answer is empty.
    pub possible: bool,
    pub skip: u64,
    pub limit: u32,
}

/// AAP's `skip` and the page size used: the asked `limit` within the
/// operator's `limits.max_limit` (AAP: the answer echoes the effective one).
fn page(data: &Value, services: &Services) -> (u64, u32) {
    let max = services.limits.max_limit;
    let limit = data["pagination"]["limit"]
        .as_u64()
        .map_or(services.limits.default_limit, |l| {
            l.min(u64::from(max)) as u32
        })
        .max(1);
    (data["pagination"]["skip"].as_u64().unwrap_or(0), limit)
}

/// The canonical search for an AAP one.
pub fn search(data: &Value, dealership: &Dealership, services: &Services) -> Search {
    let (filters, possible) = filters(data.get("filters"), dealership);
    let (skip, limit) = page(data, services);
    let mut args = Map::new();
    args.insert("dealership_id".into(), json!(dealership.profile.id));
    args.insert("filters".into(), filters);
    if let Some(sort) = sort(data.get("sort")) {
        args.insert("sort".into(), sort);
    }
    args.insert("limit".into(), json!(limit));
    args.insert("response_format".into(), json!("detailed"));
    if skip > 0
        && let Ok(parsed) = serde_json::from_value::<SearchArgs>(Value::Object(args.clone()))
    {
        args.insert(
            "cursor".into(),
            json!(cursor_at(&services.cursors, &parsed, skip)),
        );
    }
    Search {
        args,
        possible,
        skip,
        limit,
    }
}

/// The canonical search page, read straight from its JSON text.
#[derive(Deserialize)]
struct Page {
    items: Vec<Vehicle>,
    total: u64,
}

#[derive(Serialize)]
struct Rendered<'a> {
    total: u64,
    vehicles: Vec<AapVehicle<'a>>,
}

/// AAP's search answer for the canonical one. The vehicles are rendered once
/// per canonical answer (a cached one is shared by every caller), and the
/// page's `skip` and `limit` put in front of them.
pub fn search_answer(
    canonical: &Payload,
    skip: u64,
    limit: u32,
    rooftop: &str,
) -> serde_json::Result<String> {
    let rendered = canonical.rendered(|text| {
        let page: Page = serde_json::from_str(text).ok()?;
        let vehicles = page.items.iter().map(|v| to_aap(v, rooftop)).collect();
        serde_json::to_string(&Rendered {
            total: page.total,
            vehicles,
        })
        .ok()
    });
    let rendered = rendered.ok_or_else(|| serde_json::Error::custom("not a search page"))?;
    // `rendered` is an object: `{"skip":…,"limit":…,` then its own members.
    let members = rendered.strip_prefix('{').unwrap_or(&rendered);
    Ok(format!(r#"{{"skip":{skip},"limit":{limit},{members}"#))
}

/// An empty search answer, for filters that can match nothing.
pub fn nothing_found(skip: u64, limit: u32) -> Value {
    json!({ "total": 0, "skip": skip, "limit": limit, "vehicles": [] })
}

/// The canonical facets call for an AAP one, and whether its filters can
/// match any unit (if not, the call still runs and the answer is empty).
pub fn facets(data: &Value, dealership: &Dealership) -> (Map<String, Value>, bool) {
    let (filters, possible) = filters(data.get("filters"), dealership);
    let mut args = Map::new();
    args.insert("dealership_id".into(), json!(dealership.profile.id));
    args.insert("filters".into(), filters);
    (args, possible)
}

/// AAP's facets for the canonical ones.
pub fn facets_answer(result: &Value, rooftop: &str) -> Value {
    let mut out = Map::new();
    let renamed = [
        ("makes", "makes"),
        ("models", "models"),
        ("trims", "trims"),
        ("years", "years"),
        ("conditions", "conditions"),
        ("transmissions", "transmissions"),
        ("fuels", "fuels"),
        ("drivetrains", "drivelines"),
        ("bodies", "bodies"),
        ("exterior_colors", "exterior_colors"),
    ];
    for (canonical, aap) in renamed {
        if let Some(counts) = result.get(canonical) {
            out.insert(aap.into(), counts.clone());
        }
    }
    let statuses: Vec<Value> = result["statuses"]
        .as_array()
        .into_iter()
        .flatten()
        // Only the three statuses for sale exist here; anything else is not counted as one.
        .filter_map(|c| {
            let value = serde_json::from_value(c["value"].clone())
                .ok()
                .map(status)?;
            Some(json!({ "value": value, "count": c["count"] }))
        })
        .collect();
    out.insert("statuses".into(), json!(statuses));
    let total = result["total"].as_u64().unwrap_or(0);
    if total > 0 {
        out.insert(
            "vehicle_types".into(),
            json!([{ "value": "car", "count": total }]),
        );
        out.insert(
            "rooftops".into(),
            json!([{ "value": rooftop, "count": total }]),
        );
    }
    let price = |at: &str| {
        serde_json::from_value::<Money>(result["price_range"][at].clone())
            .ok()
            .and_then(|m| whole_dollars(&m))
    };
    if let (Some(min), Some(max)) = (price("min"), price("max")) {
        out.insert("price_range".into(), json!({ "min": min, "max": max }));
    }
    if let Some(range) = result.get("mileage_range") {
        out.insert(
            "mileage_range".into(),
            json!({ "min": range["min"]["value"], "max": range["max"]["value"] }),
        );
    }
    if let Some(range) = result.get("year_range") {
        out.insert("year_range".into(), range.clone());
    }
    Value::Object(out)
}

/// The canonical `inventory.get` for an AAP vehicle request.
pub fn vehicle(data: &Value, dealership: &Dealership) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("dealership_id".into(), json!(dealership.profile.id));
    for name in ["vehicle_id", "vin", "stock"] {
        if let Some(v) = data.get(name) {
            args.insert(name.into(), v.clone());
        }
    }
    args
}

#[derive(Deserialize)]
struct Found {
    vehicle: Vehicle,
}

/// AAP's vehicle answer for the canonical one's JSON text.
pub fn vehicle_answer(canonical: &str, rooftop: &str) -> serde_json::Result<String> {
    let found: Found = serde_json::from_str(canonical)?;
    serde_json::to_string(&to_aap(&found.vehicle, rooftop))
}
