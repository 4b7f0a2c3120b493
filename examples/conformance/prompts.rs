//! The suite's fixture prompts, one of which asks the client for input
//! (`test_input_required_result_prompt`), and completion of prompt arguments.

use std::collections::BTreeMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock, GetPromptResult,
    JsonObject, Prompt, PromptArgument, PromptMessage, Reference, ResourceContents, Role,
};
use serde_json::Value;

use crate::inputs::{self, elicited};
use crate::media;
use crate::rounds::{Round, Step};

pub type PromptFlow = fn(&Round) -> Result<Step<GetPromptResult>, McpError>;

/// The prompt that asks before it answers (SEP-2322).
pub const ASKING: &str = "test_input_required_result_prompt";

/// Candidates `completion/complete` filters by the typed prefix.
const SUGGESTIONS: &[&str] = &["paris", "park", "party", "test", "testing", "tested"];

pub fn list() -> Vec<Prompt> {
    let required = |name: &str, description: &str| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(true)
    };
    vec![
        Prompt::new(
            "test_simple_prompt",
            Some("A prompt without arguments"),
            None,
        ),
        Prompt::new(
            "test_prompt_with_arguments",
            Some("A prompt with two required arguments"),
            Some(vec![
                required("arg1", "First test argument"),
                required("arg2", "Second test argument"),
            ]),
        ),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            Some("A prompt that embeds a resource"),
            Some(vec![required(
                "resourceUri",
                "URI of the resource to embed",
            )]),
        ),
        Prompt::new(
            "test_prompt_with_image",
            Some("A prompt with an image"),
            None,
        ),
        Prompt::new(ASKING, Some("MRTR: asks for context first"), None),
    ]
}

/// The flow of a prompt that asks the client first, if `name` is one.
pub fn flow(name: &str) -> Option<PromptFlow> {
    (name == ASKING).then_some(context_prompt as PromptFlow)
}

/// A prompt that answers at once.
pub fn get(name: &str, args: &JsonObject) -> Result<GetPromptResult, McpError> {
    let user = |content| PromptMessage::new(Role::User, content);
    let messages = match name {
        "test_simple_prompt" => vec![user(ContentBlock::text(
            "This is a simple prompt for testing.",
        ))],
        "test_prompt_with_arguments" => {
            let (arg1, arg2) = (argument(args, "arg1")?, argument(args, "arg2")?);
            vec![user(ContentBlock::text(format!(
                "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
            )))]
        }
        "test_prompt_with_embedded_resource" => {
            let uri = argument(args, "resourceUri")?;
            vec![
                user(ContentBlock::resource(
                    ResourceContents::text("Embedded resource content for testing.", uri)
                        .with_mime_type("text/plain"),
                )),
                user(ContentBlock::text(
                    "Please process the embedded resource above.",
                )),
            ]
        }
        "test_prompt_with_image" => vec![
            user(ContentBlock::image(media::PNG, "image/png")),
            user(ContentBlock::text("Please analyze the image above.")),
        ],
        _ => {
            return Err(McpError::invalid_params(
                format!("Unknown prompt: {name}"),
                None,
            ));
        }
    };
    Ok(GetPromptResult::new(messages))
}

fn argument<'a>(args: &'a JsonObject, name: &str) -> Result<&'a str, McpError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params(format!("argument '{name}' is required"), None))
}

fn context_prompt(round: &Round) -> Result<Step<GetPromptResult>, McpError> {
    match elicited(&round.answers, "user_context")? {
        Some(answer) => {
            let context = answer.text("context").unwrap_or("none given");
            Ok(Step::Done(GetPromptResult::new(vec![PromptMessage::new(
                Role::User,
                ContentBlock::text(format!("Prompt with context: {context}")),
            )])))
        }
        None => {
            let question = inputs::elicit(
                "What context should the prompt use?",
                inputs::strings_schema(&["context"]),
            )?;
            Ok(Step::ask(BTreeMap::from([(
                "user_context".to_owned(),
                question,
            )])))
        }
    }
}

/// Suggestions for the arguments of `test_prompt_with_arguments`; nothing
/// for anything else.
pub fn complete(request: &CompleteRequestParams) -> Result<CompleteResult, McpError> {
    let known = matches!(&request.r#ref, Reference::Prompt(p) if p.name == "test_prompt_with_arguments")
        && matches!(request.argument.name.as_str(), "arg1" | "arg2");
    let values = if known {
        let typed = request.argument.value.to_lowercase();
        SUGGESTIONS
            .iter()
            .filter(|s| s.starts_with(&typed))
            .map(|s| (*s).to_owned())
            .collect()
    } else {
        Vec::new()
    };
    let completion =
        CompletionInfo::with_all_values(values).map_err(|e| McpError::internal_error(e, None))?;
    Ok(CompleteResult::new(completion))
}
