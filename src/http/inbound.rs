//! `POST /events/inbound/{upstream}`: change events a vendor pushes (the
//! shape of CDK/Fortellis Event Relay: `Fortellis-Event-Id`, `X-Request-Id`,
//! a JSON body, 202 as the quick acknowledgement, anything else redelivered).
//! An event is not trusted for what changed: a new one asks the inventory
//! mirror for one fresh read of each dealership the upstream serves, and the
//! answer does not wait for it. Checks in order: an upstream that takes
//! inbound events (404), the body within `max_body` (413), the secret as a
//! bearer token or a body signature, or a Standard Webhooks signature over
//! the id, a recent timestamp and the body (401), an event id and a JSON
//! body (400); an id seen before is answered 202 and does nothing more; a
//! body seen before under another id is a replay (409, nothing read); an id
//! that cannot be recorded is 503, so the vendor sends it again.

use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::BytesMut;
use futures::StreamExt;
use serde_json::{Value, json};

use sha2::{Digest, Sha256};

use crate::config::InboundSigning;
use crate::gateway::Gateway;
use crate::mirror::InboundSink;
use crate::mirror::inbound::SignedHeaders;
use crate::store::inbound::Recorded;

/// Longest event id kept (Fortellis sends UUIDs).
const MAX_EVENT_ID: usize = 256;
/// Longest text taken from headers or the body into a log line.
const MAX_LOGGED: usize = 128;

#[derive(Clone)]
struct Inbound {
    gateway: Gateway,
    body_read_timeout: Duration,
}

/// The inbound route; a body has `body_read_timeout` to arrive.
pub(super) fn routes(gateway: Gateway, body_read_timeout: Duration) -> Router {
    Router::new()
        .route("/events/inbound/{upstream}", post(receive))
        .with_state(Inbound {
            gateway,
            body_read_timeout,
        })
}

/// What happened to an authenticated, well-formed event.
enum Taken {
    Accepted,
    Duplicate,
}

/// `Fortellis-Event-Id`, or `webhook-id` for Standard Webhooks.
const FORTELLIS_EVENT_ID: &str = "fortellis-event-id";

/// Why an event was not taken.
enum Refusal {
    UnknownUpstream,
    TooLarge,
    Late,
    Unreadable,
    Unauthorized,
    Invalid(&'static str),
    /// Its body came before under another event id.
    Replayed,
    NotRecorded,
}

async fn receive(
    State(inbound): State<Inbound>,
    Path(upstream): Path<String>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let metrics = inbound.gateway.metrics();
    let refusal = match take(&inbound, &upstream, &parts.headers, body).await {
        Ok(taken) => {
            let status = match taken {
                Taken::Accepted => "accepted",
                Taken::Duplicate => "duplicate",
            };
            metrics.record_inbound(&upstream, status);
            let body = axum::Json(json!({ "status": status }));
            return (StatusCode::ACCEPTED, body).into_response();
        }
        Err(refusal) => refusal,
    };
    let (status, outcome, message) = refusal.answer();
    // An upstream that takes no events is not counted: anyone can name one.
    if !matches!(refusal, Refusal::UnknownUpstream) {
        tracing::warn!(
            upstream,
            request_id = logged(header_text(&parts.headers, "x-request-id")),
            outcome,
            "Refused an inbound vendor event."
        );
        metrics.record_inbound(&upstream, outcome);
    }
    let mut response = (status, axum::Json(json!({ "error": message }))).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Bearer realm="dms-bridge-inbound""#),
        );
    }
    response
}

impl Refusal {
    /// The status, the metric's outcome and the message.
    fn answer(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            Self::UnknownUpstream => (
                StatusCode::NOT_FOUND,
                "unknown",
                "no upstream takes inbound events here",
            ),
            Self::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                "the event is larger than this endpoint accepts",
            ),
            Self::Late => (
                StatusCode::REQUEST_TIMEOUT,
                "invalid",
                "the event body did not arrive in time",
            ),
            Self::Unreadable => (
                StatusCode::BAD_REQUEST,
                "invalid",
                "the event body could not be read",
            ),
            Self::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid bearer secret or X-Signature is required",
            ),
            Self::Invalid(message) => (StatusCode::BAD_REQUEST, "invalid", message),
            Self::Replayed => (
                StatusCode::CONFLICT,
                "replayed",
                "this event body was received before under another event id",
            ),
            Self::NotRecorded => (
                StatusCode::SERVICE_UNAVAILABLE,
                "failed",
                "the event could not be recorded; deliver it again",
            ),
        }
    }
}

/// The checks in order, then the record and the request for a read.
async fn take(
    inbound: &Inbound,
    upstream: &str,
    headers: &HeaderMap,
    body: Body,
) -> Result<Taken, Refusal> {
    let mirror = &inbound.gateway.services().mirror;
    let sink = mirror.inbound(upstream).ok_or(Refusal::UnknownUpstream)?;
    let body = read_body(headers, body, sink.max_body, inbound.body_read_timeout).await?;
    let id_header = match sink.signing {
        InboundSigning::Body => FORTELLIS_EVENT_ID,
        InboundSigning::StandardWebhooks => "webhook-id",
    };
    let event_id = header_text(headers, id_header)
        .map(str::trim)
        .filter(|id| !id.is_empty() && id.len() <= MAX_EVENT_ID);
    authenticate(&sink, headers, event_id, &body)?;
    let event_id = event_id.ok_or(Refusal::Invalid("an event id header is required"))?;
    let event: Value = serde_json::from_slice(&body)
        .map_err(|_| Refusal::Invalid("the event body is not JSON"))?;
    let recorded = crate::store::inbound::record(
        inbound.gateway.store(),
        upstream,
        event_id,
        &hex::encode(Sha256::digest(&body)),
        chrono::Utc::now(),
    )
    .await
    .map_err(|e| {
        tracing::error!(upstream, event_id, error = %e, "Cannot record an inbound vendor event.");
        Refusal::NotRecorded
    })?;
    log_event(upstream, event_id, headers, &event, recorded);
    match recorded {
        Recorded::New => {}
        Recorded::SeenId => return Ok(Taken::Duplicate),
        Recorded::SeenBody => return Err(Refusal::Replayed),
    }
    for dealership in &sink.dealerships {
        if !mirror.request_sync(dealership) {
            tracing::debug!(dealership, "An inbound event's dealership is not mirrored.");
        }
    }
    Ok(Taken::Accepted)
}

/// The body, refused past `limit` (by its declared length before reading it,
/// and while reading, without keeping more than `limit` bytes).
async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, Refusal> {
    let declared =
        header_text(headers, header::CONTENT_LENGTH.as_str()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(Refusal::TooLarge);
    }
    let read = async {
        let mut chunks = body.into_data_stream();
        let mut collected = BytesMut::new();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|_| Refusal::Unreadable)?;
            if chunk.len() > limit.saturating_sub(collected.len()) {
                return Err(Refusal::TooLarge);
            }
            collected.extend_from_slice(&chunk);
        }
        Ok(collected.freeze())
    };
    tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| Refusal::Late)?
}

fn authenticate(
    sink: &InboundSink,
    headers: &HeaderMap,
    event_id: Option<&str>,
    body: &[u8],
) -> Result<(), Refusal> {
    let authentic = match sink.signing {
        InboundSigning::Body => {
            let authorization = header_text(headers, header::AUTHORIZATION.as_str());
            let signature = header_text(headers, "x-signature");
            sink.authenticates(authorization, signature, body)
        }
        InboundSigning::StandardWebhooks => {
            let signed = event_id
                .zip(header_text(headers, "webhook-timestamp"))
                .zip(header_text(headers, "webhook-signature"))
                .map(|((id, timestamp), signature)| SignedHeaders {
                    id,
                    timestamp,
                    signature,
                });
            signed.is_some_and(|signed| {
                sink.verifies_standard(&signed, body, chrono::Utc::now().timestamp())
            })
        }
    };
    if authentic {
        Ok(())
    } else {
        Err(Refusal::Unauthorized)
    }
}

/// What an event says about itself, for the log: ids and its type, never
/// the body (it may carry customer data).
fn log_event(
    upstream: &str,
    event_id: &str,
    headers: &HeaderMap,
    event: &Value,
    recorded: Recorded,
) {
    let event_type = event.get("eventType").and_then(Value::as_str);
    let data = event.get("data");
    let unit = data
        .and_then(|d| d.get("vehicleId").or_else(|| d.get("id")))
        .and_then(Value::as_str);
    tracing::info!(
        upstream,
        event_id,
        request_id = logged(header_text(headers, "x-request-id")),
        event_type = logged(event_type),
        unit = logged(unit),
        seen = match recorded {
            Recorded::New => "new",
            Recorded::SeenId => "id",
            Recorded::SeenBody => "body",
        },
        "Inbound vendor event."
    );
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Vendor-supplied text cut to a loggable length, control characters dropped.
fn logged(text: Option<&str>) -> String {
    text.unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_LOGGED)
        .collect()
}
