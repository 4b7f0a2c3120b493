//! The authorization server's signing keys: found through its metadata,
//! fetched within a bounded time, kept, and fetched again when a token names
//! a key not seen yet (key rotation), at most once per interval. A fetch that
//! failed counts as one: while the issuer is down, a token naming an unknown
//! key (anyone can make one) is refused at once instead of waiting for a
//! fetch of its own, and tokens arriving during a fetch share it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use tokio::sync::{Mutex, RwLock};

/// Why no key could be had. Callers see only "invalid token"; this is logged.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error("the authorization server did not answer within {0:?}")]
    Timeout(Duration),
    #[error("fetching {what}: {source}")]
    Fetch {
        what: &'static str,
        #[source]
        source: reqwest::Error,
    },
    #[error("the issuer's metadata names no jwks_uri")]
    NoJwksUri,
    #[error("the issuer's metadata names issuer {0:?}, not the configured one")]
    IssuerMismatch(String),
}

/// Where to look and how patiently.
#[derive(Debug, Clone)]
pub struct KeySource {
    pub issuer: String,
    /// Configured, or `None` to read it from the issuer's metadata.
    pub jwks_uri: Option<String>,
    pub timeout: Duration,
    pub refresh_min_interval: Duration,
}

pub struct Keys {
    source: KeySource,
    http: reqwest::Client,
    /// The keys last fetched.
    current: RwLock<Option<Arc<JwkSet>>>,
    /// When the last fetch started, whether it succeeded or not.
    last_attempt: RwLock<Option<Instant>>,
    /// Held by the fetch in flight: tokens arriving meanwhile wait for it
    /// and take its keys, rather than queueing fetches of their own.
    fetching: Mutex<()>,
}

impl Keys {
    pub fn new(source: KeySource, http: reqwest::Client) -> Self {
        Self {
            source,
            http,
            current: RwLock::new(None),
            last_attempt: RwLock::new(None),
            fetching: Mutex::new(()),
        }
    }

    /// The key `kid` names (or the only key, when the token names none),
    /// fetching the set first if it is unknown or lacks the key and the last
    /// fetch is old enough.
    pub async fn find(&self, kid: Option<&str>) -> Result<Option<Jwk>, KeysError> {
        if let Some(found) = self.lookup(kid).await {
            return Ok(Some(found));
        }
        let _turn = match self.fetching.try_lock() {
            Ok(turn) => turn,
            Err(_) => {
                // A fetch is in flight: its keys are this call's answer.
                drop(self.fetching.lock().await);
                return Ok(self.lookup(kid).await);
            }
        };
        // A fetch may have ended between the lookup and taking the turn.
        if let Some(found) = self.lookup(kid).await {
            return Ok(Some(found));
        }
        if !self.may_fetch().await {
            return Ok(None);
        }
        *self.last_attempt.write().await = Some(Instant::now());
        let keys = self.fetch().await?;
        let found = pick(&keys, kid);
        *self.current.write().await = Some(Arc::new(keys));
        Ok(found)
    }

    async fn lookup(&self, kid: Option<&str>) -> Option<Jwk> {
        let current = self.current.read().await;
        current.as_ref().and_then(|keys| pick(keys, kid))
    }

    /// Whether the last fetch, failed or not, is old enough for another.
    async fn may_fetch(&self) -> bool {
        self.last_attempt
            .read()
            .await
            .is_none_or(|at| at.elapsed() >= self.source.refresh_min_interval)
    }

    async fn fetch(&self) -> Result<JwkSet, KeysError> {
        let timeout = self.source.timeout;
        tokio::time::timeout(timeout, self.fetch_unbounded())
            .await
            .map_err(|_| KeysError::Timeout(timeout))?
    }

    async fn fetch_unbounded(&self) -> Result<JwkSet, KeysError> {
        let uri = match &self.source.jwks_uri {
            Some(uri) => uri.clone(),
            None => self.discover_jwks_uri().await?,
        };
        let keys = self.get_json::<JwkSet>(&uri, "the JWK set").await?;
        tracing::info!(
            keys = keys.keys.len(),
            "Fetched the authorization server's signing keys."
        );
        Ok(keys)
    }

    /// RFC 8414 metadata first, then OpenID Connect discovery.
    async fn discover_jwks_uri(&self) -> Result<String, KeysError> {
        let issuer = self.source.issuer.trim_end_matches('/');
        let mut last = None;
        for well_known in [
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ] {
            match self
                .get_json::<Metadata>(&format!("{issuer}{well_known}"), "the issuer's metadata")
                .await
            {
                Ok(metadata) => {
                    if metadata.issuer.trim_end_matches('/') != issuer {
                        return Err(KeysError::IssuerMismatch(metadata.issuer));
                    }
                    return metadata.jwks_uri.ok_or(KeysError::NoJwksUri);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or(KeysError::NoJwksUri))
    }

    async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        what: &'static str,
    ) -> Result<T, KeysError> {
        let fetch = |source| KeysError::Fetch { what, source };
        self.http
            .get(url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(fetch)?
            .json::<T>()
            .await
            .map_err(fetch)
    }
}

#[derive(serde::Deserialize)]
struct Metadata {
    issuer: String,
    jwks_uri: Option<String>,
}

/// The key a token names; without a `kid`, the set's only key.
fn pick(keys: &JwkSet, kid: Option<&str>) -> Option<Jwk> {
    match kid {
        Some(kid) => keys.find(kid).cloned(),
        None if keys.keys.len() == 1 => keys.keys.first().cloned(),
        None => None,
    }
}
