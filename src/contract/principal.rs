//! Who a caller is, as every layer sees it: the principal a token stands for,
//! the scopes it carries and whose records it may reach. Authentication
//! (matching a presented token) is the gateway's job; this is only the answer.

use std::collections::BTreeSet;
use std::sync::Arc;

/// The prefix of a signed-in caller's principal name (`oauth:<subject>`);
/// no static token may be named with it, or it would own that subject's records.
pub const SIGNED_IN_PREFIX: &str = "oauth:";

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
