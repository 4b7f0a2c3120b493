//! Upstreams whose vendor pushes change events (`upstreams.<id>.inbound_events`):
//! the secret they authenticate with, the largest body read, and the
//! dealerships whose mirrored inventory an event refreshes. An event's body is
//! not trusted for what changed: whatever it names, the answer is one fresh
//! read of the inventory, so a duplicate, a reordering or an unknown unit can
//! neither apply a change twice nor lose one.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use std::time::Duration;

use base64::Engine;
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::config::{Config, ConfigError, InboundSigning, UpstreamConfig, resolve_secret};
use crate::model::Domain;

/// How far a Standard Webhooks `webhook-timestamp` may be from now (the
/// specification's recommendation): an older signed push is a replay.
pub const TIMESTAMP_TOLERANCE: Duration = Duration::from_secs(5 * 60);

/// One upstream's inbound events.
pub struct InboundSink {
    secret: SecretString,
    pub signing: InboundSigning,
    /// Largest body read, in bytes.
    pub max_body: usize,
    /// Dealerships whose inventory comes from this upstream.
    pub dealerships: Vec<String>,
    /// Least time between two reads events ask of one dealership.
    pub min_read_interval: Duration,
}

/// A Standard Webhooks delivery's signed headers.
pub struct SignedHeaders<'a> {
    pub id: &'a str,
    pub timestamp: &'a str,
    pub signature: &'a str,
}

/// Every upstream that accepts inbound events, by upstream id. Cheap to clone;
/// clones share one table, which a reload replaces whole (new secrets).
#[derive(Clone, Default)]
pub struct InboundSinks(Arc<arc_swap::ArcSwap<BTreeMap<String, Arc<InboundSink>>>>);

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
                signing: inbound.signing,
                // validate() refused any other size.
                max_body: inbound.max_body_bytes().unwrap_or(256 * 1024),
                dealerships,
                min_read_interval: inbound.min_read_interval,
            };
            sinks.insert(id.clone(), Arc::new(sink));
        }
        Self(Arc::new(arc_swap::ArcSwap::from_pointee(sinks)))
    }

    pub fn get(&self, upstream: &str) -> Option<Arc<InboundSink>> {
        self.0.load().get(upstream).cloned()
    }

    /// Upstreams that take inbound events.
    pub fn len(&self) -> usize {
        self.0.load().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes `other`'s sinks (a reload) for every event from now on.
    pub fn replace(&self, other: &InboundSinks) {
        self.0.store(other.0.load_full());
    }

    /// The least time between event-asked reads of `dealership`'s inventory
    /// (zero when no vendor pushes for it).
    pub fn min_read_interval(&self, dealership: &str) -> Duration {
        self.0
            .load()
            .values()
            .filter(|sink| sink.dealerships.iter().any(|d| d == dealership))
            .map(|sink| sink.min_read_interval)
            .max()
            .unwrap_or(Duration::ZERO)
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

    /// Whether a Standard Webhooks delivery is signed with the secret over
    /// its id, timestamp and body, and its timestamp is within
    /// [`TIMESTAMP_TOLERANCE`] of `now` (seconds since the epoch).
    pub fn verifies_standard(&self, headers: &SignedHeaders<'_>, body: &[u8], now: i64) -> bool {
        let Ok(sent_at) = headers.timestamp.trim().parse::<i64>() else {
            return false;
        };
        if sent_at.abs_diff(now) > TIMESTAMP_TOLERANCE.as_secs() {
            return false;
        }
        let secret = self.secret.expose_secret();
        let key = match secret.strip_prefix("whsec_") {
            Some(encoded) => match base64::engine::general_purpose::STANDARD.decode(encoded) {
                Ok(key) => key,
                Err(_) => return false,
            },
            None => secret.as_bytes().to_vec(),
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&key) else {
            return false;
        };
        mac.update(format!("{}.{}.", headers.id, headers.timestamp.trim()).as_bytes());
        mac.update(body);
        let expected = mac.finalize().into_bytes();
        // Several space-separated signatures may come (key rotation): any one.
        headers.signature.split(' ').any(|candidate| {
            candidate
                .strip_prefix("v1,")
                .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
                .is_some_and(|given| bool::from(given.as_slice().ct_eq(expected.as_slice())))
        })
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
            signing: InboundSigning::Body,
            max_body: 1024,
            dealerships: vec![],
            min_read_interval: Duration::ZERO,
        }
    }

    fn standard(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        let digest = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        format!("v1,{digest}")
    }

    #[test]
    fn a_standard_webhooks_signature_binds_the_id_and_a_recent_time() {
        let body = br#"{"type":"x"}"#;
        let key = b"0123456789abcdef0123456789abcdef";
        let mut sink = sink();
        let encoded = base64::engine::general_purpose::STANDARD.encode(key);
        sink.secret = SecretString::from(format!("whsec_{encoded}"));
        let now = 1_800_000_000;
        let at = now.to_string();
        let signed = |id: &str, ts: &str| standard(key, id, ts, body);
        let check = |id: &str, ts: &str, signature: &str| {
            let headers = SignedHeaders {
                id,
                timestamp: ts,
                signature,
            };
            sink.verifies_standard(&headers, body, now)
        };
        assert!(check("msg_1", &at, &signed("msg_1", &at)));
        // Another id under the same signature: a replay.
        assert!(!check("msg_2", &at, &signed("msg_1", &at)));
        // Older than five minutes, or from the future: refused.
        let old = (now - 301).to_string();
        assert!(!check("msg_1", &old, &signed("msg_1", &old)));
        let ahead = (now + 301).to_string();
        assert!(!check("msg_1", &ahead, &signed("msg_1", &ahead)));
        // Rotation: any of several signatures.
        let both = format!("v1,AAAA {}", signed("msg_1", &at));
        assert!(check("msg_1", &at, &both));
        assert!(!check("msg_1", "soon", &signed("msg_1", "soon")));
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
