//! Tool results over HTTP as the bytes the pipeline already made.
//!
//! A tool result is serialized once, in the pipeline, and a cached result keeps
//! that text. Handing rmcp the result as a `serde_json::Value` would make every
//! call copy the tree, serialize it again and escape it again for the text
//! block: on a cached 20-vehicle search that was most of the bridge's work.
//! Instead the handler gives rmcp two placeholders and leaves the result in a
//! per-request slot, and this layer writes the result's bytes in place of the
//! placeholders in rmcp's (small) JSON answer. The answer goes out as pieces:
//! rmcp's text around the placeholders and the payload's own bytes, which
//! hyper writes in one vectored write, so not even the answer is copied. rmcp
//! still does all the protocol work: header checks, ids, versions, errors,
//! `_meta`.
//!
//! Placeholders carry a random per-process nonce, so no caller or upstream text
//! can pose as one. They are only handed out where this layer is sure to see
//! the answer as one JSON body: HTTP, and no progress token (progress turns the
//! answer into an event stream).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use serde_json::Value;

use crate::contract::Payload;

/// The placeholders' text, and the same as they appear in an answer: the
/// structured one as a one-key object (rmcp drops structured content that is
/// not an object for peers older than 2026-07-28), the text one as a string.
struct Markers {
    structured: String,
    text: String,
    structured_json: String,
    text_json: String,
}

static MARKERS: LazyLock<Markers> = LazyLock::new(|| {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let structured = format!("dms-bridge-splice-{nonce}-structured");
    let text = format!("dms-bridge-splice-{nonce}-text");
    Markers {
        structured_json: format!("{{\"{structured}\":0}}"),
        text_json: format!("\"{text}\""),
        structured,
        text,
    }
});

/// Where the handler leaves a result for this layer; one per HTTP request.
#[derive(Debug, Clone, Default)]
pub struct SpliceSlot(Arc<Mutex<Option<Payload>>>);

impl SpliceSlot {
    /// Keeps `payload` for the answer and returns the structured content and
    /// text to give rmcp instead.
    pub fn hold(&self, payload: Payload) -> (Value, String) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(payload);
        }
        let mut structured = serde_json::Map::new();
        structured.insert(MARKERS.structured.clone(), Value::from(0));
        (Value::Object(structured), MARKERS.text.clone())
    }

    fn take(&self) -> Option<Payload> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// The layer: gives each request a slot, and splices what the handler held.
pub async fn splice_answers(mut request: Request, next: Next) -> Response {
    let slot = SpliceSlot::default();
    request.extensions_mut().insert(slot.clone());
    let response = next.run(request).await;
    match slot.take() {
        None => response,
        Some(payload) => splice(response, &payload).await,
    }
}

async fn splice(response: Response, payload: &Payload) -> Response {
    let (mut parts, body) = response.into_parts();
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) if is_json => bytes,
        Ok(_) => return broken("the answer was not one JSON body"),
        Err(e) => {
            tracing::error!(error = %e, "Could not read rmcp's answer.");
            return broken("the answer could not be read");
        }
    };
    let Some(pieces) = replace_markers(&bytes, payload) else {
        // rmcp answered without the result (an error of its own): nothing to put in.
        return Response::from_parts(parts, Body::from(bytes));
    };
    // The body's exact size goes out as Content-Length.
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::new(Pieces::new(pieces)))
}

/// The answer with the result's JSON for the structured placeholder and its
/// quoted text for the text one, as pieces to write one after another: the
/// result's bytes are shared with the payload, never copied. `None` when
/// either placeholder is missing. Searched from the end: the result comes
/// after the caller's request id in rmcp's answer.
fn replace_markers(answer: &Bytes, payload: &Payload) -> Option<Vec<Bytes>> {
    let (structured, text) = (&MARKERS.structured_json, &MARKERS.text_json);
    let at_structured = rfind(answer, structured.as_bytes())?;
    let at_text = rfind(answer, text.as_bytes())?;
    let mut places = [
        (at_structured, structured.len(), payload.text_bytes()),
        (at_text, text.len(), payload.quoted_text()),
    ];
    places.sort_by_key(|(at, _, _)| *at);
    let mut pieces = Vec::with_capacity(2 * places.len() + 1);
    let mut from = 0;
    for (at, len, with) in places {
        // Two whole JSON strings never overlap; checked so a slice cannot panic.
        if at < from {
            return None;
        }
        pieces.push(answer.slice(from..at));
        pieces.push(with);
        from = at + len;
    }
    pieces.push(answer.slice(from..));
    Some(pieces)
}

/// Where `needle` last starts in `haystack`. rmcp's answer around the
/// placeholders is a few hundred bytes, so a plain scan is enough.
fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// A body written as a few shared pieces, with its exact length known up front.
struct Pieces(VecDeque<Bytes>);

impl Pieces {
    fn new(pieces: Vec<Bytes>) -> Self {
        Self(pieces.into_iter().filter(|p| !p.is_empty()).collect())
    }
}

impl http_body::Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.iter().map(|p| p.len() as u64).sum())
    }
}

/// The handler's result is held but the answer cannot carry it. Not expected:
/// placeholders are only handed out for answers this layer can rewrite.
fn broken(why: &str) -> Response {
    tracing::error!(
        why,
        "A held tool result could not be written into the answer."
    );
    // A &str body already says text/plain; charset=utf-8.
    (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn markers_become_the_result_and_its_quoted_text() {
        let payload =
            Payload::serialize(&json!({ "vehicles": [{ "make": "Ford \"Built\" <Tough>" }] }))
                .unwrap();
        let slot = SpliceSlot::default();
        let (structured, text) = slot.hold(payload.clone());
        // A caller-chosen id that looks like a marker must not be touched.
        let answer = json!({
            "jsonrpc": "2.0", "id": text.clone(),
            "result": { "content": [{ "type": "text", "text": text }], "structuredContent": structured, "isError": false }
        })
        .to_string();
        let pieces = replace_markers(&Bytes::from(answer), &slot.take().unwrap()).unwrap();
        // The result's bytes are the payload's own, not a copy.
        assert!(pieces.iter().any(|p| p.as_ptr() == payload.text().as_ptr()));
        let body = Pieces::new(pieces);
        let announced = http_body::Body::size_hint(&body).exact().unwrap();
        let spliced = axum::body::to_bytes(Body::new(body), usize::MAX)
            .await
            .unwrap();
        assert_eq!(spliced.len() as u64, announced);
        let parsed: Value = serde_json::from_slice(&spliced).unwrap();
        assert_eq!(parsed["result"]["structuredContent"], *payload.value());
        assert_eq!(parsed["result"]["content"][0]["text"], payload.text());
        assert_eq!(parsed["id"], MARKERS.text.as_str());
    }

    #[test]
    fn an_answer_without_markers_is_left_alone() {
        let payload = Payload::serialize(&json!({ "n": 1 })).unwrap();
        let answer = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"error":{}}"#);
        assert!(replace_markers(&answer, &payload).is_none());
    }
}
