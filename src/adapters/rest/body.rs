//! JSON request bodies from a profile's TOML table. Every string is a template
//! over the operation's request parameters; a string that is exactly one list
//! parameter (`"{service_codes}"`) becomes a JSON array of strings, and a table
//! `{ each = "LIST", item = … }` becomes one `item` per element, with `{item}`
//! standing for the element. A string that renders empty is left out of its
//! object or array, so optional values need no special syntax; an object all
//! of whose placeholders render empty is left out too.
//!
//! Rendered bodies carry customer data: never log them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::adapters::BuildError;
use crate::adapters::template::{Template, TemplateContext};

/// The placeholder for the current element inside an `each` table.
const ITEM: &str = "item";

#[derive(Debug, Clone)]
pub(super) enum BodyTemplate {
    /// Numbers, booleans and nulls go out as written.
    Literal(Value),
    Text(Template),
    /// A list parameter as a JSON array of strings.
    List(String),
    Each {
        list: String,
        item: Box<BodyTemplate>,
    },
    Object(Vec<(String, BodyTemplate)>),
    Array(Vec<BodyTemplate>),
}

/// List-valued request parameters, by name.
pub(super) type Lists = BTreeMap<String, Vec<String>>;

impl BodyTemplate {
    /// Compiles `value` (found at `at` in the profile). `ctx.params` names the
    /// scalar parameters, `lists` the list-valued ones; problems go to `errors`.
    pub(super) fn compile(
        at: &str,
        value: &Value,
        ctx: &TemplateContext<'_>,
        lists: &[&str],
        errors: &mut Vec<BuildError>,
    ) -> Option<Self> {
        match value {
            Value::String(text) => {
                let whole = text
                    .strip_prefix('{')
                    .and_then(|t| t.strip_suffix('}'))
                    .filter(|name| lists.contains(name));
                if let Some(name) = whole {
                    return Some(Self::List(name.to_owned()));
                }
                Template::compile(text, ctx)
                    .map(Self::Text)
                    .map_err(|e| errors.push(BuildError::in_profile(format!("{at}: {e}"))))
                    .ok()
            }
            Value::Object(map) if map.contains_key("each") => {
                Self::compile_each(at, map, ctx, lists, errors)
            }
            Value::Object(map) => {
                let before = errors.len();
                let fields: Vec<_> = map
                    .iter()
                    .filter_map(|(k, v)| {
                        Self::compile(&format!("{at}.{k}"), v, ctx, lists, errors)
                            .map(|t| (k.clone(), t))
                    })
                    .collect();
                (errors.len() == before).then_some(Self::Object(fields))
            }
            Value::Array(items) => {
                let before = errors.len();
                let items: Vec<_> = items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| {
                        Self::compile(&format!("{at}[{i}]"), v, ctx, lists, errors)
                    })
                    .collect();
                (errors.len() == before).then_some(Self::Array(items))
            }
            literal => Some(Self::Literal(literal.clone())),
        }
    }

    fn compile_each(
        at: &str,
        map: &Map<String, Value>,
        ctx: &TemplateContext<'_>,
        lists: &[&str],
        errors: &mut Vec<BuildError>,
    ) -> Option<Self> {
        let list = match map.get("each") {
            Some(Value::String(name)) if lists.contains(&name.as_str()) => name.clone(),
            _ => {
                errors.push(BuildError::in_profile(format!(
                    "{at}.each: must name a list parameter ({})",
                    lists.join(", ")
                )));
                return None;
            }
        };
        let (Some(item), 2) = (map.get("item"), map.len()) else {
            errors.push(BuildError::in_profile(format!(
                "{at}: an `each` table has exactly `each` and `item`"
            )));
            return None;
        };
        let mut names = ctx.params.clone();
        names.insert(ITEM.to_owned(), String::new());
        let inner = TemplateContext {
            params: &names,
            ..*ctx
        };
        let item = Self::compile(&format!("{at}.item"), item, &inner, lists, errors)?;
        Some(Self::Each {
            list,
            item: Box::new(item),
        })
    }

    /// Renders the body; `None` when it renders to nothing (an empty string).
    pub(super) fn render(&self, ctx: &TemplateContext<'_>, lists: &Lists) -> Option<Value> {
        match self {
            Self::Literal(v) => Some(v.clone()),
            Self::Text(t) => Some(t.render(ctx))
                .filter(|s| !s.is_empty())
                .map(Value::String),
            Self::List(name) => Some(Value::Array(
                lists
                    .get(name)
                    .into_iter()
                    .flatten()
                    .map(|v| Value::String(v.clone()))
                    .collect(),
            )),
            Self::Each { list, item } => {
                let mut params = ctx.params.clone();
                let rendered = lists
                    .get(list)
                    .into_iter()
                    .flatten()
                    .filter_map(|element| {
                        params.insert(ITEM.to_owned(), element.clone());
                        let inner = TemplateContext {
                            params: &params,
                            ..*ctx
                        };
                        item.render(&inner, lists)
                    })
                    .collect();
                Some(Value::Array(rendered))
            }
            Self::Object(fields) => {
                // An object whose placeholders all rendered empty says nothing
                // (a trade-in the customer does not have): left out, literals and all.
                let (mut placeholders, mut filled) = (false, false);
                let object: Map<String, Value> = fields
                    .iter()
                    .filter_map(|(k, t)| {
                        let literal = match t {
                            Self::Literal(_) => true,
                            Self::Text(text) => text.is_constant(),
                            _ => false,
                        };
                        placeholders |= !literal;
                        let value = t.render(ctx, lists)?;
                        filled |= !literal;
                        Some((k.clone(), value))
                    })
                    .collect();
                (filled || !placeholders).then_some(Value::Object(object))
            }
            Self::Array(items) => Some(Value::Array(
                items.iter().filter_map(|t| t.render(ctx, lists)).collect(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compile(body: Value) -> Result<BodyTemplate, Vec<String>> {
        let vars = BTreeMap::from([("dealer".to_owned(), "D1".to_owned())]);
        let secrets = BTreeMap::new();
        let names: BTreeMap<String, String> = ["start", "email", "codes"]
            .iter()
            .map(|n| ((*n).to_owned(), String::new()))
            .collect();
        let ctx = TemplateContext {
            vars: &vars,
            secrets: &secrets,
            dealership_id: "d",
            params: &names,
        };
        let mut errors = Vec::new();
        let compiled = BodyTemplate::compile("op.body", &body, &ctx, &["codes"], &mut errors);
        compiled.ok_or_else(|| errors.iter().map(BuildError::to_string).collect())
    }

    fn render(t: &BodyTemplate, email: &str) -> Value {
        let vars = BTreeMap::from([("dealer".to_owned(), "D1".to_owned())]);
        let secrets = BTreeMap::new();
        let params = BTreeMap::from([
            ("start".to_owned(), "2026-12-01T09:30-0600".to_owned()),
            ("email".to_owned(), email.to_owned()),
            ("codes".to_owned(), "A,B".to_owned()),
        ]);
        let ctx = TemplateContext {
            vars: &vars,
            secrets: &secrets,
            dealership_id: "d",
            params: &params,
        };
        let lists = Lists::from([("codes".to_owned(), vec!["A".to_owned(), "B".to_owned()])]);
        t.render(&ctx, &lists).unwrap()
    }

    #[test]
    fn lists_become_arrays_and_empty_strings_are_left_out() {
        let t = compile(json!({
            "at": "{start}", "dealer": "{vars.dealer}", "email": "{email}", "joined": "{codes}!",
            "codes": "{codes}", "services": { "each": "codes", "item": { "opcode": "{item}" } },
            "flags": [true, 3], "nested": { "email": "{email}" },
            "vehicles": [{ "type": "wanted", "vin": "{email}" }, { "type": "exchange" }]
        }))
        .unwrap();
        // The nested object and the wanted vehicle had only placeholders that
        // rendered empty: left out; literal-only objects stay.
        assert_eq!(
            render(&t, ""),
            json!({
                "at": "2026-12-01T09:30-0600", "dealer": "D1", "joined": "A,B!", "codes": ["A", "B"],
                "services": [{ "opcode": "A" }, { "opcode": "B" }], "flags": [true, 3],
                "vehicles": [{ "type": "exchange" }]
            })
        );
        let full = render(&t, "a@b.example");
        assert_eq!(full["email"], "a@b.example");
        assert_eq!(full["nested"], json!({ "email": "a@b.example" }));
        assert_eq!(
            full["vehicles"][0],
            json!({ "type": "wanted", "vin": "a@b.example" })
        );
    }

    #[test]
    fn unknown_placeholders_and_bad_each_tables_are_refused_with_their_place() {
        let errors = compile(json!({
            "a": "{nope}", "b": { "each": "start", "item": "{item}" },
            "c": { "each": "codes", "item": "{item}", "extra": 1 }, "d": "{item}"
        }))
        .unwrap_err();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].starts_with("profile op.body.a:"), "{errors:?}");
        assert!(
            errors[1].starts_with("profile op.body.b.each:"),
            "{errors:?}"
        );
        assert!(errors[2].starts_with("profile op.body.c:"), "{errors:?}");
        assert!(errors[3].starts_with("profile op.body.d:"), "{errors:?}");
    }
}
