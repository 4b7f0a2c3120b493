//! The suite's fixture tools: what `tools/list` shows, and the ones that
//! answer at once (content of each kind, an error, logging, progress).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, LoggingLevel, ProgressNotificationParam,
    ResourceContents, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

use crate::fixture::Fixture;
use crate::media;

/// Time between a slow tool's notifications (the suite asks for ~50 ms).
const STEP: Duration = Duration::from_millis(50);

/// Every tool, in the order `tools/list` shows them: name, description and
/// the required string arguments.
#[rustfmt::skip] // one row per tool reads better than rustfmt's five lines
const TOOLS: &[(&str, &str, &[&str])] = &[
    ("test_simple_text", "Returns one text block", &[]),
    ("test_image_content", "Returns a PNG image", &[]),
    ("test_audio_content", "Returns a WAV clip", &[]),
    ("test_embedded_resource", "Returns an embedded text resource", &[]),
    ("test_multiple_content_types", "Returns text, an image and a resource", &[]),
    ("test_tool_with_logging", "Logs three messages while it runs", &[]),
    ("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", &[]),
    ("test_error_handling", "Always fails, as a tool result", &[]),
    ("test_sampling", "Asks the client's model to answer a prompt", &["prompt"]),
    ("test_elicitation", "Asks the user for a name and an e-mail address", &["message"]),
    ("test_elicitation_sep1034_defaults", "A form with a default for every type (SEP-1034)", &[]),
    ("test_elicitation_sep1330_enums", "A form with every enum shape (SEP-1330)", &[]),
    ("test_missing_capability", "Needs the client's sampling capability", &[]),
    ("test_streaming_elicitation", "Asks a question in its result, never on the stream", &[]),
    ("test_logging_tool", "Logs only at the level a 2026-07-28 request asks for", &[]),
    ("test_input_required_result_elicitation", "MRTR: asks the user's name", &[]),
    ("test_input_required_result_sampling", "MRTR: asks the client's model", &[]),
    ("test_input_required_result_list_roots", "MRTR: asks the client's roots", &[]),
    ("test_input_required_result_request_state", "MRTR: round-trips a sealed requestState", &[]),
    ("test_input_required_result_multiple_inputs", "MRTR: three questions at once", &[]),
    ("test_input_required_result_multi_round", "MRTR: two rounds of questions", &[]),
    ("test_input_required_result_tampered_state", "MRTR: refuses a changed requestState", &[]),
    ("test_input_required_result_capabilities", "MRTR: asks only what the client can answer", &[]),
];

pub fn list() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|&(name, description, required)| tool(name, description, required))
        .collect()
}

pub fn find(name: &str) -> Option<Tool> {
    TOOLS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(name, description, required)| tool(name, description, required))
}

fn tool(name: &'static str, description: &'static str, required: &[&str]) -> Tool {
    let properties: JsonObject = required
        .iter()
        .map(|arg| ((*arg).to_owned(), json!({ "type": "string" })))
        .collect();
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    Tool::new(name, description, Arc::new(schema))
}

/// A tool that answers without asking the client anything.
pub async fn call(
    fixture: &Fixture,
    name: &str,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResult, McpError> {
    let content = match name {
        "test_simple_text" => vec![ContentBlock::text(
            "This is a simple text response for testing.",
        )],
        "test_image_content" => vec![ContentBlock::image(media::PNG, "image/png")],
        "test_audio_content" => vec![ContentBlock::audio(media::WAV, "audio/wav")],
        "test_embedded_resource" => vec![ContentBlock::resource(
            ResourceContents::text(
                "This is an embedded resource content.",
                "test://embedded-resource",
            )
            .with_mime_type("text/plain"),
        )],
        "test_multiple_content_types" => mixed(),
        "test_error_handling" => {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "This tool intentionally returns an error for testing",
            )]));
        }
        "test_tool_with_logging" => {
            log_while_working(fixture, ctx).await;
            vec![ContentBlock::text(
                "Tool with logging executed successfully",
            )]
        }
        "test_logging_tool" => {
            fixture
                .log(ctx, LoggingLevel::Info, "test_logging_tool ran")
                .await;
            vec![ContentBlock::text("Logging tool done")]
        }
        "test_tool_with_progress" => {
            progress(ctx).await;
            vec![ContentBlock::text(
                "Tool with progress executed successfully",
            )]
        }
        _ => {
            return Err(McpError::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            ));
        }
    };
    Ok(CallToolResult::success(content))
}

fn mixed() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(media::PNG, "image/png"),
        ContentBlock::resource(
            ResourceContents::text(
                r#"{"test":"data","value":123}"#,
                "test://mixed-content-resource",
            )
            .with_mime_type("application/json"),
        ),
    ]
}

/// Three info messages, ~50 ms apart.
async fn log_while_working(fixture: &Fixture, ctx: &RequestContext<RoleServer>) {
    fixture
        .log(ctx, LoggingLevel::Info, "Tool execution started")
        .await;
    tokio::time::sleep(STEP).await;
    fixture
        .log(ctx, LoggingLevel::Info, "Tool processing data")
        .await;
    tokio::time::sleep(STEP).await;
    fixture
        .log(ctx, LoggingLevel::Info, "Tool execution completed")
        .await;
}

/// 0, 50 and 100 of 100, ~50 ms apart, if the request asked for progress.
async fn progress(ctx: &RequestContext<RoleServer>) {
    let token = ctx.meta.get_progress_token();
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        let Some(token) = token.clone() else {
            continue;
        };
        let mut param = ProgressNotificationParam::new(token, done);
        param.total = Some(100.0);
        if let Err(e) = ctx.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "Could not send a progress notification.");
        }
    }
}
