//! What an accepted `leads.create` or `service.book_appointment` tells the
//! agent besides its status: contact points the consent did not cover (and
//! that were therefore not passed on).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A contact point the caller gave that the bridge did not pass on, because
/// the consent grant allows no channel that uses it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct WithheldContactPoint {
    /// JSON pointer to the argument that was left out, e.g. `/customer/phone`.
    pub field: String,
    /// Why, in a sentence the agent can act on.
    pub reason: String,
}
