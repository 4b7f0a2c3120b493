//! A Tekion-shaped repair-order API for the demo: a token from
//! `/openapi/public/tokens` (form `app_id`, `secret_key`, wrapped in `data`),
//! `app_id` / `dealer_id` headers on every call, epoch-millisecond filters,
//! pages of five with a `meta.nextFetchKey`, and errors inside HTTP 200
//! (`meta.status: failure`). The fixture's times are moved so its orders are
//! recent.

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

async fn repair_orders(headers: HeaderMap, Query(q): Query<HashMap<String, String>>) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if header("authorization") != Some(&format!("Bearer {ACCESS_TOKEN}"))
        || header("app_id") != Some(APP_ID)
    {
        let body = json!({ "meta": { "status": "failure", "code": "INVALID_TOKEN" }, "data": [] });
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    }
    if header("dealer_id") != Some(DEALER_ID) {
        let body: Value = serde_json::from_str(DEALER_ERROR).unwrap_or_default();
        return Json(body).into_response();
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
    let mut meta = json!({
        "status": "success",
        "currentPage": offset / PAGE_SIZE + 1,
        "pages": matching.len().div_ceil(PAGE_SIZE).max(1),
    });
    if offset + PAGE_SIZE < matching.len() {
        meta["nextFetchKey"] = json!(format!("after-{}", offset + PAGE_SIZE));
    }
    Json(json!({ "meta": meta, "data": page })).into_response()
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
