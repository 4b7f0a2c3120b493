//! Structural problems in words an operator can act on, each at its path,
//! and never with a value from the config in them: a value may be a secret
//! (an inline `client_secret = { value = "…" }` sits next to any typo), so a
//! message names keys, types, kinds and limits only.
//!
//! A table that takes one of several shapes by its `kind` (an upstream) is
//! checked against the shape its `kind` names, so a misspelt key is named
//! with its path, and an unknown `kind` lists the kinds there are.

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind as K};
use serde_json::Value;

use super::error::{ConfigError, pointer_to_path};

/// The problems one schema error stands for (a `kind`-tagged table's
/// problems are those of the shape its `kind` names).
pub fn problems(e: &ValidationError<'_>) -> Vec<ConfigError> {
    let pointer = e.instance_path().to_string();
    let path = pointer_to_path(&pointer);
    match e.kind() {
        K::OneOfNotValid { context } | K::AnyOf { context } => {
            one_of(&pointer, &path, e.instance(), context)
        }
        kind => vec![ConfigError::new(path, describe(kind))],
    }
}

/// `oneOf` over `kind`-tagged shapes: the shape the table's `kind` names,
/// or the list of kinds when it names none of them.
fn one_of(
    pointer: &str,
    path: &str,
    instance: &Value,
    branches: &[Vec<ValidationError<'static>>],
) -> Vec<ConfigError> {
    let kind_path = format!("{pointer}/kind");
    let names_kind = |error: &ValidationError<'_>| error.instance_path().to_string() == kind_path;
    let Some(kind) = instance.get("kind").and_then(Value::as_str) else {
        return closest_form(pointer, path, branches);
    };
    // The branch whose `kind` matched: its errors say nothing about `kind`.
    if let Some(branch) = branches.iter().find(|b| !b.iter().any(names_kind)) {
        let mut found: Vec<ConfigError> = branch.iter().flat_map(problems).collect();
        if found.is_empty() {
            found.push(ConfigError::new(
                path,
                format!("is not a valid {kind} table"),
            ));
        }
        return found;
    }
    let mut kinds: Vec<String> = branches
        .iter()
        .flatten()
        .filter(|error| names_kind(error))
        .flat_map(|error| expected_values(error.kind()))
        .collect();
    kinds.sort();
    kinds.dedup();
    vec![ConfigError::new(
        format!("{path}.kind"),
        format!("{kind:?} is not a kind; the kinds are {}", kinds.join(", ")),
    )]
}

/// Without a `kind`: the forms the value is not even of the type of (the
/// `null` of an optional table, say) are set aside; when one form is left,
/// its problems are the value's.
fn closest_form(
    pointer: &str,
    path: &str,
    branches: &[Vec<ValidationError<'static>>],
) -> Vec<ConfigError> {
    let of_another_type = |branch: &&Vec<ValidationError<'static>>| {
        branch
            .iter()
            .all(|e| matches!(e.kind(), K::Type { .. }) && e.instance_path().to_string() == pointer)
    };
    let mut plausible = branches.iter().filter(|b| !of_another_type(b));
    match (plausible.next(), plausible.next()) {
        (Some(only), None) => only.iter().flat_map(problems).collect(),
        _ => vec![ConfigError::new(
            path,
            "does not match any of the forms this value takes",
        )],
    }
}

/// The values a `const` or `enum` keyword wants (from the schema, never the config).
fn expected_values(kind: &K) -> Vec<String> {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    match kind {
        K::Constant { expected_value } => vec![text(expected_value)],
        K::Enum { options } => options
            .as_array()
            .map(|o| o.iter().map(text).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// One problem, in words from the schema only.
fn describe(kind: &K) -> String {
    match kind {
        K::AdditionalProperties { unexpected } => {
            format!("unknown key(s): {}", unexpected.join(", "))
        }
        K::Required { property } => format!(
            "missing required key {}",
            property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned)
        ),
        K::Type { kind } => format!("expected {}", type_names(kind)),
        K::Constant { .. } | K::Enum { .. } => {
            format!("must be one of: {}", expected_values(kind).join(", "))
        }
        K::Minimum { limit } | K::ExclusiveMinimum { limit } => format!("must be at least {limit}"),
        K::Maximum { limit } | K::ExclusiveMaximum { limit } => format!("must be at most {limit}"),
        K::MinLength { limit } => format!("must have at least {limit} character(s)"),
        K::MaxLength { limit } => format!("must have at most {limit} character(s)"),
        K::MinItems { limit } => format!("must list at least {limit} item(s)"),
        K::MaxItems { limit } => format!("must list at most {limit} item(s)"),
        K::UniqueItems => "must not list an item twice".into(),
        K::Format { format } => format!("is not a valid {format}"),
        _ => "is not valid here".into(),
    }
}

fn type_names(kind: &TypeKind) -> String {
    let name = |t: &jsonschema::JsonType| match t.to_string().as_str() {
        "object" => "a table".to_owned(),
        "array" => "a list".to_owned(),
        "null" => "nothing".to_owned(),
        "integer" => "a whole number".to_owned(),
        "number" => "a number".to_owned(),
        "boolean" => "true or false".to_owned(),
        "string" => "a string".to_owned(),
        other => other.to_owned(),
    };
    match kind {
        TypeKind::Single(t) => name(t),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|t| name(&t))
            .collect::<Vec<_>>()
            .join(" or "),
    }
}
