//! What changed between the mirrored copy and a fresh read: the units to
//! write and the `vehicle.*` events describing them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::adapters::InventorySnapshot;
use crate::model::Vehicle;
use crate::model::event::{EventType, NewEvent};
use crate::store::mirror::GoneUnit;

/// Fields that move on every read without the unit changing.
const STAMPS: [&str; 2] = ["last_verified_at", "days_in_stock"];
/// Fields whose new value an `updated` event carries (what agents react to).
const REPORTED: [&str; 5] = ["price", "status", "mileage", "list_price", "msrp"];

/// The outcome of comparing a fresh read with the copy.
#[derive(Debug, Default)]
pub struct Plan {
    /// New and changed listed units, to be written.
    pub upserts: Vec<Arc<Vehicle>>,
    /// Units that left the inventory with this read.
    pub removed: Vec<GoneUnit>,
    pub events: Vec<NewEvent>,
    /// Every unit known to have left, after this read.
    pub gone: BTreeMap<String, GoneUnit>,
}

/// Compares `fresh` with `previous` (`None`: the first read ever, recorded
/// as the baseline without events). `gone` holds units that left earlier.
pub fn plan(
    previous: Option<&InventorySnapshot>,
    gone: &BTreeMap<String, GoneUnit>,
    fresh: &InventorySnapshot,
    occurred_at: DateTime<Utc>,
) -> Plan {
    let mut plan = Plan {
        gone: gone.clone(),
        ..Plan::default()
    };
    let Some(previous) = previous else {
        plan.upserts = fresh.listed.clone();
        plan.gone.extend(fresh.sold.iter().map(|s| {
            let unit = gone_unit(&s.id, s.vin.as_deref(), s.stock.as_deref());
            (unit.id.clone(), unit)
        }));
        return plan;
    };
    let before: HashMap<&str, &Arc<Vehicle>> =
        previous.listed.iter().map(|v| (v.id.as_str(), v)).collect();
    let mut still_listed: HashMap<&str, ()> = HashMap::with_capacity(fresh.listed.len());
    for vehicle in &fresh.listed {
        still_listed.insert(&vehicle.id, ());
        match before.get(vehicle.id.as_str()) {
            None => {
                plan.gone.remove(&vehicle.id);
                plan.events.push(event(
                    EventType::VehicleCreated,
                    vehicle,
                    created_data(vehicle),
                    occurred_at,
                ));
                plan.upserts.push(vehicle.clone());
            }
            Some(old) => {
                let changed = changed_fields(old, vehicle);
                if !changed.is_empty() {
                    let data = updated_data(vehicle, &changed);
                    plan.events
                        .push(event(EventType::VehicleUpdated, vehicle, data, occurred_at));
                    plan.upserts.push(vehicle.clone());
                }
            }
        }
    }
    for old in previous
        .listed
        .iter()
        .filter(|v| !still_listed.contains_key(v.id.as_str()))
    {
        let unit = gone_unit(&old.id, old.vin.as_deref(), old.stock.as_deref());
        let data = identity(old);
        plan.events.push(event(
            EventType::VehicleDeleted,
            old,
            Value::Object(data),
            occurred_at,
        ));
        plan.gone.insert(unit.id.clone(), unit.clone());
        plan.removed.push(unit);
    }
    plan
}

impl Plan {
    /// True when this read would remove more than `share` of `listed_before`
    /// units: the mass-removal guard's question.
    pub fn removes_too_many(&self, listed_before: usize, share: f64) -> bool {
        // A handful of units leaving a small lot is ordinary business.
        const ALWAYS_ALLOWED: usize = 5;
        let removed = self.removed.len();
        removed > ALWAYS_ALLOWED && (removed as f64) > share * (listed_before as f64)
    }
}

fn gone_unit(id: &str, vin: Option<&str>, stock: Option<&str>) -> GoneUnit {
    GoneUnit {
        id: id.to_owned(),
        vin: vin.map(str::to_owned),
        stock: stock.map(str::to_owned),
    }
}

fn event(event_type: EventType, vehicle: &Vehicle, data: Value, at: DateTime<Utc>) -> NewEvent {
    NewEvent {
        event_type,
        resource_id: vehicle.id.clone(),
        occurred_at: at,
        owner: None,
        data,
    }
}

/// The field names (as the wire shows them) whose values differ, stamps aside.
fn changed_fields(old: &Vehicle, new: &Vehicle) -> Vec<String> {
    let mut same_stamps = new.clone();
    same_stamps.last_verified_at = old.last_verified_at;
    same_stamps.days_in_stock = old.days_in_stock;
    if same_stamps == *old {
        return Vec::new();
    }
    let (Value::Object(a), Value::Object(b)) = (as_value(old), as_value(new)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| !STAMPS.contains(&k.as_str()) && a.get(*k) != b.get(*k))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}

fn as_value(vehicle: &Vehicle) -> Value {
    serde_json::to_value(vehicle).unwrap_or_default()
}

/// VIN and stock number: how dealers and agents recognise a unit.
fn identity(vehicle: &Vehicle) -> Map<String, Value> {
    let mut data = Map::new();
    if let Some(vin) = &vehicle.vin {
        data.insert("vin".into(), json!(vin));
    }
    if let Some(stock) = &vehicle.stock {
        data.insert("stock".into(), json!(stock));
    }
    data
}

fn created_data(vehicle: &Vehicle) -> Value {
    let mut data = identity(vehicle);
    let Value::Object(all) = as_value(vehicle) else {
        return Value::Object(data);
    };
    for key in ["year", "make", "model", "condition", "status", "price"] {
        if let Some(value) = all.get(key) {
            data.insert(key.into(), value.clone());
        }
    }
    Value::Object(data)
}

fn updated_data(vehicle: &Vehicle, changed: &[String]) -> Value {
    let mut data = identity(vehicle);
    data.insert("changed".into(), json!(changed));
    let Value::Object(all) = as_value(vehicle) else {
        return Value::Object(data);
    };
    for key in changed.iter().filter(|k| REPORTED.contains(&k.as_str())) {
        // A field that went away is reported as null.
        data.insert(key.clone(), all.get(key).cloned().unwrap_or(Value::Null));
    }
    Value::Object(data)
}

/// The copy with a changes-since read applied: changed units replaced or
/// added, units the read reports removed taken out, the rest as they were.
pub fn merge(previous: &InventorySnapshot, changes: &InventorySnapshot) -> InventorySnapshot {
    let changed: HashMap<&str, &Arc<Vehicle>> =
        changes.listed.iter().map(|v| (v.id.as_str(), v)).collect();
    let removed: std::collections::HashSet<&str> =
        changes.sold.iter().map(|s| s.id.as_str()).collect();
    let mut listed: Vec<Arc<Vehicle>> = previous
        .listed
        .iter()
        .filter(|v| !removed.contains(v.id.as_str()))
        .map(|v| {
            changed
                .get(v.id.as_str())
                .map_or_else(|| v.clone(), |c| (*c).clone())
        })
        .collect();
    let before: std::collections::HashSet<&str> =
        previous.listed.iter().map(|v| v.id.as_str()).collect();
    listed.extend(
        changes
            .listed
            .iter()
            .filter(|v| !before.contains(v.id.as_str()))
            .cloned(),
    );
    let mut sold = changes.sold.clone();
    sold.extend(
        previous
            .sold
            .iter()
            .filter(|s| !removed.contains(s.id.as_str()) && !changed.contains_key(s.id.as_str()))
            .cloned(),
    );
    InventorySnapshot::new(listed, sold, changes.fetched_at)
}
