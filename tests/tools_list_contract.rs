//! Locks the public contract: `tools/list` (names, schemas, annotations) is
//! snapshotted, TOOLSET.md must name exactly the tools and error codes the
//! code serves, and `initialize` advertises the toolset version. Changing any
//! of these is a deliberate, versioned act (see TOOLSET.md "Versioning").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;

use common::*;
use dms_bridge::contract::error::ErrorCode;
use dms_bridge::tools::{TOOLSET_VERSION, ToolId};
use rmcp::model::CallToolRequestParams;
use serde_json::Value;

fn toolset_md() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/TOOLSET.md")).unwrap()
}

#[tokio::test]
async fn tools_list_matches_the_snapshot() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let tools = client.list_all_tools().await.unwrap();
    let json = serde_json::to_value(&tools).unwrap();
    insta::assert_json_snapshot!("tools_list", json);
}

/// What Claude Desktop, claude.ai, OpenAI's API and Codex accept, written
/// here independently of the product's own check: `^[a-zA-Z0-9_-]{1,64}$`.
fn hosts_accept(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[tokio::test]
async fn listed_names_are_host_safe_and_meta_names_the_canonical_tool() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let tools = client.list_all_tools().await.unwrap();
    // VS Code sends at most 128 tools to the model.
    assert!(
        !tools.is_empty() && tools.len() < 128,
        "{} tools",
        tools.len()
    );
    let mut canonical = BTreeSet::new();
    for tool in &tools {
        assert!(hosts_accept(&tool.name), "{:?} would be refused", tool.name);
        let meta = tool.meta.as_ref().expect("_meta");
        let name = meta["io.dms-bridge/canonical_name"].as_str().unwrap();
        assert_eq!(tool.name, name.replace('.', "_"));
        canonical.insert(name.to_owned());
        // The Anthropic directory wants a title and a read-only or destructive hint.
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert!(
            tool.title.is_some() && annotations.title.is_some(),
            "{}",
            tool.name
        );
        assert!(
            annotations.read_only_hint.is_some() && annotations.destructive_hint.is_some(),
            "{}",
            tool.name
        );
    }
    let served: BTreeSet<String> = ToolId::ALL.iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(canonical, served, "the group token is granted every tool");
}

#[tokio::test]
async fn both_names_call_the_same_tool_and_unknown_names_are_refused() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let args = serde_json::json!({ "dealership_id": "demo-cdk" });
    let by_host_safe = ok(&call(&client, "dealership_get", args.clone()).await);
    let by_canonical = ok(&call(&client, "dealership.get", args.clone()).await);
    assert_eq!(by_host_safe["name"], "Riverside Auto Group (Demo)");
    assert_eq!(by_host_safe, by_canonical);
    let Value::Object(map) = args else {
        unreachable!()
    };
    for name in ["dealership-get", "dealership/get", "Dealership_get"] {
        let refused = client
            .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(map.clone()))
            .await
            .expect_err(name);
        assert!(
            refused.to_string().contains("Unknown tool"),
            "{name}: {refused}"
        );
    }
}

#[tokio::test]
async fn operators_may_list_the_canonical_dotted_names_instead() {
    let bridge = demo_with_server(r#"tool_names = "canonical""#).await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let listed: BTreeSet<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let canonical: BTreeSet<String> = ToolId::ALL.iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(listed, canonical);
    // The host-safe name still answers, unlisted.
    let result = call(&client, "dealership_list", serde_json::json!({})).await;
    assert!(
        ok(&result)["items"]
            .as_array()
            .is_some_and(|i| i.len() == 6)
    );
}

#[tokio::test]
async fn initialize_advertises_toolset_version_and_profile_levels() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("dms-bridge")
    );
    let experimental = info
        .capabilities
        .experimental
        .as_ref()
        .expect("experimental capabilities");
    assert_eq!(
        experimental["dms_bridge"]["toolset_version"],
        TOOLSET_VERSION
    );
    // Level 3 (eventing) where every change is an event; 2 elsewhere.
    let levels = &experimental["automotive_mcp"]["domains"];
    assert_eq!(levels["inventory"]["level"], 3);
    assert_eq!(levels["leads"]["level"], 3);
    assert_eq!(levels["service"]["level"], 2);
    assert!(info.capabilities.tools.is_some() && info.capabilities.resources.is_some());
}

/// Scopes in the first column of TOOLSET.md's access table.
fn documented_scopes(md: &str) -> BTreeSet<String> {
    let section = md.split("## Access").nth(1).unwrap_or_default();
    let table = section.split("\n\n").nth(1).unwrap_or_default();
    table
        .lines()
        .filter_map(|l| l.strip_prefix("| `amcp:"))
        .filter_map(|l| l.split('`').next())
        .map(|s| format!("amcp:{s}"))
        .collect()
}

#[tokio::test]
async fn initialize_advertises_every_served_domain_and_scope() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let info = client.peer_info().expect("server info");
    let experimental = info.capabilities.experimental.as_ref().unwrap();
    let profile = &experimental["automotive_mcp"];
    let advertised_domains: BTreeSet<String> = profile["domains"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    // `events.list` spans the domains: it is not one of them.
    let served_domains: BTreeSet<String> = ToolId::ALL
        .iter()
        .map(|t| t.name().split('.').next().unwrap().to_owned())
        .filter(|d| d != "events")
        .collect();
    assert_eq!(advertised_domains, served_domains);
    let advertised_tools: BTreeSet<String> = experimental["dms_bridge"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    let served_tools: BTreeSet<String> = ToolId::ALL.iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(advertised_tools, served_tools);
    let advertised_scopes: BTreeSet<String> = profile["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    let needed: BTreeSet<String> = ToolId::ALL
        .iter()
        .flat_map(|t| [t.scope(), t.staff_scope()])
        .flatten()
        .map(|s| s.as_str().to_owned())
        .collect();
    assert_eq!(advertised_scopes, needed, "every scope a tool needs");
    assert_eq!(
        advertised_scopes,
        documented_scopes(&toolset_md()),
        "TOOLSET.md's access table vs the advertisement"
    );
}

/// Names in backticks at the start of a `### ` heading in TOOLSET.md.
fn documented_tools(md: &str) -> BTreeSet<String> {
    md.lines()
        .filter_map(|l| l.strip_prefix("### `"))
        .filter_map(|l| l.split('`').next())
        .filter(|name| name.contains('.'))
        .map(str::to_owned)
        .collect()
}

/// Codes in the first column of the error table (rows starting with "| `").
fn documented_codes(md: &str) -> BTreeSet<String> {
    let section = md.split("## Errors").nth(1).unwrap_or_default();
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn toolset_md_documents_exactly_the_served_tools_and_codes() {
    let md = toolset_md();
    let served: BTreeSet<String> = ToolId::ALL.iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(
        documented_tools(&md),
        served,
        "TOOLSET.md tool headings vs ToolId::ALL"
    );
    let codes: BTreeSet<String> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    let mut documented = documented_codes(&md);
    documented.remove("request.unknown_tool"); // a JSON-RPC error, not a tool-result code
    assert_eq!(
        documented, codes,
        "TOOLSET.md error table vs ErrorCode::ALL"
    );
    assert!(
        md.contains(&format!("Toolset version: **{TOOLSET_VERSION}**")),
        "TOOLSET.md must state version {TOOLSET_VERSION}"
    );
}

#[test]
fn error_codes_state_retryable_truthfully_in_toolset_md() {
    let md = toolset_md();
    let section = md.split("## Errors").nth(1).unwrap_or_default();
    for code in ErrorCode::ALL {
        let row = section
            .lines()
            .find(|l| l.starts_with(&format!("| `{}`", code.as_str())))
            .unwrap();
        let expected = if code.retryable() {
            "| yes |"
        } else {
            "| no |"
        };
        assert!(
            row.contains(expected),
            "{} row should say {expected}: {row}",
            code.as_str()
        );
    }
}

/// The formats JSON Schema 2020-12 defines; Ajv (the TypeScript SDK) warns on
/// any other on every `tools/list`.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords under which `true`/`false` is an ordinary schema (the Inspector allows them).
const BOOLEAN_VALUED: [&str; 4] = [
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
];

/// Keywords that constrain a value: a node with none of them accepts anything.
const CONSTRAINING: [&str; 30] = [
    "type",
    "enum",
    "const",
    "$ref",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "properties",
    "required",
    "items",
    "prefixItems",
    "additionalProperties",
    "patternProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minProperties",
    "maxProperties",
    "propertyNames",
];

/// What the MCP Inspector's schema portability lint flags (type arrays,
/// remote `$ref`s, untyped nodes, bare booleans) plus non-standard formats,
/// found independently of the product's own rewriting.
fn portability_findings(node: &Value, path: &str, keyword: Option<&str>, found: &mut Vec<String>) {
    let object = match node {
        Value::Bool(_) if keyword.is_some_and(|k| BOOLEAN_VALUED.contains(&k)) => return,
        Value::Bool(_) => return found.push(format!("{path}: bare boolean schema")),
        Value::Object(object) => object,
        _ => return,
    };
    if object.get("type").is_some_and(Value::is_array) {
        found.push(format!("{path}: type array"));
    }
    if let Some(format) = object.get("format").and_then(Value::as_str)
        && !STANDARD_FORMATS.contains(&format)
    {
        found.push(format!("{path}: format {format}"));
    }
    if object
        .get("$ref")
        .and_then(Value::as_str)
        .is_some_and(|r| !r.starts_with('#'))
    {
        found.push(format!("{path}: remote $ref"));
    }
    if keyword != Some("not") && !object.keys().any(|k| CONSTRAINING.contains(&k.as_str())) {
        found.push(format!("{path}: untyped schema"));
    }
    for (key, value) in object {
        let at = format!("{path}/{key}");
        match (key.as_str(), value) {
            ("properties" | "$defs" | "patternProperties", Value::Object(map)) => {
                for (name, sub) in map {
                    portability_findings(sub, &format!("{at}/{name}"), Some(key), found);
                }
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(list)) => {
                for (i, sub) in list.iter().enumerate() {
                    portability_findings(sub, &format!("{at}/{i}"), Some(key), found);
                }
            }
            ("items" | "additionalProperties" | "not" | "contains" | "propertyNames", sub) => {
                portability_findings(sub, &at, Some(key), found);
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn every_published_schema_is_in_the_portable_subset() {
    let bridge = demo().await;
    let client = connect(&bridge.url, Some("demo-token-group")).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut found = Vec::new();
    for tool in &tools {
        let input = Value::Object((*tool.input_schema).clone());
        portability_findings(&input, &format!("{}:input", tool.name), None, &mut found);
        let output = tool.output_schema.as_ref().expect("an output schema");
        let output = Value::Object((**output).clone());
        portability_findings(&output, &format!("{}:output", tool.name), None, &mut found);
    }
    assert!(
        found.is_empty(),
        "{} findings:\n{}",
        found.len(),
        found.join("\n")
    );
}
