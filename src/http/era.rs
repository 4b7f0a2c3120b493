//! Which protocol era a request belongs to, as far as the HTTP front needs
//! to know before rmcp reads it.
//!
//! MCP 2026-07-28 removed `initialize`, `ping`, `logging/setLevel` and
//! resource subscriptions; a request of that era for one of them must get
//! 404 with -32601 (Method not found), as any unknown method does. The front
//! checks known methods' params before rmcp sees them, so without this a
//! 2026 `initialize` carrying only `_meta` would be answered -32602 (Invalid
//! params) as if the method still existed.

use axum::http::HeaderMap;
use serde_json::Value;

/// The first revision without `initialize` (and the other removed methods).
const STATELESS_ERA: &str = "2026-07-28";

/// Methods the 2026-07-28 revision removed.
const REMOVED_IN_STATELESS_ERA: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Whether the request may be of the 2026-07-28 era at all, without parsing
/// it: its header says so, or its body carries per-request `_meta`
/// versions. Requests of older eras (most traffic today) stop here.
pub fn may_be_stateless_era(headers: &HeaderMap, body: &[u8]) -> bool {
    header_version(headers).is_some_and(|v| v >= STATELESS_ERA)
        || body
            .windows(META_VERSION.len())
            .any(|w| w == META_VERSION.as_bytes())
}

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

fn header_version(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
}

/// Whether this request, by its `MCP-Protocol-Version` header or its
/// `_meta` protocol version, speaks 2026-07-28 or later and names a method
/// that revision removed.
pub fn removed_method(headers: &HeaderMap, message: &Value) -> bool {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return false;
    };
    REMOVED_IN_STATELESS_ERA.contains(&method) && in_stateless_era(headers, message)
}

fn in_stateless_era(headers: &HeaderMap, message: &Value) -> bool {
    let from_header = header_version(headers);
    let from_meta = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str);
    // Revisions are ISO dates: they compare as text in time order.
    [from_header, from_meta]
        .into_iter()
        .flatten()
        .any(|version| version >= STATELESS_ERA)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(version: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(v) = version {
            headers.insert("mcp-protocol-version", v.parse().unwrap());
        }
        headers
    }

    #[test]
    fn removed_methods_only_count_in_the_stateless_era() {
        let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {} });
        assert!(!removed_method(&headers(None), &init));
        assert!(!removed_method(&headers(Some("2025-11-25")), &init));
        assert!(removed_method(&headers(Some("2026-07-28")), &init));
        let by_meta = json!({ "jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
            "params": { "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } });
        assert!(removed_method(&headers(None), &by_meta));
        let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
        assert!(!removed_method(&headers(Some("2026-07-28")), &list));
    }

    #[test]
    fn older_requests_are_told_apart_without_parsing() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert!(!may_be_stateless_era(&headers(Some("2025-11-25")), body));
        assert!(!may_be_stateless_era(&headers(None), body));
        assert!(may_be_stateless_era(&headers(Some("2026-07-28")), body));
        let with_meta =
            br#"{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert!(may_be_stateless_era(&headers(None), with_meta));
    }
}
