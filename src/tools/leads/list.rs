//! Arguments of `leads.get` and `leads.list`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::view::DeliveryState;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArgs {
    pub dealership_id: String,
    /// The `lead_id` from `leads.create`.
    #[schemars(length(min = 1, max = 64))]
    pub lead_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    pub dealership_id: String,
    /// Any of these delivery states.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivery_state: Vec<DeliveryState>,
    /// RFC 3339, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_after: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_before: Option<String>,
    /// Page size; by default 20, at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// A `next_cursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}
