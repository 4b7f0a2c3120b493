//! Who is calling: bearer tokens from config, each bound to dealerships and
//! scopes; OAuth access tokens from the configured authorization server; and
//! the anonymous caller for dealerships that publish inventory.

mod jwks;
mod oauth;

pub use oauth::{OAuthVerifier, Refused};

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::contract::principal::{DealershipGrant, Principal, Scope};

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Checks presented bearer tokens against the configured ones.
pub struct Authenticator {
    /// Static tokens by digest; a reload replaces the whole table at once.
    tokens: arc_swap::ArcSwap<Vec<([u8; 32], Arc<Principal>)>>,
    anonymous: Option<Arc<Principal>>,
    oauth: Option<OAuthVerifier>,
}

/// A caller a bearer token names.
pub struct Authenticated {
    pub principal: Arc<Principal>,
    /// Signed in through OAuth (rather than a static token from config).
    pub signed_in: bool,
}

impl Authenticator {
    /// `anonymous_dealerships`: where callers without a token may read inventory.
    pub fn new(
        tokens: Vec<(SecretString, Principal)>,
        anonymous_dealerships: BTreeSet<String>,
        oauth: Option<OAuthVerifier>,
    ) -> Self {
        let tokens = arc_swap::ArcSwap::from_pointee(token_table(tokens));
        let anonymous = (!anonymous_dealerships.is_empty()).then(|| {
            Arc::new(Principal {
                name: Arc::from("anonymous"),
                anonymous: true,
                dealerships: DealershipGrant::Only(anonymous_dealerships),
                scopes: BTreeSet::from([Scope::InventoryRead]),
            })
        });
        Self {
            tokens,
            anonymous,
            oauth,
        }
    }

    /// The caller a presented bearer token names: a static token first (no
    /// waiting on the authorization server), then an OAuth access token.
    /// `Err(Some(reason))` when OAuth refused it, `Err(None)` when nothing
    /// could check it.
    pub async fn authenticate_bearer(
        &self,
        presented: &str,
    ) -> Result<Authenticated, Option<Refused>> {
        if let Some(principal) = self.authenticate(presented) {
            return Ok(Authenticated {
                principal,
                signed_in: false,
            });
        }
        let oauth = self.oauth.as_ref().ok_or(None)?;
        match oauth.verify(presented).await {
            Ok(principal) => Ok(Authenticated {
                principal,
                signed_in: true,
            }),
            Err(reason) => {
                tracing::info!(reason = reason.as_str(), "Refused an OAuth access token.");
                Err(Some(reason))
            }
        }
    }

    /// The static tokens from now on (a reload): a call already admitted
    /// keeps its principal; the next request is checked against `tokens`.
    pub fn replace_tokens(&self, tokens: Vec<(SecretString, Principal)>) {
        self.tokens.store(Arc::new(token_table(tokens)));
    }

    /// The OAuth settings, when sign-in is configured.
    pub fn oauth(&self) -> Option<&OAuthVerifier> {
        self.oauth.as_ref()
    }

    /// The principal for a presented token. Every configured token is compared,
    /// in constant time over fixed-length digests, so timing reveals nothing.
    pub fn authenticate(&self, presented: &str) -> Option<Arc<Principal>> {
        let presented = digest(presented);
        let mut found = None;
        for (expected, principal) in self.tokens.load().iter() {
            if bool::from(expected.ct_eq(&presented)) {
                found = Some(principal.clone());
            }
        }
        found
    }

    /// The principal for callers that present no token, if any dealership allows them.
    pub fn anonymous(&self) -> Option<Arc<Principal>> {
        self.anonymous.clone()
    }
}

fn token_table(tokens: Vec<(SecretString, Principal)>) -> Vec<([u8; 32], Arc<Principal>)> {
    tokens
        .into_iter()
        .map(|(secret, p)| (digest(secret.expose_secret()), Arc::new(p)))
        .collect()
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(name: &str) -> Principal {
        Principal {
            name: Arc::from(name),
            anonymous: false,
            dealerships: DealershipGrant::Only(BTreeSet::from(["a".to_owned()])),
            scopes: BTreeSet::from([Scope::InventoryRead]),
        }
    }

    #[test]
    fn matches_only_the_exact_token() {
        let auth = Authenticator::new(
            vec![(SecretString::from("s3cret"), principal("one"))],
            BTreeSet::new(),
            None,
        );
        assert_eq!(
            auth.authenticate("s3cret").map(|p| p.name.to_string()),
            Some("one".into())
        );
        assert!(auth.authenticate("s3cre").is_none());
        assert!(auth.authenticate("").is_none());
        assert!(auth.anonymous().is_none());
    }

    #[test]
    fn anonymous_reads_inventory_of_public_dealerships_only() {
        let auth = Authenticator::new(vec![], BTreeSet::from(["pub".to_owned()]), None);
        let anon = auth.anonymous().map(|p| {
            (
                p.may_use("pub"),
                p.may_use("other"),
                p.has_scope(Scope::LeadsWrite),
            )
        });
        assert_eq!(anon, Some((true, false, false)));
    }
}
