//! Published schemas in the subset every MCP client and host reads: standard
//! JSON Schema 2020-12 keywords and formats, one `type` per schema node.
//!
//! schemars writes `Option<T>` as `"type": ["T", "null"]` and integers with
//! its own formats (`uint32`, `int64`, …). TypeScript clients (Ajv) warn once
//! per unknown format on every `tools/list`; the Inspector flags type arrays,
//! and hosts that map schemas to an OpenAPI-like subset (Gemini) read a
//! nullable value only as `anyOf: [{…}, {"type": "null"}]`. Rewriting the
//! generated schema keeps the Rust types the single source of the contract.

use serde_json::{Map, Value, json};

/// The formats JSON Schema 2020-12 defines (Validation §7.3); any other is dropped.
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

/// Keywords that describe a node rather than constrain it: they stay on the
/// node when its type union becomes `anyOf` branches.
const ANNOTATIONS: [&str; 9] = [
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
];

/// Keywords whose value is a map of schemas.
const SCHEMA_MAPS: [&str; 4] = [
    "properties",
    "$defs",
    "patternProperties",
    "dependentSchemas",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value is one schema.
const SCHEMA_ONES: [&str; 10] = [
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
];

/// Rewrites `schema` in place into the portable subset (see the module doc).
pub fn make_portable(schema: &mut Value) {
    let Value::Object(node) = schema else {
        return;
    };
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(map)) = node.get_mut(key) {
            map.values_mut().for_each(make_portable);
        }
    }
    for key in SCHEMA_LISTS {
        if let Some(Value::Array(list)) = node.get_mut(key) {
            list.iter_mut().for_each(make_portable);
        }
    }
    for key in SCHEMA_ONES {
        if let Some(child) = node.get_mut(key) {
            make_portable(child);
        }
    }
    drop_custom_format(node);
    split_type_union(node);
}

fn drop_custom_format(node: &mut Map<String, Value>) {
    let custom = node
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f));
    if custom {
        node.remove("format");
    }
}

/// `{"type": ["string", "null"], "maxLength": 9, "description": …}` becomes
/// `{"description": …, "anyOf": [{"type": "string", "maxLength": 9}, {"type": "null"}]}`.
fn split_type_union(node: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = node.get("type") else {
        return;
    };
    let types: Vec<Value> = types.clone();
    node.remove("type");
    let constraints: Map<String, Value> = node
        .iter()
        .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    node.retain(|k, _| ANNOTATIONS.contains(&k.as_str()));
    let branches = types
        .into_iter()
        .map(|t| {
            if t == "null" {
                return json!({ "type": "null" });
            }
            let mut branch = constraints.clone();
            if let Some(Value::Array(values)) = branch.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            branch.insert("type".into(), t);
            Value::Object(branch)
        })
        .collect();
    node.insert("anyOf".into(), Value::Array(branches));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nullable_value_becomes_an_any_of_keeping_its_constraints_in_the_typed_branch() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "line2": { "description": "Second line.", "type": ["string", "null"], "maxLength": 9 },
                "count": { "type": ["integer", "null"], "format": "uint32", "minimum": 0 },
            }
        });
        make_portable(&mut schema);
        assert_eq!(
            schema["properties"]["line2"],
            json!({ "description": "Second line.", "anyOf": [{ "type": "string", "maxLength": 9 }, { "type": "null" }] })
        );
        assert_eq!(
            schema["properties"]["count"],
            json!({ "anyOf": [{ "type": "integer", "minimum": 0 }, { "type": "null" }] })
        );
    }

    #[test]
    fn standard_formats_stay_and_others_go_at_any_depth() {
        let mut schema = json!({
            "$defs": { "When": { "type": "string", "format": "date-time" } },
            "items": { "type": "integer", "format": "int64" },
            "anyOf": [{ "type": "number", "format": "double" }, { "type": "string", "format": "email" }],
        });
        make_portable(&mut schema);
        assert_eq!(schema["$defs"]["When"]["format"], "date-time");
        assert_eq!(schema["items"], json!({ "type": "integer" }));
        assert_eq!(schema["anyOf"][0], json!({ "type": "number" }));
        assert_eq!(schema["anyOf"][1]["format"], "email");
    }

    #[test]
    fn a_nullable_enum_keeps_its_values_in_the_typed_branch_only() {
        let mut schema = json!({ "type": ["string", "null"], "enum": ["mi", "km", null] });
        make_portable(&mut schema);
        assert_eq!(
            schema,
            json!({ "anyOf": [{ "type": "string", "enum": ["mi", "km"] }, { "type": "null" }] })
        );
    }
}
