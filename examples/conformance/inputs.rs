//! The questions flows ask (built from their wire form, so they read like
//! the spec's examples) and readers for the answers: a missing answer is
//! `None` (ask again), a malformed one the client's error (-32602).

use rmcp::ErrorData as McpError;
use rmcp::model::{InputRequest, InputResponses, JsonObject};
use serde_json::{Value, json};

/// `elicitation/create` in form mode with `schema` as the requested schema.
pub fn elicit(message: &str, schema: Value) -> Result<InputRequest, McpError> {
    input_request(json!({
        "method": "elicitation/create",
        "params": { "mode": "form", "message": message, "requestedSchema": schema },
    }))
}

/// `sampling/createMessage` for one user message.
pub fn sample(text: &str, max_tokens: u32) -> Result<InputRequest, McpError> {
    input_request(json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
            "maxTokens": max_tokens,
        },
    }))
}

pub fn list_roots() -> Result<InputRequest, McpError> {
    input_request(json!({ "method": "roots/list" }))
}

fn input_request(wire: Value) -> Result<InputRequest, McpError> {
    serde_json::from_value(wire)
        .map_err(|e| McpError::internal_error(format!("a malformed input request: {e}"), None))
}

/// A schema of string properties, all required.
pub fn strings_schema(names: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| ((*n).to_owned(), json!({ "type": "string" })))
        .collect();
    json!({ "type": "object", "properties": properties, "required": names })
}

/// An answer to an elicitation.
pub struct Elicited {
    pub action: String,
    pub content: JsonObject,
}

impl Elicited {
    pub fn accepted(&self) -> bool {
        self.action == "accept"
    }

    /// A string field of the accepted content.
    pub fn text(&self, field: &str) -> Option<&str> {
        self.content.get(field).and_then(Value::as_str)
    }

    /// `action=…, content={…}`, as the fixtures report it.
    pub fn summary(&self) -> String {
        format!(
            "action={}, content={}",
            self.action,
            Value::Object(self.content.clone())
        )
    }
}

/// The answer under `key`: none yet, or an elicitation result; anything
/// else is the client's error (-32602).
pub fn elicited(answers: &InputResponses, key: &str) -> Result<Option<Elicited>, McpError> {
    let Some(answer) = answers.get(key) else {
        return Ok(None);
    };
    let action = answer.get("action").and_then(Value::as_str);
    let content = match answer.get("content") {
        None | Some(Value::Null) => Some(JsonObject::new()),
        Some(Value::Object(content)) => Some(content.clone()),
        Some(_) => None,
    };
    match (action, content) {
        (Some(action @ ("accept" | "decline" | "cancel")), Some(content)) => Ok(Some(Elicited {
            action: action.to_owned(),
            content,
        })),
        _ => Err(malformed(key, "an elicitation result")),
    }
}

/// The text of the sampling answer under `key`, if there is one.
pub fn sampled(answers: &InputResponses, key: &str) -> Result<Option<String>, McpError> {
    let Some(answer) = answers.get(key) else {
        return Ok(None);
    };
    let content = answer.get("content");
    let text = match content {
        Some(Value::Array(blocks)) => blocks.iter().find_map(|b| b.get("text")),
        Some(block) => block.get("text"),
        None => None,
    };
    match text.and_then(Value::as_str) {
        Some(text) => Ok(Some(text.to_owned())),
        None => Err(malformed(key, "a sampling result with text content")),
    }
}

/// The root URIs of the `roots/list` answer under `key`, if there is one.
pub fn roots(answers: &InputResponses, key: &str) -> Result<Option<Vec<String>>, McpError> {
    let Some(answer) = answers.get(key) else {
        return Ok(None);
    };
    let Some(listed) = answer.get("roots").and_then(Value::as_array) else {
        return Err(malformed(key, "a roots/list result"));
    };
    Ok(Some(
        listed
            .iter()
            .filter_map(|root| root.get("uri").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
    ))
}

fn malformed(key: &str, expected: &str) -> McpError {
    McpError::invalid_params(
        format!("inputResponses.{key} is not {expected}"),
        Some(json!({ "inputResponse": key })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_or_refused() {
        let answers: InputResponses = [
            (
                "ok".to_owned(),
                json!({ "action": "accept", "content": { "name": "Alice" } }),
            ),
            ("number".to_owned(), json!(12345)),
            (
                "llm".to_owned(),
                json!({ "role": "assistant", "content": { "type": "text", "text": "Paris" } }),
            ),
        ]
        .into();
        let elicited_ok = elicited(&answers, "ok").unwrap().unwrap();
        assert_eq!(elicited_ok.text("name"), Some("Alice"));
        assert!(elicited(&answers, "missing").unwrap().is_none());
        assert!(elicited(&answers, "number").is_err());
        assert_eq!(sampled(&answers, "llm").unwrap().as_deref(), Some("Paris"));
    }

    #[test]
    fn questions_parse_as_input_requests() {
        assert!(matches!(
            elicit("?", strings_schema(&["name"])),
            Ok(InputRequest::Elicitation(_))
        ));
        assert!(matches!(
            sample("?", 10),
            Ok(InputRequest::CreateMessage(_))
        ));
        assert!(matches!(list_roots(), Ok(InputRequest::ListRoots(_))));
    }
}
