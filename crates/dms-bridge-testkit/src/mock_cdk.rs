//! A CDK/Fortellis-shaped inventory API for the demo and tests. It enforces
//! what the real one does: a Basic-authenticated client-credentials token with
//! `scope`, `Subscription-Id` and `Request-Id` on every call, `limit` ≤ 100,
//! removed units only when `deleted=true`. CDK Drive repair orders are in
//! [`crate::mock_cdk_drive`].
//!
//! `POST /cdk/admin/price-drop` (`?vin=…`, else the first unit in stock)
//! lowers a unit's price by 500.00 and, as Fortellis Event Relay would,
//! POSTs an `inventory.vehicle.updated` event to the push URL set with
//! [`MockCdk::push_events_to`] (`Fortellis-Event-Id`, `X-Request-Id`,
//! `Data-Owner-Id`, `Authorization: Bearer` [`EVENTS_SECRET`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

/// The fixture served (a full MVS2 result set including removed units).
pub const VEHICLES: &str = fixture!("cdk/merchandisable-vehicles.json");
pub const CLIENT_ID: &str = "demo-cdk-client";
pub const CLIENT_SECRET: &str = "demo-cdk-secret";
pub const SUBSCRIPTION_ID: &str = "7f1c4c52-5a0e-4c61-9a57-0d6c9d7b0c11";
const ACCESS_TOKEN: &str = "demo-access-token";
/// The secret the mock's events carry as a bearer token (the demo config's
/// `upstreams.cdk-riverside.inbound_events.secret`).
pub const EVENTS_SECRET: &str = "demo-cdk-events-secret";
/// The `Data-Owner-Id` of the mock's events (the dealer's Fortellis organization).
const DATA_OWNER_ID: &str = "demo-cdk-dealer-org";

/// The mock's inventory, which a price drop changes, and where it pushes events.
#[derive(Clone)]
pub struct MockCdk {
    vehicles: Arc<RwLock<Vec<Value>>>,
    latency: Duration,
    push: Arc<Mutex<Option<String>>>,
    http: reqwest::Client,
}

/// The mock's routes; `latency` is added to every inventory answer (for benchmarks).
pub fn router(latency: Duration) -> Router {
    MockCdk::new(latency).router()
}

impl MockCdk {
    /// The fixture inventory; `latency` is added to every inventory answer.
    pub fn new(latency: Duration) -> Self {
        let vehicles = serde_json::from_str::<Value>(VEHICLES)
            .ok()
            .and_then(|v| v.get("results").and_then(Value::as_array).cloned())
            .unwrap_or_default();
        Self {
            vehicles: Arc::new(RwLock::new(vehicles)),
            latency,
            push: Arc::default(),
            http: crate::http::client(),
        }
    }

    pub fn router(&self) -> Router {
        Router::new()
            .route("/oauth2/token", post(token))
            .route(
                "/cdk/sales/inventory/v2/merchandisable-vehicles/",
                get(inventory),
            )
            .route("/cdk/admin/price-drop", post(price_drop))
            .with_state(self.clone())
            .merge(crate::mock_cdk_drive::router(ACCESS_TOKEN))
    }

    /// Price drops are announced as events POSTed to `url` from now on.
    pub fn push_events_to(&self, url: &str) {
        *self.push.lock().unwrap_or_else(PoisonError::into_inner) = Some(url.to_owned());
    }
}

/// Lowers the selling and advertised prices of one unit in stock (`?vin=`, or
/// the first) by 500.00, then pushes the event; answers what it did.
async fn price_drop(
    State(mock): State<MockCdk>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some((vin, price)) = lower_price(&mock, query.get("vin").map(String::as_str)) else {
        return fortellis_error(StatusCode::NOT_FOUND, "NOT-FOUND", "No such unit in stock.");
    };
    let push = mock
        .push
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let delivered = match push {
        Some(url) => Some(push_event(&mock.http, &url, &vin).await),
        None => None,
    };
    axum::Json(json!({ "vin": vin, "price": price, "event_answered": delivered })).into_response()
}

/// The unit's VIN and new selling price.
fn lower_price(mock: &MockCdk, vin: Option<&str>) -> Option<(String, String)> {
    let mut vehicles = mock
        .vehicles
        .write()
        .unwrap_or_else(PoisonError::into_inner);
    let unit = vehicles.iter_mut().find(|v| {
        v.get("deleted") != Some(&Value::Bool(true))
            && v.pointer("/vehicleStatus/inventoryStatus") == Some(&json!("IN_STOCK"))
            && vin.is_none_or(|vin| v.get("vin") == Some(&json!(vin)))
    })?;
    let unit_vin = unit.get("vin")?.as_str()?.to_owned();
    let mut selling = None;
    for price in unit.pointer_mut("/financials/prices")?.as_array_mut()? {
        let amount = match price.get("amount")? {
            Value::String(text) => text.parse::<f64>().ok()?,
            number => number.as_f64()?,
        };
        let lowered = format!("{:.2}", (amount - 500.0).max(0.0));
        if price.get("type") == Some(&json!("SELLING")) {
            selling = Some(lowered.clone());
        }
        price["amount"] = json!(lowered);
    }
    Some((unit_vin, selling?))
}

/// POSTs a Fortellis-shaped `inventory.vehicle.updated` event; the receiver's
/// status code, or 0 when it could not be reached.
async fn push_event(http: &reqwest::Client, url: &str, vin: &str) -> u16 {
    let event = json!({
        "eventType": "inventory.vehicle.updated",
        "eventTime": chrono::Utc::now().to_rfc3339(),
        "data": { "vehicleId": vin, "vin": vin },
    });
    let sent = http
        .post(url)
        .bearer_auth(EVENTS_SECRET)
        .header("Fortellis-Event-Id", uuid::Uuid::new_v4().to_string())
        .header("X-Request-Id", uuid::Uuid::new_v4().to_string())
        .header("Data-Owner-Id", DATA_OWNER_ID)
        .json(&event)
        .send()
        .await;
    match sent {
        Ok(answer) => answer.status().as_u16(),
        Err(e) => {
            tracing::warn!(error = %e, "The mock CDK could not push its event.");
            0
        }
    }
}

async fn token(headers: HeaderMap, body: String) -> Response {
    let expected = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({ "error": "invalid_client" })),
        )
            .into_response();
    }
    let form: HashMap<String, String> = form_fields(&body);
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "error": "unsupported_grant_type" })),
        )
            .into_response();
    }
    if !form.contains_key("scope") {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "error": "invalid_scope" })),
        )
            .into_response();
    }
    axum::Json(json!({ "token_type": "Bearer", "expires_in": 3600, "access_token": ACCESS_TOKEN, "scope": "anonymous" })).into_response()
}

/// The form fields of a token request; read after the credentials are checked,
/// so a request without them gets 401 whatever its body.
fn form_fields(body: &str) -> HashMap<String, String> {
    form_urlencoded::parse(body.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

#[derive(serde::Serialize)]
struct Page<'a> {
    summary: Summary,
    results: &'a [&'a Value],
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    count: usize,
    total_count: usize,
    limit: usize,
    offset: usize,
}

fn fortellis_error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        axum::Json(json!({ "code": code, "message": message })),
    )
        .into_response()
}

async fn inventory(
    State(mock): State<MockCdk>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if header("authorization") != Some(&format!("Bearer {ACCESS_TOKEN}")) {
        return fortellis_error(
            StatusCode::UNAUTHORIZED,
            "INVALID-TOKEN",
            "The access token is invalid.",
        );
    }
    match header("subscription-id") {
        None => {
            return fortellis_error(
                StatusCode::BAD_REQUEST,
                "MISSING-SUBSCRIPTION-ID",
                "Subscription-Id header is required.",
            );
        }
        Some(s) if s != SUBSCRIPTION_ID => {
            return fortellis_error(
                StatusCode::FORBIDDEN,
                "SUBSCRIPTION-MISMATCH",
                "Unknown subscription.",
            );
        }
        Some(_) => {}
    }
    let Some(request_id) = header("request-id").map(str::to_owned) else {
        return fortellis_error(
            StatusCode::BAD_REQUEST,
            "INVALID-PARAMETER",
            "Request-Id header is required.",
        );
    };
    let limit: usize = query
        .get("limit")
        .and_then(|l| l.parse().ok())
        .unwrap_or(10);
    let offset: usize = query
        .get("offset")
        .and_then(|o| o.parse().ok())
        .unwrap_or(0);
    if limit == 0 || limit > 100 {
        return fortellis_error(
            StatusCode::BAD_REQUEST,
            "INVALID-PARAMETER",
            "limit must be between 1 and 100",
        );
    }
    if !mock.latency.is_zero() {
        tokio::time::sleep(mock.latency).await;
    }
    let include_deleted = query.get("deleted").is_some_and(|d| d == "true");
    let vehicles = mock.vehicles.read().unwrap_or_else(PoisonError::into_inner);
    let units: Vec<&Value> = vehicles
        .iter()
        .filter(|v| include_deleted || v.get("deleted") != Some(&Value::Bool(true)))
        .collect();
    let page: Vec<&Value> = units.iter().skip(offset).take(limit).copied().collect();
    // Serialized straight from the fixture: no per-request copy of the records.
    let body = Page {
        summary: Summary {
            count: page.len(),
            total_count: units.len(),
            limit,
            offset,
        },
        results: &page,
    };
    let mut response = axum::Json(body).into_response();
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("request-id", value);
    }
    response
}
