//! The ES256 key pair the server signs access tokens with, made at start, and
//! the random strings it hands out (client ids, codes, refresh tokens).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::pkcs8::EncodePrivateKey;
use rand_core::{OsRng, RngCore};
use serde::Serialize;

use super::error::OAuthError;

/// A P-256 key pair, its public half as a JWK, and its `kid` (the JWK's
/// RFC 7638 thumbprint).
pub(super) struct SigningKey {
    kid: String,
    encoding: EncodingKey,
    jwk: Jwk,
}

impl SigningKey {
    /// A new key pair from the operating system's random source.
    pub fn generate() -> Result<Self, OAuthError> {
        let secret = p256::SecretKey::random(&mut OsRng);
        let der = secret
            .to_pkcs8_der()
            .map_err(|e| OAuthError::Key(e.to_string()))?;
        let encoding = EncodingKey::from_ec_der(der.as_bytes());
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256)?;
        let kid = jwk.thumbprint(ThumbprintHash::SHA256)?;
        jwk.common.key_id = Some(kid.clone());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        Ok(Self { kid, encoding, jwk })
    }

    /// This key's pair under another key's `kid`: a token signed with it names a
    /// published key but does not verify against it.
    pub fn impersonating(mut self, other: &SigningKey) -> Self {
        self.kid = other.kid.clone();
        self.jwk.common.key_id = Some(other.kid.clone());
        self
    }

    /// A compact JWS (ES256, with this key's `kid`) of `claims`.
    pub fn sign<T: Serialize>(&self, claims: &T) -> Result<String, jsonwebtoken::errors::Error> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding)
    }

    /// As [`sign`](Self::sign), with `extra` members in the protected header
    /// (`crit`, say), which the library's own header type cannot carry.
    pub fn sign_with_header<T: Serialize>(
        &self,
        claims: &T,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, OAuthError> {
        let mut header = serde_json::json!({ "alg": "ES256", "typ": "JWT", "kid": self.kid });
        for (name, value) in extra {
            header[name] = value.clone();
        }
        let json = |e: serde_json::Error| OAuthError::Key(e.to_string());
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).map_err(json)?),
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).map_err(json)?)
        );
        let signature =
            jsonwebtoken::crypto::sign(signing_input.as_bytes(), &self.encoding, Algorithm::ES256)?;
        Ok(format!("{signing_input}.{signature}"))
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The JWK Set that publishes this key.
    pub fn jwks(&self) -> JwkSet {
        JwkSet {
            keys: vec![self.jwk.clone()],
        }
    }
}

/// 256 random bits, base64url: unguessable codes, tokens and client ids.
pub(super) fn random_token() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}
