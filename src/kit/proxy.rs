//! A forwarding HTTP proxy on loopback, in front of one upstream origin: every
//! request the bridge sends to it (method, path, query, headers, body) goes to
//! the origin as it is, and the origin's answer comes back as it is. A [`Tap`]
//! sees each exchange (to record it, or to time it) and may answer in the
//! origin's place (to inject a fault), so the kit's commands share one proxy.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::body::Body;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::adapters::http::{MAX_BODY_BYTES, send};

mod observe;
pub use observe::{Observe, Observed, is_rate_limit_header};

/// A request as the bridge sent it.
#[derive(Debug, Clone)]
pub struct ProxyRequest {
    pub method: Method,
    pub path: String,
    /// The raw query string, without `?`.
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// An answer, from the origin or from a tap.
#[derive(Debug, Clone)]
pub struct ProxyResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// One request and its answer.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub request: ProxyRequest,
    pub response: ProxyResponse,
    pub started: SystemTime,
    /// From the request's arrival to the whole answer's.
    pub elapsed: Duration,
    /// The answer came from the tap, not the origin.
    pub substituted: bool,
}

/// What to do with a request, decided before it is forwarded.
#[derive(Debug, Clone)]
pub enum Verdict {
    Forward,
    /// Wait this long, then forward.
    Delay(Duration),
    /// Answer this instead of asking the origin.
    Answer(ProxyResponse),
    /// Close the connection without an answer.
    Reset,
    /// Forward, then send only this many bytes of the answer's body and
    /// close the connection (the declared length stays the whole body's).
    Truncate(usize),
}

/// Hooks around each exchange. `after` and `failed` run on a blocking
/// thread, before the answer goes back, so a tap may write files.
pub trait Tap: Send + Sync {
    fn before(&self, _request: &ProxyRequest) -> Verdict {
        Verdict::Forward
    }
    fn after(&self, _exchange: &Exchange) {}
    /// The origin could not be reached or its answer not read.
    fn failed(&self, _request: &ProxyRequest, _error: &str, _elapsed: Duration) {}
}

/// Why a proxy did not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("the proxy's target {0:?} is not an http(s) origin")]
    Target(String),
    #[error("binding the proxy to {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("building the proxy's HTTP client: {0}")]
    Client(String),
}

/// A running proxy; it stops when its cancellation token fires.
#[derive(Debug, Clone)]
pub struct Proxy {
    pub addr: SocketAddr,
    pub target: String,
}

struct State {
    /// `scheme://host:port`, no trailing slash.
    target: String,
    client: reqwest::Client,
    tap: Arc<dyn Tap>,
}

/// Starts a proxy on `listen` (port 0: any free port) forwarding to `target`
/// (`http(s)://host[:port]`, any path ignored).
pub async fn start(
    listen: SocketAddr,
    target: &str,
    tap: Arc<dyn Tap>,
    cancel: CancellationToken,
) -> Result<Proxy, ProxyError> {
    let url = url::Url::parse(target).map_err(|_| ProxyError::Target(target.to_owned()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(ProxyError::Target(target.to_owned()));
    }
    let origin = url.origin().ascii_serialization();
    // Redirects go back to the bridge as they are: following one here would
    // record an exchange the bridge never saw.
    let client = crate::net::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ProxyError::Client(e.to_string()))?;
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| ProxyError::Bind(listen, e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| ProxyError::Bind(listen, e))?;
    let state = Arc::new(State {
        target: origin.clone(),
        client,
        tap,
    });
    tokio::spawn(accept(listener, state, cancel));
    Ok(Proxy {
        addr,
        target: origin,
    })
}

async fn accept(listener: TcpListener, state: Arc<State>, cancel: CancellationToken) {
    loop {
        let stream = tokio::select! {
            _ = cancel.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "Proxy: accepting a connection failed.");
                    continue;
                }
            },
        };
        let state = state.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| handle(state.clone(), request));
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = conn => {}
                _ = cancel.cancelled() => {}
            }
        });
    }
}

/// Returned to hyper to close the connection without an answer.
#[derive(Debug, thiserror::Error)]
#[error("connection reset by the proxy's tap")]
struct Reset;

async fn handle(state: Arc<State>, request: Request<Incoming>) -> Result<Response<Body>, Reset> {
    let arrived = (Instant::now(), SystemTime::now());
    let request = match read_request(request).await {
        Ok(r) => r,
        Err(answer) => return Ok(answer),
    };
    let (response, truncate, substituted) = match state.tap.before(&request) {
        Verdict::Reset => return Err(Reset),
        Verdict::Answer(answer) => (Ok(answer), None, true),
        Verdict::Delay(wait) => {
            tokio::time::sleep(wait).await;
            (forward(&state, &request).await, None, false)
        }
        Verdict::Truncate(keep) => (forward(&state, &request).await, Some(keep), false),
        Verdict::Forward => (forward(&state, &request).await, None, false),
    };
    let elapsed = arrived.0.elapsed();
    let tap = state.tap.clone();
    let response = match response {
        Ok(response) => {
            let exchange = Exchange {
                request,
                response,
                started: arrived.1,
                elapsed,
                substituted,
            };
            let done = tokio::task::spawn_blocking(move || {
                tap.after(&exchange);
                exchange.response
            });
            match done.await {
                Ok(response) => response,
                Err(_) => {
                    return Ok(error_answer(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "the proxy's tap failed",
                    ));
                }
            }
        }
        Err(error) => {
            let message = error.clone();
            let _ =
                tokio::task::spawn_blocking(move || tap.failed(&request, &message, elapsed)).await;
            return Ok(error_answer(StatusCode::BAD_GATEWAY, &error));
        }
    };
    Ok(answer(response, truncate))
}

/// The whole request, or the answer that refuses it.
async fn read_request(request: Request<Incoming>) -> Result<ProxyRequest, Response<Body>> {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(Body::new(body), MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            error_answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("request body unreadable or larger than {MAX_BODY_BYTES} bytes"),
            )
        })?;
    Ok(ProxyRequest {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers,
        body,
    })
}

/// Headers that belong to one connection, not to the message; and those the
/// proxy sets itself. `Accept-Encoding` goes too, so answers come readable.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authorization"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
            | "host"
            | "content-length"
            | "accept-encoding"
    )
}

fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    headers
        .iter()
        .filter(|(name, _)| !hop_by_hop(name))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect()
}

async fn forward(state: &State, request: &ProxyRequest) -> Result<ProxyResponse, String> {
    let url = match &request.query {
        Some(q) => format!("{}{}?{q}", state.target, request.path),
        None => format!("{}{}", state.target, request.path),
    };
    let builder = state
        .client
        .request(request.method.clone(), url)
        .headers(end_to_end(&request.headers))
        .body(request.body.clone());
    let reply = send(builder)
        .await
        .map_err(|e| format!("{}: {e}", state.target))?;
    Ok(ProxyResponse {
        status: reply.status,
        headers: end_to_end(&reply.headers),
        body: reply.body,
    })
}

fn answer(response: ProxyResponse, truncate: Option<usize>) -> Response<Body> {
    let whole = response.body.len();
    let body = match truncate {
        None => Body::from(response.body),
        Some(keep) => {
            let head = response.body.slice(..keep.min(response.body.len()));
            let cut = std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "truncated by the proxy's tap",
            );
            // The cut comes a moment after the head, so the status line and
            // the first bytes reach the client before the connection drops.
            let cut = futures::stream::once(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Err::<Bytes, _>(cut)
            });
            Body::from_stream(futures::StreamExt::chain(
                futures::stream::iter([Ok(head)]),
                cut,
            ))
        }
    };
    let mut out = Response::new(body);
    *out.status_mut() = response.status;
    *out.headers_mut() = response.headers;
    if truncate.is_some() {
        // The whole body's length, so the client notices what is missing.
        out.headers_mut()
            .insert(http::header::CONTENT_LENGTH, whole.into());
    }
    out
}

fn error_answer(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": format!("dms-bridge proxy: {message}") });
    let mut out = Response::new(Body::from(body.to_string()));
    *out.status_mut() = status;
    out.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    out
}

#[cfg(test)]
mod tests;
