//! A dealer inventory feed server for the demo and tests: serves the HomeNet-
//! style CSV with ETag / Last-Modified and answers conditional requests with
//! 304. `POST /feeds/advance` switches to the next snapshot (three units sold,
//! one new arrival, one price change), as a dealer's nightly export would.
//! A Meta automotive inventory XML feed (one fixed version) is served the same
//! way at [`META_XML_PATH`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use tokio::sync::RwLock;

pub const SNAPSHOTS: [&str; 2] = [
    fixture!("feed/homenet-inventory.csv"),
    fixture!("feed/homenet-inventory-next.csv"),
];
pub const PATH: &str = "/feeds/homenet-inventory.csv";
/// A Meta (Facebook) automotive inventory ads feed, `<listings><listing>`.
pub const META_XML: &str = fixture!("feed-xml/meta-automotive-inventory.xml");
pub const META_XML_PATH: &str = "/feeds/meta-automotive-inventory.xml";

#[derive(Clone, Default)]
pub struct MockFeed {
    inner: Arc<FeedInner>,
}

#[derive(Default)]
struct FeedInner {
    version: AtomicUsize,
    modified: RwLock<Option<DateTime<Utc>>>,
    /// Full (200) answers served, for tests and the demo's log.
    full_reads: AtomicUsize,
}

impl MockFeed {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn router(&self) -> Router {
        Router::new()
            .route(PATH, get(serve))
            .route(META_XML_PATH, get(serve_meta_xml))
            .route("/feeds/advance", post(advance))
            .with_state(self.clone())
    }

    /// Moves to the next snapshot; returns the version now served.
    pub async fn advance(&self) -> usize {
        let next = (self.inner.version.load(Ordering::SeqCst) + 1).min(SNAPSHOTS.len() - 1);
        self.inner.version.store(next, Ordering::SeqCst);
        *self.inner.modified.write().await = Some(Utc::now());
        next
    }

    pub fn full_reads(&self) -> usize {
        self.inner.full_reads.load(Ordering::SeqCst)
    }
}

async fn advance(State(feed): State<MockFeed>) -> String {
    format!("serving snapshot {}\n", feed.advance().await)
}

async fn serve(State(feed): State<MockFeed>, headers: HeaderMap) -> Response {
    let body = SNAPSHOTS[feed.inner.version.load(Ordering::SeqCst)];
    respond(&feed, &headers, body, "text/csv; charset=utf-8").await
}

async fn serve_meta_xml(State(feed): State<MockFeed>, headers: HeaderMap) -> Response {
    respond(&feed, &headers, META_XML, "application/xml").await
}

/// One feed file with ETag / Last-Modified; `304` when `If-None-Match` matches.
async fn respond(
    feed: &MockFeed,
    headers: &HeaderMap,
    body: &'static str,
    content_type: &'static str,
) -> Response {
    let modified = {
        let mut m = feed.inner.modified.write().await;
        *m.get_or_insert_with(|| Utc::now() - chrono::Duration::minutes(5))
    };
    let etag = format!("\"{}\"", hex::encode(&Sha256::digest(body.as_bytes())[..8]));
    let last_modified = modified.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        == Some(etag.as_str())
    {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    feed.inner.full_reads.fetch_add(1, Ordering::SeqCst);
    let mut response = body.into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    for (name, value) in [(header::ETAG, etag), (header::LAST_MODIFIED, last_modified)] {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    response
}
