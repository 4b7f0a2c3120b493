//! The ordered steps every call goes through.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Instant;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use super::auth::Principal;
use super::error::{ErrorCode, Problems, ToolError};
use super::{Check, Gateway, ToolArgs, ToolContext};
use crate::tools::{ToolId, dealership, inventory};

/// A call that could not become a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// No tool by that name exists (a JSON-RPC error, per the MCP spec).
    UnknownTool,
}

/// Compiled input-schema validators, one per tool.
pub(super) struct Schemas {
    validators: BTreeMap<ToolId, jsonschema::Validator>,
    definitions: BTreeMap<ToolId, Tool>,
}

impl Schemas {
    pub(super) fn compile() -> Self {
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
            definitions.insert(tool, tool.definition());
        }
        Self {
            validators,
            definitions,
        }
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

    fn is_visible(&self, tool: ToolId, principal: &Principal) -> bool {
        if tool.scope().is_some_and(|s| !principal.has_scope(s)) {
            return false;
        }
        let usable = self
            .dealerships()
            .filter(|d| principal.may_use(&d.profile.id));
        match tool.domain() {
            None => self.dealerships().any(|d| principal.may_use(&d.profile.id)),
            Some(domain) => usable
                .filter(|d| !principal.anonymous || d.anonymous_inventory)
                .any(|d| d.routes.contains_key(&domain)),
        }
    }

    /// Runs one tool call through the whole pipeline.
    pub async fn call_tool(
        &self,
        principal: &Principal,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<Result<Value, ToolError>, CallError> {
        let tool = ToolId::from_name(name).ok_or(CallError::UnknownTool)?;
        let started = Instant::now();
        let args = Value::Object(arguments.unwrap_or_default());
        let outcome = match tool {
            ToolId::DealershipList => self.run(tool, principal, args, dealership::list).await,
            ToolId::DealershipGet => self.run(tool, principal, args, dealership::get).await,
            ToolId::InventorySearch => self.run(tool, principal, args, inventory::search).await,
            ToolId::InventoryGet => self.run(tool, principal, args, inventory::get).await,
            ToolId::InventoryFacets => self.run(tool, principal, args, inventory::facets).await,
        };
        let code = outcome.as_ref().err().map(|e| e.code.as_str());
        tracing::info!(
            tool = tool.name(),
            principal = %principal.name,
            outcome = code.unwrap_or("ok"),
            latency_us = started.elapsed().as_micros() as u64,
            "Tool call."
        );
        Ok(outcome)
    }

    async fn run<'a, A, F, Fut>(
        &'a self,
        tool: ToolId,
        principal: &'a Principal,
        args: Value,
        handler: F,
    ) -> Result<Value, ToolError>
    where
        A: ToolArgs,
        F: FnOnce(ToolContext<'a>, A) -> Fut,
        Fut: Future<Output = Result<Value, ToolError>>,
    {
        self.check_schema(tool, &args)?;
        let parsed: A = serde_json::from_value(args).map_err(|e| {
            // The schema accepted it, so this is a gap between schema and type: say where, keep it generic.
            tracing::warn!(tool = tool.name(), error = %e, "Arguments passed the schema but not the parser.");
            ToolError::invalid_arguments(vec![super::error::Problem { pointer: String::new(), message: "arguments do not match the tool's schema".into() }])
        })?;
        let dealership = match parsed.dealership_id() {
            Some(id) => Some(self.authorize(principal, id, tool)?),
            None => None,
        };
        if let Some(scope) = tool.scope()
            && !principal.has_scope(scope)
        {
            return Err(ToolError::new(
                ErrorCode::AuthForbidden,
                "Your token does not carry the scope this tool needs.",
            )
            .with_details(json!({ "required_scope": scope.as_str() })));
        }
        if let (Some(domain), Some(d)) = (tool.domain(), dealership)
            && !d.routes.contains_key(&domain)
        {
            return Err(super::unsupported(domain));
        }
        let mut check = Check {
            problems: Problems::default(),
            gateway: self,
            dealership,
        };
        parsed.validate(&mut check);
        check.problems.into_result()?;
        let ctx = ToolContext {
            gateway: self,
            principal,
            dealership,
        };
        match tokio::time::timeout(self.limits().call_timeout, handler(ctx, parsed)).await {
            Ok(result) => result,
            Err(_) => Err(ToolError::new(
                ErrorCode::UpstreamTimeout,
                "The call took longer than the bridge allows. Try again, or narrow the request.",
            )),
        }
    }

    /// Every schema problem at once, each with a JSON pointer into the arguments.
    fn check_schema(&self, tool: ToolId, args: &Value) -> Result<(), ToolError> {
        let Some(validator) = self.inner.schemas.validators.get(&tool) else {
            return Err(ToolError::internal());
        };
        let mut problems = Problems::default();
        for error in validator.iter_errors(args) {
            collect(&error, &mut problems);
        }
        problems.into_result()
    }

    /// Scoping: the caller may use this dealership. Unknown and forbidden look
    /// the same, so a token cannot probe which dealerships exist.
    fn authorize<'a>(
        &'a self,
        principal: &Principal,
        id: &str,
        tool: ToolId,
    ) -> Result<&'a super::Dealership, ToolError> {
        let dealership = self.dealership(id).filter(|_| principal.may_use(id));
        match dealership {
            Some(d) if !principal.anonymous || tool.domain().is_none() || d.anonymous_inventory => {
                Ok(d)
            }
            _ if principal.anonymous => Err(ToolError::new(
                ErrorCode::AuthUnauthorized,
                "This dealership needs an access token for that.",
            )
            .with_hint("Send an Authorization: Bearer token that grants this dealership.")),
            _ => Err(ToolError::new(
                ErrorCode::AuthForbidden,
                "Your token does not grant access to that dealership.",
            )
            .with_details(json!({ "dealership_id": id }))
            .with_next_tool_call(
                "dealership.list",
                json!({}),
                "List the dealerships your token may use.",
            )),
        }
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
    problems.push(error.instance_path().to_string(), describe(error));
}

fn is_null_type_error(error: &jsonschema::ValidationError<'_>) -> bool {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    matches!(error.kind(), K::Type { kind: TypeKind::Single(t) } if t.to_string() == "null")
}

fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match error.kind() {
        K::AdditionalProperties { unexpected } => {
            format!("unknown field(s): {}", unexpected.join(", "))
        }
        K::Required { property } => format!("missing required field {property}"),
        // The default text quotes the offending value; keep messages free of caller data.
        K::Type { kind } => format!("wrong type: expected {kind:?}")
            .replace("Single(", "")
            .replace(')', "")
            .to_lowercase(),
        K::Enum { options } => format!("must be one of {options}"),
        K::Minimum { limit } => format!("must be at least {limit}"),
        K::Maximum { limit } => format!("must be at most {limit}"),
        K::MinLength { limit } => format!("must have at least {limit} characters"),
        K::MaxLength { limit } => format!("must have at most {limit} characters"),
        K::Pattern { pattern } => format!("must match {pattern}"),
        _ => "does not match the schema".into(),
    }
}
