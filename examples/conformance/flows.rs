//! The tools that ask the client something before they answer, as flows
//! (see `rounds`): the 2025-11-25 ones the suite calls over a session
//! (`test_sampling`, `test_elicitation`, the SEP-1034 and SEP-1330 forms),
//! and the 2026-07-28 input-required ones (`test_input_required_result_*`,
//! `test_missing_capability`, `test_streaming_elicitation`).

use std::collections::BTreeMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, InputRequests};
use serde_json::{Value, json};

use crate::inputs::{self, elicit, elicited, list_roots, roots, sample, sampled};
use crate::rounds::{Round, Step};

pub type ToolFlow = fn(&Round) -> Result<Step<CallToolResult>, McpError>;

/// The flow behind a tool name, if that tool asks the client anything.
pub fn tool(name: &str) -> Option<ToolFlow> {
    let flow: ToolFlow = match name {
        "test_sampling" => sampling,
        "test_elicitation" => elicitation,
        "test_elicitation_sep1034_defaults" => sep1034_defaults,
        "test_elicitation_sep1330_enums" => sep1330_enums,
        "test_missing_capability" => missing_capability,
        "test_streaming_elicitation" => streaming_elicitation,
        "test_input_required_result_elicitation" => user_name,
        "test_input_required_result_sampling" => capital,
        "test_input_required_result_list_roots" => client_roots,
        "test_input_required_result_request_state" => request_state,
        "test_input_required_result_multiple_inputs" => multiple_inputs,
        "test_input_required_result_multi_round" => multi_round,
        "test_input_required_result_tampered_state" => tampered_state,
        "test_input_required_result_capabilities" => capabilities,
        _ => return None,
    };
    Some(flow)
}

fn text(text: impl Into<String>) -> Step<CallToolResult> {
    Step::Done(CallToolResult::success(vec![ContentBlock::text(text)]))
}

fn one(key: &str, request: rmcp::model::InputRequest) -> InputRequests {
    BTreeMap::from([(key.to_owned(), request)])
}

/// A required string argument.
fn argument<'a>(round: &'a Round, name: &str) -> Result<&'a str, McpError> {
    round
        .args
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params(format!("argument '{name}' is required"), None))
}

// === 2025-11-25: over a session ===

fn sampling(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    match sampled(&round.answers, "llm")? {
        Some(answer) => Ok(text(format!("LLM response: {answer}"))),
        None => Ok(Step::ask(one(
            "llm",
            sample(argument(round, "prompt")?, 100)?,
        ))),
    }
}

fn elicitation(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    match elicited(&round.answers, "user")? {
        Some(answer) => Ok(text(format!("User response: {}", answer.summary()))),
        None => {
            let schema = json!({
                "type": "object",
                "properties": {
                    "username": { "type": "string", "description": "User's response" },
                    "email": { "type": "string", "description": "User's email address" },
                },
                "required": ["username", "email"],
            });
            let question = elicit(argument(round, "message")?, schema)?;
            Ok(Step::ask(one("user", question)))
        }
    }
}

/// A form, then `Elicitation completed: action=…, content=…`.
fn form(round: &Round, message: &str, schema: Value) -> Result<Step<CallToolResult>, McpError> {
    match elicited(&round.answers, "form")? {
        Some(answer) => Ok(text(format!("Elicitation completed: {}", answer.summary()))),
        None => Ok(Step::ask(one("form", elicit(message, schema)?))),
    }
}

/// SEP-1034: a default for every primitive type.
fn sep1034_defaults(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": { "type": "boolean", "description": "Verification status", "default": true },
        },
        "required": [],
    });
    form(
        round,
        "Please review and update the form fields with defaults",
        schema,
    )
}

/// SEP-1330: the five enum shapes.
fn sep1330_enums(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    let titled = |names: [&str; 3]| {
        names
            .iter()
            .enumerate()
            .map(|(i, title)| json!({ "const": format!("value{}", i + 1), "title": title }))
            .collect::<Vec<_>>()
    };
    let options = ["option1", "option2", "option3"];
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": { "type": "string", "description": "Select one option", "enum": options },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": titled(["First Option", "Second Option", "Third Option"]),
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": { "type": "string", "enum": options },
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": { "anyOf": titled(["First Choice", "Second Choice", "Third Choice"]) },
            },
        },
        "required": [],
    });
    form(round, "Please select options from the enum fields", schema)
}

// === 2026-07-28: input-required results ===

/// Needs sampling: a client that did not declare it gets -32021 (HTTP 400).
fn missing_capability(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    match sampled(&round.answers, "check")? {
        Some(_) => Ok(text("Success")),
        None => Ok(Step::ask(one("check", sample("Reply with OK", 10)?))),
    }
}

/// Its questions travel in the result, never as requests on the stream.
fn streaming_elicitation(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    match elicited(&round.answers, "go_on")? {
        Some(answer) => Ok(text(format!("Streaming complete: {}", answer.summary()))),
        None => {
            let question = elicit("Continue?", inputs::strings_schema(&["answer"]))?;
            Ok(Step::ask(one("go_on", question)))
        }
    }
}

fn ask_name(message: &str) -> Result<rmcp::model::InputRequest, McpError> {
    elicit(message, inputs::strings_schema(&["name"]))
}

/// Asks `user_name` again until it is answered: a wrong key is not an answer.
fn user_name(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    match elicited(&round.answers, "user_name")? {
        Some(answer) => match answer.text("name").filter(|_| answer.accepted()) {
            Some(name) => Ok(text(format!("Hello, {name}!"))),
            None => Ok(text(format!("No name given ({})", answer.action))),
        },
        None => Ok(Step::ask(one("user_name", ask_name("What is your name?")?))),
    }
}

fn capital(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    match sampled(&round.answers, "capital_question")? {
        Some(answer) => Ok(text(format!("The model says: {answer}"))),
        None => {
            let question = sample("What is the capital of France?", 100)?;
            Ok(Step::ask(one("capital_question", question)))
        }
    }
}

fn client_roots(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    match roots(&round.answers, "client_roots")? {
        Some(uris) => Ok(text(format!("Client roots: {}", uris.join(", ")))),
        None => Ok(Step::ask(one("client_roots", list_roots()?))),
    }
}

fn confirm() -> Result<InputRequests, McpError> {
    let schema = json!({
        "type": "object",
        "properties": { "ok": { "type": "boolean" } },
        "required": ["ok"],
    });
    Ok(one("confirm", elicit("Please confirm", schema)?))
}

/// Completes only with both the answer and the state it sealed.
fn request_state(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    let answer = elicited(&round.answers, "confirm")?;
    match (&round.state, answer) {
        (Some(state), Some(answer)) if state["asked"] == "confirm" => {
            Ok(text(format!("state-ok: {}", answer.summary())))
        }
        _ => Ok(Step::ask_remembering(
            confirm()?,
            json!({ "asked": "confirm" }),
        )),
    }
}

/// Like `request_state`; the point is that a changed state is refused
/// (by `rounds`, before this runs).
fn tampered_state(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    match (&round.state, elicited(&round.answers, "confirm")?) {
        (Some(_), Some(answer)) => Ok(text(format!("integrity-ok: {}", answer.summary()))),
        _ => Ok(Step::ask_remembering(
            confirm()?,
            json!({ "asked": "confirm" }),
        )),
    }
}

/// Three kinds of question at once. A retry carries only the latest
/// answers, so a partial one is asked everything again.
fn multiple_inputs(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    let name = elicited(&round.answers, "user_name")?;
    let greeting = sampled(&round.answers, "greeting")?;
    let listed = roots(&round.answers, "client_roots")?;
    match (name, greeting, listed, &round.state) {
        (Some(name), Some(greeting), Some(listed), Some(_)) => Ok(text(format!(
            "{greeting} {} ({} roots)",
            name.text("name").unwrap_or("stranger"),
            listed.len()
        ))),
        _ => Ok(Step::ask_remembering(
            all_three()?,
            json!({ "asked": "all" }),
        )),
    }
}

fn all_three() -> Result<InputRequests, McpError> {
    Ok(BTreeMap::from([
        ("user_name".to_owned(), ask_name("What is your name?")?),
        ("greeting".to_owned(), sample("Generate a greeting", 50)?),
        ("client_roots".to_owned(), list_roots()?),
    ]))
}

/// Name, then colour, then done; the state carries the step and the name.
fn multi_round(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    let step = round.state.as_ref().and_then(|s| s["step"].as_u64());
    match step {
        Some(1) => match elicited(&round.answers, "step1")? {
            Some(answer) => {
                let name = answer.text("name").unwrap_or("stranger");
                ask_step2(json!({ "step": 2, "name": name }))
            }
            None => ask_step1(),
        },
        Some(2) => match elicited(&round.answers, "step2")? {
            Some(answer) => {
                let name = round
                    .state
                    .as_ref()
                    .and_then(|s| s["name"].as_str())
                    .unwrap_or("stranger");
                let color = answer.text("color").unwrap_or("no colour");
                Ok(text(format!("{name} likes {color}")))
            }
            None => ask_step2(round.state.clone().unwrap_or_default()),
        },
        _ => ask_step1(),
    }
}

/// Asks for the colour, remembering `state` (the step and the name).
fn ask_step2(state: Value) -> Result<Step<CallToolResult>, McpError> {
    let question = elicit(
        "Step 2: What is your favorite color?",
        inputs::strings_schema(&["color"]),
    )?;
    Ok(Step::ask_remembering(one("step2", question), state))
}

fn ask_step1() -> Result<Step<CallToolResult>, McpError> {
    Ok(Step::ask_remembering(
        one("step1", ask_name("Step 1: What is your name?")?),
        json!({ "step": 1 }),
    ))
}

/// Asks only what the client declared it can answer.
fn capabilities(round: &Round) -> Result<Step<CallToolResult>, McpError> {
    if !round.answers.is_empty() {
        let keys: Vec<&str> = round.answers.keys().map(String::as_str).collect();
        return Ok(text(format!(
            "capabilities-ok: received {}",
            keys.join(",")
        )));
    }
    let declared = &round.capabilities;
    let mut requests = InputRequests::new();
    if declared.elicitation.is_some() {
        let question = elicit("Elicitation input", inputs::strings_schema(&["value"]))?;
        requests.insert("elicit_input".into(), question);
    }
    if declared.sampling.is_some() {
        requests.insert("sample_input".into(), sample("Sample request", 50)?);
    }
    if declared.roots.is_some() {
        requests.insert("roots_input".into(), list_roots()?);
    }
    if requests.is_empty() {
        return Ok(text("No supported capabilities declared"));
    }
    Ok(Step::ask_remembering(
        requests,
        json!({ "asked": "declared" }),
    ))
}
