//! The suite's fixture resources under `test://`, and one template.

use rmcp::ErrorData as McpError;
use rmcp::model::{CacheScope, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::json;

use crate::media;

/// Fixed content: a 2026-07-28 client may keep any of it a while (`ttlMs`),
/// and share it between users (`public`).
pub const TTL_MS: u64 = 5 * 60 * 1000;

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: (&str, &str) = ("test://template/", "/data");

pub fn list() -> Vec<Resource> {
    vec![
        Resource::new(STATIC_TEXT, "Static Text Resource")
            .with_description("A static text resource for testing")
            .with_mime_type("text/plain"),
        Resource::new(STATIC_BINARY, "Static Binary Resource")
            .with_description("A static PNG image for testing")
            .with_mime_type("image/png"),
        Resource::new(WATCHED, "Watched Resource")
            .with_description("A resource clients may subscribe to")
            .with_mime_type("text/plain"),
    ]
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("test://template/{id}/data", "Template Resource")
            .with_description("Data for the id in the URI")
            .with_mime_type("application/json"),
    ]
}

pub fn read(uri: &str) -> Result<ReadResourceResult, McpError> {
    let contents = match uri {
        STATIC_TEXT => {
            ResourceContents::text("This is the content of the static text resource.", uri)
                .with_mime_type("text/plain")
        }
        STATIC_BINARY => ResourceContents::blob(media::PNG, uri).with_mime_type("image/png"),
        WATCHED => {
            ResourceContents::text("Watched resource content.", uri).with_mime_type("text/plain")
        }
        _ => match template_id(uri) {
            Some(id) => {
                let data =
                    json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
                ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
            }
            None => {
                return Err(McpError::resource_not_found(
                    "Resource not found",
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    };
    Ok(ReadResourceResult::new(vec![contents])
        .with_ttl_ms(TTL_MS)
        .with_cache_scope(CacheScope::Public))
}

/// `{id}` of `test://template/{id}/data`: one non-empty path segment.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri.strip_prefix(TEMPLATE.0)?.strip_suffix(TEMPLATE.1)?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}
