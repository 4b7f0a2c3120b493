//! `GET /authorize`: the authorization code flow's first leg, with PKCE (S256
//! only) and resource indicators (RFC 8707). Consent is given at once for the
//! demo user named by `login_hint`, or the default one.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use url::Url;

use super::Shared;
use super::clients::{redirect_registered, resolve};
use super::keys::random_token;
use super::params::{Params, is_pkce_string};
use super::store::CodeGrant;

pub(super) async fn authorize(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
) -> Response {
    let params = match Params::parse(query.unwrap_or_default().as_bytes()) {
        Ok(p) => p,
        Err(name) => return page(format!("parameter {name:?} was given more than once")),
    };
    // Until the client and its redirect URI are known good, errors are shown
    // here and not sent anywhere (RFC 6749 §4.1.2.1).
    let Some(client_id) = params.get("client_id") else {
        return page("client_id is required".into());
    };
    let client = match resolve(&shared, client_id).await {
        Ok(c) => c,
        Err(why) => return page(why),
    };
    let Some(redirect_uri) = params.get("redirect_uri") else {
        return page("redirect_uri is required".into());
    };
    if !redirect_registered(&client, redirect_uri) {
        return page(format!(
            "redirect_uri {redirect_uri:?} is not registered for this client"
        ));
    }
    let Ok(redirect) = Url::parse(redirect_uri) else {
        return page(format!("redirect_uri {redirect_uri:?} is not a URI"));
    };
    let reply = Reply {
        redirect,
        state: params.get("state").map(str::to_owned),
        issuer: shared.issuer.clone(),
    };
    match grant(&shared, &params, client_id, redirect_uri) {
        Ok(code) => reply.send(&[("code", &code)]),
        Err((error, description)) => {
            tracing::debug!(client_id, error, description, "Authorization refused.");
            reply.send(&[("error", error), ("error_description", description)])
        }
    }
}

/// Checks the request and stores a code for it; `Err` is the error code and
/// description to send back to the client.
fn grant(
    shared: &Shared,
    params: &Params,
    client_id: &str,
    redirect_uri: &str,
) -> Result<String, (&'static str, &'static str)> {
    match params.get("response_type") {
        Some("code") => {}
        None => return Err(("invalid_request", "response_type is required")),
        Some(_) => return Err(("unsupported_response_type", "only response_type=code")),
    }
    let Some(challenge) = params.get("code_challenge") else {
        return Err((
            "invalid_request",
            "PKCE is required: code_challenge is missing",
        ));
    };
    if params.get("code_challenge_method") != Some("S256") {
        return Err(("invalid_request", "code_challenge_method must be S256"));
    }
    if !is_pkce_string(challenge) {
        return Err(("invalid_request", "code_challenge is malformed"));
    }
    let resource = match params.get("resource") {
        None => shared.resources[0].clone(),
        Some(r) if shared.resources.iter().any(|known| known == r) => r.to_owned(),
        Some(_) => return Err(("invalid_target", "unknown resource")),
    };
    let user = match params.get("login_hint") {
        None => &shared.users[0],
        Some(name) => match shared.users.iter().find(|u| u.name == name) {
            Some(u) => u,
            None => return Err(("access_denied", "unknown demo user (login_hint)")),
        },
    };
    let scopes: Vec<String> = match params.get("scope") {
        None => user.scopes.clone(),
        Some(asked) => {
            let asked: Vec<&str> = asked.split(' ').filter(|s| !s.is_empty()).collect();
            user.scopes
                .iter()
                .filter(|s| asked.contains(&s.as_str()))
                .cloned()
                .collect()
        }
    };
    if scopes.is_empty() {
        return Err(("invalid_scope", "the user has none of the requested scopes"));
    }
    let code = random_token();
    tracing::info!(client_id, user = %user.name, %resource, scope = %scopes.join(" "), "Demo OAuth authorization granted.");
    shared.lock().codes.insert(
        code.clone(),
        CodeGrant {
            client_id: client_id.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
            code_challenge: challenge.to_owned(),
            resource,
            scopes,
            user: user.name.clone(),
            issued: Instant::now(),
        },
    );
    Ok(code)
}

/// Where and how to answer once the redirect URI is trusted.
struct Reply {
    redirect: Url,
    state: Option<String>,
    issuer: String,
}

impl Reply {
    /// 302 to the redirect URI with `pairs`, the state and `iss` (RFC 9207).
    fn send(mut self, pairs: &[(&str, &str)]) -> Response {
        {
            let mut query = self.redirect.query_pairs_mut();
            for (name, value) in pairs {
                query.append_pair(name, value);
            }
            if let Some(state) = &self.state {
                query.append_pair("state", state);
            }
            query.append_pair("iss", &self.issuer);
        }
        let Ok(location) = HeaderValue::from_str(self.redirect.as_str()) else {
            return page("the redirect URI cannot be sent back".into());
        };
        let mut response = StatusCode::FOUND.into_response();
        response.headers_mut().insert(header::LOCATION, location);
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// 400 with a page saying why, for errors that cannot be redirected.
fn page(why: String) -> Response {
    tracing::debug!(why, "Authorization request refused without redirect.");
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("Demo authorization server: the authorization request was refused.\n\n{why}\n"),
    )
        .into_response()
}
