//! An Xtime-shaped scheduling API for the demo and tests: a Basic-authenticated
//! client-credentials token, `x-api-key` on every call, the service menu from
//! the fixtures, and open slots computed for the dates asked (weekdays, every
//! half hour 07:30-16:00 Central, every third slot taken). Bookings are kept in
//! memory: a booked slot leaves availability and cannot be booked again
//! (`SLOT_UNAVAILABLE`) until it is cancelled. A booking that names an
//! `externalReference` seen before answers the appointment made for it and
//! books nothing new. Errors are in-band: HTTP 200 with `success: false`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, TimeZone, Weekday};
use serde_json::{Value, json};

pub const SERVICES: &str = fixture!("xtime/services.json");
pub const TOKEN: &str = fixture!("xtime/token.json");
pub const CLIENT_ID: &str = "demo-xtime-client";
pub const CLIENT_SECRET: &str = "demo-xtime-secret";
pub const API_KEY: &str = "demo-xtime-key";
pub const DEALER_CODE: &str = "RIVERSIDE01";
const ACCESS_TOKEN: &str = "demo-xtime-token";
/// The longest range the scheduler answers for.
const MAX_DAYS: i64 = 31;

/// Appointments booked so far, by id.
#[derive(Default)]
struct Book {
    next: u64,
    appointments: HashMap<String, Appointment>,
    /// `externalReference` → the appointment booked for it.
    references: HashMap<String, String>,
}

struct Appointment {
    start: DateTime<FixedOffset>,
    cancelled: bool,
}

impl Book {
    fn taken(&self, start: DateTime<FixedOffset>) -> bool {
        self.appointments
            .values()
            .any(|a| !a.cancelled && a.start == start)
    }
}

type Shared = Arc<Mutex<Book>>;

pub fn router() -> Router {
    Router::new()
        .route("/oauth2/token", post(token))
        .route("/service/services", get(services))
        .route("/service/appointments-availabilities", get(availabilities))
        .route("/service/appointments-bookings", post(book))
        .route("/service/appointments-bookings/{id}", delete(cancel))
        .with_state(Shared::default())
}

async fn token(headers: HeaderMap, body: String) -> Response {
    let expected = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    let basic_ok = headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(&expected);
    if !basic_ok || !body.contains("grant_type=client_credentials") || !body.contains("scope=") {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({ "error": "invalid_client" })),
        )
            .into_response();
    }
    let token: Value = serde_json::from_str(TOKEN).unwrap_or_default();
    Json(token).into_response()
}

/// The checks every API call gets: the refusal to answer, if any.
fn refusal(headers: &HeaderMap, q: &HashMap<String, String>) -> Option<Response> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if header("authorization") != Some(&format!("Bearer {ACCESS_TOKEN}"))
        || header("x-api-key") != Some(API_KEY)
    {
        return Some(
            (
                StatusCode::UNAUTHORIZED,
                Json(
                    json!({ "success": false, "code": "UNAUTHORIZED", "message": "Unauthorized" }),
                ),
            )
                .into_response(),
        );
    }
    if q.get("dealerCode").map(String::as_str) != Some(DEALER_CODE) {
        return Some(in_band("INVALID_DEALER_CODE", "Unknown dealer code"));
    }
    None
}

async fn services(headers: HeaderMap, Query(q): Query<HashMap<String, String>>) -> Response {
    if let Some(refused) = refusal(&headers, &q) {
        return refused;
    }
    let menu: Value = serde_json::from_str(SERVICES).unwrap_or_default();
    Json(menu).into_response()
}

/// The opcodes on the menu.
fn known_codes() -> Vec<String> {
    let menu: Value = serde_json::from_str(SERVICES).unwrap_or_default();
    menu["services"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|s| s["opcode"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The refusal a request for `codes` and the query's vehicle gets, if any.
fn invalid_request(codes: &[&str], q: &HashMap<String, String>) -> Option<Response> {
    let known = known_codes();
    if codes.is_empty() || codes.iter().any(|c| !known.iter().any(|k| k == c)) {
        return Some(in_band(
            "INVALID_OPCODE",
            "One or more opcodes are not valid for this dealer",
        ));
    }
    let has_vehicle =
        q.contains_key("vin") || ["year", "make", "model"].iter().all(|k| q.contains_key(*k));
    (!has_vehicle).then(|| {
        in_band(
            "INVALID_VEHICLE",
            "A VIN or year, make and model is required",
        )
    })
}

async fn availabilities(
    State(book): State<Shared>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(refused) = refusal(&headers, &q) {
        return refused;
    }
    let codes: Vec<&str> = q
        .get("opcode")
        .map(|c| c.split(',').filter(|c| !c.is_empty()).collect())
        .unwrap_or_default();
    if let Some(refused) = invalid_request(&codes, &q) {
        return refused;
    }
    let day = |k: &str| {
        q.get(k)
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    };
    let (Some(start), Some(end)) = (day("start"), day("end")) else {
        return in_band("INVALID_DATE_RANGE", "start and end are required");
    };
    if end < start || (end - start).num_days() > MAX_DAYS {
        return in_band("INVALID_DATE_RANGE", "Invalid date range");
    }
    let book = book.lock().unwrap_or_else(|p| p.into_inner());
    let slots: Vec<Value> = start
        .iter_days()
        .take_while(|d| *d <= end)
        .flat_map(day_slots)
        .filter(|s| slot_start(s).is_none_or(|t| !book.taken(t)))
        .collect();
    Json(json!({ "success": true, "availableAppointments": slots })).into_response()
}

fn slot_start(slot: &Value) -> Option<DateTime<FixedOffset>> {
    parse_local(slot["appointmentDateTimeLocal"].as_str()?)
}

fn parse_local(text: &str) -> Option<DateTime<FixedOffset>> {
    DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M%z")
        .or_else(|_| DateTime::parse_from_rfc3339(text))
        .ok()
}

/// Books an open slot; a slot that is not open (never offered, or booked) is `SLOT_UNAVAILABLE`.
async fn book(
    State(book): State<Shared>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    Json(body): Json<Value>,
) -> Response {
    if let Some(refused) = refusal(&headers, &q) {
        return refused;
    }
    let codes: Vec<&str> = body["services"]
        .as_array()
        .map(|s| s.iter().filter_map(|s| s["opcode"].as_str()).collect())
        .unwrap_or_default();
    if let Some(refused) = invalid_request(&codes, &q) {
        return refused;
    }
    if ["firstName", "lastName"]
        .iter()
        .any(|k| body[*k].as_str().is_none_or(str::is_empty))
    {
        return in_band("INVALID_CUSTOMER", "firstName and lastName are required");
    }
    let Some(start) = body["appointmentDateTimeLocal"]
        .as_str()
        .and_then(parse_local)
    else {
        return in_band("INVALID_DATE_RANGE", "appointmentDateTimeLocal is required");
    };
    let offered = day_slots(start.date_naive())
        .iter()
        .any(|s| slot_start(s) == Some(start));
    let mut book = book.lock().unwrap_or_else(|p| p.into_inner());
    let reference = body["externalReference"]
        .as_str()
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    if let Some(id) = reference.as_ref().and_then(|r| book.references.get(r)) {
        return Json(json!({ "success": true, "appointmentId": id })).into_response();
    }
    if !offered || book.taken(start) {
        return in_band(
            "SLOT_UNAVAILABLE",
            "The requested time is no longer available",
        );
    }
    book.next += 1;
    let id = format!("XT-{}", 7000 + book.next);
    book.appointments.insert(
        id.clone(),
        Appointment {
            start,
            cancelled: false,
        },
    );
    if let Some(reference) = reference {
        book.references.insert(reference, id.clone());
    }
    Json(json!({ "success": true, "appointmentId": id })).into_response()
}

/// Cancels a booking (again, harmlessly); an unknown id is `APPOINTMENT_NOT_FOUND`.
async fn cancel(
    State(book): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(refused) = refusal(&headers, &q) {
        return refused;
    }
    let mut book = book.lock().unwrap_or_else(|p| p.into_inner());
    match book.appointments.get_mut(&id) {
        Some(a) => {
            a.cancelled = true;
            Json(json!({ "success": true, "appointmentId": id })).into_response()
        }
        None => in_band("APPOINTMENT_NOT_FOUND", "No appointment with this id"),
    }
}

/// A weekday's open half-hour slots, 07:30-16:00 Central; every third is taken.
fn day_slots(day: NaiveDate) -> Vec<Value> {
    if matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
        return Vec::new();
    }
    let tz = chrono_tz::America::Chicago;
    let offset = day.ordinal() as usize;
    (15..=32)
        .filter(|n| !(n + offset).is_multiple_of(3))
        .filter_map(|n| {
            let local = day.and_hms_opt(n as u32 / 2, (n as u32 % 2) * 30, 0)?;
            let at = tz.from_local_datetime(&local).earliest()?;
            Some(json!({
                "appointmentDateTimeLocal": at.format("%Y-%m-%dT%H:%M%z").to_string(),
                "durationMinutes": 30,
                "advisorId": format!("ADV-{}", 1 + n % 2),
            }))
        })
        .collect()
}

fn in_band(code: &str, message: &str) -> Response {
    Json(json!({ "success": false, "code": code, "message": message })).into_response()
}
