//! `lead.submit` as the canonical `leads.create`: the same consent rules,
//! idempotency, duplicate window, outbox and ADF delivery, so a lead sent
//! through either door is one lead.

use serde_json::{Map, Value, json};

/// Vehicle fields a lead carries on to the CRM; AAP's vehicle schema allows
/// more (prices, fees, photos), which the dealership's own inventory knows better.
const VEHICLE_OF_INTEREST: &[&str] = &[
    "vehicle_id",
    "vin",
    "stock",
    "year",
    "make",
    "model",
    "trim",
    "condition",
    "body",
    "transmission",
    "mileage",
];
const TRADE_IN: &[&str] = &[
    "vin",
    "year",
    "make",
    "model",
    "trim",
    "mileage",
    "condition",
];
const AS_IS: &[&str] = &[
    "customer",
    "consent",
    "appointment",
    "message",
    "submitted_at",
    "idempotency_key",
];

/// The canonical `leads.create` arguments for an AAP lead.
pub fn request(data: &Value, dealership_id: &str) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("dealership_id".into(), json!(dealership_id));
    for name in AS_IS {
        if let Some(v) = data.get(*name) {
            args.insert((*name).to_owned(), v.clone());
        }
    }
    for (name, keep) in [
        ("vehicle_of_interest", VEHICLE_OF_INTEREST),
        ("trade_in", TRADE_IN),
    ] {
        if let Some(vehicle) = data.get(name).and_then(Value::as_object) {
            let kept: Map<String, Value> = vehicle
                .iter()
                .filter(|(k, _)| keep.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            args.insert(name.into(), Value::Object(kept));
        }
    }
    // AAP v1.3 names the agent with an object; the ADF provider is its name.
    if let Some(name) = data["source_agent"]["name"].as_str() {
        args.insert("source_agent".into(), json!(name));
    }
    args
}

/// AAP's lead answer for the canonical one, and a sentence for the buyer's
/// agent (what the dealership will do, warnings, withheld contact points).
pub fn answer(result: &Value) -> (Value, Option<String>) {
    let mut data = Map::new();
    data.insert("lead_id".into(), result["lead_id"].clone());
    data.insert("status".into(), result["status"].clone());
    if let Some(a) = result.get("appointment") {
        let mut appointment = Map::new();
        for key in ["appointment_id", "status", "confirmed_at", "proposed_times"] {
            if let Some(v) = a.get(key).filter(|v| !v.is_null()) {
                appointment.insert(key.into(), v.clone());
            }
        }
        data.insert("appointment".into(), Value::Object(appointment));
    }
    if let Some(d) = result.get("dealer") {
        let mut dealer = Map::new();
        for key in ["name", "phone"] {
            if let Some(v) = d.get(key).filter(|v| !v.is_null()) {
                dealer.insert(key.into(), v.clone());
            }
        }
        data.insert("dealer".into(), Value::Object(dealer));
    }
    let mut notes: Vec<String> = result["message"]
        .as_str()
        .map(str::to_owned)
        .into_iter()
        .collect();
    for w in result["warnings"].as_array().into_iter().flatten() {
        if let Some(text) = w["message"].as_str() {
            notes.push(text.to_owned());
        }
    }
    for w in result["withheld_contact_points"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let (Some(field), Some(reason)) = (w["field"].as_str(), w["reason"].as_str()) {
            notes.push(format!("{field} withheld: {reason}"));
        }
    }
    let mut message = notes.join(" ");
    if message.chars().count() > 2000 {
        message = message.chars().take(1999).collect::<String>() + "…";
    }
    (
        Value::Object(data),
        (!message.is_empty()).then_some(message),
    )
}
