//! A J.D. Power-shaped valuation API (Valuation Services) for the demo and
//! tests: an `api-key` header on every call,
//! `GET /valuation/vehiclesByVin?period=&vin=` answering the VIN's bodies with
//! their `ucgvehicleid`, and
//! `GET /valuation/vehicleAndValueByVehicleId?period=&ucgvehicleid=&region=&mileage=`
//! answering the vehicle with its values adjusted for the mileage asked. A VIN
//! or vehicle id it has nothing for answers an empty `result`. Vehicles and
//! base values come from the fixtures.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};

pub const VEHICLES: &str = fixture!("jdpower/vehicles-by-vin.json");
pub const VALUES: &str = fixture!("jdpower/values-by-vehicle-id.json");
pub const NO_DATA: &str = fixture!("jdpower/no-data.json");
pub const AUTH_ERROR: &str = fixture!("jdpower/auth-error.json");
pub const API_KEY: &str = "demo-jdpower-key";
/// A J.D. Power region id the mock accepts (any of 1-10 is).
pub const REGION: &str = "5";
/// Dollars a value moves per mile below or above the vehicle's average mileage.
const PER_MILE: f64 = 0.06;
const FLOOR: i64 = 250;
/// The values the mileage adjustment applies to: `base*` → `adjusted*`.
const ADJUSTED: [(&str, &str); 5] = [
    ("basecleantrade", "adjustedcleantrade"),
    ("baseaveragetrade", "adjustedaveragetrade"),
    ("baseroughtrade", "adjustedroughtrade"),
    ("basecleanretail", "adjustedcleanretail"),
    ("baseloan", "adjustedloan"),
];

#[derive(Clone)]
struct Book {
    /// VIN → the `vehiclesByVin` answer.
    vehicles: Arc<Map<String, Value>>,
    /// `ucgvehicleid` → the `vehicleAndValueByVehicleId` answer.
    values: Arc<Map<String, Value>>,
}

pub fn router() -> Router {
    let object = |text: &str| {
        serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    };
    Router::new()
        .route("/valuation/vehiclesByVin", get(vehicles_by_vin))
        .route(
            "/valuation/vehicleAndValueByVehicleId",
            get(vehicle_and_value),
        )
        .with_state(Book {
            vehicles: Arc::new(object(VEHICLES)),
            values: Arc::new(object(VALUES)),
        })
}

/// What both calls refuse: a wrong key, or no `period` (J.D. Power's book period).
fn refuse(headers: &HeaderMap, q: &HashMap<String, String>) -> Option<Response> {
    check_key(headers).or_else(|| {
        (!q.contains_key("period")).then(|| error(StatusCode::BAD_REQUEST, "period is required"))
    })
}

async fn vehicles_by_vin(
    State(book): State<Book>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refuse(&headers, &q) {
        return refused;
    }
    let Some(vin) = q.get("vin").map(|v| v.trim().to_ascii_uppercase()) else {
        return error(StatusCode::BAD_REQUEST, "vin is required");
    };
    match book.vehicles.get(&vin) {
        Some(answer) => Json(answer.clone()).into_response(),
        None => no_data(),
    }
}

async fn vehicle_and_value(
    State(book): State<Book>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refuse(&headers, &q) {
        return refused;
    }
    let region_ok = q
        .get("region")
        .and_then(|r| r.parse::<u8>().ok())
        .is_some_and(|r| (1..=10).contains(&r));
    if !region_ok {
        return error(StatusCode::BAD_REQUEST, "region must be a region id");
    }
    let Some(miles) = q.get("mileage").and_then(|m| m.parse::<i64>().ok()) else {
        return error(StatusCode::BAD_REQUEST, "mileage must be a number");
    };
    let id = q.get("ucgvehicleid").map(|i| i.trim()).unwrap_or_default();
    let Some(answer) = book.values.get(id) else {
        return no_data();
    };
    let mut answer = answer.clone();
    if let Some(Value::Object(record)) = answer.pointer_mut("/result/0") {
        adjust(record, miles);
    }
    Json(answer).into_response()
}

/// Sets `mileageadjustment` and every `adjusted*` value for the mileage asked:
/// the base value plus the adjustment, in steps of $25, never below $250.
fn adjust(record: &mut Map<String, Value>, miles: i64) {
    let average = record
        .get("averagemileage")
        .and_then(Value::as_i64)
        .unwrap_or(miles);
    let adjustment = ((average - miles) as f64 * PER_MILE) as i64 / 25 * 25;
    record.insert("mileageadjustment".into(), json!(adjustment));
    for (base, adjusted) in ADJUSTED {
        if let Some(value) = record.get(base).and_then(Value::as_i64) {
            record.insert(adjusted.into(), json!((value + adjustment).max(FLOOR)));
        }
    }
}

fn check_key(headers: &HeaderMap) -> Option<Response> {
    if headers.get("api-key").and_then(|v| v.to_str().ok()) == Some(API_KEY) {
        return None;
    }
    let body: Value = serde_json::from_str(AUTH_ERROR).unwrap_or_default();
    Some((StatusCode::UNAUTHORIZED, Json(body)).into_response())
}

fn no_data() -> Response {
    let none: Value = serde_json::from_str(NO_DATA).unwrap_or_default();
    Json(none).into_response()
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}
