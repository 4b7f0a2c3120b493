//! A dealership's A2A v1.0 agent card with the AAP v1.3 extension: the
//! skills its routes can back and nothing else, where to call them, and
//! which need a bearer token.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::schemas::SCHEMA_BASE_URL;
use super::skill::Skill;
use super::translate::vehicle::is_web_uri;
use super::{AAP_VERSION, EXTENSION_URI};
use crate::gateway::Gateway;
use crate::tools::Dealership;

/// The name the card gives the bridge's bearer tokens (static or OAuth).
const BEARER: &str = "bearer";

/// The skills a dealership can back with its routes.
pub fn offered(dealership: &Dealership) -> Vec<Skill> {
    Skill::ALL
        .into_iter()
        .filter(|s| s.needs().is_none_or(|d| dealership.routes.contains_key(&d)))
        .collect()
}

/// Whether a caller without a token may use the skill at this dealership.
pub fn anonymous(gateway: &Gateway, dealership: &Dealership, skill: Skill) -> bool {
    skill.may_be_anonymous()
        && dealership.anonymous_inventory
        && gateway
            .authenticator()
            .anonymous()
            .is_some_and(|p| p.may_use(&dealership.profile.id))
}

/// The card of a dealership with `aap = true`, served from `base` (scheme,
/// host and any path prefix, no trailing slash).
pub fn agent_card(gateway: &Gateway, dealership: &Dealership, base: &str) -> Value {
    let id = &dealership.profile.id;
    let skills = offered(dealership);
    let bearer = json!([{ "schemes": { BEARER: { "list": [] } } }]);
    let skill_entries: Vec<Value> = skills
        .iter()
        .map(|s| {
            let mut entry = json!({
                "id": s.id(),
                "name": s.name(),
                "description": s.description(),
                "tags": s.tags(),
                "inputModes": [s.request_media_type(), "application/json"],
                "outputModes": [s.response_media_type(), "application/json"],
            });
            if !anonymous(gateway, dealership, *s) {
                entry["securityRequirements"] = bearer.clone();
            }
            entry
        })
        .collect();
    let schema_map: Map<String, Value> = skills
        .iter()
        .map(|s| {
            let entry = json!({
                "request_schema": format!("{SCHEMA_BASE_URL}{}-request.schema.json", s.stem()),
                "response_schema": format!("{SCHEMA_BASE_URL}{}-response.schema.json", s.stem()),
            });
            (s.id().to_owned(), entry)
        })
        .collect();
    let name = &dealership.profile.name;
    let mut card = json!({
        "name": name,
        "description": format!("Auto Agent Protocol dealer agent for {name}: dealer information, inventory and consented leads over A2A."),
        "supportedInterfaces": [{
            "url": format!("{base}/aap/{id}"),
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }],
        "version": env!("CARGO_PKG_VERSION"),
        "capabilities": {
            "streaming": false,
            "pushNotifications": false,
            "extensions": [{
                "uri": EXTENSION_URI,
                "description": "Auto Agent Protocol v1.3: typed automotive retail skills carried in A2A data parts.",
                "required": false,
                "params": {
                    "version": AAP_VERSION,
                    "schema_base_url": SCHEMA_BASE_URL,
                    "skills": schema_map,
                },
            }],
        },
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": skill_entries,
        "securitySchemes": {
            BEARER: { "httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "description": "A dms-bridge access token: a static token from the dealer, or an OAuth 2.1 access token where the bridge signs callers in.",
            } },
        },
    });
    // A2A's provider needs both fields, its URL a URL.
    if let Some(website) = dealership
        .profile
        .website
        .as_ref()
        .filter(|w| is_web_uri(w))
    {
        card["provider"] = json!({
            "organization": dealership.profile.legal_name.as_deref().unwrap_or(name),
            "url": website,
        });
    }
    // AAP: the extension's id changes whenever the card does.
    card["capabilities"]["extensions"][0]["params"]["id"] = json!(content_id(&card).to_string());
    card
}

/// A UUID (version 8, from SHA-256) of the card's content: the same on every
/// replica, new whenever anything in the card changes.
fn content_id(card: &Value) -> uuid::Uuid {
    let digest = Sha256::digest(card.to_string().as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// The card's `ETag`: its extension id, which follows its content.
pub fn etag(card: &Value) -> String {
    let id = card["capabilities"]["extensions"][0]["params"]["id"]
        .as_str()
        .unwrap_or_default();
    format!("\"{id}\"")
}
