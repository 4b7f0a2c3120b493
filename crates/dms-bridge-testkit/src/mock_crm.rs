//! A CRM's ADF HTTP intake for the demo and tests, shaped like the ones dealer
//! CRMs run: `POST /adf/{dealer}?token=…` with the raw ADF body and an optional
//! `x-adf-signature` (hex HMAC-SHA256 of the body). It answers JSON, drops a
//! repeated `(source, id)` as a duplicate, and can be told to fail requests.
//! `GET /adf/received` shows what it has taken in. Documents are read with this
//! crate's own strict reader ([`read_adf`]), not the bridge's lenient one, so
//! ADF the bridge writes wrong is refused here as a real CRM would refuse it.

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

use crate::xml;

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
    let prospect = match read_adf(&body) {
        Ok(prospect) => prospect,
        Err(error) => return reply(StatusCode::BAD_REQUEST, json!({ "error": error })),
    };
    let Some(id) = prospect.id else {
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
        status: prospect.status,
        received_at: Utc::now(),
        document: String::from_utf8_lossy(&body).into_owned(),
    });
    reply(
        StatusCode::OK,
        json!({ "success": true, "leadId": crm_lead_id, "parseOk": true, "duplicate": false }),
    )
}

/// What the intake reads of a lead: the first `<prospect>`'s status and first
/// non-blank `<id>`.
struct Prospect {
    /// `new` or `resend`.
    status: &'static str,
    id: Option<ProspectId>,
}

/// A prospect `<id>` and its `source`, the pair CRMs deduplicate on.
struct ProspectId {
    value: String,
    source: Option<String>,
}

/// Reads an ADF document strictly: well-formed UTF-8 XML, an `<adf>` root with a
/// `<prospect>` whose `status` is `new` (or absent) or `resend`. The error is the
/// `error` of the 400 reply.
fn read_adf(body: &[u8]) -> Result<Prospect, &'static str> {
    let document = xml::parse(body).ok_or("malformed_xml")?;
    let prospect = xml::descend(document.root(), &["adf", "prospect"]).ok_or("malformed_xml")?;
    let status = match prospect.attribute("status").map(str::trim) {
        None | Some("new") => "new",
        Some("resend") => "resend",
        Some(_) => return Err("invalid prospect status"),
    };
    let id = xml::children(prospect, "id").find_map(|n| {
        let value = xml::text(n);
        let source = n
            .attribute("source")
            .map(str::trim)
            .filter(|s| !s.is_empty());
        (!value.is_empty()).then(|| ProspectId {
            value,
            source: source.map(str::to_owned),
        })
    });
    Ok(Prospect { status, id })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_prospects_first_id_and_status() {
        let adf = br#"<?xml version="1.0" encoding="UTF-8"?><?adf version="1.0"?>
            <adf><prospect status="resend"><id sequence="1" source=" "> </id>
            <id sequence="2" source="dms-bridge"> lead-1 </id></prospect>
            <prospect><id>lead-2</id></prospect></adf>"#;
        let prospect = read_adf(adf).unwrap();
        assert_eq!(prospect.status, "resend");
        let id = prospect.id.unwrap();
        assert_eq!(
            (id.value.as_str(), id.source.as_deref()),
            ("lead-1", Some("dms-bridge"))
        );
        let bare = read_adf(b"<adf><prospect><id> </id></prospect></adf>").unwrap();
        assert_eq!((bare.status, bare.id.is_none()), ("new", true));
    }

    #[test]
    fn refuses_what_a_strict_crm_would() {
        let refused = |doc: &[u8]| read_adf(doc).err();
        assert_eq!(
            refused(b"<adf><prospect><id>1</prospect></adf>"),
            Some("malformed_xml")
        );
        assert_eq!(
            refused(b"<ADF><prospect><id>1</id></prospect></ADF>"),
            Some("malformed_xml")
        );
        assert_eq!(refused(b"<adf/>"), Some("malformed_xml"));
        assert_eq!(
            refused(br#"<adf><prospect status="old"><id>1</id></prospect></adf>"#),
            Some("invalid prospect status")
        );
    }
}
