//! A demo OAuth 2.1 authorization server, for trying the MCP sign-in (MCP
//! Inspector, Claude Code, rmcp's client) against `dms-bridge demo`, and for
//! the bridge's tests of its resource server.
//!
//! It plays the dealer's authorization server on its own loopback port: RFC 8414
//! metadata, a JWK Set with the ES256 key made at start, dynamic client
//! registration (RFC 7591) and client ID metadata documents, the authorization
//! code flow with PKCE (S256 only), resource indicators (RFC 8707) and refresh
//! token rotation. Consent is automatic: the demo user is the one `login_hint`
//! names, or the first one. Everything it remembers is in memory, in maps of
//! bounded size. [`DemoAuthServer::mint`] signs any claims with the real key,
//! and [`DemoAuthServer::mint_with_foreign_key`] with one that is not published.

mod authorize;
mod claims;
mod clients;
mod error;
mod keys;
mod metadata;
mod params;
mod store;
mod token;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use serde::Serialize;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use claims::AccessClaims;
pub use error::OAuthError;

use keys::{SigningKey, random_token};
use store::{Bounded, State};

/// The scopes of the bridge's tools, all of which the server may grant.
pub const AMCP_SCOPES: [&str; 9] = [
    "amcp:inventory:read",
    "amcp:leads:read",
    "amcp:leads:write",
    "amcp:leads:staff",
    "amcp:service:read",
    "amcp:service:write",
    "amcp:service:staff",
    "amcp:deals:read",
    "amcp:deals:write",
];

/// The scopes of the default demo users: those of the demo's static tokens.
const DEFAULT_USER_SCOPES: [&str; 6] = [
    "amcp:inventory:read",
    "amcp:leads:read",
    "amcp:leads:write",
    "amcp:deals:read",
    "amcp:service:read",
    "amcp:service:write",
];

/// Someone who can sign in: the token's `sub`, and what `login_hint` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoUser {
    pub name: String,
    /// The token's `amcp_dealerships`.
    pub dealerships: Vec<String>,
    /// The most the user may be granted; a request's `scope` narrows it.
    pub scopes: Vec<String>,
}

impl DemoUser {
    pub fn new(
        name: impl Into<String>,
        dealerships: impl IntoIterator<Item = impl Into<String>>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            name: name.into(),
            dealerships: dealerships.into_iter().map(Into::into).collect(),
            scopes: scopes.into_iter().map(Into::into).collect(),
        }
    }

    /// The demo's two users, mirroring its static tokens: `demo-group` (the
    /// default, all six dealerships, like the token the demo's banner
    /// suggests) and `demo-cdk` (demo-cdk only).
    pub fn defaults() -> Vec<DemoUser> {
        vec![
            DemoUser::new(
                "demo-group",
                [
                    "demo-cdk",
                    "demo-feed",
                    "demo-tekion",
                    "demo-reynolds",
                    "demo-dealertrack",
                    "demo-xmlfeed",
                ],
                DEFAULT_USER_SCOPES,
            ),
            DemoUser::new("demo-cdk", ["demo-cdk"], DEFAULT_USER_SCOPES),
        ]
    }
}

/// How the server is set up. [`DemoAuthConfig::new`] has the defaults.
#[derive(Debug, Clone)]
pub struct DemoAuthConfig {
    /// The resources (RFC 8707) tokens may be for; the first is the default.
    pub resources: Vec<String>,
    /// Who can sign in; the first is the default user.
    pub users: Vec<DemoUser>,
    pub token_lifetime: Duration,
    pub code_lifetime: Duration,
    pub refresh_lifetime: Duration,
    /// Bounds on what the server remembers; past them the oldest goes.
    pub max_clients: usize,
    pub max_codes: usize,
    pub max_refresh_tokens: usize,
    /// Whether a `client_id` may be an http URL on a loopback host (a metadata
    /// document served by a test or a local client), besides https ones.
    pub loopback_client_ids: bool,
    /// Bounds on fetching a client ID metadata document.
    pub metadata_timeout: Duration,
    pub metadata_max_bytes: usize,
}

impl DemoAuthConfig {
    pub fn new(resources: Vec<String>, users: Vec<DemoUser>) -> Self {
        Self {
            resources,
            users,
            token_lifetime: Duration::from_secs(3600),
            code_lifetime: Duration::from_secs(60),
            refresh_lifetime: Duration::from_secs(24 * 3600),
            max_clients: 1000,
            max_codes: 1000,
            max_refresh_tokens: 10_000,
            loopback_client_ids: true,
            metadata_timeout: Duration::from_secs(5),
            metadata_max_bytes: 64 * 1024,
        }
    }
}

/// What the handlers share.
struct Shared {
    issuer: String,
    resources: Vec<String>,
    users: Vec<DemoUser>,
    token_lifetime: Duration,
    code_lifetime: Duration,
    refresh_lifetime: Duration,
    loopback_client_ids: bool,
    metadata_max_bytes: usize,
    key: SigningKey,
    /// A key not in the JWK Set, under the published key's `kid`.
    foreign_key: SigningKey,
    http: reqwest::Client,
    state: Mutex<State>,
}

impl Shared {
    /// The state; a handler that panicked holding it left nothing half-written
    /// that matters to a demo, so a poisoned lock is taken over.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The claims of a token issued now.
    fn claims(
        &self,
        user: &str,
        client_id: &str,
        resource: &str,
        scopes: &[String],
    ) -> Result<AccessClaims, OAuthError> {
        let user = self
            .users
            .iter()
            .find(|u| u.name == user)
            .ok_or_else(|| OAuthError::UnknownUser(user.to_owned()))?;
        let now = chrono::Utc::now().timestamp();
        let lifetime = i64::try_from(self.token_lifetime.as_secs()).unwrap_or(i64::MAX);
        Ok(AccessClaims {
            iss: self.issuer.clone(),
            sub: user.name.clone(),
            aud: resource.to_owned(),
            client_id: client_id.to_owned(),
            scope: scopes.join(" "),
            amcp_dealerships: user.dealerships.clone(),
            iat: now,
            nbf: now,
            exp: now.saturating_add(lifetime),
            jti: random_token(),
            extra: serde_json::Map::new(),
        })
    }
}

/// The demo authorization server, serving until its cancellation token is
/// cancelled.
pub struct DemoAuthServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl DemoAuthServer {
    /// Serves on `bind` (port 0 for any) with the default settings.
    pub async fn start(
        bind: SocketAddr,
        resources: Vec<String>,
        users: Vec<DemoUser>,
        cancel: CancellationToken,
    ) -> Result<Self, OAuthError> {
        Self::start_with(bind, DemoAuthConfig::new(resources, users), cancel).await
    }

    pub async fn start_with(
        bind: SocketAddr,
        config: DemoAuthConfig,
        cancel: CancellationToken,
    ) -> Result<Self, OAuthError> {
        if config.resources.is_empty() {
            return Err(OAuthError::NoResource);
        }
        if config.users.is_empty() {
            return Err(OAuthError::NoUser);
        }
        for (i, user) in config.users.iter().enumerate() {
            if config.users[..i].iter().any(|u| u.name == user.name) {
                return Err(OAuthError::DuplicateUser(user.name.clone()));
            }
        }
        let key = SigningKey::generate()?;
        let foreign_key = SigningKey::generate()?.impersonating(&key);
        let http = crate::http::client_builder()
            .timeout(config.metadata_timeout)
            .connect_timeout(config.metadata_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let listener = TcpListener::bind(bind).await?;
        let mut addr = listener.local_addr()?;
        if addr.ip().is_unspecified() {
            addr.set_ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
        }
        let shared = Arc::new(Shared {
            issuer: format!("http://{addr}"),
            resources: config.resources,
            users: config.users,
            token_lifetime: config.token_lifetime,
            code_lifetime: config.code_lifetime,
            refresh_lifetime: config.refresh_lifetime,
            loopback_client_ids: config.loopback_client_ids,
            metadata_max_bytes: config.metadata_max_bytes,
            key,
            foreign_key,
            http,
            state: Mutex::new(State {
                clients: Bounded::new(config.max_clients),
                codes: Bounded::new(config.max_codes),
                refresh_tokens: Bounded::new(config.max_refresh_tokens),
            }),
        });
        let app = router(shared.clone());
        tokio::spawn(async move {
            let server = axum::serve(listener, app)
                .with_graceful_shutdown(async move { cancel.cancelled().await });
            if let Err(e) = server.await {
                tracing::error!(error = %e, "Demo authorization server stopped.");
            }
        });
        tracing::info!(issuer = %shared.issuer, kid = shared.key.kid(), "Demo authorization server started.");
        Ok(Self { addr, shared })
    }

    /// The issuer (`iss`), also the base of every endpoint: `http://127.0.0.1:PORT`.
    pub fn issuer(&self) -> &str {
        &self.shared.issuer
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.shared.issuer)
    }

    /// The `kid` of the signing key.
    pub fn kid(&self) -> &str {
        self.shared.key.kid()
    }

    /// The claims the server would put in a token issued now to `user` for the
    /// default resource with all the user's scopes, for a test to change and
    /// [`mint`](Self::mint).
    pub fn claims(&self, user: &str) -> Result<AccessClaims, OAuthError> {
        let user_scopes = self
            .shared
            .users
            .iter()
            .find(|u| u.name == user)
            .map(|u| u.scopes.clone())
            .ok_or_else(|| OAuthError::UnknownUser(user.to_owned()))?;
        self.shared.claims(
            user,
            "demo-test-client",
            &self.shared.resources[0],
            &user_scopes,
        )
    }

    /// `claims` (an [`AccessClaims`] or any JSON) as a token signed with the
    /// server's published key.
    pub fn mint<T: Serialize>(&self, claims: &T) -> Result<String, OAuthError> {
        Ok(self.shared.key.sign(claims)?)
    }

    /// `claims` signed with the published key, with `extra` members in the
    /// token's protected header.
    pub fn mint_with_header<T: Serialize>(
        &self,
        claims: &T,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, OAuthError> {
        self.shared.key.sign_with_header(claims, extra)
    }

    /// `claims` signed with a key that is not in the JWK Set, under the
    /// published key's `kid`: a verifier that checks signatures refuses it.
    pub fn mint_with_foreign_key<T: Serialize>(&self, claims: &T) -> Result<String, OAuthError> {
        Ok(self.shared.foreign_key.sign(claims)?)
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::metadata),
        )
        .route("/.well-known/openid-configuration", get(metadata::metadata))
        .route("/jwks", get(metadata::jwks))
        .route("/register", post(clients::register))
        .route("/authorize", get(authorize::authorize))
        .route("/token", post(token::token))
        .layer(DefaultBodyLimit::max(64 * 1024))
        .layer(axum::middleware::from_fn(metadata::cors))
        .with_state(shared)
}
