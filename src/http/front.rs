//! The HTTP rules checked in front of rmcp's Streamable HTTP service, where
//! rmcp's own checks are missing or too loose:
//!
//! - [`http_rules`] (every route): one `Host` header (RFC 9112 §3.2), an
//!   absolute-form target that names the same authority as `Host`, and
//!   `Connection: close` on any answer given before the request body was read
//!   to its end, so a pooled client does not reuse a connection hyper is about
//!   to close.
//! - [`check_host_and_origin`] (MCP path): `Host` (or an absolute-form
//!   target's authority) and `Origin` parsed strictly, scheme, host and a
//!   numeric port, before rmcp's looser check (rmcp reads a port it cannot
//!   parse as no port, so `http://127.0.0.1:8080.evil.example` matched
//!   `http://127.0.0.1:*`).
//! - [`read_jsonrpc`] (MCP path, after authentication): the body read within
//!   `server.body_read_timeout` and `server.max_request_bytes`, then checked
//!   as JSON-RPC, so a bad body gets a JSON-RPC error (-32700, -32600, -32602)
//!   rather than rmcp's 415 with a text body or -32601.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use http_body::{Body as _, Frame, SizeHint};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestId};
use serde_json::{Value, json};

/// JSON-RPC 2.0 error codes answered here.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const METHOD_NOT_FOUND: i32 = -32601;
const INVALID_PARAMS: i32 = -32602;

/// The MCP request methods rmcp knows. rmcp reads a request whose params do not
/// fit its method's type as a custom request, and answers -32601 Method not
/// found; for these methods the right answer is -32602 Invalid params.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

// === Every route ===

/// One `Host`; an absolute-form target naming the `Host` authority; and
/// `Connection: close` on an answer given before the body was read to its end.
pub async fn http_rules(request: Request, next: Next) -> Response {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return bad_request("Bad Request: more than one Host header");
    }
    if let Some(target) = request.uri().authority() {
        // RFC 9112 §3.2.2 has the target's authority win over Host; one that
        // disagrees with Host is refused rather than guessed at.
        let same = host.is_some_and(|h| {
            h.as_bytes()
                .eq_ignore_ascii_case(target.as_str().as_bytes())
        });
        if !same {
            return bad_request("Bad Request: the request target names another host than Host");
        }
    }
    let (parts, body) = request.into_parts();
    let (body, read) = if body.is_end_stream() {
        (body, None)
    } else {
        let read = Arc::new(AtomicBool::new(false));
        (
            Body::new(Tracked {
                inner: body,
                read: read.clone(),
            }),
            Some(read),
        )
    };
    let mut response = next.run(Request::from_parts(parts, body)).await;
    if read.is_some_and(|r| !r.load(Ordering::Acquire)) {
        // hyper closes a connection whose request body was left unread; say so,
        // or a pooled client sends its next request into a closed socket.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A request body that records when it has been read to its end.
struct Tracked {
    inner: Body,
    read: Arc<AtomicBool>,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.read.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

// === The MCP path ===

/// What the MCP path's checks need from config.
#[derive(Debug, Clone)]
pub struct McpFront {
    allowed_hosts: Vec<AllowedHost>,
    /// `None`: an `Origin` entry that could not be read; it matches nothing.
    allowed_origins: Vec<Option<AllowedOrigin>>,
    max_request_bytes: usize,
    body_read_timeout: Duration,
}

impl McpFront {
    pub fn new(
        allowed_hosts: &[String],
        allowed_origins: &[String],
        max_request_bytes: usize,
        body_read_timeout: Duration,
    ) -> Self {
        Self {
            allowed_hosts: allowed_hosts
                .iter()
                .filter_map(|h| AllowedHost::parse(h))
                .collect(),
            allowed_origins: allowed_origins
                .iter()
                .map(|o| AllowedOrigin::parse(o))
                .collect(),
            max_request_bytes,
            body_read_timeout,
        }
    }

    fn host_allowed(&self, host: &Authority) -> bool {
        // As rmcp: an empty list allows every host.
        self.allowed_hosts.is_empty()
            || self
                .allowed_hosts
                .iter()
                .any(|a| a.host == host.host && a.port.is_none_or(|p| host.port == Some(p)))
    }

    fn origin_allowed(&self, origin: &Origin) -> bool {
        self.allowed_origins
            .iter()
            .flatten()
            .any(|allowed| allowed.matches(origin))
    }
}

/// The authority a request names: an absolute-form target's, else `Host`'s.
fn authority_of(request: &Request) -> Option<&str> {
    match request.uri().authority() {
        Some(target) => Some(target.as_str()),
        None => request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok()),
    }
}

/// `Host` (or an absolute-form target's authority) and `Origin`, strictly.
/// Every `Origin` is checked, so an empty `allowed_origins` refuses them all.
pub async fn check_host_and_origin(
    State(front): State<Arc<McpFront>>,
    request: Request,
    next: Next,
) -> Response {
    let authority = authority_of(&request);
    let Some(authority) = authority else {
        return bad_request("Bad Request: missing or unreadable Host header");
    };
    let Some(host) = Authority::parse(authority) else {
        tracing::warn!(host = authority, "Refused a request with a malformed Host.");
        return bad_request("Bad Request: Invalid Host header");
    };
    if !front.host_allowed(&host) {
        tracing::warn!(
            host = authority,
            "Refused a request for a host not in server.allowed_hosts."
        );
        return forbidden("Forbidden: Host header is not allowed", "host_not_allowed");
    }
    let mut origins = request.headers().get_all(header::ORIGIN).iter();
    if let Some(value) = origins.next() {
        if origins.next().is_some() {
            return forbidden(
                "Forbidden: more than one Origin header",
                "origin_not_allowed",
            );
        }
        let origin = value.to_str().ok().and_then(Origin::parse);
        if !origin.is_some_and(|o| front.origin_allowed(&o)) {
            tracing::warn!(origin = ?value, "Refused a request from an Origin not in server.allowed_origins.");
            return forbidden(
                "Forbidden: Origin header is not allowed",
                "origin_not_allowed",
            );
        }
    }
    next.run(request).await
}

// === Every other route ===

/// The operator's and vendors' routes (`/healthz`, `/readyz`, `/metrics`,
/// the protected resource metadata, inbound events): the `Host` must be one
/// of `server.allowed_hosts`, or an IP address. A DNS-rebinding page reaches
/// the bridge under a name of its own, never an IP literal, so a probe or a
/// scraper that addresses the pod by its IP still gets in, and a web page on
/// the operator's network does not read dealership, upstream and webhook
/// names off `/metrics`.
pub async fn check_host(
    State(front): State<Arc<McpFront>>,
    request: Request,
    next: Next,
) -> Response {
    let authority = authority_of(&request);
    let Some(host) = authority.and_then(Authority::parse) else {
        return bad_request("Bad Request: missing or unreadable Host header");
    };
    let ip_literal = host.host.parse::<std::net::IpAddr>().is_ok();
    if !ip_literal && !front.host_allowed(&host) {
        tracing::warn!(
            host = host.host,
            path = request.uri().path(),
            "Refused a request for a host not in server.allowed_hosts."
        );
        return forbidden("Forbidden: Host header is not allowed", "host_not_allowed");
    }
    next.run(request).await
}

/// Reads a JSON POST's body within the deadline and size limit, and answers a
/// body that is not a JSON-RPC message rmcp can serve with the JSON-RPC error
/// for it. Other requests go to rmcp untouched, body unread (it answers 405,
/// 406, 415 without reading it).
pub async fn read_jsonrpc(
    State(front): State<Arc<McpFront>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST
        || !is_json(request.headers())
        || !may_accept_json_and_sse(request.headers())
    {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_within_limits(&front, &parts, body).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    if let Some(refusal) = removed_in_this_era(&parts.headers, &bytes) {
        return refusal;
    }
    if let Some(refusal) = check_message(&bytes) {
        return refusal;
    }
    let mut parts = parts;
    parts.extensions.insert(ReadBody(bytes.clone()));
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// A request body this front has read (within its limits) and checked as a
/// JSON-RPC message: what later layers may look at. A request without it
/// carries a body no one here has read, and none may read it: rmcp refuses
/// such requests (405, 406, 415) without reading their bodies.
#[derive(Debug, Clone)]
pub struct ReadBody(pub Bytes);

/// The body of a request, read within `server.body_read_timeout` and
/// `server.max_request_bytes`, or the JSON-RPC refusal for one that is late,
/// too large or broken.
async fn read_within_limits(
    front: &McpFront,
    parts: &axum::http::request::Parts,
    body: Body,
) -> Result<Bytes, Response> {
    let limit = front.max_request_bytes;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large(limit));
    }
    match tokio::time::timeout(front.body_read_timeout, read_body(body, limit)).await {
        Err(_) => {
            tracing::info!(
                timeout = ?front.body_read_timeout,
                "A request body did not arrive in time; closing the connection."
            );
            Err(closing(jsonrpc_error(
                StatusCode::REQUEST_TIMEOUT,
                None,
                INVALID_REQUEST,
                "Request Timeout: the request body did not arrive in time",
                None,
            )))
        }
        Ok(Err(ReadError::TooLarge)) => Err(too_large(limit)),
        Ok(Err(ReadError::Broken)) => Err(closing(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            None,
            INVALID_REQUEST,
            "Bad Request: the request body could not be read",
            None,
        ))),
        Ok(Ok(bytes)) => Ok(bytes),
    }
}

/// A JSON-RPC POST's body for a route that parses the message itself (the
/// AAP door), read under the same limits as MCP's. A body that is not
/// declared JSON gets 415.
pub async fn read_json_body(
    State(front): State<Arc<McpFront>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    if !is_json(request.headers()) {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: send application/json",
        )
            .into_response();
    }
    let (mut parts, body) = request.into_parts();
    let bytes = match read_within_limits(&front, &parts, body).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    parts.extensions.insert(ReadBody(bytes.clone()));
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// 404 with -32601 for a method the request's own protocol revision removed
/// (see [`super::era`]).
fn removed_in_this_era(headers: &HeaderMap, bytes: &[u8]) -> Option<Response> {
    if !super::era::may_be_stateless_era(headers, bytes) {
        return None;
    }
    let value = serde_json::from_slice::<Value>(bytes).ok()?;
    if !super::era::removed_method(headers, &value) {
        return None;
    }
    let id = serde_json::from_value::<RequestId>(value.get("id")?.clone()).ok();
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Some(jsonrpc_error(
        StatusCode::NOT_FOUND,
        id.as_ref(),
        METHOD_NOT_FOUND,
        &format!("Method not found: {method} (removed in MCP 2026-07-28)"),
        None,
    ))
}

/// The essence `application/json`, as rmcp checks it.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// Whether `Accept` names both media types rmcp requires. Looser than rmcp's
/// own reading (which also weighs `q=0`): a body is never left unread for an
/// answer rmcp would give without it, only read for one it gives after.
fn may_accept_json_and_sse(headers: &HeaderMap) -> bool {
    let mut json = false;
    let mut sse = false;
    for value in headers.get_all(header::ACCEPT) {
        let value = String::from_utf8_lossy(value.as_bytes()).to_ascii_lowercase();
        json |= value.contains("application/json");
        sse |= value.contains("text/event-stream");
    }
    json && sse
}

enum ReadError {
    TooLarge,
    Broken,
}

async fn read_body(mut body: Body, limit: usize) -> Result<Bytes, ReadError> {
    let mut collected = BytesMut::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|_| ReadError::Broken)?;
        if let Ok(data) = frame.into_data() {
            if data.len() > limit.saturating_sub(collected.len()) {
                return Err(ReadError::TooLarge);
            }
            collected.extend_from_slice(&data);
        }
    }
    Ok(collected.freeze())
}

/// The refusal for a body rmcp would not serve right, if it is one: not JSON
/// (-32700), not a JSON-RPC message (-32600), or a request for a known method
/// whose params do not fit it (-32602).
fn check_message(bytes: &[u8]) -> Option<Response> {
    match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(ClientJsonRpcMessage::Request(request)) => {
            let ClientRequest::CustomRequest(custom) = &request.request else {
                return None;
            };
            if !KNOWN_METHODS.contains(&custom.method.as_str()) {
                return None;
            }
            let message = params_problem(&custom.method, custom.params.as_ref());
            Some(jsonrpc_error(
                StatusCode::OK,
                Some(&request.id),
                INVALID_PARAMS,
                &message,
                None,
            ))
        }
        Ok(_) => None,
        Err(e) => {
            let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
                return Some(jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    PARSE_ERROR,
                    "Parse error: the body is not valid JSON",
                    None,
                ));
            };
            // A well-formed request for a known method whose params rmcp could
            // not read at all (not an object, say): the params are at fault.
            if let Some((id, method)) = known_request(&value) {
                let message = params_problem(method, value.get("params"));
                return Some(jsonrpc_error(
                    StatusCode::OK,
                    Some(&id),
                    INVALID_PARAMS,
                    &message,
                    None,
                ));
            }
            Some(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                None,
                INVALID_REQUEST,
                "Invalid Request: the body is not a JSON-RPC 2.0 message",
                Some(json!({ "reason": crate::contract::redact::without_values(&e.to_string()) })),
            ))
        }
    }
}

/// The id and method of a JSON-RPC 2.0 request for a known method.
fn known_request(value: &Value) -> Option<(RequestId, &str)> {
    if value.get("jsonrpc")? != "2.0" {
        return None;
    }
    let method = value.get("method")?.as_str()?;
    if !KNOWN_METHODS.contains(&method) {
        return None;
    }
    let id = serde_json::from_value::<RequestId>(value.get("id")?.clone()).ok()?;
    Some((id, method))
}

/// What is wrong with a known method's params, by pointer and expected type
/// only: a caller's text (an `arguments` string, say) is never repeated.
fn params_problem(method: &str, params: Option<&Value>) -> String {
    // (pointer, JSON type wanted, required)
    let fields: &[(&str, &str, bool)] = match method {
        "tools/call" => &[
            ("/name", "a string", true),
            ("/arguments", "an object", false),
            ("/_meta", "an object", false),
        ],
        "resources/read" => &[("/uri", "a string", true), ("/_meta", "an object", false)],
        _ => &[],
    };
    let Some(params) = params.filter(|p| p.is_object()) else {
        return format!("Invalid params for {method}: params must be an object");
    };
    for (pointer, wanted, required) in fields {
        let fits = |v: &Value| match *wanted {
            "a string" => v.is_string(),
            _ => v.is_object(),
        };
        match params.pointer(pointer) {
            None | Some(Value::Null) if !required => {}
            None | Some(Value::Null) => {
                return format!("Invalid params for {method}: {pointer} is required ({wanted})");
            }
            Some(value) if !fits(value) => {
                return format!("Invalid params for {method}: {pointer} must be {wanted}");
            }
            Some(_) => {}
        }
    }
    format!("Invalid params for {method}")
}

fn jsonrpc_error(
    status: StatusCode,
    id: Option<&RequestId>,
    code: i32,
    message: &str,
    data: Option<Value>,
) -> Response {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": error });
    (status, axum::Json(body)).into_response()
}

/// An answer given with the body partly unread: the connection cannot carry
/// another request, and the client is told so.
fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn too_large(limit: usize) -> Response {
    closing(jsonrpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        None,
        INVALID_REQUEST,
        &format!("Payload Too Large: the request body exceeds {limit} bytes"),
        None,
    ))
}

/// A request whose Host (or target) cannot be read: every 400 here is one.
fn bad_request(message: &'static str) -> Response {
    super::refusals::mark(
        (StatusCode::BAD_REQUEST, message).into_response(),
        "host_invalid",
    )
}

/// A refusal of the Host or Origin rule; `class` names it in the audit trail.
fn forbidden(message: &'static str, class: &'static str) -> Response {
    super::refusals::mark((StatusCode::FORBIDDEN, message).into_response(), class)
}

// === Strict authority and origin parsing ===

/// A host (lower case, IPv6 without brackets) and an optional port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    /// `host`, `host:port`, `[v6]` or `[v6]:port`; the port is 1 to 5 digits
    /// that fit a u16; the host an IPv4 address or a name of letters, digits,
    /// `-`, `.` and `_`. No user info, nothing after the port.
    fn parse(s: &str) -> Option<Self> {
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (v6, after) = rest.split_once(']')?;
            v6.parse::<std::net::Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?),
            };
            (v6.to_ascii_lowercase(), port)
        } else {
            let (host, port) = match s.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (s, None),
            };
            let name_like = !host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
            if !name_like {
                return None;
            }
            (host.to_ascii_lowercase(), port)
        };
        let port = match port {
            None => None,
            Some(p) => Some(parse_port(p)?),
        };
        Some(Self { host, port })
    }
}

fn parse_port(p: &str) -> Option<u16> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse().ok()
}

/// An `allowed_hosts` entry: `name`, `name:port`, `::1`, `[::1]:port`.
#[derive(Debug, Clone)]
struct AllowedHost {
    host: String,
    port: Option<u16>,
}

impl AllowedHost {
    fn parse(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        if let Ok(v6) = entry.parse::<std::net::Ipv6Addr>() {
            return Some(Self {
                host: v6.to_string(),
                port: None,
            });
        }
        Authority::parse(entry).map(|a| Self {
            host: normalize_v6(a.host),
            port: a.port,
        })
    }
}

/// IPv6 hosts compared in one spelling.
fn normalize_v6(host: String) -> String {
    match host.parse::<std::net::Ipv6Addr>() {
        Ok(v6) => v6.to_string(),
        Err(_) => host,
    }
}

/// A browser `Origin`: `null`, or `scheme://host[:port]` and nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origin {
    fn parse(s: &str) -> Option<Self> {
        if s.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        let (scheme, rest) = s.split_once("://")?;
        let scheme_ok = scheme
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if !scheme_ok {
            return None;
        }
        let authority = Authority::parse(rest)?;
        Some(Self::Tuple {
            scheme: scheme.to_ascii_lowercase(),
            host: normalize_v6(authority.host),
            port: authority.port,
        })
    }

    /// The port, or the scheme's default port when the origin names none (RFC 6454 §4).
    fn effective_port(scheme: &str, port: Option<u16>) -> Option<u16> {
        port.or(match scheme {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            _ => None,
        })
    }
}

/// An `allowed_origins` entry: `null`, `scheme://host:*` (any port),
/// `scheme://host:port`, or `scheme://host` (the scheme's default port).
#[derive(Debug, Clone)]
struct AllowedOrigin {
    origin: Origin,
    any_port: bool,
}

impl AllowedOrigin {
    fn parse(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        match entry.strip_suffix(":*") {
            Some(base) => match Origin::parse(base)? {
                origin @ Origin::Tuple { port: None, .. } => Some(Self {
                    origin,
                    any_port: true,
                }),
                _ => None,
            },
            None => Origin::parse(entry).map(|origin| Self {
                origin,
                any_port: false,
            }),
        }
    }

    fn matches(&self, origin: &Origin) -> bool {
        match (&self.origin, origin) {
            (Origin::Null, Origin::Null) => true,
            (
                Origin::Tuple {
                    scheme: a_scheme,
                    host: a_host,
                    port: a_port,
                },
                Origin::Tuple { scheme, host, port },
            ) => {
                a_scheme == scheme
                    && a_host == host
                    && (self.any_port
                        || Origin::effective_port(a_scheme, *a_port)
                            == Origin::effective_port(scheme, *port))
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front(origins: &[&str]) -> McpFront {
        McpFront::new(
            &[
                "localhost".into(),
                "127.0.0.1".into(),
                "::1".into(),
                "api.example:8443".into(),
            ],
            &origins.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
            1024,
            Duration::from_secs(1),
        )
    }

    #[test]
    fn origins_are_read_strictly() {
        let f = front(&[
            "http://127.0.0.1:*",
            "http://[::1]:*",
            "https://app.example",
            "null",
        ]);
        let allowed = |o: &str| Origin::parse(o).is_some_and(|o| f.origin_allowed(&o));
        assert!(allowed("http://127.0.0.1:8080"));
        assert!(allowed("http://127.0.0.1"));
        assert!(allowed("http://[::1]:3000"));
        assert!(allowed("https://app.example"));
        assert!(allowed("https://app.example:443"));
        assert!(allowed("null"));
        for refused in [
            "http://127.0.0.1:8080.evil.example",
            "http://127.0.0.1.evil.example:8080",
            "http://127.0.0.1:99999",
            "http://127.0.0.1:80:80",
            "http://user@127.0.0.1:80",
            "http://127.0.0.1:8080/",
            "https://127.0.0.1:8080",
            "https://app.example:8443",
            "http://app.example",
            "127.0.0.1:8080",
            "",
        ] {
            assert!(!allowed(refused), "{refused}");
        }
    }

    #[test]
    fn hosts_are_read_strictly() {
        let f = front(&[]);
        let allowed = |h: &str| Authority::parse(h).is_some_and(|a| f.host_allowed(&a));
        assert!(allowed("127.0.0.1:8787"));
        assert!(allowed("LOCALHOST"));
        assert!(allowed("[::1]:8787"));
        assert!(allowed("api.example:8443"));
        for refused in [
            "127.0.0.1:8787.evil.example",
            "127.0.0.1:",
            "evil.example",
            "api.example:443",
            "api.example",
            "user@127.0.0.1",
            "[::1",
            "[::2]:80",
        ] {
            assert!(!allowed(refused), "{refused}");
        }
    }

    #[test]
    fn bodies_get_the_jsonrpc_error_they_earn() {
        let code = |body: &str| check_message(body.as_bytes()).map(|r| r.status());
        assert_eq!(code("{"), Some(StatusCode::BAD_REQUEST));
        assert_eq!(
            code(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":NaN}}}"#
            ),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(code(r#"{"hello":"world"}"#), Some(StatusCode::BAD_REQUEST));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#),
            Some(StatusCode::OK)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}"#),
            Some(StatusCode::OK)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{},"method":"tools/call","params":"x"}"#),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            None
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"vendor/thing","params":{}}"#),
            None
        );
    }
}
