//! One configured endpoint: where events go, which ones, how they are signed,
//! and one signed POST of an event.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use chrono::Utc;
use reqwest::header::{CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use secrecy::{ExposeSecret, SecretSlice};

use super::signature::sign;
use crate::config::{Config, ConfigError, WebhookConfig, resolve_secret, webhook_key};
use crate::model::event::{Event, EventType};

/// A webhook endpoint, built from `[webhooks.<id>]`.
pub struct Endpoint {
    pub id: String,
    /// The dealerships whose events it gets (`"*"` expanded).
    pub dealerships: Vec<String>,
    url: reqwest::Url,
    /// The signing key; a reload replaces it (see [`Self::take_key_of`]).
    key: arc_swap::ArcSwap<SecretSlice<u8>>,
    /// `None`: every type.
    types: Option<BTreeSet<EventType>>,
    pub max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    client: reqwest::Client,
}

/// Why a POST did not count as delivered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{class}")]
pub struct Failure {
    /// `http_503`, `timeout`, `connection` or `request`: never a response body.
    pub class: String,
    /// The receiver's `Retry-After`, if it sent one.
    pub retry_after: Option<Duration>,
}

impl Endpoint {
    /// Reads the secret and makes the HTTP client; problems go to `errors`.
    pub fn build(
        config: &Config,
        id: &str,
        hook: &WebhookConfig,
        base: &Path,
        errors: &mut Vec<ConfigError>,
    ) -> Option<Self> {
        let at = format!("webhooks.{id}");
        let key = resolve_secret(&hook.secret, base)
            .and_then(|s| webhook_key(s.expose_secret()))
            .map_err(|e| errors.push(ConfigError::new(format!("{at}.secret"), e)))
            .ok()?;
        let url = reqwest::Url::parse(&hook.url).ok()?;
        // A receiver's redirect is a failure: events go only where configured.
        let client = crate::net::client_builder()
            .timeout(hook.timeout)
            .connect_timeout(hook.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| errors.push(ConfigError::new(&at, format!("HTTP client: {e}"))))
            .ok()?;
        let types = (!hook.types.is_empty()).then(|| {
            hook.types
                .iter()
                .filter_map(|t| EventType::parse(t))
                .collect()
        });
        Some(Self {
            id: id.to_owned(),
            dealerships: crate::config::webhook_dealerships(config, hook),
            url,
            key: arc_swap::ArcSwap::from_pointee(SecretSlice::from(key)),
            types,
            max_attempts: hook.max_attempts,
            base_delay: hook.base_delay,
            max_delay: hook.max_delay,
            client,
        })
    }

    /// Signs from now on with `other`'s key (a reload's new secret for this endpoint).
    pub fn take_key_of(&self, other: &Endpoint) {
        self.key.store(other.key.load_full());
    }

    /// Whether the endpoint takes events of this type.
    pub fn takes(&self, event_type: EventType) -> bool {
        self.types.as_ref().is_none_or(|t| t.contains(&event_type))
    }

    /// POSTs `event`, signed; only a 2xx answer counts.
    pub async fn post(&self, event: &Event) -> Result<(), Failure> {
        let body = serde_json::to_vec(event).map_err(|_| Failure {
            class: "encode".into(),
            retry_after: None,
        })?;
        let timestamp = Utc::now().timestamp();
        let signature = sign(self.key.load().expose_secret(), &event.id, timestamp, &body);
        let sent = self
            .client
            .post(self.url.clone())
            .header("webhook-id", &event.id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await;
        match sent {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => Err(Failure {
                class: format!("http_{}", r.status().as_u16()),
                retry_after: retry_after(r.headers()),
            }),
            Err(e) => Err(Failure {
                class: if e.is_timeout() {
                    "timeout"
                } else if e.is_connect() {
                    "connection"
                } else {
                    "request"
                }
                .into(),
                retry_after: None,
            }),
        }
    }

    /// The wait before attempt `attempts + 1`: exponential from `base_delay`
    /// with equal jitter, a longer `Retry-After` winning, never over `max_delay`.
    pub fn backoff(&self, attempts: u32, asked: Option<Duration>) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(attempts.saturating_sub(1)))
            .min(self.max_delay);
        let half = exp / 2;
        let jittered = half + half.mul_f64(fastrand::f64());
        asked
            .map_or(jittered, |a| a.max(jittered))
            .min(self.max_delay)
    }
}

/// `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    value
        .parse::<u64>()
        .map(Duration::from_secs)
        .ok()
        .or_else(|| {
            let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
            (when.with_timezone(&Utc) - Utc::now()).to_std().ok()
        })
}
