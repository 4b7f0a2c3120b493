//! Upstreams whose vendor pushes change events (`upstreams.<id>.inbound_events`):
//! the secret they authenticate with, the largest body read, and the
//! dealerships whose mirrored inventory an event refreshes. An event's body is
//! not trusted for what changed: whatever it names, the answer is one fresh
//! read of the inventory, so a duplicate, a reordering or an unknown unit can
//! neither apply a change twice nor lose one.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::config::{Config, ConfigError, UpstreamConfig, resolve_secret};
use crate::model::Domain;

/// One upstream's inbound events.
pub struct InboundSink {
    secret: SecretString,
    /// Largest body read, in bytes.
    pub max_body: usize,
    /// Dealerships whose inventory comes from this upstream.
    pub dealerships: Vec<String>,
}

/// Every upstream that accepts inbound events, by upstream id. Cheap to clone.
#[derive(Clone, Default)]
pub struct InboundSinks(Arc<BTreeMap<String, InboundSink>>);

impl InboundSinks {
    /// Reads each `inbound_events` secret; problems go to `errors` with their paths.
    pub fn build(config: &Config, base: &Path, errors: &mut Vec<ConfigError>) -> Self {
        let mut sinks = BTreeMap::new();
        for (id, upstream) in &config.upstreams {
            let UpstreamConfig::Rest(rest) = upstream else {
                continue;
            };
            let Some(inbound) = &rest.inbound_events else {
                continue;
            };
            let secret = match resolve_secret(&inbound.secret, base) {
                Ok(secret) => secret,
                Err(e) => {
                    let at = format!("upstreams.{id}.inbound_events.secret");
                    errors.push(ConfigError::new(at, e));
                    continue;
                }
            };
            let dealerships = config
                .dealerships
                .iter()
                .filter(|d| d.routes.get(&Domain::Inventory) == Some(id))
                .map(|d| d.id.clone())
                .collect();
            let sink = InboundSink {
                secret,
                // validate() refused any other size.
                max_body: inbound.max_body_bytes().unwrap_or(256 * 1024),
                dealerships,
            };
            sinks.insert(id.clone(), sink);
        }
        Self(Arc::new(sinks))
    }

    pub fn get(&self, upstream: &str) -> Option<&InboundSink> {
        self.0.get(upstream)
    }
}

impl InboundSink {
    /// Whether the vendor proved it holds the secret: `authorization` is
    /// `Bearer <secret>`, or `signature` is `sha256=<hex HMAC-SHA256 of body>`.
    /// Both compared in constant time.
    pub fn authenticates(
        &self,
        authorization: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> bool {
        let secret = self.secret.expose_secret().as_bytes();
        let bearer = authorization
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .is_some_and(|token| bool::from(token.trim().as_bytes().ct_eq(secret)));
        bearer || signature.is_some_and(|s| signed(secret, s, body))
    }
}

/// `sha256=<hex>` is the HMAC-SHA256 of `body` under `key`.
fn signed(key: &[u8], signature: &str, body: &[u8]) -> bool {
    let Some(digest) = signature
        .trim()
        .strip_prefix("sha256=")
        .and_then(|hex_digest| hex::decode(hex_digest).ok())
    else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&digest).is_ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn sink() -> InboundSink {
        InboundSink {
            secret: SecretString::from("s3cret".to_owned()),
            max_body: 1024,
            dealerships: vec![],
        }
    }

    fn signature(key: &[u8], body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
        mac.update(body);
        format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
    }

    #[test]
    fn a_bearer_secret_or_a_body_signature_authenticates() {
        let body = br#"{"eventType":"x"}"#;
        let sink = sink();
        assert!(sink.authenticates(Some("Bearer s3cret"), None, body));
        assert!(!sink.authenticates(Some("Bearer s3cre"), None, body));
        assert!(!sink.authenticates(Some("s3cret"), None, body));
        assert!(sink.authenticates(None, Some(&signature(b"s3cret", body)), body));
        assert!(!sink.authenticates(None, Some(&signature(b"other", body)), body));
        assert!(!sink.authenticates(None, Some(&signature(b"s3cret", b"{}")), body));
        assert!(!sink.authenticates(None, Some("sha256=zz"), body));
        assert!(!sink.authenticates(None, None, body));
        // A wrong bearer does not stop a right signature.
        let signed = signature(b"s3cret", body);
        assert!(sink.authenticates(Some("Bearer nope"), Some(&signed), body));
    }
}
