//! Who may ask for codes: clients registered dynamically (RFC 7591, `/register`)
//! and clients whose `client_id` is the URL of their client ID metadata
//! document (the MCP authorization spec's preferred registration), fetched on
//! first use with a short timeout and a small size cap.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use url::{Host, Url};

use super::Shared;
use super::error::{Rejection, no_store};
use super::keys::random_token;
use super::store::Client;

/// How long a fetched metadata document is trusted before it is fetched again.
const METADATA_TTL: Duration = Duration::from_secs(300);
/// Bounds on what a registration may carry.
const MAX_REDIRECT_URIS: usize = 20;
const MAX_URI_LEN: usize = 2000;
const MAX_NAME_LEN: usize = 200;

/// Client metadata, as registered (RFC 7591 §2) or published in a document.
#[derive(Debug, Deserialize)]
struct Metadata {
    client_id: Option<String>,
    redirect_uris: Option<Vec<String>>,
    client_name: Option<String>,
    token_endpoint_auth_method: Option<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
}

/// The client's metadata checked and with defaults filled in; `Err` is the
/// RFC 7591 error code and a description.
fn checked(client_id: String, m: Metadata) -> Result<Client, (&'static str, String)> {
    let redirect_uris = m.redirect_uris.unwrap_or_default();
    if redirect_uris.is_empty() {
        return Err(("invalid_redirect_uri", "redirect_uris is required".into()));
    }
    if redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err((
            "invalid_redirect_uri",
            format!("at most {MAX_REDIRECT_URIS} redirect_uris"),
        ));
    }
    for uri in &redirect_uris {
        check_redirect_uri(uri)
            .map_err(|why| ("invalid_redirect_uri", format!("{uri:?}: {why}")))?;
    }
    if m.client_name
        .as_ref()
        .is_some_and(|n| n.len() > MAX_NAME_LEN)
    {
        return Err(("invalid_client_metadata", "client_name is too long".into()));
    }
    // Public clients only. A client asking for a secret is registered as a
    // public one instead (RFC 7591 §3.2.1 lets the server replace values); one
    // that would authenticate otherwise (private_key_jwt, …) is refused.
    match m.token_endpoint_auth_method.as_deref() {
        None | Some("none" | "client_secret_post" | "client_secret_basic") => {}
        Some(other) => {
            return Err((
                "invalid_client_metadata",
                format!("token_endpoint_auth_method {other:?} is not supported; use \"none\""),
            ));
        }
    }
    let grant_types = m
        .grant_types
        .unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]);
    if let Some(g) = grant_types
        .iter()
        .find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token"))
    {
        return Err((
            "invalid_client_metadata",
            format!("grant type {g:?} is not supported"),
        ));
    }
    let response_types = m.response_types.unwrap_or_else(|| vec!["code".into()]);
    if let Some(r) = response_types.iter().find(|r| r.as_str() != "code") {
        return Err((
            "invalid_client_metadata",
            format!("response type {r:?} is not supported"),
        ));
    }
    Ok(Client {
        client_id,
        client_name: m.client_name,
        redirect_uris,
        grant_types,
        response_types,
        token_endpoint_auth_method: "none".into(),
        client_id_issued_at: chrono::Utc::now().timestamp(),
        fetched: None,
    })
}

/// A redirect URI a client may register: https, http on a loopback host
/// (native apps, RFC 8252 §7.3), or a private-use scheme such as `cursor://`
/// (RFC 8252 §7.1); never a fragment, nor a scheme that runs or reads locally.
pub(super) fn check_redirect_uri(uri: &str) -> Result<Url, &'static str> {
    if uri.len() > MAX_URI_LEN {
        return Err("too long");
    }
    let url = Url::parse(uri).map_err(|_| "not an absolute URI")?;
    if url.fragment().is_some() {
        return Err("has a fragment");
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err("http is only allowed on a loopback host"),
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" | "ftp" | "ws" | "wss" => {
            Err("scheme not allowed")
        }
        _ => Ok(url),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether `given` is one of the client's redirect URIs: the same string, or
/// for a loopback http URI the same but for its port, which a native app picks
/// at run time (RFC 8252 §7.3, OAuth 2.1 §8.4.2).
pub(super) fn redirect_registered(client: &Client, given: &str) -> bool {
    if client.redirect_uris.iter().any(|r| r == given) {
        return true;
    }
    let Ok(mut given) = Url::parse(given) else {
        return false;
    };
    if given.scheme() != "http" || !is_loopback(&given) || given.set_port(None).is_err() {
        return false;
    }
    client.redirect_uris.iter().any(|r| {
        Url::parse(r).is_ok_and(|mut r| {
            r.scheme() == "http" && is_loopback(&r) && r.set_port(None).is_ok() && r == given
        })
    })
}

/// `POST /register` (RFC 7591): 201 with the client's metadata and a new
/// `client_id`, or 400 `invalid_redirect_uri` / `invalid_client_metadata`.
pub(super) async fn register(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let metadata: Metadata = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => {
            return Rejection::bad_request(
                "invalid_client_metadata",
                format!("not client metadata: {e}"),
            )
            .into_response();
        }
    };
    let client = match checked(format!("demo-client-{}", random_token()), metadata) {
        Ok(c) => c,
        Err((error, description)) => {
            return Rejection::bad_request(error, description).into_response();
        }
    };
    tracing::info!(client_id = %client.client_id, client_name = ?client.client_name, "Demo OAuth client registered.");
    let mut response = (StatusCode::CREATED, Json(&client)).into_response();
    shared
        .lock()
        .clients
        .insert(client.client_id.clone(), client);
    no_store(&mut response);
    response
}

/// The client with this id: a registered one, or the one its metadata document
/// describes (fetched, or cached from a recent fetch). `Err` says why not.
pub(super) async fn resolve(shared: &Shared, client_id: &str) -> Result<Client, String> {
    let known = shared
        .lock()
        .clients
        .get(client_id)
        .filter(|c| c.fetched.is_none_or(|at| at.elapsed() < METADATA_TTL))
        .cloned();
    if let Some(client) = known {
        return Ok(client);
    }
    let url = metadata_url(shared, client_id)?;
    let mut client = fetch(shared, url, client_id).await?;
    client.fetched = Some(Instant::now());
    tracing::info!(client_id, client_name = ?client.client_name, "Demo OAuth client metadata document fetched.");
    shared
        .lock()
        .clients
        .insert(client_id.to_owned(), client.clone());
    Ok(client)
}

/// Whether a client id may be a metadata document's URL: https (or http on
/// loopback, if the server allows it), with a path, no fragment, no user info.
pub(super) fn metadata_url(shared: &Shared, client_id: &str) -> Result<Url, String> {
    let unknown = || format!("unknown client {client_id:?}");
    let url = Url::parse(client_id).map_err(|_| unknown())?;
    let scheme_ok = match url.scheme() {
        "https" => true,
        "http" => shared.loopback_client_ids && is_loopback(&url),
        _ => false,
    };
    if !scheme_ok
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(unknown());
    }
    if url.path() == "/" || url.path().is_empty() {
        return Err(format!("client id {client_id:?} has no path"));
    }
    Ok(url)
}

async fn fetch(shared: &Shared, url: Url, client_id: &str) -> Result<Client, String> {
    let failed = |why: String| format!("client metadata document {client_id:?}: {why}");
    let mut response = shared
        .http
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    if response.status() != StatusCode::OK {
        return Err(failed(format!("answered {}", response.status())));
    }
    let cap = shared.metadata_max_bytes;
    if response
        .content_length()
        .is_some_and(|len| len > cap as u64)
    {
        return Err(failed(format!("larger than {cap} bytes")));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failed(e.to_string()))? {
        if body.len() + chunk.len() > cap {
            return Err(failed(format!("larger than {cap} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    let metadata: Metadata =
        serde_json::from_slice(&body).map_err(|e| failed(format!("not client metadata: {e}")))?;
    if metadata.client_id.as_deref() != Some(client_id) {
        return Err(failed("its client_id is not its URL".into()));
    }
    checked(client_id.to_owned(), metadata).map_err(|(_, why)| failed(why))
}
