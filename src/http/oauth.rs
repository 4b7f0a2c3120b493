//! The bridge as an OAuth 2.1 resource server on HTTP (MCP authorization):
//! its Protected Resource Metadata (RFC 9728), the challenges of a 401, and
//! the 403 `insufficient_scope` that names the scope a tool needs (so a
//! host can ask the user for just that).

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::front::ReadBody;
use crate::gateway::Gateway;
use crate::gateway::auth::OAuthVerifier;
use crate::mcp::HttpCaller;
use crate::tools::ToolId;

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Where the metadata is served: at the root and suffixed with the MCP
/// path (Claude probes the suffixed one first).
pub fn metadata_paths(mcp_path: &str) -> [String; 2] {
    [WELL_KNOWN.to_owned(), format!("{WELL_KNOWN}{mcp_path}")]
}

/// The metadata's URL for a resource: the well-known path inserted between
/// its origin and its path (RFC 9728 §3.1).
pub fn metadata_url(oauth: &OAuthVerifier) -> String {
    match url::Url::parse(oauth.resource()) {
        Ok(resource) => {
            let path = resource.path().trim_end_matches('/');
            format!(
                "{}{WELL_KNOWN}{path}",
                resource.origin().ascii_serialization()
            )
        }
        Err(_) => WELL_KNOWN.to_owned(),
    }
}

/// GET of the metadata: 404 when sign-in is not configured, and at a
/// well-known path that is not the resource's own (RFC 9728 §3.3: a client
/// must refuse metadata whose `resource` differs from the one it asked about,
/// so the root path answers only for a resource at the root).
pub async fn metadata(State(gateway): State<Gateway>, uri: axum::http::Uri) -> Response {
    let Some(oauth) = gateway.authenticator().oauth() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let own = url::Url::parse(&metadata_url(oauth)).is_ok_and(|own| own.path() == uri.path());
    if !own {
        return StatusCode::NOT_FOUND.into_response();
    }
    let body = json!({
        "resource": oauth.resource(),
        "authorization_servers": [oauth.issuer()],
        "scopes_supported": crate::mcp::advertised_scopes(),
        "bearer_methods_supported": ["header"],
        "resource_name": oauth.resource_name().unwrap_or("dms-bridge"),
    });
    (
        [(header::CACHE_CONTROL, "public, max-age=300")],
        axum::Json(body),
    )
        .into_response()
}

/// `WWW-Authenticate` of a 401 when sign-in is configured: where the
/// metadata is, and every scope a caller may ask for.
pub fn challenge(oauth: &OAuthVerifier, token_presented: bool) -> Option<HeaderValue> {
    let scopes = crate::mcp::advertised_scopes().join(" ");
    let error = if token_presented {
        r#", error="invalid_token", error_description="The access token is not valid""#
    } else {
        ""
    };
    let value = format!(
        r#"Bearer resource_metadata="{}", scope="{scopes}"{error}"#,
        metadata_url(oauth)
    );
    HeaderValue::from_str(&value).ok()
}

/// For signed-in callers: a `tools/call` of a tool whose scope the token
/// lacks gets 403 `insufficient_scope` naming that scope, so the host can
/// get it from the user. Static-token callers keep the in-band tool error.
pub async fn require_tool_scope(
    State(gateway): State<Gateway>,
    request: Request,
    next: Next,
) -> Response {
    let signed_in = request
        .extensions()
        .get::<HttpCaller>()
        .is_some_and(|c| c.signed_in);
    let Some(oauth) = gateway.authenticator().oauth().filter(|_| signed_in) else {
        return next.run(request).await;
    };
    // Only a body the front has read within its size and time limits is
    // looked at; any other request is refused by rmcp without its body read.
    let missing = request
        .extensions()
        .get::<ReadBody>()
        .zip(request.extensions().get::<HttpCaller>())
        .and_then(|(body, caller)| {
            missing_scope(&body.0, &caller.principal).map(|s| (s, caller.principal.name.clone()))
        });
    if let Some((scope, principal)) = missing {
        let refusal = insufficient_scope(oauth, scope);
        return super::refusals::mark_principal(refusal, "insufficient_scope", &principal);
    }
    next.run(request).await
}

/// The scope a `tools/call` in `body` needs and the principal lacks.
fn missing_scope(body: &[u8], principal: &crate::contract::Principal) -> Option<&'static str> {
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        method: &'a str,
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Option<std::borrow::Cow<'a, str>>,
    }
    let call = serde_json::from_slice::<Call>(body).ok()?;
    if call.method != "tools/call" {
        return None;
    }
    let tool = ToolId::from_name(call.params?.name?.as_ref())?;
    let scope = tool.scope()?;
    (!principal.has_scope(scope)).then_some(scope.as_str())
}

fn insufficient_scope(oauth: &OAuthVerifier, scope: &str) -> Response {
    let body = json!({ "error": {
        "code": "auth.insufficient_scope",
        "message": format!("This tool needs the scope {scope}, which your sign-in did not grant."),
        "retryable": false,
        "details": { "scope": scope },
    }});
    let mut response = (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
    let value = format!(
        r#"Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{}", error_description="The access token lacks a scope this tool needs""#,
        metadata_url(oauth)
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
