//! Tool schemas: definitions for `tools/list`, compiled validators, and
//! schema problems turned into JSON-pointer problems.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde_json::Value;

use super::Gateway;
use crate::config::ToolNames;
use crate::contract::Principal;
use crate::contract::error::{Problems, ToolError};
use crate::tools::{Dealership, ToolId};

/// Compiled input-schema validators, one per tool.
pub(super) struct Schemas {
    validators: BTreeMap<ToolId, jsonschema::Validator>,
    definitions: BTreeMap<ToolId, Tool>,
}

impl Schemas {
    pub(super) fn compile(naming: ToolNames) -> Self {
        let mut validators = BTreeMap::new();
        let mut definitions = BTreeMap::new();
        for tool in ToolId::ALL {
            let schema = Value::Object((*tool.input_schema()).clone());
            match jsonschema::validator_for(&schema) {
                Ok(v) => {
                    validators.insert(tool, v);
                }
                // Only reachable if a derived schema were invalid; the tools-list snapshot test guards this.
                Err(e) => {
                    tracing::error!(tool = tool.name(), error = %e, "Input schema does not compile.")
                }
            }
            definitions.insert(tool, tool.definition(naming));
        }
        Self {
            validators,
            definitions,
        }
    }

    /// Whether the tool's result declares a top-level `field`.
    pub(super) fn result_has(&self, tool: ToolId, field: &str) -> bool {
        self.definitions
            .get(&tool)
            .and_then(|t| t.output_schema.as_ref())
            .and_then(|s| s.get("properties"))
            .is_some_and(|p| p.get(field).is_some())
    }
}

impl Gateway {
    /// Tools this principal can call somewhere: its scopes cover them and at
    /// least one of its dealerships routes their domain.
    pub fn visible_tools(&self, principal: &Principal) -> Vec<Tool> {
        ToolId::ALL
            .into_iter()
            .filter(|tool| self.is_visible(*tool, principal))
            .filter_map(|tool| self.inner.schemas.definitions.get(&tool).cloned())
            .collect()
    }

    pub fn tool_definition(&self, name: &str) -> Option<Tool> {
        ToolId::from_name(name).and_then(|t| self.inner.schemas.definitions.get(&t).cloned())
    }

    /// The name `tools/list` shows for `tool` (host-safe or canonical, as configured).
    pub fn listed_name(&self, tool: ToolId) -> Cow<'static, str> {
        self.inner
            .schemas
            .definitions
            .get(&tool)
            .map_or(Cow::Borrowed(tool.name()), |t| t.name.clone())
    }

    /// Whether `tools/list` shows the principal every one of `tools` (what
    /// a prompt relying on them needs).
    pub fn sees_all(&self, principal: &Principal, tools: &[ToolId]) -> bool {
        tools.iter().all(|t| self.is_visible(*t, principal))
    }

    /// The dealerships at which the principal may call every one of
    /// `tools`, in config order: the same checks a call's admission makes.
    pub fn dealerships_for(&self, principal: &Principal, tools: &[ToolId]) -> Vec<&Dealership> {
        self.dealerships()
            .filter(|d| tools.iter().all(|t| self.usable_at(*t, principal, d)))
            .collect()
    }

    fn is_visible(&self, tool: ToolId, principal: &Principal) -> bool {
        self.dealerships()
            .any(|d| self.usable_at(tool, principal, d))
    }

    /// Whether the principal may call `tool` at `d`: its scopes cover the
    /// tool, it may use the dealership (anonymously only where the
    /// dealership opens its inventory), and the dealership routes the tool's
    /// domain (or, for tools answered from config, the tool has a use there).
    fn usable_at(&self, tool: ToolId, principal: &Principal, d: &Dealership) -> bool {
        if tool.scope().is_some_and(|s| !principal.has_scope(s))
            || (tool.spec().signed_in && principal.anonymous)
            || !principal.may_use(&d.profile.id)
        {
            return false;
        }
        match tool.domain() {
            None => tool
                .spec()
                .useful_at
                .is_none_or(|useful| useful(principal, d)),
            Some(domain) => {
                (!principal.anonymous || d.anonymous_inventory) && d.routes.contains_key(&domain)
            }
        }
    }

    /// Every schema problem at once, each with a JSON pointer into the arguments.
    pub(super) fn schema_problems(
        &self,
        tool: ToolId,
        args: &Value,
    ) -> Result<Problems, ToolError> {
        let Some(validator) = self.inner.schemas.validators.get(&tool) else {
            return Err(ToolError::internal());
        };
        let mut problems = Problems::default();
        for error in validator.iter_errors(args) {
            collect(&error, &mut problems);
        }
        Ok(problems)
    }
}

/// Optional fields are `anyOf [T, null]` in the schema; when a value fails such
/// a field, report the problems inside `T` (precise pointers) rather than a
/// vague "matches none of" at the parent.
fn collect(error: &jsonschema::ValidationError<'_>, problems: &mut Problems) {
    if let jsonschema::error::ValidationErrorKind::AnyOf { context } = error.kind() {
        let meaningful: Vec<_> = context
            .iter()
            .filter(|branch| !branch.iter().all(is_null_type_error))
            .collect();
        if let [branch] = meaningful.as_slice() {
            for inner in branch.iter() {
                collect(inner, problems);
            }
            return;
        }
    }
    // Each field the tool does not take is its own problem at its own
    // pointer: the message never repeats a caller's text.
    if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } =
        error.kind()
    {
        let at = error.instance_path().to_string();
        for name in unexpected {
            let escaped = name.replace('~', "~0").replace('/', "~1");
            problems.push(
                format!("{at}/{escaped}"),
                "is not a field this tool takes; remove it (the tool's inputSchema lists the fields it takes)"
                    .to_owned(),
            );
        }
        return;
    }
    let at = error.instance_path().to_string();
    match error.kind() {
        jsonschema::error::ValidationErrorKind::Required { .. } => {
            problems.push_missing(at, describe(error))
        }
        _ => problems.push(at, describe(error)),
    }
}

fn is_null_type_error(error: &jsonschema::ValidationError<'_>) -> bool {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    matches!(error.kind(), K::Type { kind: TypeKind::Single(t) } if t.to_string() == "null")
}

/// What is wrong, as a phrase that follows the field's pointer and tells a
/// model what to send instead. Never quotes the offending value: it may be
/// customer data.
fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match error.kind() {
        K::Required { property } => format!(
            "is missing the required field {}",
            property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned)
        ),
        K::Type { kind } => format!("must be {}", expected_types(kind)),
        K::Enum { options } => format!("must be one of {}", list_of(options)),
        K::Constant { expected_value } => format!("must be {expected_value}"),
        K::Minimum { limit } => format!("must be at least {limit}"),
        K::Maximum { limit } => format!("must be at most {limit}"),
        K::ExclusiveMinimum { limit } => format!("must be greater than {limit}"),
        K::ExclusiveMaximum { limit } => format!("must be less than {limit}"),
        K::MinLength { limit } => format!("must have at least {limit} characters"),
        K::MaxLength { limit } => format!("must have at most {limit} characters"),
        K::MinItems { limit } => format!("must have at least {limit} items"),
        K::MaxItems { limit } => format!("must have at most {limit} items"),
        K::UniqueItems => "must not list the same item twice".into(),
        K::Pattern { pattern } => {
            format!("does not have the expected form (the pattern {pattern})")
        }
        K::Format { format } => format!("must be a valid {format}"),
        _ => "has a value this field does not accept; see the tool's inputSchema".into(),
    }
}

/// "a string", "an integer or null", …
fn expected_types(kind: &jsonschema::error::TypeKind) -> String {
    use jsonschema::error::TypeKind;
    let names: Vec<&str> = match kind {
        TypeKind::Single(t) => vec![type_name(*t)],
        TypeKind::Multiple(set) => set.iter().map(type_name).collect(),
    };
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "of another type".to_owned(),
    }
}

fn type_name(t: jsonschema::JsonType) -> &'static str {
    use jsonschema::JsonType as T;
    match t {
        T::Null => "null",
        T::Boolean => "true or false",
        T::Integer => "an integer",
        T::Number => "a number",
        T::String => "a string",
        T::Array => "an array",
        T::Object => "an object",
    }
}

/// An enum's options as `"a", "b" or "c"`.
fn list_of(options: &Value) -> String {
    match options.as_array() {
        Some(items) => {
            let names: Vec<String> = items.iter().map(Value::to_string).collect();
            match names.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => "the listed values".to_owned(),
            }
        }
        None => options.to_string(),
    }
}
