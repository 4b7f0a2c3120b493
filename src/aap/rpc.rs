//! The JSON-RPC side of the door: A2A v1.0's `SendMessage` carrying one AAP
//! request in a data part, answered with one agent message carrying the AAP
//! response, or with a JSON-RPC error.

use serde_json::{Value, json};

use super::EXTENSION_URI;
use super::dispatch::{Failure, send_message};
use super::errors::AuthRefusal;
use crate::gateway::{Caller, Gateway};
use crate::tools::Dealership;

/// The A2A service parameters a request came with (HTTP headers).
#[derive(Debug, Default, Clone)]
pub struct ServiceParameters {
    /// `A2A-Version`, when sent.
    pub version: Option<String>,
    /// `A2A-Extensions`, every URI listed.
    pub extensions: Vec<String>,
}

/// What the HTTP layer sends back: JSON text.
#[derive(Debug)]
pub enum Answer {
    /// A JSON-RPC response (result or error); `activated` says whether the
    /// request activated the AAP extension (echoed in `A2A-Extensions`).
    Rpc { body: String, activated: bool },
    /// Authentication is HTTP's business under A2A.
    Auth(AuthRefusal, String),
}

fn text(value: &Value) -> String {
    value.to_string()
}

/// A2A 1.0 methods this door does not carry: AAP replies are messages, with
/// no tasks, streaming or push.
const A2A_OTHER_METHODS: &[&str] = &[
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
];

/// Answers one JSON-RPC request body for `dealership`'s AAP endpoint.
pub async fn answer(
    gateway: &Gateway,
    caller: &Caller,
    dealership: &Dealership,
    service: &ServiceParameters,
    body: &[u8],
) -> Answer {
    let activated = service.extensions.iter().any(|e| e == EXTENSION_URI);
    let rpc = |body: Value| Answer::Rpc {
        body: text(&body),
        activated,
    };
    let request: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            return rpc(a2a_error(
                &Value::Null,
                -32700,
                "Parse error: the body is not JSON",
                "PARSE_ERROR",
            ));
        }
    };
    let id = match request.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id.clone(),
        _ => Value::Null,
    };
    let (Some("2.0"), Some(method)) = (
        request.get("jsonrpc").and_then(Value::as_str),
        request.get("method").and_then(Value::as_str),
    ) else {
        return rpc(a2a_error(
            &id,
            -32600,
            "Invalid Request: a JSON-RPC 2.0 request object is required",
            "INVALID_REQUEST",
        ));
    };
    if let Some(refusal) = check_service(service) {
        return rpc(refusal.with_id(&id));
    }
    if method != "SendMessage" {
        return rpc(unknown_method(&id, method));
    }
    match send_message(gateway, caller, dealership, &request["params"]).await {
        Ok(reply) => Answer::Rpc {
            body: reply.to_text(&id),
            activated,
        },
        Err(Failure::Aap(e)) => rpc(json!({ "jsonrpc": "2.0", "id": id, "error": e.to_jsonrpc() })),
        Err(Failure::Rpc(code, message, reason)) => rpc(a2a_error(&id, code, &message, reason)),
        Err(Failure::Auth(refusal)) => {
            let message = match &refusal {
                AuthRefusal::Unauthorized => {
                    "A valid bearer token is required for this skill.".to_owned()
                }
                AuthRefusal::Forbidden(why) => why.clone(),
            };
            Answer::Auth(
                refusal,
                text(&a2a_error(&id, -32000, &message, "UNAUTHENTICATED")),
            )
        }
    }
}

/// A refusal made before the method is looked at.
struct Refusal(i64, String, &'static str);

impl Refusal {
    fn with_id(self, id: &Value) -> Value {
        a2a_error(id, self.0, &self.1, self.2)
    }
}

/// `A2A-Version` and `A2A-Extensions`. No version header is read as 1.0
/// (AAP's own examples send none); an empty one means 0.3 (A2A §3.6.2).
/// A request that activates only another AAP version gets A2A's answer for
/// an extension it must support: this agent serves v1.3, and does not guess
/// that a v1.1 caller reads v1.3 answers (whose `price` means another thing).
fn check_service(service: &ServiceParameters) -> Option<Refusal> {
    if let Some(version) = &service.version {
        let v = version.trim();
        if !(v == "1.0" || v.starts_with("1.0.")) {
            let asked = if v.is_empty() {
                "0.3 (empty A2A-Version)"
            } else {
                v
            };
            return Some(Refusal(
                -32009,
                format!("VersionNotSupportedError: this agent speaks A2A 1.0, not {asked}"),
                "VERSION_NOT_SUPPORTED",
            ));
        }
    }
    let other_aap: Vec<&String> = service
        .extensions
        .iter()
        .filter(|e| e.starts_with("https://autoagentprotocol.org/extensions/aap/"))
        .collect();
    if !other_aap.is_empty() && !other_aap.iter().any(|e| *e == EXTENSION_URI) {
        return Some(Refusal(
            -32008,
            format!(
                "ExtensionSupportRequiredError: this agent serves AAP v1.3 only ({EXTENSION_URI}); the request activated {}",
                other_aap
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "EXTENSION_SUPPORT_REQUIRED",
        ));
    }
    None
}

fn unknown_method(id: &Value, method: &str) -> Value {
    if A2A_OTHER_METHODS.contains(&method) {
        return a2a_error(
            id,
            -32004,
            &format!(
                "UnsupportedOperationError: {method} is not served; AAP agents answer SendMessage with a message"
            ),
            "UNSUPPORTED_OPERATION",
        );
    }
    let hint = if method.contains('/') {
        " (an A2A 0.3 method name; this agent speaks A2A 1.0: use SendMessage)"
    } else {
        ""
    };
    a2a_error(
        id,
        -32601,
        &format!("Method not found: {method}{hint}"),
        "METHOD_NOT_FOUND",
    )
}

/// A JSON-RPC error of A2A's own (no AAP payload): A2A 1.0's `data` array
/// with a `google.rpc.ErrorInfo`.
fn a2a_error(id: &Value, code: i64, message: &str, reason: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": {
        "code": code,
        "message": message,
        "data": [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org" }],
    } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_extensions() {
        let params = |version: Option<&str>, ext: &[&str]| ServiceParameters {
            version: version.map(str::to_owned),
            extensions: ext.iter().map(|s| s.to_string()).collect(),
        };
        assert!(check_service(&params(None, &[])).is_none());
        assert!(check_service(&params(Some("1.0"), &[EXTENSION_URI])).is_none());
        assert_eq!(
            check_service(&params(Some(""), &[])).map(|r| r.0),
            Some(-32009)
        );
        assert_eq!(
            check_service(&params(Some("0.3"), &[])).map(|r| r.0),
            Some(-32009)
        );
        let old = "https://autoagentprotocol.org/extensions/aap/v1.1";
        assert_eq!(
            check_service(&params(Some("1.0"), &[old])).map(|r| r.0),
            Some(-32008)
        );
        assert!(check_service(&params(Some("1.0"), &[old, EXTENSION_URI])).is_none());
    }
}
