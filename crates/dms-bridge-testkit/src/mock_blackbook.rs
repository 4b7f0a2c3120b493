//! A Black Book-shaped valuation API (UsedCarWS) for the demo and tests:
//! HTTP Basic, `GET /UsedCarWS/UsedCarWS/UsedVehicle/VIN/{vin}?mileage=&state=`,
//! whole-dollar values adjusted for the mileage asked, `data_available: false`
//! for a VIN it has no values for. Values come from the fixtures.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

pub const VALUES: &str = fixture!("blackbook/values-by-vin.json");
pub const NO_DATA: &str = fixture!("blackbook/no-data.json");
pub const USER: &str = "demo-bb-user";
pub const PASSWORD: &str = "demo-bb-pass";
/// Dollars a value moves per mile above or below the mileage it is quoted for.
const PER_MILE: f64 = 0.06;
const FLOOR: i64 = 250;

#[derive(Clone)]
struct Book {
    values: Arc<Map<String, Value>>,
}

pub fn router() -> Router {
    let values = serde_json::from_str::<Value>(VALUES)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    Router::new()
        .route("/UsedCarWS/UsedCarWS/UsedVehicle/VIN/{vin}", get(value))
        .with_state(Book {
            values: Arc::new(values),
        })
}

async fn value(
    State(book): State<Book>,
    Path(vin): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let expected = format!("Basic {}", STANDARD.encode(format!("{USER}:{PASSWORD}")));
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
        return fault(
            StatusCode::UNAUTHORIZED,
            "INVALID_CREDENTIALS",
            "Invalid credentials",
        );
    }
    let state_ok = q
        .get("state")
        .is_some_and(|s| s.len() == 2 && s.chars().all(|c| c.is_ascii_uppercase()));
    if !state_ok {
        return fault(StatusCode::BAD_REQUEST, "INVALID_STATE", "Invalid state");
    }
    let Some(miles) = q.get("mileage").and_then(|m| m.parse::<i64>().ok()) else {
        return fault(
            StatusCode::BAD_REQUEST,
            "INVALID_MILEAGE",
            "Invalid mileage",
        );
    };
    let Some(Value::Object(record)) = book.values.get(&vin.to_ascii_uppercase()) else {
        let none: Value = serde_json::from_str(NO_DATA).unwrap_or_default();
        return Json(none).into_response();
    };
    Json(json!({
        "used_vehicles": { "data_available": true, "used_vehicle_list": [adjust(record, miles)] },
        "warning_count": 0, "error_count": 0, "message_list": []
    }))
    .into_response()
}

/// The record with every `adjusted_*` value moved for the mileage asked.
fn adjust(record: &Map<String, Value>, miles: i64) -> Value {
    let quoted = record
        .get("mileage")
        .and_then(Value::as_i64)
        .unwrap_or(miles);
    let delta = ((miles - quoted) as f64 * PER_MILE) as i64;
    let mut out = record.clone();
    for (key, value) in &mut out {
        if let (true, Some(v)) = (key.starts_with("adjusted_"), value.as_i64()) {
            *value = json!(((v - delta) / 25 * 25).max(FLOOR));
        }
    }
    out.insert("mileage".into(), json!(miles));
    Value::Object(out)
}

fn fault(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({ "error_count": 1, "message_list": [{ "type": "Error", "code": code, "message": message }] });
    (status, Json(body)).into_response()
}
