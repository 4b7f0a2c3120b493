//! Input schemas as `tools/list` publishes them: what a model needs to call
//! the tool, in as few tokens as the same meaning allows.
//!
//! A host puts every tool's schema in front of the model on every turn of
//! every conversation (TOOLSET.md "Tokens"). The gateway still validates
//! calls against the full schema (`ToolId::input_schema`), so what is left out
//! here is still enforced, with a structured error naming the field:
//! - `$schema`, `title` and null, empty or `false` defaults say nothing to a model;
//! - an optional field is optional by not being `required`, so its
//!   `anyOf [T, null]` becomes `T` (a `null` is still accepted);
//! - lengths, patterns, bounds and `additionalProperties: false` are guards,
//!   not guidance (the descriptions say what a value looks like);
//! - a list's items need no description of their own when the list has one;
//! - an enum's values name themselves: an enum written as `oneOf` constants
//!   (schemars does so when a variant has a doc comment) becomes a plain
//!   `enum`, and an enum type's own description goes (the field using it
//!   keeps its own);
//! - the arguments' own description repeats the tool's;
//! - fields marked `x-model-hidden` (AAP envelope fields a model never
//!   needs to send) are left out;
//! - a definition used once is written where it is used.

use serde_json::{Map, Value};

/// Keywords that guard a value rather than describe it (see the module doc).
const GUARDS: [&str; 8] = [
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "$schema",
];

/// The model-facing form of a full input schema.
pub fn compact(full: &Map<String, Value>) -> Map<String, Value> {
    let mut root = Value::Object(full.clone());
    drop_enum_descriptions(&mut root);
    inline_single_use_definitions(&mut root);
    shorten(&mut root);
    match root {
        Value::Object(mut map) => {
            map.remove("description");
            map
        }
        _ => Map::new(),
    }
}

fn shorten(schema: &mut Value) {
    match schema {
        Value::Array(list) => list.iter_mut().for_each(shorten),
        Value::Object(node) => {
            for (key, child) in node.iter_mut() {
                // Property and definition names are data, not keywords.
                if key == "properties" || key == "$defs" {
                    if let Value::Object(map) = child {
                        map.retain(|_, schema| !is_hidden(schema));
                        map.values_mut().for_each(shorten);
                    }
                } else if !is_literal(key) {
                    shorten(child);
                }
            }
            shorten_node(node);
        }
        _ => {}
    }
}

fn is_hidden(schema: &Value) -> bool {
    schema.get(HIDDEN) == Some(&Value::Bool(true))
}

/// Marks a field the gateway accepts but models are not shown.
const HIDDEN: &str = "x-model-hidden";

/// Keywords whose values are data (`enum`, `const`, `required`, …), not schemas.
fn is_literal(key: &str) -> bool {
    matches!(key, "enum" | "const" | "required" | "default" | "examples")
}

fn shorten_node(node: &mut Map<String, Value>) {
    node.remove("title");
    for guard in GUARDS {
        node.remove(guard);
    }
    if node.get("additionalProperties") == Some(&Value::Bool(false)) {
        node.remove("additionalProperties");
    }
    let says_nothing = |v: &Value| {
        v.is_null()
            || v.as_object().is_some_and(Map::is_empty)
            || v.as_array().is_some_and(Vec::is_empty)
            || v == &Value::Bool(false)
    };
    if node.get("default").is_some_and(says_nothing) {
        node.remove("default");
    }
    drop_null_branch(node);
    constants_to_enum(node);
    if node.contains_key("description")
        && let Some(Value::Object(items)) = node.get_mut("items")
    {
        items.remove("description");
    }
}

/// `{"anyOf": [T, {"type": "null"}], …}` becomes `{…T, …}`.
fn drop_null_branch(node: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = node.get("anyOf") else {
        return;
    };
    let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
    if branches.len() != 2 || !branches.iter().any(is_null) {
        return;
    }
    let Some(Value::Object(kept)) = branches.iter().find(|b| !is_null(b)).cloned() else {
        return;
    };
    node.remove("anyOf");
    for (key, value) in kept {
        node.entry(key).or_insert(value);
    }
}

/// `{"oneOf": [{"enum": [a, b]}, {"const": c, "description": d}]}` becomes
/// `{"type": "string", "enum": [a, b, c]}`.
fn constants_to_enum(node: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = node.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    for branch in branches {
        match (branch.get("const"), branch.get("enum")) {
            (Some(value), None) => values.push(value.clone()),
            (None, Some(Value::Array(list))) => values.extend(list.iter().cloned()),
            _ => return,
        }
    }
    if !values.iter().all(Value::is_string) {
        return;
    }
    node.remove("oneOf");
    node.insert("type".into(), Value::from("string"));
    node.insert("enum".into(), Value::Array(values));
}

/// An enum type's description (from the Rust type's doc comment) goes; the
/// fields that use it keep theirs.
fn drop_enum_descriptions(root: &mut Value) {
    if let Some(Value::Object(defs)) = root.get_mut("$defs") {
        for def in defs.values_mut() {
            if let Value::Object(node) = def
                && (node.contains_key("enum") || node.contains_key("oneOf"))
            {
                node.remove("description");
            }
        }
    }
}

/// Writes each `$defs` entry referenced exactly once in place of its `$ref`.
fn inline_single_use_definitions(root: &mut Value) {
    let Some(Value::Object(defs)) = root.get("$defs").cloned() else {
        return;
    };
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    count_refs(root, &mut counts);
    let once: Map<String, Value> = defs
        .into_iter()
        .filter(|(name, def)| {
            counts.get(&reference(name)) == Some(&1) && !mentions(def, &reference(name))
        })
        .collect();
    if once.is_empty() {
        return;
    }
    replace_refs(root, &once);
    let Value::Object(node) = root else {
        return;
    };
    if let Some(Value::Object(defs)) = node.get_mut("$defs") {
        defs.retain(|name, _| !once.contains_key(name));
    }
    if node
        .get("$defs")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        node.remove("$defs");
    }
}

fn reference(name: &str) -> String {
    format!("#/$defs/{name}")
}

fn count_refs(schema: &Value, counts: &mut std::collections::BTreeMap<String, usize>) {
    match schema {
        Value::Array(list) => list.iter().for_each(|v| count_refs(v, counts)),
        Value::Object(node) => {
            if let Some(Value::String(target)) = node.get("$ref") {
                *counts.entry(target.clone()).or_default() += 1;
            }
            node.values().for_each(|v| count_refs(v, counts));
        }
        _ => {}
    }
}

fn mentions(schema: &Value, target: &str) -> bool {
    match schema {
        Value::Array(list) => list.iter().any(|v| mentions(v, target)),
        Value::Object(node) => {
            node.get("$ref").and_then(Value::as_str) == Some(target)
                || node.values().any(|v| mentions(v, target))
        }
        _ => false,
    }
}

/// Replaces `{"$ref": "#/$defs/X", …}` by X's schema; the referring node's
/// own keywords (its description) win over the definition's.
fn replace_refs(schema: &mut Value, once: &Map<String, Value>) {
    match schema {
        Value::Array(list) => list.iter_mut().for_each(|v| replace_refs(v, once)),
        Value::Object(node) => {
            let target = node
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|name| once.get(name))
                .cloned();
            if let Some(Value::Object(def)) = target {
                node.remove("$ref");
                for (key, value) in def {
                    node.entry(key).or_insert(value);
                }
            }
            // Definitions kept may use ones written in place too.
            node.values_mut()
                .for_each(|child| replace_refs(child, once));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::compact;
    use serde_json::{Value, json};

    fn compacted(schema: Value) -> Value {
        match schema {
            Value::Object(map) => Value::Object(compact(&map)),
            _ => Value::Null,
        }
    }

    #[test]
    fn guards_titles_and_null_branches_go_and_meaning_stays() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args", "type": "object", "additionalProperties": false,
            "properties": {
                "zip": { "description": "Buyer's ZIP.", "anyOf": [{ "type": "string", "pattern": "^\\d{5}$", "maxLength": 10 }, { "type": "null" }], "default": null },
                "limit": { "anyOf": [{ "type": "integer", "minimum": 1 }, { "type": "null" }] },
                "codes": { "description": "Codes.", "type": "array", "maxItems": 3, "items": { "description": "A code.", "type": "string" } },
                "title": { "type": "string", "minLength": 1 },
                "type": { "type": "string", "x-model-hidden": true },
            },
            "required": ["title"],
        });
        assert_eq!(
            compacted(schema),
            json!({
                "type": "object",
                "properties": {
                    "zip": { "description": "Buyer's ZIP.", "type": "string" },
                    "limit": { "type": "integer" },
                    "codes": { "description": "Codes.", "type": "array", "items": { "type": "string" } },
                    "title": { "type": "string" },
                },
                "required": ["title"],
            })
        );
    }

    #[test]
    fn documented_constants_become_a_plain_enum_and_enum_types_lose_their_description() {
        let schema = json!({
            "description": "`x` arguments.",
            "$defs": { "Kind": { "description": "A kind.", "oneOf": [
                { "type": "string", "enum": ["sales", "service"] },
                { "type": "string", "const": "test_drive", "description": "Needs a vehicle." },
            ] } },
            "properties": { "kind": { "$ref": "#/$defs/Kind", "description": "What for." } },
        });
        assert_eq!(
            compacted(schema),
            json!({ "properties": { "kind": {
                "type": "string", "enum": ["sales", "service", "test_drive"], "description": "What for."
            } } })
        );
    }

    #[test]
    fn a_definition_used_once_is_inlined_and_one_used_twice_stays() {
        let schema = json!({
            "$defs": {
                "Once": { "type": "object", "description": "Used once.", "properties": { "a": { "$ref": "#/$defs/Twice" } } },
                "Twice": { "type": "integer" },
            },
            "properties": {
                "one": { "$ref": "#/$defs/Once", "description": "Own words." },
                "two": { "$ref": "#/$defs/Twice" },
            },
        });
        assert_eq!(
            compacted(schema),
            json!({
                "$defs": { "Twice": { "type": "integer" } },
                "properties": {
                    "one": { "type": "object", "description": "Own words.", "properties": { "a": { "$ref": "#/$defs/Twice" } } },
                    "two": { "$ref": "#/$defs/Twice" },
                },
            })
        );
    }
}
