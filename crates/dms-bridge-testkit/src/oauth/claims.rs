//! The claims of the access tokens the server issues (and [`super::DemoAuthServer::mint`]
//! signs for tests).

use serde::{Deserialize, Serialize};

/// An access token's claims. Tests change any field (an `exp` in the past, a
/// foreign `aud`) or add claims through `extra` before minting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessClaims {
    pub iss: String,
    /// The demo user's name.
    pub sub: String,
    /// The resource (RFC 8707) the token is for: the bridge's MCP endpoint.
    pub aud: String,
    pub client_id: String,
    /// Space-separated scopes.
    pub scope: String,
    /// The dealerships the user may act for.
    pub amcp_dealerships: Vec<String>,
    pub iat: i64,
    pub nbf: i64,
    pub exp: i64,
    pub jti: String,
    /// Any further claims, flattened into the token.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}
