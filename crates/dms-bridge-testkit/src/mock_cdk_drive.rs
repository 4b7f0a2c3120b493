//! CDK Drive-shaped repair-order queries for the demo: every query starts a
//! long operation whose status is `received` on the first poll and `complete`
//! on the next (answers advise polling again after a second), then the result
//! is fetched once. The fixture's dates are moved so its orders are always
//! recent: the newest opened order opens today.
//!
//! `POST /cdk/admin/repair-orders/advance` moves the first open order one step
//! on, as a shop floor would: work starts on an order not started, and an
//! order in progress is closed today (in Chicago, as the fixtures' dates). It answers `{ro_number, status}`, and
//! 409 once every order is closed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{NaiveDate, NaiveDateTime, TimeDelta, Utc};
use serde_json::{Value, json};

const OPEN: &str = fixture!("cdk/repair-orders/result-open.json");
const CLOSED: &str = fixture!("cdk/repair-orders/result-closed.json");
const BASE: &str = "/cdk/drive/servicerepairorder/v1";

/// A started query: the records its result will hold, and status polls so far.
type Operation = (Vec<Value>, u32);

#[derive(Clone, Default)]
struct Drive {
    operations: Arc<Mutex<HashMap<String, Operation>>>,
    /// Open orders moved on by the admin endpoint, by RO number.
    advanced: Arc<Mutex<HashMap<String, Stage>>>,
}

#[derive(Clone, Copy, PartialEq)]
enum Stage {
    Started,
    /// Closed at this local time.
    Closed(NaiveDateTime),
}

pub fn router(access_token: &'static str) -> Router {
    Router::new()
        .route(&format!("{BASE}/open"), get(start_open))
        .route(&format!("{BASE}/closed/delta"), get(start_closed))
        .route(
            &format!("{BASE}/long-operations/{{id}}/status"),
            get(status),
        )
        .route(
            &format!("{BASE}/long-operations/{{id}}/result"),
            get(result),
        )
        .route("/cdk/admin/repair-orders/advance", post(advance))
        .with_state((Drive::default(), access_token))
}

type DriveState = State<(Drive, &'static str)>;

fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let bearer = headers.get("authorization").and_then(|v| v.to_str().ok());
    bearer == Some(&format!("Bearer {token}")) && headers.contains_key("subscription-id")
}

fn refused() -> Response {
    let body = json!({ "code": "INVALID-TOKEN", "message": "The access token is invalid." });
    (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response()
}

async fn start_open(State((drive, token)): DriveState, headers: HeaderMap) -> Response {
    if !authorized(&headers, token) {
        return refused();
    }
    let advanced = drive.advanced();
    let open = records(OPEN)
        .into_iter()
        .filter_map(|mut r| match advanced.get(ro_number(&r)) {
            Some(Stage::Closed(_)) => None,
            Some(Stage::Started) => {
                set_line_codes(&mut r, "I");
                Some(r)
            }
            None => Some(r),
        })
        .collect();
    start(&drive, open)
}

async fn start_closed(
    State((drive, token)): DriveState,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if !authorized(&headers, token) {
        return refused();
    }
    let day = |k: &str| {
        query
            .get(k)
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    };
    let (Some(from), Some(to)) = (day("startDate"), day("endDate")) else {
        let body =
            json!({ "code": "INVALID-PARAMETER", "message": "startDate and endDate are required" });
        return (StatusCode::BAD_REQUEST, axum::Json(body)).into_response();
    };
    let advanced = drive.advanced();
    let closed_here = records(OPEN).into_iter().filter_map(|mut r| {
        let Some(Stage::Closed(at)) = advanced.get(ro_number(&r)) else {
            return None;
        };
        set_line_codes(&mut r, "C");
        r["closedDate"] = json!(at.format("%Y-%m-%d").to_string());
        r["closedTime"] = json!(at.format("%H:%M").to_string());
        r["mileageOut"] = r["mileage"].clone();
        Some(r)
    });
    let closed = records(CLOSED)
        .into_iter()
        .chain(closed_here)
        .filter(|r| {
            r.get("closedDate")
                .and_then(Value::as_str)
                .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
                .is_some_and(|d| d >= from && d <= to)
        })
        .collect();
    start(&drive, closed)
}

impl Drive {
    fn advanced(&self) -> HashMap<String, Stage> {
        self.advanced.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

/// Moves the first open order one step on: started, then closed today.
async fn advance(State((drive, _)): DriveState) -> Response {
    let Ok(mut advanced) = drive.advanced.lock() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    for record in records(OPEN) {
        let number = ro_number(&record).to_owned();
        let status = match advanced.get(&number) {
            Some(Stage::Closed(_)) => continue,
            Some(Stage::Started) => "closed",
            None if started(&record) => "closed",
            None => "in_progress",
        };
        let stage = match status {
            "closed" => Stage::Closed(crate::demo_now()),
            _ => Stage::Started,
        };
        advanced.insert(number.clone(), stage);
        return axum::Json(json!({ "ro_number": number, "status": status })).into_response();
    }
    let body = json!({ "code": "NOTHING-TO-ADVANCE", "message": "Every repair order is closed." });
    (StatusCode::CONFLICT, axum::Json(body)).into_response()
}

fn ro_number(record: &Value) -> &str {
    record.get("roNumber").and_then(Value::as_str).unwrap_or("")
}

fn line_codes(record: &Value) -> impl Iterator<Item = &str> {
    record
        .get("operations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|o| o.pointer("/line/statusCode").and_then(Value::as_str))
}

/// Work has started on some line (a code other than O, not started).
fn started(record: &Value) -> bool {
    line_codes(record).any(|c| c != "O")
}

fn set_line_codes(record: &mut Value, code: &str) {
    let lines = record.get_mut("operations").and_then(Value::as_array_mut);
    for op in lines.into_iter().flatten() {
        if let Some(line) = op.get_mut("line") {
            line["statusCode"] = json!(code);
        }
    }
}

fn start(drive: &Drive, data: Vec<Value>) -> Response {
    let id = format!("op-{}", uuid::Uuid::new_v4().simple());
    if let Ok(mut ops) = drive.operations.lock() {
        ops.insert(id.clone(), (data, 0));
    }
    (StatusCode::ACCEPTED, axum::Json(operation(&id, "received"))).into_response()
}

fn operation(id: &str, status: &str) -> Value {
    let now = Utc::now().to_rfc3339();
    json!({
        "operationId": id, "status": status, "receivedDateTime": now, "updatedDateTime": now,
        "checkStatusAfterSeconds": 1,
        "_links": {
            "status": { "href": format!("{BASE}/long-operations/{id}/status") },
            "result": { "href": format!("{BASE}/long-operations/{id}/result") },
        },
    })
}

async fn status(
    State((drive, token)): DriveState,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if !authorized(&headers, token) {
        return refused();
    }
    let polls = drive.operations.lock().ok().and_then(|mut ops| {
        let (_, polls) = ops.get_mut(&id)?;
        *polls += 1;
        Some(*polls)
    });
    match polls {
        Some(1) => axum::Json(operation(&id, "received")).into_response(),
        Some(_) => axum::Json(operation(&id, "complete")).into_response(),
        None => not_found(),
    }
}

async fn result(
    State((drive, token)): DriveState,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if !authorized(&headers, token) {
        return refused();
    }
    // A result is fetched once; the operation is forgotten after it.
    let data = drive
        .operations
        .lock()
        .ok()
        .and_then(|mut ops| ops.remove(&id));
    match data {
        Some((data, polls)) if polls >= 2 => axum::Json(json!({ "data": data })).into_response(),
        Some(_) => {
            let body =
                json!({ "code": "OPERATION-NOT-COMPLETE", "message": "Poll the status first." });
            (StatusCode::CONFLICT, axum::Json(body)).into_response()
        }
        None => not_found(),
    }
}

fn not_found() -> Response {
    let body = json!({ "code": "NOT-FOUND", "message": "No such operation." });
    (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}

/// The fixture's records with every date moved to end near today.
fn records(fixture: &str) -> Vec<Value> {
    let shift = TimeDelta::days(crate::days_since_fixtures());
    let mut data = serde_json::from_str::<Value>(fixture)
        .ok()
        .and_then(|v| v.get("data").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    for record in &mut data {
        for key in ["openDate", "promisedDate", "closedDate"] {
            if let Some(Value::String(text)) = record.get_mut(key) {
                let moved = NaiveDate::parse_from_str(text, "%Y-%m-%d")
                    .ok()
                    .and_then(|d| d.checked_add_signed(shift));
                if let Some(d) = moved {
                    *text = d.format("%Y-%m-%d").to_string();
                }
            }
        }
    }
    data
}
