//! Who is calling: bearer tokens from config, each bound to dealerships and
//! scopes, plus the anonymous caller for dealerships that publish inventory.

use std::collections::BTreeSet;
use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// OAuth-style scopes, `amcp:<domain>:<read|write|staff>`.
///
/// `read` and `write` let an agent act for the customers it serves: records it
/// reaches by id (a lead, a booking) are the ones it created. `staff` is for
/// the dealership's own tools: they see and change every customer's records in
/// that domain. It is granted separately and never implied by `write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    InventoryRead,
    LeadsRead,
    LeadsWrite,
    LeadsStaff,
    ServiceRead,
    ServiceWrite,
    ServiceStaff,
    DealsRead,
    DealsWrite,
}

impl Scope {
    pub const ALL: [Scope; 9] = [
        Self::InventoryRead,
        Self::LeadsRead,
        Self::LeadsWrite,
        Self::LeadsStaff,
        Self::ServiceRead,
        Self::ServiceWrite,
        Self::ServiceStaff,
        Self::DealsRead,
        Self::DealsWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::InventoryRead => "amcp:inventory:read",
            Self::LeadsRead => "amcp:leads:read",
            Self::LeadsWrite => "amcp:leads:write",
            Self::LeadsStaff => "amcp:leads:staff",
            Self::ServiceRead => "amcp:service:read",
            Self::ServiceWrite => "amcp:service:write",
            Self::ServiceStaff => "amcp:service:staff",
            Self::DealsRead => "amcp:deals:read",
            Self::DealsWrite => "amcp:deals:write",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == s)
    }
}

/// Which dealerships a principal may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DealershipGrant {
    All,
    Only(BTreeSet<String>),
}

/// An authenticated caller (or the anonymous one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// Token name from config, or `anonymous`. Safe to log.
    pub name: Arc<str>,
    pub anonymous: bool,
    pub dealerships: DealershipGrant,
    pub scopes: BTreeSet<Scope>,
}

impl Principal {
    pub fn may_use(&self, dealership_id: &str) -> bool {
        match &self.dealerships {
            DealershipGrant::All => true,
            DealershipGrant::Only(ids) => ids.contains(dealership_id),
        }
    }

    pub fn has_scope(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}

/// Whose records a caller may see or change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner<'a> {
    /// Dealership staff: every record of the dealership.
    Anyone,
    /// An agent: the records this principal created through the bridge.
    Only(&'a str),
}

impl Owner<'_> {
    /// The principal to filter on in SQL (`NULL` matches anyone).
    pub fn principal(&self) -> Option<&str> {
        match self {
            Self::Anyone => None,
            Self::Only(name) => Some(name),
        }
    }
}

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
