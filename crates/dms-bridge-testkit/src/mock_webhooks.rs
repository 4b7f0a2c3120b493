//! A webhook receiver for the demo and tests, as a Standard Webhooks consumer
//! runs one: `POST /webhooks` checks `webhook-signature` (HMAC-SHA256 of
//! `{webhook-id}.{webhook-timestamp}.{body}` under the `whsec_` secret's
//! bytes) and the timestamp's age, records the delivery, and answers 204; it
//! can be told to fail requests. `GET /webhooks/deliveries` lists what it
//! received, repeats (same `webhook-id`) marked.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;

/// A signed request older or newer than this is refused (as the spec advises).
const TOLERANCE_SECS: i64 = 5 * 60;

/// One request the receiver took (answered 2xx).
#[derive(Debug, Clone, Serialize)]
pub struct Delivery {
    /// `webhook-id`: the event id.
    pub id: String,
    pub timestamp: i64,
    pub signature: String,
    /// The raw body as sent.
    pub body: String,
    /// Another delivery with this id came before.
    pub repeat: bool,
    pub received_at: DateTime<Utc>,
}

#[derive(Clone)]
pub struct MockWebhooks {
    inner: Arc<Inner>,
}

struct Inner {
    key: Vec<u8>,
    fail_every: AtomicUsize,
    /// Event ids whose every request fails.
    fail_ids: Mutex<BTreeSet<String>>,
    requests: AtomicUsize,
    refused_signatures: AtomicUsize,
    deliveries: Mutex<Vec<Delivery>>,
}

impl MockWebhooks {
    /// A receiver for the endpoint secret `whsec_<base64>`; `None` if it is not one.
    pub fn new(secret: &str) -> Option<Self> {
        let key = base64::engine::general_purpose::STANDARD
            .decode(secret.strip_prefix("whsec_")?)
            .ok()?;
        Some(Self {
            inner: Arc::new(Inner {
                key,
                fail_every: AtomicUsize::new(0),
                fail_ids: Mutex::new(BTreeSet::new()),
                requests: AtomicUsize::new(0),
                refused_signatures: AtomicUsize::new(0),
                deliveries: Mutex::new(Vec::new()),
            }),
        })
    }

    pub fn router(&self) -> Router {
        Router::new()
            .route("/webhooks", post(receive))
            .route("/webhooks/deliveries", get(list))
            .with_state(self.clone())
    }

    /// Fail every `n`th request with 500 (`2` fails half; `0` fails none).
    pub fn fail_every(&self, n: usize) {
        self.inner.fail_every.store(n, Ordering::SeqCst);
    }

    /// Fail every request for the event `id` with 500.
    pub fn fail_event(&self, id: &str) {
        if let Ok(mut ids) = self.inner.fail_ids.lock() {
            ids.insert(id.to_owned());
        }
    }

    /// Stop failing: every request from now on is taken (signatures allowing).
    pub fn clear_failures(&self) {
        self.inner.fail_every.store(0, Ordering::SeqCst);
        if let Ok(mut ids) = self.inner.fail_ids.lock() {
            ids.clear();
        }
    }

    /// Deliveries taken, repeats included, in the order they came.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.inner
            .deliveries
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default()
    }

    /// Requests seen, failed ones included.
    pub fn requests(&self) -> usize {
        self.inner.requests.load(Ordering::SeqCst)
    }

    /// Requests refused for a missing or wrong signature or a stale timestamp.
    pub fn refused_signatures(&self) -> usize {
        self.inner.refused_signatures.load(Ordering::SeqCst)
    }

    /// Whether `signature` (a `webhook-signature` value, possibly several
    /// space-separated `v1,…`) signs `id`, `timestamp` and `body` under this key.
    pub fn verifies(&self, id: &str, timestamp: &str, body: &[u8], signature: &str) -> bool {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.inner.key) else {
            return false;
        };
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        let expected = mac.finalize().into_bytes();
        signature.split(' ').any(|s| {
            s.strip_prefix("v1,")
                .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
                .is_some_and(|given| given.as_slice() == expected.as_slice())
        })
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

async fn receive(State(hooks): State<MockWebhooks>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let n = hooks.inner.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let (id, timestamp, signature) = (
        header(&headers, "webhook-id"),
        header(&headers, "webhook-timestamp"),
        header(&headers, "webhook-signature"),
    );
    let fresh = timestamp
        .parse::<i64>()
        .is_ok_and(|t| (Utc::now().timestamp() - t).abs() <= TOLERANCE_SECS);
    if !fresh || !hooks.verifies(id, timestamp, &body, signature) {
        hooks
            .inner
            .refused_signatures
            .fetch_add(1, Ordering::SeqCst);
        return StatusCode::UNAUTHORIZED;
    }
    let every = hooks.inner.fail_every.load(Ordering::SeqCst);
    let failing_id = hooks
        .inner
        .fail_ids
        .lock()
        .is_ok_and(|ids| ids.contains(id));
    if failing_id || (every > 0 && n % every == 0) {
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    let Ok(mut deliveries) = hooks.inner.deliveries.lock() else {
        return StatusCode::INTERNAL_SERVER_ERROR;
    };
    let repeat = deliveries.iter().any(|d| d.id == id);
    deliveries.push(Delivery {
        id: id.to_owned(),
        timestamp: timestamp.parse().unwrap_or_default(),
        signature: signature.to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
        repeat,
        received_at: Utc::now(),
    });
    StatusCode::NO_CONTENT
}

async fn list(State(hooks): State<MockWebhooks>) -> Json<serde_json::Value> {
    let deliveries = hooks.deliveries();
    Json(serde_json::json!({
        "requests": hooks.requests(),
        "refused_signatures": hooks.refused_signatures(),
        "deliveries": deliveries,
    }))
}
