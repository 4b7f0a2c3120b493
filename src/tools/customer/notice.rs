//! What an accepted `leads.create` or `service.book_appointment` tells the
//! agent besides its status: contact points the consent did not cover (and
//! that were therefore not passed on), and warnings about the request.

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

/// Something the agent should know about a request that was accepted anyway.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Warning {
    /// A code from the error table: `inventory.vehicle_unavailable` (the vehicle
    /// of interest is sold), or the `upstream.*` code of an inventory read that failed.
    pub code: String,
    /// What it means for the customer, in a sentence the agent can relay.
    pub message: String,
}
