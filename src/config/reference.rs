//! The configuration reference, generated from the config types: the JSON
//! Schema that `check` validates a file against (published for editors), and
//! the same schema as Markdown, one table per section with every key's type,
//! default, an example and what it is for. `tests/docs.rs` regenerates both
//! and fails when the copies in `docs/reference/` are stale.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::Config;

/// The JSON Schema of a config file, as `check` applies it.
pub fn json_schema() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Config)).unwrap_or(Value::Null);
    if let Some(fields) = schema.as_object_mut() {
        fields.insert(
            "title".into(),
            Value::from("dms-bridge configuration (dms-bridge.toml)"),
        );
    }
    schema
}

/// One key of the reference.
struct Row {
    key: String,
    kind: String,
    default: Option<String>,
    example: Option<String>,
    description: String,
}

/// The reference as Markdown. `example` is a complete config (the demo's,
/// printed) whose values illustrate the keys it sets.
pub fn markdown(example: &toml::Table) -> String {
    let schema = json_schema();
    let walker = Walker {
        defs: schema.get("$defs").and_then(Value::as_object),
        example,
    };
    let mut out = String::from(
        "# Configuration reference\n\n\
         <!-- Generated from the config types by `tests/docs.rs`; do not edit. Regenerate with\n\
         `DMS_BRIDGE_UPDATE_DOCS=1 cargo test --test integration docs::`. -->\n\n\
         Every key of `dms-bridge.toml`, section by section: its type, its default (blank where\n\
         the key is required or has no default), an example (from `dms-bridge demo\n\
         --print-config` where the demo sets the key) and what it is for. The same rules as a\n\
         JSON Schema, for editors: [`dms-bridge.schema.json`](dms-bridge.schema.json)\n\
         ([editor setup](editor-setup.md)). `dms-bridge check --config FILE` applies them and\n\
         every rule this page cannot express (references between sections, secrets, files).\n\n\
         Durations are written like `30s`, `5m`, `24h`. Secrets are `{ value = \"…\" }`,\n\
         `{ env = \"VAR\" }` or `{ file = \"path\" }`.\n",
    );
    let Some(top) = schema.get("properties").and_then(Value::as_object) else {
        return out;
    };
    for (section, property) in top {
        let mut rows = Vec::new();
        walker.property(section, property, &mut rows);
        let _ = write!(out, "\n## `{section}`\n\n");
        if let Some(text) = walker.description(property) {
            let _ = writeln!(out, "{text}\n");
        }
        out.push_str("| Key | Type | Default | Example | Description |\n|---|---|---|---|---|\n");
        for row in rows {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                row.key,
                cell(&row.kind),
                row.default
                    .map(|d| format!("`{}`", cell(&d)))
                    .unwrap_or_default(),
                row.example
                    .map(|e| format!("`{}`", cell(&e)))
                    .unwrap_or_default(),
                cell(&row.description),
            );
        }
    }
    out
}

/// Text safe in a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

struct Walker<'a> {
    defs: Option<&'a Map<String, Value>>,
    example: &'a toml::Table,
}

impl Walker<'_> {
    /// `schema` with `$ref`s followed and an `Option`'s null branch dropped.
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        if let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            && let Some(target) = self.defs.and_then(|d| d.get(name))
        {
            return self.resolve(target);
        }
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            let non_null: Vec<&Value> = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            if let [only] = non_null.as_slice() {
                return self.resolve(only);
            }
        }
        schema
    }

    fn description(&self, schema: &Value) -> Option<String> {
        let own = schema.get("description").and_then(Value::as_str);
        let resolved = self
            .resolve(schema)
            .get("description")
            .and_then(Value::as_str);
        own.or(resolved)
            .map(|d| d.split("\n\n").next().unwrap_or(d).replace('\n', " "))
    }

    /// The row of `key` and, for tables, the rows of their keys.
    fn property(&self, key: &str, schema: &Value, rows: &mut Vec<Row>) {
        let resolved = self.resolve(schema);
        let default = schema
            .get("default")
            .or_else(|| resolved.get("default"))
            .filter(|d| !d.is_null())
            .map(|d| shorten(&render_value(d)));
        // The demo's value where it sets the key; else the default, or an
        // enum's first value, as a value the key takes.
        let example = example_at(self.example, key)
            .map(|v| shorten(&render_toml(&v)))
            .or_else(|| default.clone())
            .or_else(|| {
                resolved
                    .get("enum")
                    .and_then(|e| e.get(0))
                    .map(render_value)
            });
        rows.push(Row {
            key: key.to_owned(),
            kind: self.kind(schema),
            default,
            example,
            description: self.description(schema).unwrap_or_default(),
        });
        self.children(key, resolved, rows);
    }

    fn children(&self, key: &str, schema: &Value, rows: &mut Vec<Row>) {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                self.property(&format!("{key}.{name}"), property, rows);
            }
        }
        if let Some(items) = schema.get("items") {
            self.children(&format!("{key}[]"), self.resolve(items), rows);
        }
        if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
            self.children(&format!("{key}.<id>"), self.resolve(values), rows);
        }
        for variant in variants(schema) {
            let variant = self.resolve(variant);
            let tag = variant
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|p| p.get("kind"))
                .and_then(|k| {
                    k.get("const")
                        .or_else(|| k.get("enum").and_then(|e| e.get(0)))
                })
                .and_then(Value::as_str);
            match tag {
                Some(tag) => self.children(&format!("{key}({tag})"), variant, rows),
                None => self.children(key, variant, rows),
            }
        }
    }

    /// The key's type in words.
    fn kind(&self, schema: &Value) -> String {
        let resolved = self.resolve(schema);
        if let Some(values) = resolved.get("enum").and_then(Value::as_array) {
            let names: Vec<String> = values.iter().map(render_value).collect();
            return format!("one of {}", names.join(", "));
        }
        if let Some(value) = resolved.get("const") {
            return format!("`{}`", render_value(value));
        }
        let variants = variants(resolved);
        if !variants.is_empty() {
            let mut kinds: Vec<String> = variants.iter().map(|v| self.kind(v)).collect();
            kinds.dedup();
            return kinds.join(" or ");
        }
        let types: Vec<&str> = match resolved.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
        match types.as_slice() {
            ["array"] => match resolved.get("items") {
                Some(items) => format!("array of {}", self.kind(items)),
                None => "array".into(),
            },
            ["object"]
                if resolved
                    .get("additionalProperties")
                    .is_some_and(Value::is_object) =>
            {
                "table of tables by id".into()
            }
            ["object"] => "table".into(),
            [one] => (*one).to_owned(),
            [] => "any".into(),
            many => many.join(" or "),
        }
    }
}

/// The branches of a `oneOf`/`anyOf` with more than one non-null branch.
fn variants(schema: &Value) -> Vec<&Value> {
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let non_null: Vec<&Value> = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            if non_null.len() > 1 {
                return non_null;
            }
        }
    }
    Vec::new()
}

/// A default as it is written in TOML; serde's `{secs, nanos}` durations as `30s`.
fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{s}\""),
        Value::Object(fields) => match (fields.get("secs"), fields.get("nanos"), fields.len()) {
            (Some(Value::Number(secs)), Some(Value::Number(nanos)), 2) => {
                let duration = std::time::Duration::new(
                    secs.as_u64().unwrap_or_default(),
                    nanos
                        .as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .unwrap_or_default(),
                );
                format!("\"{}\"", humantime::format_duration(duration))
            }
            _ => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", render_value(v)))
                    .collect();
                format!("{{ {} }}", fields.join(", "))
            }
        },
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(render_value).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn render_toml(value: &toml::Value) -> String {
    match value {
        toml::Value::Table(t) => {
            let fields: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{k} = {}", render_toml(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        toml::Value::Array(items) => {
            let items: Vec<String> = items.iter().map(render_toml).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The example's value at a reference key (`dealerships[].address.city`,
/// `upstreams.<id>(rest).base_url`): the first array element or table entry
/// that has it (of the tagged `kind`, where the key names one).
fn example_at(example: &toml::Table, key: &str) -> Option<toml::Value> {
    let segments: Vec<&str> = key.split('.').collect();
    find(&toml::Value::Table(example.clone()), &segments)
}

fn find(value: &toml::Value, segments: &[&str]) -> Option<toml::Value> {
    let Some((first, rest)) = segments.split_first() else {
        return Some(value.clone());
    };
    let (name, tag) = match first.split_once('(') {
        Some((name, tag)) => (name, Some(tag.trim_end_matches(')'))),
        None => (*first, None),
    };
    let tagged = |v: &&toml::Value| {
        tag.is_none_or(|t| v.get("kind").and_then(toml::Value::as_str) == Some(t))
    };
    if name == "<id>" {
        return value
            .as_table()?
            .values()
            .filter(tagged)
            .find_map(|v| find(v, rest));
    }
    let (name, each) = match name.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (name, false),
    };
    let next = value.as_table()?.get(name)?;
    if each {
        return next
            .as_array()?
            .iter()
            .filter(tagged)
            .find_map(|v| find(v, rest));
    }
    Some(next).filter(tagged).and_then(|v| find(v, rest))
}
