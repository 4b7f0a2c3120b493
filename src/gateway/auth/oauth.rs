//! OAuth access tokens: JWTs from the configured authorization server,
//! checked here (signature against its published keys, issuer, audience,
//! expiry) and turned into a principal. A token is never sent anywhere.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::jwks::{KeySource, Keys};
use crate::config::OAuthConfig;
use crate::contract::principal::{DealershipGrant, Principal, Scope};

/// Why a token was refused: the class is logged, never the token or claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    Malformed,
    Algorithm,
    UnknownKey,
    KeyMismatch,
    Signature,
    Expired,
    NotYetValid,
    Audience,
    Issuer,
    MissingClaim,
    KeysUnavailable,
}

impl Refused {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::Algorithm => "algorithm_not_allowed",
            Self::UnknownKey => "unknown_key",
            Self::KeyMismatch => "key_does_not_fit_algorithm",
            Self::Signature => "bad_signature",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::Audience => "wrong_audience",
            Self::Issuer => "wrong_issuer",
            Self::MissingClaim => "missing_claim",
            Self::KeysUnavailable => "keys_unavailable",
        }
    }
}

/// Dealerships granted in config to one subject or client.
struct Grant {
    subject: Option<String>,
    client_id: Option<String>,
    dealerships: DealershipGrant,
}

/// A token already checked: its principal until it expires (or the entry
/// ages out), so a busy agent's calls do not each pay for a signature check.
#[derive(Clone)]
struct Verified {
    principal: Arc<Principal>,
    expires_at: u64,
}

pub struct OAuthVerifier {
    keys: Keys,
    resource: String,
    issuer: String,
    resource_name: Option<String>,
    audiences: HashSet<String>,
    leeway: Duration,
    scopes_claim: String,
    dealerships_claim: String,
    grants: Vec<Grant>,
    verified: moka::sync::Cache<[u8; 32], Verified>,
}

/// Longest a checked token is trusted without a new signature check.
const VERIFIED_FOR: Duration = Duration::from_secs(60);

impl OAuthVerifier {
    pub fn new(config: &OAuthConfig, http: reqwest::Client) -> Self {
        let mut audiences = HashSet::new();
        for audience in std::iter::once(&config.resource).chain(&config.audiences) {
            // Claude Code adds a trailing slash to the resource; some servers drop one.
            let bare = audience.trim_end_matches('/');
            audiences.insert(bare.to_owned());
            audiences.insert(format!("{bare}/"));
        }
        let grants = config
            .grants
            .iter()
            .map(|g| Grant {
                subject: g.subject.clone(),
                client_id: g.client_id.clone(),
                dealerships: grant_of(g.dealerships.iter().map(String::as_str)),
            })
            .collect();
        Self {
            keys: Keys::new(
                KeySource {
                    issuer: config.issuer.clone(),
                    jwks_uri: config.jwks_uri.clone(),
                    timeout: config.jwks_timeout,
                    refresh_min_interval: config.jwks_refresh_min_interval,
                },
                http,
            ),
            resource: config.resource.clone(),
            issuer: config.issuer.clone(),
            resource_name: config.resource_name.clone(),
            audiences,
            leeway: config.leeway,
            scopes_claim: config.scopes_claim.clone(),
            dealerships_claim: config.dealerships_claim.clone(),
            grants,
            verified: moka::sync::Cache::builder()
                .max_capacity(10_000)
                .time_to_live(VERIFIED_FOR)
                .build(),
        }
    }

    pub fn resource(&self) -> &str {
        &self.resource
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    pub fn resource_name(&self) -> Option<&str> {
        self.resource_name.as_deref()
    }

    /// The principal of a valid access token.
    pub async fn verify(&self, token: &str) -> Result<Arc<Principal>, Refused> {
        let digest = super::digest(token);
        if let Some(hit) = self.verified.get(&digest) {
            if hit.expires_at + self.leeway.as_secs() > now() {
                return Ok(hit.principal);
            }
            self.verified.invalidate(&digest);
        }
        let claims = self.check(token).await?;
        let principal = Arc::new(self.principal_of(&claims)?);
        let expires_at = claims.get("exp").and_then(Value::as_u64).unwrap_or(0);
        self.verified.insert(
            digest,
            Verified {
                principal: principal.clone(),
                expires_at,
            },
        );
        Ok(principal)
    }

    /// The token's claims, once its signature, issuer, audience and times hold.
    async fn check(&self, token: &str) -> Result<Value, Refused> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| Refused::Malformed)?;
        // RFC 7515 §4.1.11: extensions named in `crit` must be understood,
        // and this verifier understands none.
        if names_critical_extensions(token) {
            return Err(Refused::Malformed);
        }
        // Asymmetric signatures only: `none` does not parse as an algorithm,
        // and HMAC would let a public key pose as a shared secret.
        if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256) {
            return Err(Refused::Algorithm);
        }
        let jwk = match self.keys.find(header.kid.as_deref()).await {
            Ok(Some(jwk)) => jwk,
            Ok(None) => return Err(Refused::UnknownKey),
            Err(e) => {
                tracing::warn!(error = %e, "Could not get the authorization server's keys.");
                return Err(Refused::KeysUnavailable);
            }
        };
        if !fits(&jwk, header.alg) {
            return Err(Refused::KeyMismatch);
        }
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| Refused::KeyMismatch)?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.aud = Some(self.audiences.clone());
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let claims = jsonwebtoken::decode::<Value>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|e| refused_for(e.kind()))?;
        // RFC 7519 §4.1.1: one StringOrURI; the library also takes a list.
        if !claims.get("iss").is_some_and(Value::is_string) {
            return Err(Refused::Issuer);
        }
        Ok(claims)
    }

    fn principal_of(&self, claims: &Value) -> Result<Principal, Refused> {
        let subject = claims
            .get("sub")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or(Refused::MissingClaim)?;
        let client = ["client_id", "azp"]
            .iter()
            .find_map(|c| claims.get(*c).and_then(Value::as_str));
        let scopes: BTreeSet<Scope> = strings(claims.get(&self.scopes_claim))
            .filter_map(Scope::parse)
            .collect();
        let mut grants = vec![grant_of(strings(claims.get(&self.dealerships_claim)))];
        grants.extend(
            self.grants
                .iter()
                .filter(|g| {
                    g.subject.as_deref() == Some(subject)
                        || (client.is_some() && g.client_id.as_deref() == client)
                })
                .map(|g| g.dealerships.clone()),
        );
        Ok(Principal {
            // Prefixed so no signed-in subject can share a static token's name
            // (names own records).
            name: Arc::from(format!(
                "{}{subject}",
                crate::contract::principal::SIGNED_IN_PREFIX
            )),
            anonymous: false,
            dealerships: union(grants),
            scopes,
        })
    }
}

/// Whether the token's protected header has a `crit` member (or cannot be read).
fn names_critical_extensions(token: &str) -> bool {
    use base64::Engine;
    let Some(segment) = token.split('.').next() else {
        return true;
    };
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(segment.trim_end_matches('='))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Map<String, Value>>(&bytes).ok())
        .is_none_or(|header| header.contains_key("crit"))
}

/// Whether the published key is one for this algorithm.
fn fits(jwk: &Jwk, alg: Algorithm) -> bool {
    let kind_fits = match (&jwk.algorithm, alg) {
        (AlgorithmParameters::RSA(_), Algorithm::RS256) => true,
        (AlgorithmParameters::EllipticCurve(ec), Algorithm::ES256) => {
            ec.curve == EllipticCurve::P256
        }
        _ => false,
    };
    let named_alg_fits = matches!(
        (jwk.common.key_algorithm, alg),
        (None, _)
            | (Some(KeyAlgorithm::RS256), Algorithm::RS256)
            | (Some(KeyAlgorithm::ES256), Algorithm::ES256)
    );
    let use_fits = !matches!(
        jwk.common.public_key_use,
        Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
    );
    kind_fits && named_alg_fits && use_fits
}

fn refused_for(kind: &ErrorKind) -> Refused {
    match kind {
        ErrorKind::ExpiredSignature => Refused::Expired,
        ErrorKind::ImmatureSignature => Refused::NotYetValid,
        ErrorKind::InvalidAudience => Refused::Audience,
        ErrorKind::InvalidIssuer => Refused::Issuer,
        ErrorKind::InvalidSignature => Refused::Signature,
        ErrorKind::MissingRequiredClaim(_) => Refused::MissingClaim,
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => Refused::Algorithm,
        _ => Refused::Malformed,
    }
}

/// A claim's strings: a space-separated string, or an array of strings.
fn strings(claim: Option<&Value>) -> Box<dyn Iterator<Item = &str> + '_> {
    match claim {
        Some(Value::String(s)) => Box::new(s.split_whitespace()),
        Some(Value::Array(items)) => Box::new(items.iter().filter_map(Value::as_str)),
        _ => Box::new(std::iter::empty()),
    }
}

fn grant_of<'a>(ids: impl Iterator<Item = &'a str>) -> DealershipGrant {
    let ids: BTreeSet<String> = ids.map(str::to_owned).collect();
    if ids.contains("*") {
        DealershipGrant::All
    } else {
        DealershipGrant::Only(ids)
    }
}

fn union(grants: Vec<DealershipGrant>) -> DealershipGrant {
    let mut all = BTreeSet::new();
    for grant in grants {
        match grant {
            DealershipGrant::All => return DealershipGrant::All,
            DealershipGrant::Only(ids) => all.extend(ids),
        }
    }
    DealershipGrant::Only(all)
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
