//! Requests refused at the front door are security events: each goes to the
//! audit trail (tool `front_door`, outcome `refused.<class>`) and to the
//! `front_door_refusals` metric, with the reason's class, the method and
//! path, and the principal when one was known; never a credential or a body.
//! The refusing code names its class on the response ([`Refused`]); other
//! 401, 403, 413 and 421 answers are classed by their status.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use crate::gateway::Gateway;
use crate::telemetry::door::Door;

/// The reason class a refusal names on its response, and the principal it
/// refused, if known (a token without a scope, say).
#[derive(Debug, Clone)]
pub struct Refused {
    pub class: &'static str,
    pub principal: Option<String>,
}

/// Marks each answer of a door's routes with that door, so that a refusal is
/// recorded with the door it was refused at (the MCP path is configurable:
/// the router knows its door, the path does not tell).
pub async fn mark_door(State(door): State<Door>, mut response: Response) -> Response {
    response.extensions_mut().insert(door);
    response
}

/// `response`, marked as a refusal of class `class`.
pub fn mark(mut response: Response, class: &'static str) -> Response {
    response.extensions_mut().insert(Refused {
        class,
        principal: None,
    });
    response
}

/// `response`, marked as a refusal of `principal`.
pub fn mark_principal(mut response: Response, class: &'static str, principal: &str) -> Response {
    response.extensions_mut().insert(Refused {
        class,
        principal: Some(principal.to_owned()),
    });
    response
}

/// Records the refusals among the answers (the outermost layer).
pub async fn record(State(gateway): State<Gateway>, request: Request, next: Next) -> Response {
    let route = format!("{} {}", request.method(), request.uri().path());
    let response = next.run(request).await;
    let refused = response.extensions().get::<Refused>().cloned().or_else(|| {
        let class = match response.status() {
            StatusCode::UNAUTHORIZED => "unauthenticated",
            StatusCode::FORBIDDEN => "forbidden",
            StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
            StatusCode::MISDIRECTED_REQUEST => "misdirected",
            _ => return None,
        };
        Some(Refused {
            class,
            principal: None,
        })
    });
    if let Some(refused) = refused {
        tracing::info!(
            class = refused.class,
            door = response.extensions().get::<Door>().map(|d| d.as_str()),
            route,
            principal = refused.principal.as_deref(),
            "Refused a request at the front door."
        );
        gateway
            .record_refusal(
                refused.class,
                refused.principal.as_deref(),
                &route,
                response.extensions().get::<Door>().copied(),
            )
            .await;
    }
    response
}
