//! Host-safe tool names, derived from the canonical ones once.
//!
//! AutomotiveMCP names tools `domain.verb_object`, and MCP 2025-11-25 allows
//! the dot, but Claude Desktop, claude.ai, OpenAI's API and Codex accept only
//! `^[a-zA-Z0-9_-]{1,64}$`, and one name they refuse withholds every tool of
//! the server. So each tool also has the name with `_` for `.`.

use std::sync::LazyLock;

use super::TOOLS;

static HOST_SAFE: LazyLock<Vec<String>> =
    LazyLock::new(|| TOOLS.iter().map(|t| host_safe_of(t.name)).collect());

/// The host-safe name of the table's row `row`.
pub(super) fn host_safe(row: usize) -> &'static str {
    HOST_SAFE.get(row).map(String::as_str).unwrap_or_default()
}

fn host_safe_of(canonical: &str) -> String {
    canonical.replace('.', "_")
}

/// What hosts accept: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_host_safe(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::tools::ToolId;

    #[test]
    fn every_tool_has_a_distinct_host_safe_name_and_is_found_by_both_names() {
        let mut seen = BTreeSet::new();
        for tool in ToolId::ALL {
            let safe = tool.host_safe_name();
            assert!(is_host_safe(safe), "{safe:?} is not host-safe");
            assert!(!is_host_safe(tool.name()), "{} has no dot", tool.name());
            assert!(seen.insert(safe), "{safe:?} names two tools");
            assert_eq!(ToolId::from_name(safe), Some(tool));
            assert_eq!(ToolId::from_name(tool.name()), Some(tool));
        }
        assert_eq!(ToolId::from_name("inventory-search"), None);
        assert_eq!(
            ToolId::from_name("inventory_search"),
            ToolId::from_name("inventory.search")
        );
    }

    #[test]
    fn host_safe_check_follows_the_hosts_pattern() {
        assert!(is_host_safe("service_book_appointment"));
        assert!(is_host_safe(&"a".repeat(64)));
        assert!(!is_host_safe(&"a".repeat(65)));
        assert!(!is_host_safe(""));
        assert!(!is_host_safe("inventory.search"));
        assert!(!is_host_safe("inventory/search"));
        assert!(!is_host_safe("inventaire_recherché"));
    }
}
