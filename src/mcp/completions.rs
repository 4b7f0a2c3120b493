//! `completion/complete` for prompt arguments and resource-template
//! variables: dealership ids the caller may use, and makes and models for
//! sale at one of them. Inventory values come from an `inventory.facets`
//! call through the gateway, so the caller's scoping, tenancy, quotas and
//! the read cache hold exactly as for the tool: no value from a dealership
//! the caller may not use can be offered. Anything the bridge cannot or may
//! not suggest (an unknown prompt, argument or template, customer data)
//! answers an empty completion, so nothing is learnt from asking.

use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use serde_json::{Value, json};

use super::prompts::{self, Completes};
use super::resources;
use crate::gateway::{Caller, Gateway};
use crate::tools::ToolId;

pub async fn complete(
    gateway: &Gateway,
    caller: &Caller,
    request: &CompleteRequestParams,
) -> CompleteResult {
    let typed = request.argument.value.as_str();
    let context = |name: &str| {
        request
            .context
            .as_ref()
            .and_then(|c| c.get_argument(name))
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    };
    let candidates = match &request.r#ref {
        Reference::Prompt(reference) => {
            let principal = &caller.principal;
            let Some(prompt) = prompts::find(gateway, principal, &reference.name) else {
                return empty();
            };
            let usable: Vec<String> = prompts::dealerships(gateway, principal, prompt)
                .into_iter()
                .map(|d| d.profile.id.clone())
                .collect();
            // The dealership given, else the only one there is.
            let at = match (context("dealership_id"), usable.as_slice()) {
                (Some(id), _) => usable.iter().find(|u| *u == id).cloned(),
                (None, [only]) => Some(only.clone()),
                (None, _) => None,
            };
            match (prompts::completes(prompt, &request.argument.name), at) {
                (Completes::Dealership, _) => usable,
                (Completes::Make, Some(at)) => facet(gateway, caller, &at, "makes", None).await,
                (Completes::Model, Some(at)) => {
                    facet(gateway, caller, &at, "models", context("make")).await
                }
                _ => Vec::new(),
            }
        }
        Reference::Resource(reference) => {
            let tool = resources::template_tool(&reference.uri).and_then(ToolId::from_name);
            match (tool, request.argument.name.as_str()) {
                (Some(tool), "dealership_id") => gateway
                    .dealerships_for(&caller.principal, &[tool])
                    .into_iter()
                    .map(|d| d.profile.id.clone())
                    .collect(),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    CompleteResult::new(matching(candidates, typed))
}

fn empty() -> CompleteResult {
    CompleteResult::new(matching(Vec::new(), ""))
}

/// The candidates that start with `typed` (case-insensitively), in their
/// order, at most the spec's 100, with the total and whether more match.
fn matching(candidates: Vec<String>, typed: &str) -> CompletionInfo {
    let typed = typed.to_lowercase();
    let all: Vec<String> = candidates
        .into_iter()
        .filter(|c| c.to_lowercase().starts_with(&typed))
        .collect();
    let total = all.len();
    let values: Vec<String> = all.into_iter().take(CompletionInfo::MAX_VALUES).collect();
    let has_more = total > values.len();
    let mut info = CompletionInfo::default();
    info.values = values;
    info.total = Some(u32::try_from(total).unwrap_or(u32::MAX));
    info.has_more = Some(has_more);
    info
}

/// One facet's values (`makes`, `models`) for sale at `dealership`, most
/// common first, through the gateway as the caller; of `make` only, if given.
async fn facet(
    gateway: &Gateway,
    caller: &Caller,
    dealership: &str,
    field: &str,
    make: Option<&str>,
) -> Vec<String> {
    let filters = match make {
        Some(make) => json!({ "make": [make] }),
        None => json!({}),
    };
    let Value::Object(arguments) = json!({ "dealership_id": dealership, "filters": filters })
    else {
        return Vec::new();
    };
    // A completion is not a call the client watches: no progress, no log messages.
    let quiet = Caller {
        progress: None,
        log: None,
        ..caller.clone()
    };
    let Ok(outcome) = gateway
        .call_tool(&quiet, "inventory.facets", Some(arguments))
        .await
    else {
        return Vec::new();
    };
    let Ok(payload) = outcome.result else {
        return Vec::new();
    };
    payload
        .value()
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("value").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("Make{i:03}")).collect()
    }

    #[test]
    fn prefixes_match_case_insensitively() {
        let info = matching(vec!["Honda".into(), "Hyundai".into(), "Ford".into()], "h");
        assert_eq!(info.values, ["Honda", "Hyundai"]);
        assert_eq!((info.total, info.has_more), (Some(2), Some(false)));
        let info = matching(vec!["Honda".into()], "HON");
        assert_eq!(info.values, ["Honda"]);
    }

    #[test]
    fn at_most_a_hundred_values_with_the_total() {
        let info = matching(names(150), "make");
        assert_eq!(info.values.len(), 100);
        assert_eq!((info.total, info.has_more), (Some(150), Some(true)));
        let info = matching(names(100), "");
        assert_eq!((info.values.len(), info.has_more), (100, Some(false)));
    }
}
