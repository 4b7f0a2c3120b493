//! A Tekion-shaped API for the demo: repair orders and vehicle inventory. A
//! token from `/openapi/public/tokens` (form `app_id`, `secret_key`, wrapped in
//! `data`), `app_id` / `dealer_id` headers on every call, epoch-millisecond
//! filters, pages of five with a `meta.nextFetchKey` (whatever page size is
//! asked for, so that paging is exercised), and errors inside HTTP 200
//! (`meta.status: failure`). The repair-order fixture's times are moved so its
//! orders are recent; the inventory is served as written, filtered by
//! `status` and `vin` when asked.

use std::collections::HashMap;

use axum::extract::{Form, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

const PAGES: [&str; 2] = [
    fixture!("tekion/repair-orders-page-1.json"),
    fixture!("tekion/repair-orders-page-2.json"),
];
const INVENTORY_PAGES: [&str; 2] = [
    fixture!("tekion/inventory-page-1.json"),
    fixture!("tekion/inventory-page-2.json"),
];
const TOKEN: &str = fixture!("tekion/token.json");
const DEALER_ERROR: &str = fixture!("tekion/error-dealer.json");
pub const APP_ID: &str = "demo-tekion-app";
pub const SECRET_KEY: &str = "demo-tekion-secret";
pub const DEALER_ID: &str = "hill-country-01";
const ACCESS_TOKEN: &str = "demo-tekion-token";
const PAGE_SIZE: usize = 5;
const DAY_MS: i64 = 86_400_000;

pub fn router() -> Router {
    Router::new()
        .route("/openapi/public/tokens", post(token))
        .route("/openapi/v3.1.0/repair-orders", get(repair_orders))
        .route("/openapi/v4.0.0/vehicle-inventory", get(vehicle_inventory))
}

async fn token(Form(form): Form<HashMap<String, String>>) -> Response {
    let known = form.get("app_id").map(String::as_str) == Some(APP_ID)
        && form.get("secret_key").map(String::as_str) == Some(SECRET_KEY);
    if !known {
        let body = json!({ "meta": { "status": "failure", "code": "INVALID_CREDENTIALS" } });
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    }
    let token: Value = serde_json::from_str(TOKEN).unwrap_or_default();
    Json(token).into_response()
}

/// The token and the app and dealer headers every API call must carry: `None`
/// when they are right, else the answer Tekion gives.
fn refuse(headers: &HeaderMap) -> Option<Response> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if header("authorization") != Some(&format!("Bearer {ACCESS_TOKEN}"))
        || header("app_id") != Some(APP_ID)
    {
        let body = json!({ "meta": { "status": "failure", "code": "INVALID_TOKEN" }, "data": [] });
        return Some((StatusCode::UNAUTHORIZED, Json(body)).into_response());
    }
    if header("dealer_id") != Some(DEALER_ID) {
        let body: Value = serde_json::from_str(DEALER_ERROR).unwrap_or_default();
        return Some(Json(body).into_response());
    }
    None
}

/// How a list's `meta` counts: v3.1.0 reads say `currentPage` and `pages`,
/// v4.0.0 reads the `total` of records.
#[derive(Clone, Copy)]
enum Count {
    Pages,
    Total,
}

/// One page of `matching`, the cursor (`after-N`) taken from `nextFetchKey`.
fn page_of(matching: &[Value], q: &HashMap<String, String>, count: Count) -> Response {
    let offset: usize = q
        .get("nextFetchKey")
        .and_then(|k| k.strip_prefix("after-"))
        .and_then(|k| k.parse().ok())
        .unwrap_or(0);
    let page: Vec<Value> = matching
        .iter()
        .skip(offset)
        .take(PAGE_SIZE)
        .cloned()
        .collect();
    let mut meta = json!({ "status": "success" });
    match count {
        Count::Pages => {
            meta["currentPage"] = json!(offset / PAGE_SIZE + 1);
            meta["pages"] = json!(matching.len().div_ceil(PAGE_SIZE).max(1));
        }
        Count::Total => meta["total"] = json!(matching.len()),
    }
    if offset + PAGE_SIZE < matching.len() {
        meta["nextFetchKey"] = json!(format!("after-{}", offset + PAGE_SIZE));
    }
    Json(json!({ "meta": meta, "data": page })).into_response()
}

async fn vehicle_inventory(
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(refused) = refuse(&headers) {
        return refused;
    }
    let status = q.get("status");
    let vin = q.get("vin");
    let matching: Vec<Value> = INVENTORY_PAGES
        .iter()
        .filter_map(|p| serde_json::from_str::<Value>(p).ok())
        .filter_map(|p| p.get("data").and_then(Value::as_array).cloned())
        .flatten()
        .filter(|v| status.is_none_or(|s| v["status"].as_str() == Some(s)))
        .filter(|v| vin.is_none_or(|n| v["vin"].as_str() == Some(n)))
        .collect();
    page_of(&matching, &q, Count::Total)
}

async fn repair_orders(headers: HeaderMap, Query(q): Query<HashMap<String, String>>) -> Response {
    if let Some(refused) = refuse(&headers) {
        return refused;
    }
    let number = q.get("repairOrderNumber");
    let time = |k: &str| q.get(k).and_then(|t| t.parse::<i64>().ok());
    let (start, end) = (time("startTime"), time("endTime"));
    let vin = q.get("vin");
    let matching: Vec<Value> = records()
        .into_iter()
        .filter(|r| number.is_none_or(|n| r["repairOrderNumber"].as_str() == Some(n)))
        .filter(|r| vin.is_none_or(|v| r["vehicle"]["vin"].as_str() == Some(v)))
        .filter(|r| {
            // Tekion's window applies to check-in or close time.
            let times = [r["checkinTime"].as_i64(), r["closedTime"].as_i64()];
            start.is_none() && end.is_none()
                || times
                    .into_iter()
                    .flatten()
                    .any(|t| start.is_none_or(|s| t >= s) && end.is_none_or(|e| t <= e))
        })
        .collect();
    page_of(&matching, &q, Count::Pages)
}

/// Every fixture record, its times moved by whole days to end near today.
fn records() -> Vec<Value> {
    let shift = crate::days_since_fixtures() * DAY_MS;
    let mut all: Vec<Value> = PAGES
        .iter()
        .filter_map(|p| serde_json::from_str::<Value>(p).ok())
        .filter_map(|p| p.get("data").and_then(Value::as_array).cloned())
        .flatten()
        .collect();
    for record in &mut all {
        for key in ["checkinTime", "promisedTime", "closedTime"] {
            if let Some(t) = record.get(key).and_then(Value::as_i64) {
                record[key] = json!(t + shift);
            }
        }
    }
    all
}
