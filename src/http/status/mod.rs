//! The status page for people, at `[status] path` (`/status`): dealerships
//! and their upstreams, inventory freshness, the lead outbox and webhook dead
//! letters (each retryable, with a confirmation), and recent tool-call
//! outcomes. Server-rendered HTML that works without JavaScript, behind the
//! operator's credential ([`access`]); the front door's Host rule applies as
//! to every route, and a foreign `Origin` is refused here.

mod access;
mod page;
mod view;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Form, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use governor::{DefaultDirectRateLimiter, Quota};

pub use access::OperatorKey;
use access::{COOKIE, Presented, Refusal};

use crate::gateway::Gateway;
use crate::webhooks::Redelivery;

/// Sign-in attempts allowed per minute, over every client: the operator token
/// is long and random, and this keeps guessing at it slow (at worst, a flood
/// of guesses keeps the operator out for a minute; a bearer token still works).
const SIGN_INS_PER_MINUTE: u32 = 30;

#[derive(Clone)]
struct Page {
    gateway: Gateway,
    webhooks: crate::webhooks::Status,
    key: Arc<OperatorKey>,
    sign_ins: Arc<DefaultDirectRateLimiter>,
}

/// The page's routes under `key.path`.
pub fn routes(
    gateway: Gateway,
    webhooks: crate::webhooks::Status,
    key: Arc<OperatorKey>,
) -> Router {
    let p = key.path.clone();
    let per_minute = NonZeroU32::new(SIGN_INS_PER_MINUTE).unwrap_or(NonZeroU32::MIN);
    let state = Page {
        gateway,
        webhooks,
        key,
        sign_ins: Arc::new(DefaultDirectRateLimiter::direct(Quota::per_minute(
            per_minute,
        ))),
    };
    Router::new()
        .route(&p, get(show))
        .route(&format!("{p}/sign-in"), post(sign_in))
        .route(&format!("{p}/sign-out"), post(sign_out))
        .route(
            &format!("{p}/leads/{{lead}}/retry"),
            get(confirm_lead).post(retry_lead),
        )
        .route(
            &format!("{p}/webhooks/{{endpoint}}/{{dealership}}/{{sequence}}/retry"),
            get(confirm_redelivery).post(redeliver),
        )
        .layer(middleware::from_fn(guard))
        .with_state(state)
}

/// Refuses requests from another site's pages, and marks every answer as
/// not to be cached or framed, its referrer kept to the page itself (a
/// `no-referrer` policy would make Chromium send `Origin: null` on its forms).
async fn guard(request: Request, next: Next) -> Response {
    if let Some(foreign) = access::foreign_origin(request.method(), request.headers()) {
        tracing::warn!(path = request.uri().path(), from = %foreign, "Refused a status page request from another site.");
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: the status page answers only its own pages\n",
        )
            .into_response();
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CACHE_CONTROL, "no-store"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// Why a request is not served (each logged where it is decided).
#[derive(Debug, Clone, Copy)]
enum Refused {
    /// No sign-in, or one that ran out: the form is shown.
    SignIn,
    /// A bearer token that is not the operator's (an agent's, say).
    WrongBearer,
    /// A form post without its sign-in's form token.
    ForgedForm,
}

/// How the caller got in: with a sign-in (its forms must carry its token)
/// or a bearer token (a script; no browser sends one by itself).
enum Admitted {
    SignIn(String),
    Bearer,
}

impl Page {
    /// Lets the operator in; anyone else is refused, and logged.
    fn admit(&self, method: &Method, headers: &HeaderMap, path: &str) -> Result<Admitted, Refused> {
        let now = chrono::Utc::now().timestamp();
        let refusal = match access::presented(headers) {
            Presented::Bearer(token) if self.key.is_operator(&token) => {
                return Ok(Admitted::Bearer);
            }
            Presented::Bearer(token) => {
                self.log_refusal(method, path, Refusal::WrongCredential, Some(&token));
                return Err(Refused::WrongBearer);
            }
            Presented::SignIn(cookie) => match self.key.check_sign_in(&cookie, now) {
                Ok(()) => return Ok(Admitted::SignIn(cookie)),
                Err(refusal) => refusal,
            },
            Presented::Nothing => Refusal::NoCredential,
        };
        self.log_refusal(method, path, refusal, None);
        Err(Refused::SignIn)
    }

    /// A form post: the operator, with the form of the operator's own sign-in.
    fn admit_form(
        &self,
        method: &Method,
        headers: &HeaderMap,
        path: &str,
        form: &HashMap<String, String>,
    ) -> Result<Admitted, Refused> {
        let admitted = self.admit(method, headers, path)?;
        if let Admitted::SignIn(cookie) = &admitted {
            let given = form.get("form_token").map_or("", String::as_str);
            if !self.key.check_form_token(cookie, given) {
                tracing::warn!(
                    path,
                    "Refused a status page form without its sign-in's token."
                );
                return Err(Refused::ForgedForm);
            }
        }
        Ok(admitted)
    }

    fn refuse(&self, refused: Refused) -> Response {
        match refused {
            Refused::SignIn => html(
                StatusCode::UNAUTHORIZED,
                page::sign_in(&self.key.path, None),
            ),
            Refused::WrongBearer => (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: not the operator credential\n",
            )
                .into_response(),
            Refused::ForgedForm => (
                StatusCode::FORBIDDEN,
                "Forbidden: the form is not from this sign-in\n",
            )
                .into_response(),
        }
    }

    /// Says who was refused; an agent's token is named as one (by its name, never its value).
    fn log_refusal(&self, method: &Method, path: &str, refusal: Refusal, token: Option<&str>) {
        let agent = token
            .and_then(|t| self.gateway.authenticator().authenticate(t))
            .map(|p| p.name.to_string());
        match agent {
            Some(name) => {
                tracing::warn!(%method, path, principal = %name, "Refused a status page request with an agent's token.")
            }
            None => {
                tracing::warn!(%method, path, reason = refusal.as_str(), "Refused a status page request.")
            }
        }
    }

    fn form_token(&self, admitted: &Admitted) -> String {
        match admitted {
            Admitted::SignIn(cookie) => self.key.form_token(cookie),
            Admitted::Bearer => String::new(),
        }
    }

    /// The page asking the operator to confirm `what`, posted to `action`.
    fn confirm(&self, method: &Method, headers: &HeaderMap, action: &str, what: &str) -> Response {
        match self.admit(method, headers, action) {
            Ok(admitted) => html(
                StatusCode::OK,
                page::confirm(what, action, &self.form_token(&admitted), &self.key.path),
            ),
            Err(refused) => self.refuse(refused),
        }
    }

    /// Back to the page, saying what happened (`done` is one of the page's codes).
    fn back(&self, done: &str, subject: &str) -> Response {
        let location = format!(
            "{}?done={done}&subject={}",
            self.key.path,
            page::seg(subject)
        );
        (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()
    }
}

/// The answer when the store does not answer (the detail is in the log).
fn store_down() -> Response {
    html(
        StatusCode::SERVICE_UNAVAILABLE,
        page::document(
            "dms-bridge status",
            "<h1>dms-bridge status</h1><p class=\"bad\">The store is not answering; see the logs.</p>",
        ),
    )
}

fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

/// The sentence for a `done` code; unknown codes say nothing.
fn notice(query: &HashMap<String, String>) -> Option<String> {
    let subject = query.get("subject").map_or("", String::as_str);
    let text = match query.get("done")?.as_str() {
        "requeued" => format!("Lead {subject} is queued for delivery again."),
        "not-failed" => format!("Lead {subject} was not failed; nothing was retried."),
        "redelivered" => format!("Event {subject} was delivered."),
        "refused" => format!("Event {subject} was refused again; it stays a dead letter."),
        "gone" => format!(
            "Event {subject} can no longer be retried (no longer a dead letter, its endpoint removed, or past retention)."
        ),
        _ => return None,
    };
    Some(text)
}

async fn show(
    State(page): State<Page>,
    method: Method,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let admitted = match page.admit(&method, &headers, &page.key.path) {
        Ok(a) => a,
        Err(refused) => return page.refuse(refused),
    };
    match view::Snapshot::take(&page.gateway, &page.webhooks).await {
        Ok(snapshot) => html(
            StatusCode::OK,
            page::status(
                &snapshot,
                &page.key.path,
                &page.form_token(&admitted),
                notice(&query).as_deref(),
            ),
        ),
        Err(e) => {
            tracing::error!(error = %e, "The status page cannot read the store.");
            store_down()
        }
    }
}

async fn sign_in(
    State(page): State<Page>,
    method: Method,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    if page.sign_ins.check().is_err() {
        tracing::warn!("Refused a status page sign-in: too many attempts this minute.");
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "60")],
            "Too many sign-in attempts; try again in a minute\n",
        )
            .into_response();
    }
    let token = form.get("token").map_or("", String::as_str);
    if page.key.is_operator(token) {
        let cookie = page.key.sign_in(chrono::Utc::now().timestamp());
        let secure = headers
            .get("x-forwarded-proto")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"));
        let set = format!(
            "{COOKIE}={cookie}; Path={}; Max-Age={}; HttpOnly; SameSite=Strict{}",
            page.key.path,
            page.key.session.as_secs(),
            if secure { "; Secure" } else { "" }
        );
        tracing::info!("The operator signed in to the status page.");
        return (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, page.key.path.clone()),
                (header::SET_COOKIE, set),
            ],
        )
            .into_response();
    }
    page.log_refusal(
        &method,
        &format!("{}/sign-in", page.key.path),
        Refusal::WrongCredential,
        Some(token),
    );
    html(
        StatusCode::UNAUTHORIZED,
        page::sign_in(&page.key.path, Some("That is not the operator token.")),
    )
}

async fn sign_out(
    State(page): State<Page>,
    method: Method,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let path = format!("{}/sign-out", page.key.path);
    if let Err(refused) = page.admit_form(&method, &headers, &path, &form) {
        return page.refuse(refused);
    }
    let clear = format!(
        "{COOKIE}=; Path={}; Max-Age=0; HttpOnly; SameSite=Strict",
        page.key.path
    );
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, page.key.path.clone()),
            (header::SET_COOKIE, clear),
        ],
    )
        .into_response()
}

async fn confirm_lead(
    State(page): State<Page>,
    method: Method,
    headers: HeaderMap,
    Path(lead): Path<String>,
) -> Response {
    let action = format!("{}/leads/{}/retry", page.key.path, page::seg(&lead));
    let what = format!("Send lead {lead} to its CRM again, with a fresh set of attempts?");
    page.confirm(&method, &headers, &action, &what)
}

async fn retry_lead(
    State(page): State<Page>,
    method: Method,
    headers: HeaderMap,
    Path(lead): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let path = format!("{}/leads/{}/retry", page.key.path, page::seg(&lead));
    if let Err(refused) = page.admit_form(&method, &headers, &path, &form) {
        return page.refuse(refused);
    }
    match crate::store::leads::requeue_failed(page.gateway.store(), None, Some(&lead)).await {
        Ok(0) => page.back("not-failed", &lead),
        Ok(_) => {
            tracing::info!(lead_id = %lead, "The operator queued a failed lead again from the status page.");
            page.back("requeued", &lead)
        }
        Err(e) => {
            tracing::error!(error = %e, lead_id = %lead, "Cannot queue a lead again.");
            store_down()
        }
    }
}

async fn confirm_redelivery(
    State(page): State<Page>,
    method: Method,
    headers: HeaderMap,
    Path((endpoint, dealership, sequence)): Path<(String, String, u64)>,
) -> Response {
    let action = format!(
        "{}/webhooks/{}/{}/{sequence}/retry",
        page.key.path,
        page::seg(&endpoint),
        page::seg(&dealership)
    );
    let what =
        format!("Post event {sequence} of {dealership} to webhook endpoint {endpoint} again, now?");
    page.confirm(&method, &headers, &action, &what)
}

async fn redeliver(
    State(page): State<Page>,
    method: Method,
    headers: HeaderMap,
    Path((endpoint, dealership, sequence)): Path<(String, String, u64)>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let path = format!(
        "{}/webhooks/{endpoint}/{dealership}/{sequence}/retry",
        page.key.path
    );
    if let Err(refused) = page.admit_form(&method, &headers, &path, &form) {
        return page.refuse(refused);
    }
    let subject = format!("{dealership}/{sequence} to {endpoint}");
    match page
        .webhooks
        .redeliver(page.gateway.store(), &endpoint, &dealership, sequence)
        .await
    {
        Ok(Redelivery::Delivered) => page.back("redelivered", &subject),
        Ok(Redelivery::Failed(_)) => page.back("refused", &subject),
        Ok(_) => page.back("gone", &subject),
        Err(e) => {
            tracing::error!(error = %e, "Cannot retry a webhook dead letter.");
            store_down()
        }
    }
}
