//! Upstream credentials. OAuth2 client-credentials tokens are cached until
//! shortly before they expire and refreshed by one caller at a time.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;
use tokio::sync::Mutex;

use super::profile::ClientAuth;
use crate::adapters::AdapterError;
use crate::adapters::http::{self, status_error};
use crate::adapters::mapping::path::{ValuePath, scalar_text};

/// How API requests are authenticated.
pub enum UpstreamAuth {
    None,
    Basic {
        user: SecretString,
        password: SecretString,
    },
    Bearer(SecretString),
    OAuth(Box<OAuthClient>),
}

pub struct OAuthClient {
    pub token_url: String,
    pub client_id: SecretString,
    pub client_secret: SecretString,
    pub client_auth: ClientAuth,
    pub scope: Option<String>,
    pub token_path: ValuePath,
    pub expires_path: ValuePath,
    pub extra_form: BTreeMap<String, String>,
    /// Form field names for the id and secret when they go in the form.
    form_fields: (String, String),
    cache: Mutex<Option<CachedToken>>,
}

struct CachedToken {
    token: SecretString,
    generation: u64,
    refresh_at: Instant,
}

/// A token handed to a request, with the generation to report if it is refused.
pub struct IssuedToken {
    pub token: SecretString,
    pub generation: u64,
}

impl OAuthClient {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        token_url: String,
        client_id: SecretString,
        client_secret: SecretString,
        client_auth: ClientAuth,
        scope: Option<String>,
        token_path: ValuePath,
        expires_path: ValuePath,
        extra_form: BTreeMap<String, String>,
    ) -> Self {
        Self {
            token_url,
            client_id,
            client_secret,
            client_auth,
            scope,
            token_path,
            expires_path,
            extra_form,
            form_fields: ("client_id".into(), "client_secret".into()),
            cache: Mutex::new(None),
        }
    }

    /// Vendors that name the form fields differently (Tekion: `app_id`, `secret_key`).
    pub fn with_form_fields(mut self, client_id: &str, client_secret: &str) -> Self {
        self.form_fields = (client_id.to_owned(), client_secret.to_owned());
        self
    }

    /// A valid token. `refused` names a generation the upstream just rejected,
    /// so only the first caller to notice fetches a new one.
    pub async fn token(
        &self,
        http: &reqwest::Client,
        refused: Option<u64>,
    ) -> Result<IssuedToken, AdapterError> {
        let mut cache = self.cache.lock().await;
        if let Some(c) = cache.as_ref() {
            let stale = refused == Some(c.generation) || Instant::now() >= c.refresh_at;
            if !stale {
                return Ok(IssuedToken {
                    token: c.token.clone(),
                    generation: c.generation,
                });
            }
        }
        let generation = cache.as_ref().map_or(1, |c| c.generation + 1);
        let (token, lifetime) = self.fetch(http).await?;
        // Refresh a minute early (or at 90% of short lifetimes) so calls never carry an expiring token.
        let margin = Duration::from_secs(60).min(lifetime / 10);
        *cache = Some(CachedToken {
            token: token.clone(),
            generation,
            refresh_at: Instant::now() + lifetime - margin,
        });
        tracing::debug!(token_url = %self.token_url, generation, "Fetched a new upstream access token.");
        Ok(IssuedToken { token, generation })
    }

    async fn fetch(
        &self,
        http: &reqwest::Client,
    ) -> Result<(SecretString, Duration), AdapterError> {
        let mut form: Vec<(String, String)> =
            vec![("grant_type".into(), "client_credentials".into())];
        if let Some(scope) = &self.scope {
            form.push(("scope".into(), scope.clone()));
        }
        form.extend(self.extra_form.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut request = http
            .post(&self.token_url)
            .header("Accept", "application/json");
        match self.client_auth {
            ClientAuth::Basic => {
                request = request.basic_auth(
                    self.client_id.expose_secret(),
                    Some(self.client_secret.expose_secret()),
                );
            }
            ClientAuth::Form => {
                form.push((
                    self.form_fields.0.clone(),
                    self.client_id.expose_secret().to_owned(),
                ));
                form.push((
                    self.form_fields.1.clone(),
                    self.client_secret.expose_secret().to_owned(),
                ));
            }
        }
        let reply = http::send(request.form(&form)).await?;
        if !reply.status.is_success() {
            tracing::warn!(status = reply.status.as_u16(), token_url = %self.token_url, "Upstream token endpoint refused the request.");
            return Err(match reply.status.as_u16() {
                400 | 401 | 403 => AdapterError::Unauthorized {
                    status: reply.status.as_u16(),
                },
                _ => status_error(reply.status, &reply.headers, None),
            });
        }
        let body: Value = serde_json::from_slice(&reply.body).map_err(|_| {
            AdapterError::InvalidResponse(
                "token endpoint answered with something other than JSON".into(),
            )
        })?;
        let token = self
            .token_path
            .first(&body)
            .and_then(Value::as_str)
            .ok_or_else(|| {
                AdapterError::InvalidResponse("token endpoint answer has no access token".into())
            })?;
        let seconds = self
            .expires_path
            .first(&body)
            .and_then(scalar_text)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(300);
        Ok((
            SecretString::from(token.to_owned()),
            Duration::from_secs(seconds.max(1)),
        ))
    }
}
