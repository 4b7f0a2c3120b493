//! `POST /token`: authorization codes (with the PKCE verifier) and refresh
//! tokens exchanged for ES256 access tokens. Codes are single-use; refresh
//! tokens are rotated, each usable once.

use std::sync::Arc;
use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};

use super::Shared;
use super::clients::metadata_url;
use super::error::{Rejection, no_store};
use super::keys::random_token;
use super::params::{Params, is_pkce_string};
use super::store::RefreshGrant;

pub(super) async fn token(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match exchange(&shared, &headers, &body) {
        Ok(answer) => {
            let mut response = Json(answer).into_response();
            no_store(&mut response);
            response
        }
        Err(rejection) => rejection.into_response(),
    }
}

fn exchange(
    shared: &Shared,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<serde_json::Value, Rejection> {
    let params = Params::parse(body).map_err(|name| {
        Rejection::bad_request(
            "invalid_request",
            format!("parameter {name:?} was given more than once"),
        )
    })?;
    let grant_type = params
        .get("grant_type")
        .ok_or_else(|| Rejection::bad_request("invalid_request", "grant_type is required"))?;
    if !matches!(grant_type, "authorization_code" | "refresh_token") {
        return Err(Rejection::bad_request(
            "unsupported_grant_type",
            format!("grant_type {grant_type:?} is not supported"),
        ));
    }
    let client_id = client_id(shared, &params, headers)?;
    let grant = if grant_type == "authorization_code" {
        redeem_code(shared, &params, &client_id)?
    } else {
        redeem_refresh_token(shared, &params, &client_id)?
    };
    issue(shared, grant, &params)
}

/// The client making the request: `client_id` in the form, or in HTTP Basic
/// credentials; it must be registered or be a metadata document's URL.
fn client_id(shared: &Shared, params: &Params, headers: &HeaderMap) -> Result<String, Rejection> {
    let id = match params.get("client_id") {
        Some(id) => id.to_owned(),
        None => {
            basic_user(headers).ok_or_else(|| Rejection::invalid_client("client_id is required"))?
        }
    };
    let known = shared.lock().clients.get(&id).is_some() || metadata_url(shared, &id).is_ok();
    if known {
        Ok(id)
    } else {
        Err(Rejection::invalid_client(format!("unknown client {id:?}")))
    }
}

fn basic_user(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let user = decoded.split(':').next()?;
    let user: String = form_urlencoded::parse(format!("u={user}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())?;
    (!user.is_empty()).then_some(user)
}

fn invalid_grant(why: &str) -> Rejection {
    Rejection::bad_request("invalid_grant", why)
}

fn required<'a>(params: &'a Params, name: &str) -> Result<&'a str, Rejection> {
    params
        .get(name)
        .ok_or_else(|| Rejection::bad_request("invalid_request", format!("{name} is required")))
}

/// The grant behind an authorization code, which is used up whatever the outcome.
fn redeem_code(
    shared: &Shared,
    params: &Params,
    client_id: &str,
) -> Result<RefreshGrant, Rejection> {
    let code = required(params, "code")?;
    let redirect_uri = required(params, "redirect_uri")?;
    let verifier = required(params, "code_verifier")?;
    let grant = shared
        .lock()
        .codes
        .remove(code)
        .ok_or_else(|| invalid_grant("unknown, expired or already used code"))?;
    if grant.issued.elapsed() > shared.code_lifetime {
        return Err(invalid_grant("the code has expired"));
    }
    if grant.client_id != client_id {
        return Err(invalid_grant("the code was issued to another client"));
    }
    if grant.redirect_uri != redirect_uri {
        return Err(invalid_grant(
            "redirect_uri differs from the authorization request's",
        ));
    }
    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    if !is_pkce_string(verifier)
        || !constant_time_eq(computed.as_bytes(), grant.code_challenge.as_bytes())
    {
        return Err(invalid_grant(
            "code_verifier does not match the code_challenge",
        ));
    }
    if params.get("resource").is_some_and(|r| r != grant.resource) {
        return Err(Rejection::bad_request(
            "invalid_target",
            "resource differs from the authorization request's",
        ));
    }
    Ok(RefreshGrant {
        client_id: grant.client_id,
        resource: grant.resource,
        scopes: grant.scopes,
        user: grant.user,
        issued: Instant::now(),
    })
}

/// The grant behind a refresh token, which is used up whatever the outcome:
/// a new one is issued with the access token.
fn redeem_refresh_token(
    shared: &Shared,
    params: &Params,
    client_id: &str,
) -> Result<RefreshGrant, Rejection> {
    let token = required(params, "refresh_token")?;
    let grant = shared
        .lock()
        .refresh_tokens
        .remove(token)
        .ok_or_else(|| invalid_grant("unknown, expired or already used refresh token"))?;
    if grant.issued.elapsed() > shared.refresh_lifetime {
        return Err(invalid_grant("the refresh token has expired"));
    }
    if grant.client_id != client_id {
        return Err(invalid_grant(
            "the refresh token was issued to another client",
        ));
    }
    if params.get("resource").is_some_and(|r| r != grant.resource) {
        return Err(Rejection::bad_request(
            "invalid_target",
            "resource differs from the original grant's",
        ));
    }
    Ok(RefreshGrant {
        issued: Instant::now(),
        ..grant
    })
}

/// The token answer for a grant: an access token (narrowed to `scope` if the
/// request asks for less) and a new refresh token for the whole grant.
fn issue(
    shared: &Shared,
    grant: RefreshGrant,
    params: &Params,
) -> Result<serde_json::Value, Rejection> {
    let scopes: Vec<String> = match params.get("scope") {
        None => grant.scopes.clone(),
        Some(asked) => {
            let asked: Vec<&str> = asked.split(' ').filter(|s| !s.is_empty()).collect();
            if let Some(extra) = asked.iter().find(|s| !grant.scopes.iter().any(|g| g == *s)) {
                return Err(Rejection::bad_request(
                    "invalid_scope",
                    format!("scope {extra:?} was not granted"),
                ));
            }
            grant
                .scopes
                .iter()
                .filter(|s| asked.contains(&s.as_str()))
                .cloned()
                .collect()
        }
    };
    let claims = shared
        .claims(&grant.user, &grant.client_id, &grant.resource, &scopes)
        .map_err(|e| Rejection::server_error(e.to_string()))?;
    let access_token = shared
        .key
        .sign(&claims)
        .map_err(|e| Rejection::server_error(format!("signing the token: {e}")))?;
    let refresh_token = random_token();
    tracing::info!(client_id = %grant.client_id, user = %grant.user, jti = %claims.jti, "Demo OAuth access token issued.");
    shared
        .lock()
        .refresh_tokens
        .insert(refresh_token.clone(), grant);
    Ok(serde_json::json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": shared.token_lifetime.as_secs(),
        "scope": claims.scope,
        "refresh_token": refresh_token,
    }))
}

/// Comparison whose time does not depend on where the inputs differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
