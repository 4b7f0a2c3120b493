//! An Activix CRM-shaped REST API (v2) for the demo and tests: leads
//! submitted through `POST /v2/leads` (bearer API key; a `type` outside
//! Activix's list or a lead without a name is refused with 422, as Activix
//! does), read back by `GET /v2/leads/{id}`. Each lead moves through the
//! fixtures' stages (new, contacted, appointment set, sold) when told to:
//! `POST /admin/leads/{id}/advance`, or `/lose`. `GET /admin/leads` shows what
//! was submitted. Answers are the fixtures in `wiremock-fixtures/activix/`
//! with the lead's id.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

pub const API_KEY: &str = "demo-activix-key";
const CREATED: &str = fixture!("activix/create-lead-201.json");
const ERROR_401: &str = fixture!("activix/error-401.json");
const ERROR_422: &str = fixture!("activix/error-422.json");
/// What a lead looks like at each stage, in order.
const STAGES: [&str; 4] = [
    fixture!("activix/lead-new.json"),
    fixture!("activix/lead-contacted.json"),
    fixture!("activix/lead-appointment-set.json"),
    fixture!("activix/lead-sold.json"),
];
const LOST: &str = fixture!("activix/lead-lost.json");
/// Activix's lead types (`api/resources/lead.md`).
const TYPES: [&str; 9] = [
    "email",
    "phone",
    "walk_in",
    "loyalty",
    "renewal",
    "sms",
    "event",
    "pre_booking",
    "web_order",
];
const FIRST_ID: u64 = 7_712_001;

/// One submitted lead: what was sent, and how far it has come.
#[derive(Debug, Clone)]
pub struct Submitted {
    pub id: u64,
    pub body: Value,
    /// An index into the stages; `None` once lost.
    stage: Option<usize>,
}

#[derive(Clone, Default)]
pub struct MockActivix {
    leads: Arc<Mutex<Vec<Submitted>>>,
}

impl MockActivix {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn router(&self) -> Router {
        Router::new()
            .route("/v2/leads", post(create))
            .route("/v2/leads/{id}", get(read))
            .route("/admin/leads", get(submitted))
            .route("/admin/leads/{id}/advance", post(advance))
            .route("/admin/leads/{id}/lose", post(lose))
            .with_state(self.clone())
    }

    /// The leads submitted so far, oldest first.
    pub fn submitted(&self) -> Vec<Submitted> {
        self.leads.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Moves lead `id` one stage on (new → contacted → appointment set → sold).
    pub fn advance(&self, id: u64) -> bool {
        self.update(id, |stage| stage.map(|s| (s + 1).min(STAGES.len() - 1)))
    }

    /// Closes lead `id` as lost.
    pub fn lose(&self, id: u64) -> bool {
        self.update(id, |_| None)
    }

    fn update(&self, id: u64, next: impl Fn(Option<usize>) -> Option<usize>) -> bool {
        let Ok(mut leads) = self.leads.lock() else {
            return false;
        };
        match leads.iter_mut().find(|l| l.id == id) {
            Some(lead) => {
                lead.stage = next(lead.stage);
                true
            }
            None => false,
        }
    }
}

fn authorized(headers: &HeaderMap) -> bool {
    headers.get("authorization").and_then(|v| v.to_str().ok())
        == Some(format!("Bearer {API_KEY}").as_str())
}

fn fixture_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn error(status: StatusCode, body: &str) -> Response {
    (status, Json(fixture_json(body))).into_response()
}

async fn create(State(mock): State<MockActivix>, headers: HeaderMap, body: String) -> Response {
    if !authorized(&headers) {
        return error(StatusCode::UNAUTHORIZED, ERROR_401);
    }
    let Ok(lead) = serde_json::from_str::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, ERROR_422);
    };
    let typed = lead["type"].as_str().is_some_and(|t| TYPES.contains(&t));
    let named = ["first_name", "last_name"]
        .iter()
        .any(|k| lead[k].as_str().is_some_and(|n| !n.trim().is_empty()));
    if !typed || !named {
        return error(StatusCode::UNPROCESSABLE_ENTITY, ERROR_422);
    }
    let Ok(mut leads) = mock.leads.lock() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let id = FIRST_ID + leads.len() as u64;
    leads.push(Submitted {
        id,
        body: lead.clone(),
        stage: Some(0),
    });
    let mut answer = fixture_json(CREATED);
    answer["data"]["id"] = json!(id);
    for key in ["first_name", "last_name", "type"] {
        answer["data"][key] = lead[key].clone();
    }
    (StatusCode::CREATED, Json(answer)).into_response()
}

async fn read(
    State(mock): State<MockActivix>,
    Path(id): Path<u64>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&headers) {
        return error(StatusCode::UNAUTHORIZED, ERROR_401);
    }
    let stage = mock
        .submitted()
        .into_iter()
        .find(|l| l.id == id)
        .map(|l| l.stage);
    let Some(stage) = stage else {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({ "message": "Not found." })),
        )
            .into_response();
    };
    let mut answer = fixture_json(stage.map_or(LOST, |s| STAGES[s]));
    answer["data"]["id"] = json!(id);
    Json(answer).into_response()
}

async fn submitted(State(mock): State<MockActivix>) -> Json<Value> {
    let leads: Vec<Value> = mock
        .submitted()
        .into_iter()
        .map(|l| json!({ "id": l.id, "body": l.body, "lost": l.stage.is_none(), "stage": l.stage }))
        .collect();
    Json(json!({ "leads": leads }))
}

async fn advance(State(mock): State<MockActivix>, Path(id): Path<u64>) -> StatusCode {
    if mock.advance(id) {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}

async fn lose(State(mock): State<MockActivix>, Path(id): Path<u64>) -> StatusCode {
    if mock.lose(id) {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}
