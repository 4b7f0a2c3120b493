//! Who is calling: bearer tokens from config, each bound to dealerships and
//! scopes, plus the anonymous caller for dealerships that publish inventory.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::contract::principal::{DealershipGrant, Principal, Scope};

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Checks presented bearer tokens against the configured ones.
pub struct Authenticator {
    tokens: Vec<([u8; 32], Arc<Principal>)>,
    anonymous: Option<Arc<Principal>>,
}

impl Authenticator {
    /// `anonymous_dealerships`: where callers without a token may read inventory.
    pub fn new(
        tokens: Vec<(SecretString, Principal)>,
        anonymous_dealerships: BTreeSet<String>,
    ) -> Self {
        let tokens = tokens
            .into_iter()
            .map(|(secret, p)| (digest(secret.expose_secret()), Arc::new(p)))
            .collect();
        let anonymous = (!anonymous_dealerships.is_empty()).then(|| {
            Arc::new(Principal {
                name: Arc::from("anonymous"),
                anonymous: true,
                dealerships: DealershipGrant::Only(anonymous_dealerships),
                scopes: BTreeSet::from([Scope::InventoryRead]),
            })
        });
        Self { tokens, anonymous }
    }

    /// The principal for a presented token. Every configured token is compared,
    /// in constant time over fixed-length digests, so timing reveals nothing.
    pub fn authenticate(&self, presented: &str) -> Option<Arc<Principal>> {
        let presented = digest(presented);
        let mut found = None;
        for (expected, principal) in &self.tokens {
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
        let auth = Authenticator::new(vec![], BTreeSet::from(["pub".to_owned()]));
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
