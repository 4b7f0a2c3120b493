//! Who the caller is (a bearer token, an OAuth access token, or anonymous),
//! and the MCP requests screened by caller before rmcp sees them: listens
//! and session-less update streams.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::forwarded::ClientAddress;
use crate::gateway::Gateway;
use crate::mcp::HttpCaller;
use crate::telemetry::trace::TraceContext;

#[derive(Clone)]
pub(super) struct AuthState {
    pub(super) gateway: Gateway,
    pub(super) client_address: Arc<ClientAddress>,
}

/// Resolves the caller from `Authorization: Bearer …`. No header: the anonymous
/// caller if any dealership allows one, else 401. A wrong token: always 401.
pub(super) async fn authenticate(
    State(AuthState {
        gateway,
        client_address,
    }): State<AuthState>,
    mut request: Request,
    next: Next,
) -> Response {
    // Two credentials are one too many: which one the caller meant is not guessed.
    if request
        .headers()
        .get_all(header::AUTHORIZATION)
        .iter()
        .count()
        > 1
    {
        return (
            StatusCode::BAD_REQUEST,
            "Bad Request: more than one Authorization header",
        )
            .into_response();
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    let caller = match presented {
        None => gateway
            .authenticator()
            .anonymous()
            .map(|principal| (principal, false)),
        Some(value) => match value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
        {
            Some(token) => gateway
                .authenticator()
                .authenticate_bearer(token.trim())
                .await
                .ok()
                .map(|a| (a.principal, a.signed_in)),
            None => None,
        },
    };
    let Some((principal, signed_in)) = caller else {
        return unauthorized(
            &gateway,
            request.headers().contains_key(header::AUTHORIZATION),
        );
    };
    let client_ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| client_address.resolve(c.0.ip(), request.headers()));
    let trace = request
        .headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .and_then(TraceContext::from_traceparent);
    request.extensions_mut().insert(HttpCaller {
        principal,
        signed_in,
        client_ip,
        trace,
    });
    next.run(request).await
}

/// `subscriptions/listen` under the rules of `events.list`: events need a
/// token (an anonymous caller gets the 401 that starts sign-in), only the
/// caller's dealerships are watched and acknowledged, and one listen names
/// at most `MAX_LISTEN_URIS` resources.
pub(super) async fn screen_listen(
    State(gateway): State<Gateway>,
    request: Request,
    next: Next,
) -> Response {
    use super::front::ReadBody;
    use crate::mcp::subscriptions::{ListenScreen, MAX_LISTEN_URIS, screen_listen as screen};
    let (Some(body), Some(caller)) = (
        request.extensions().get::<ReadBody>().cloned(),
        request.extensions().get::<HttpCaller>().cloned(),
    ) else {
        return next.run(request).await;
    };
    match screen(&body.0, &caller.principal) {
        ListenScreen::NotListen => next.run(request).await,
        _ if caller.principal.anonymous => unauthorized(&gateway, false),
        ListenScreen::TooMany(id) => {
            let error = json!({ "code": -32602, "message": format!(
                "Invalid params for subscriptions/listen: at most {MAX_LISTEN_URIS} resources per listen"
            ) });
            axum::Json(json!({ "jsonrpc": "2.0", "id": id, "error": error })).into_response()
        }
        ListenScreen::Screened(screened) => {
            let (mut parts, _) = request.into_parts();
            let screened = bytes::Bytes::from(screened);
            parts.extensions.insert(ReadBody(screened.clone()));
            parts.headers.remove(header::CONTENT_LENGTH);
            next.run(Request::from_parts(parts, axum::body::Body::from(screened)))
                .await
        }
    }
}

#[derive(Clone)]
pub(super) struct UpdatesState {
    pub(super) gateway: Gateway,
    pub(super) end: CancellationToken,
}

/// How often an idle update stream sends a comment, so proxies keep it open.
const UPDATES_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A `GET` without a session from a client of the `initialize` era: its
/// stream of `notifications/resources/updated` for what its principal
/// subscribed to with `resources/subscribe` (through any replica). A
/// 2026-07-28 client uses `subscriptions/listen`; its `GET` goes on to rmcp
/// (405), as does anything that is not a `GET` asking for an event stream.
pub(super) async fn updates_stream(
    State(state): State<UpdatesState>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let asks = request.method() == axum::http::Method::GET
        && headers.get("mcp-session-id").is_none()
        && headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"))
        && headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|v| v < "2026-07-28");
    let caller = request.extensions().get::<HttpCaller>().cloned();
    let Some(caller) = caller.filter(|_| asks) else {
        return next.run(request).await;
    };
    if caller.principal.anonymous {
        return unauthorized(&state.gateway, false);
    }
    // The watcher stops at its next look once the stream (its receiver) is gone.
    let (sender, updates) = futures::channel::mpsc::channel::<String>(16);
    tokio::spawn(crate::mcp::subscriptions::tell_principal(
        state.gateway,
        caller.principal,
        sender,
    ));
    let end = state.end;
    let events = futures::StreamExt::map(updates, |text| {
        Ok::<_, std::convert::Infallible>(axum::response::sse::Event::default().data(text))
    });
    let events = futures::StreamExt::take_until(events, async move { end.cancelled().await });
    axum::response::sse::Sse::new(events)
        .keep_alive(axum::response::sse::KeepAlive::new().interval(UPDATES_KEEP_ALIVE))
        .into_response()
}

fn unauthorized(gateway: &Gateway, token_presented: bool) -> Response {
    let body = json!({ "error": { "code": "auth.unauthorized", "message": "A valid bearer token is required.", "retryable": false } });
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        challenge(gateway, token_presented),
    );
    let class = if token_presented {
        "token_invalid"
    } else {
        "token_missing"
    };
    super::refusals::mark(response, class)
}

/// The `WWW-Authenticate` of a 401: OAuth's (pointing at the protected
/// resource metadata) where the bridge signs callers in, else a plain Bearer one.
pub(super) fn challenge(gateway: &Gateway, token_presented: bool) -> HeaderValue {
    let signed_in_challenge = gateway
        .authenticator()
        .oauth()
        .and_then(|oauth| super::oauth::challenge(oauth, token_presented));
    let static_challenge = if token_presented {
        r#"Bearer realm="dms-bridge", error="invalid_token", error_description="The access token is not valid""#
    } else {
        r#"Bearer realm="dms-bridge""#
    };
    signed_in_challenge.unwrap_or(HeaderValue::from_static(static_challenge))
}
