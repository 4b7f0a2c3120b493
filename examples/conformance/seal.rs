//! `requestState` the client echoes back unread: JSON, base64url, and an
//! HMAC-SHA256 tag over it, so a stateless server can trust what it gets
//! back (`input-required-result-tampered-state`). The key is made at start:
//! states do not survive a restart, which a test fixture does not need.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

type Tag = Hmac<Sha256>;

/// Seals and opens states; cloned into every handler.
#[derive(Clone)]
pub struct Sealer {
    /// Keyed once; cloned per tag.
    mac: Arc<Tag>,
}

impl Sealer {
    /// A fresh random key (two v4 UUIDs: 244 random bits).
    pub fn random() -> Result<Self, String> {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        let mac = Tag::new_from_slice(&key).map_err(|e| e.to_string())?;
        Ok(Self { mac: Arc::new(mac) })
    }

    /// `payload.tag`, both base64url.
    pub fn seal(&self, state: &Value) -> String {
        let payload = URL_SAFE_NO_PAD.encode(state.to_string());
        let tag = URL_SAFE_NO_PAD.encode(self.tag(payload.as_bytes()).finalize().into_bytes());
        format!("{payload}.{tag}")
    }

    /// The state, if `sealed` is one this server made and nobody changed.
    pub fn open(&self, sealed: &str) -> Option<Value> {
        let (payload, tag) = sealed.split_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // Constant-time comparison of the tags.
        self.tag(payload.as_bytes()).verify_slice(&tag).ok()?;
        let json = URL_SAFE_NO_PAD.decode(payload).ok()?;
        serde_json::from_slice(&json).ok()
    }

    fn tag(&self, payload: &[u8]) -> Tag {
        let mut mac = Tag::clone(&self.mac);
        mac.update(payload);
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sealed_states_open_and_tampered_ones_do_not() {
        let sealer = Sealer::random().unwrap();
        let sealed = sealer.seal(&json!({ "round": 1 }));
        assert_eq!(sealer.open(&sealed), Some(json!({ "round": 1 })));
        assert_eq!(sealer.open(&format!("{sealed}-TAMPERED")), None);
        assert_eq!(Sealer::random().unwrap().open(&sealed), None);
    }
}
