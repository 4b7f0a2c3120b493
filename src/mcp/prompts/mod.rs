//! MCP prompts: the dealership workflows of `texts.rs`, scoped like the
//! tools they rely on. A caller sees (and gets) a prompt only if `tools/list`
//! shows it every one of those tools, and only for a dealership at which it
//! may call them all; anything else answers as if the prompt did not exist.

mod texts;

use std::collections::HashMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ContentBlock, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::Value;

pub use texts::Completes;
use texts::{PROMPTS, PromptText};

use crate::contract::Principal;
use crate::gateway::Gateway;
use crate::tools::{Dealership, ToolId};

/// Longest argument value taken into a prompt's text.
const MAX_ARGUMENT_CHARS: usize = 200;

/// The prompts the principal may use, in table order.
pub fn list(gateway: &Gateway, principal: &Principal) -> Vec<Prompt> {
    PROMPTS
        .iter()
        .filter(|p| usable(gateway, principal, p))
        .map(definition)
        .collect()
}

/// `prompts/get`: the text with the arguments and the listed tool names in
/// place. A prompt the principal may not use, or a dealership it may not use
/// it at, answers -32602 as an unknown one would.
pub fn get(
    gateway: &Gateway,
    principal: &Principal,
    name: &str,
    arguments: Option<&JsonObject>,
) -> Result<GetPromptResult, McpError> {
    let prompt = find(gateway, principal, name).ok_or_else(unknown)?;
    let values = arguments_of(prompt, arguments)?;
    let dealership = values.get("dealership_id").map(String::as_str);
    let allowed = dealerships(gateway, principal, prompt);
    if dealership.is_none_or(|id| !allowed.iter().any(|d| d.profile.id == id)) {
        // Unknown and forbidden look the same, and the value is not echoed.
        return Err(McpError::invalid_params(
            "dealership_id is not a dealership you may use this prompt at; dealership_list lists yours.",
            None,
        ));
    }
    let text = render(prompt, &values, |tool| {
        gateway.listed_name(tool).into_owned()
    });
    Ok(GetPromptResult::new(vec![PromptMessage::new(
        Role::User,
        ContentBlock::text(text),
    )])
    .with_description(prompt.description))
}

/// The prompt called `name`, if the principal may use it.
pub fn find(gateway: &Gateway, principal: &Principal, name: &str) -> Option<&'static PromptText> {
    PROMPTS
        .iter()
        .find(|p| p.name == name)
        .filter(|p| usable(gateway, principal, p))
}

/// The dealerships at which the principal may call every tool of `prompt`.
pub fn dealerships<'a>(
    gateway: &'a Gateway,
    principal: &Principal,
    prompt: &PromptText,
) -> Vec<&'a Dealership> {
    gateway.dealerships_for(principal, &tools_of(prompt))
}

/// What `completion/complete` offers for the prompt's argument `name`.
pub fn completes(prompt: &PromptText, name: &str) -> Completes {
    prompt
        .arguments
        .iter()
        .find(|a| a.name == name)
        .map_or(Completes::Nothing, |a| a.completes)
}

fn usable(gateway: &Gateway, principal: &Principal, prompt: &PromptText) -> bool {
    let tools = tools_of(prompt);
    tools.len() == prompt.tools.len() && gateway.sees_all(principal, &tools)
}

fn tools_of(prompt: &PromptText) -> Vec<ToolId> {
    // A name the table does not know drops out, and `usable` then refuses the prompt.
    prompt
        .tools
        .iter()
        .filter_map(|t| ToolId::from_name(t))
        .collect()
}

fn definition(prompt: &PromptText) -> Prompt {
    let arguments = prompt
        .arguments
        .iter()
        .map(|a| {
            PromptArgument::new(a.name)
                .with_description(a.description)
                .with_required(a.required)
        })
        .collect();
    Prompt::new(prompt.name, Some(prompt.description), Some(arguments)).with_title(prompt.title)
}

/// The name is not echoed: it is caller text, and may be anything.
fn unknown() -> McpError {
    McpError::invalid_params(
        "Unknown prompt; prompts/list lists the prompts you may use.",
        None,
    )
}

/// The given arguments, one line of text each; every required one present.
fn arguments_of(
    prompt: &PromptText,
    given: Option<&JsonObject>,
) -> Result<HashMap<&'static str, String>, McpError> {
    let mut values = HashMap::new();
    for argument in prompt.arguments {
        let value = given
            .and_then(|g| g.get(argument.name))
            .and_then(Value::as_str)
            .map(one_line)
            .filter(|v| !v.is_empty());
        match value {
            Some(v) if v.chars().count() > MAX_ARGUMENT_CHARS => {
                return Err(McpError::invalid_params(
                    format!(
                        "argument {} is longer than {MAX_ARGUMENT_CHARS} characters",
                        argument.name
                    ),
                    None,
                ));
            }
            Some(v) => {
                values.insert(argument.name, v);
            }
            None if argument.required => {
                return Err(McpError::invalid_params(
                    format!("argument {} is required", argument.name),
                    None,
                ));
            }
            None => {}
        }
    }
    Ok(values)
}

/// Control characters (line breaks included) would let a value reshape the
/// text around it: they become spaces.
fn one_line(value: &str) -> String {
    value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_owned()
}

/// The prompt's text with its placeholders filled; lines naming an
/// optional argument that was not given are left out.
fn render(
    prompt: &PromptText,
    values: &HashMap<&'static str, String>,
    tool_name: impl Fn(ToolId) -> String,
) -> String {
    let known = |name: &str| prompt.arguments.iter().any(|a| a.name == name);
    let mut out = Vec::new();
    'lines: for line in prompt.text.lines() {
        let mut text = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(open) = rest.find('{') {
            text.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let inner = after.find('}').map(|close| &after[..close]);
            let filled = match inner {
                Some(name) if known(name) => match values.get(name) {
                    Some(v) => Some(v.clone()),
                    None => continue 'lines,
                },
                Some(tool) => tool
                    .strip_prefix("tool:")
                    .and_then(ToolId::from_name)
                    .map(&tool_name),
                None => None,
            };
            match (filled, inner) {
                (Some(value), Some(inner)) => {
                    text.push_str(&value);
                    rest = &after[inner.len() + 1..];
                }
                _ => {
                    text.push('{');
                    rest = after;
                }
            }
        }
        text.push_str(rest);
        out.push(text);
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_names_known_tools_and_placeholders() {
        for prompt in PROMPTS {
            assert_eq!(
                tools_of(prompt).len(),
                prompt.tools.len(),
                "{}",
                prompt.name
            );
            assert_eq!(
                prompt.arguments.first().map(|a| a.name),
                Some("dealership_id")
            );
            let all: HashMap<&'static str, String> = prompt
                .arguments
                .iter()
                .map(|a| (a.name, format!("<{}>", a.name)))
                .collect();
            let text = render(prompt, &all, |t| t.host_safe_name().to_owned());
            assert!(!text.contains("{tool:"), "{}: {text}", prompt.name);
            for tool in prompt.tools {
                let listed = ToolId::from_name(tool).map(|t| t.host_safe_name());
                assert!(
                    listed.is_some_and(|l| text.contains(l)),
                    "{}: {tool}",
                    prompt.name
                );
            }
            for argument in prompt.arguments {
                assert!(
                    !text.contains(&format!("{{{}}}", argument.name)),
                    "{}: {}",
                    prompt.name,
                    argument.name
                );
            }
        }
    }

    #[test]
    fn lines_of_missing_optional_arguments_are_left_out() {
        let prompt = &PROMPTS[0];
        let values = HashMap::from([
            ("dealership_id", "d1".to_owned()),
            ("make", "Honda".to_owned()),
        ]);
        let text = render(prompt, &values, |t| t.host_safe_name().to_owned());
        assert!(text.contains("make: [\"Honda\"]"));
        assert!(!text.contains("model: ["));
        assert!(!text.contains("price_max"));
        assert!(text.contains("dealership_id \"d1\""));
    }

    #[test]
    fn braces_that_are_not_placeholders_stay() {
        let prompt = &PROMPTS[1];
        let values = HashMap::from([
            ("dealership_id", "d1".to_owned()),
            ("vin", "V".to_owned()),
            ("mileage", "42000".to_owned()),
        ]);
        let text = render(prompt, &values, |t| t.host_safe_name().to_owned());
        assert!(
            text.contains("{\"value\": 42000, \"unit\": \"mi\"}"),
            "{text}"
        );
    }

    #[test]
    fn values_stay_on_one_line() {
        assert_eq!(one_line(" a\nb\r\tc "), "a b  c");
    }
}
