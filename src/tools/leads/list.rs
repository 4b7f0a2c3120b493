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
    /// Only leads whose delivery is in one of these states.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivery_state: Vec<DeliveryState>,
    /// Only leads taken at or after this time (RFC 3339 with offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_after: Option<String>,
    /// Only leads taken before this time (RFC 3339 with offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_before: Option<String>,
    /// Page size (default and maximum from the bridge's limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}
