//! A CRM's ADF HTTP intake for the demo and tests, shaped like the ones dealer
//! CRMs run: `POST /adf/{dealer}?token=…` with the raw ADF body and an optional
//! `x-adf-signature` (hex HMAC-SHA256 of the body). It answers JSON, drops a
//! repeated `(source, id)` as a duplicate, and can be told to fail requests.
//! `GET /adf/received` shows what it has taken in.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::Serialize;
use serde_json::json;
use sha2::Sha256;

use crate::adf::{self, ProspectStatus};

/// One lead the intake accepted.
#[derive(Debug, Clone, Serialize)]
pub struct ReceivedLead {
    pub crm_lead_id: String,
    pub dealer: String,
    /// The prospect `<id>` and its `source`: the dedupe key.
    pub adf_id: String,
    pub source: Option<String>,
    /// `new` or `resend`.
    pub status: &'static str,
    pub received_at: DateTime<Utc>,
    pub document: String,
}

#[derive(Clone)]
pub struct MockCrm {
    inner: Arc<Inner>,
}

struct Inner {
    tokens: BTreeMap<String, String>,
    signing_key: Option<String>,
    /// Every request whose number (from 1) is a multiple of this fails with 500.
    fail_every: AtomicUsize,
    requests: AtomicUsize,
    accepted: Mutex<Vec<ReceivedLead>>,
    /// Copies dropped because the `(source, id)` was already taken in.
    duplicates: AtomicUsize,
}

impl MockCrm {
    /// `tokens`: dealer → intake token. `signing_key`: require `x-adf-signature` when set.
    pub fn new(tokens: BTreeMap<String, String>, signing_key: Option<String>) -> Self {
        Self {
            inner: Arc::new(Inner {
                tokens,
                signing_key,
                fail_every: AtomicUsize::new(0),
                requests: AtomicUsize::new(0),
                accepted: Mutex::new(Vec::new()),
                duplicates: AtomicUsize::new(0),
            }),
        }
    }

    pub fn router(&self) -> Router {
        Router::new()
            .route("/adf/{dealer}", post(intake))
            .route("/adf/received", get(received))
            .with_state(self.clone())
    }

    /// Fail every `n`th request with 500 (`2` fails half; `0` fails none).
    pub fn fail_every(&self, n: usize) {
        self.inner.fail_every.store(n, Ordering::SeqCst);
    }

    /// Leads taken in, once each.
    pub fn leads(&self) -> Vec<ReceivedLead> {
        self.inner
            .accepted
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// Requests seen, failed ones included.
    pub fn requests(&self) -> usize {
        self.inner.requests.load(Ordering::SeqCst)
    }

    /// Copies recognised as already taken in.
    pub fn duplicates(&self) -> usize {
        self.inner.duplicates.load(Ordering::SeqCst)
    }
}

#[derive(serde::Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

async fn intake(
    State(crm): State<MockCrm>,
    Path(dealer): Path<String>,
    Query(q): Query<TokenQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let n = crm.inner.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let every = crm.inner.fail_every.load(Ordering::SeqCst);
    if every > 0 && n % every == 0 {
        return reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({ "error": "temporarily unavailable" }),
        );
    }
    let expected = crm.inner.tokens.get(&dealer);
    if expected.is_none() || q.token.as_ref() != expected {
        return reply(
            StatusCode::UNAUTHORIZED,
            json!({ "error": "invalid token" }),
        );
    }
    if let Some(key) = &crm.inner.signing_key
        && !signature_ok(key, &headers, &body)
    {
        return reply(
            StatusCode::UNAUTHORIZED,
            json!({ "error": "invalid signature" }),
        );
    }
    let Some(lead) = adf::parse(&body).ok().and_then(|l| l.into_iter().next()) else {
        return reply(StatusCode::BAD_REQUEST, json!({ "error": "malformed_xml" }));
    };
    let Some(id) = lead.ids.first().cloned() else {
        return reply(
            StatusCode::BAD_REQUEST,
            json!({ "error": "missing prospect id" }),
        );
    };
    let Ok(mut accepted) = crm.inner.accepted.lock() else {
        return reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({ "error": "poisoned" }),
        );
    };
    if let Some(seen) = accepted
        .iter()
        .find(|l| l.adf_id == id.value && l.source == id.source)
    {
        crm.inner.duplicates.fetch_add(1, Ordering::SeqCst);
        let lead_id = seen.crm_lead_id.clone();
        return reply(
            StatusCode::OK,
            json!({ "success": true, "leadId": lead_id, "parseOk": true, "duplicate": true }),
        );
    }
    let crm_lead_id = format!("crm-{}", accepted.len() + 1);
    accepted.push(ReceivedLead {
        crm_lead_id: crm_lead_id.clone(),
        dealer,
        adf_id: id.value,
        source: id.source,
        status: match lead.status {
            ProspectStatus::New => "new",
            ProspectStatus::Resend => "resend",
        },
        received_at: Utc::now(),
        document: String::from_utf8_lossy(&body).into_owned(),
    });
    reply(
        StatusCode::OK,
        json!({ "success": true, "leadId": crm_lead_id, "parseOk": true, "duplicate": false }),
    )
}

fn signature_ok(key: &str, headers: &HeaderMap, body: &[u8]) -> bool {
    let Some(sent) = headers.get("x-adf-signature").and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.as_bytes()) else {
        return false;
    };
    mac.update(body);
    hex::decode(sent).is_ok_and(|tag| mac.verify_slice(&tag).is_ok())
}

async fn received(State(crm): State<MockCrm>) -> Json<serde_json::Value> {
    Json(
        json!({ "requests": crm.requests(), "duplicates_dropped": crm.duplicates(), "leads": crm.leads() }),
    )
}

fn reply(status: StatusCode, body: serde_json::Value) -> Response {
    (status, Json(body)).into_response()
}
