//! Tools and prompts that need the client's input (elicitation, sampling,
//! roots), written once as a *flow* and served in both eras:
//!
//! - 2026-07-28 (stateless, SEP-2322): one round per request. The flow's
//!   questions go back as an `input_required` result with a sealed
//!   `requestState`; the client retries with `inputResponses` and the state.
//! - Before 2026-07-28 (a session): the questions go to the client as
//!   server-to-client requests on the call's stream, and their answers feed
//!   the next round, until the flow is done.
//!
//! So `test_sampling` (2025) and `test_input_required_result_sampling` (2026)
//! differ only in their names and wording.

use std::collections::BTreeMap;

use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    JsonObject, ProtocolVersion, ServerRequest,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

use crate::seal::Sealer;

/// Legacy rounds a flow may take before the call is given up: a flow that
/// keeps asking is a bug, not a reason to hold a stream open forever.
const MAX_LEGACY_ROUNDS: usize = 8;

/// What a flow decides on one round.
pub enum Step<T> {
    Done(T),
    /// Questions for the client, keyed; and what to remember until the answers come.
    Ask {
        requests: InputRequests,
        state: Option<Value>,
    },
}

impl<T> Step<T> {
    pub fn ask(requests: InputRequests) -> Self {
        Self::Ask {
            requests,
            state: None,
        }
    }

    pub fn ask_remembering(requests: InputRequests, state: Value) -> Self {
        Self::Ask {
            requests,
            state: Some(state),
        }
    }
}

/// What a flow sees on one round.
pub struct Round {
    pub args: JsonObject,
    /// Answers to the previous round's questions (empty on the first).
    pub answers: InputResponses,
    /// What the previous round remembered, verified.
    pub state: Option<Value>,
    pub capabilities: ClientCapabilities,
}

/// The answer to a request: done, or questions for a 2026-07-28 client.
pub enum Reply<T> {
    Complete(T),
    InputRequired(InputRequiredResult),
}

/// A retry's `inputResponses` and `requestState`, as the request carried them.
#[derive(Default)]
pub struct Retry {
    pub answers: Option<InputResponses>,
    pub state: Option<String>,
}

/// Whether this request speaks 2026-07-28 or later (per-request `_meta`).
pub fn stateless_era(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Runs `flow` (named `name`, which its state is bound to) for this request.
pub async fn drive<T, F>(
    name: &str,
    flow: F,
    args: JsonObject,
    retry: Retry,
    ctx: &RequestContext<RoleServer>,
    sealer: &Sealer,
) -> Result<Reply<T>, McpError>
where
    F: Fn(&Round) -> Result<Step<T>, McpError>,
{
    let capabilities = ctx.client_capabilities().unwrap_or_default();
    if !stateless_era(ctx) {
        return drive_legacy(flow, args, capabilities, ctx).await;
    }
    let round = Round {
        args,
        answers: retry.answers.unwrap_or_default(),
        state: match retry.state {
            Some(sealed) => Some(open_state(name, &sealed, sealer)?),
            None => None,
        },
        capabilities,
    };
    match flow(&round)? {
        Step::Done(result) => Ok(Reply::Complete(result)),
        Step::Ask { requests, state } => {
            require_capabilities(&requests, &round.capabilities)?;
            let state = state.map(|state| sealer.seal(&json!({ "flow": name, "state": state })));
            Ok(Reply::InputRequired(InputRequiredResult::new(
                Some(requests),
                state,
            )))
        }
    }
}

/// Before 2026-07-28: asks the client over the session, round after round.
async fn drive_legacy<T, F>(
    flow: F,
    args: JsonObject,
    capabilities: ClientCapabilities,
    ctx: &RequestContext<RoleServer>,
) -> Result<Reply<T>, McpError>
where
    F: Fn(&Round) -> Result<Step<T>, McpError>,
{
    let mut round = Round {
        args,
        answers: BTreeMap::new(),
        state: None,
        capabilities,
    };
    for _ in 0..MAX_LEGACY_ROUNDS {
        match flow(&round)? {
            Step::Done(result) => return Ok(Reply::Complete(result)),
            Step::Ask { requests, state } => {
                require_capabilities(&requests, &round.capabilities)?;
                round.answers = ask_client(requests, ctx).await?;
                round.state = state;
            }
        }
    }
    Err(McpError::internal_error(
        format!("the flow asked more than {MAX_LEGACY_ROUNDS} rounds of questions"),
        None,
    ))
}

/// Sends each question to the client and collects the answers by key.
async fn ask_client(
    requests: InputRequests,
    ctx: &RequestContext<RoleServer>,
) -> Result<InputResponses, McpError> {
    let mut answers = BTreeMap::new();
    for (key, request) in requests {
        let answer = ctx
            .peer
            .send_request(server_request(request)?)
            .await
            .map_err(|e| {
                McpError::internal_error(format!("the client did not answer {key}: {e}"), None)
            })?;
        let answer = serde_json::to_value(answer)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        answers.insert(key, answer);
    }
    Ok(answers)
}

fn server_request(request: InputRequest) -> Result<ServerRequest, McpError> {
    match request {
        InputRequest::CreateMessage(r) => Ok(ServerRequest::CreateMessageRequest(r)),
        InputRequest::Elicitation(r) => Ok(ServerRequest::ElicitRequest(r)),
        InputRequest::ListRoots(r) => Ok(ServerRequest::ListRootsRequest(r)),
        _ => Err(McpError::internal_error(
            "an input request this server cannot send",
            None,
        )),
    }
}

/// The state a retry echoed, if this server sealed it for this flow.
fn open_state(name: &str, sealed: &str, sealer: &Sealer) -> Result<Value, McpError> {
    let refused = || McpError::invalid_params("requestState failed its integrity check", None);
    let mut opened = sealer.open(sealed).ok_or_else(refused)?;
    if opened.get("flow").and_then(Value::as_str) != Some(name) {
        return Err(refused());
    }
    Ok(opened.get_mut("state").map(Value::take).unwrap_or_default())
}

/// A flow may only ask what the client said it can answer: -32021 with the
/// missing capability otherwise.
fn require_capabilities(
    requests: &InputRequests,
    declared: &ClientCapabilities,
) -> Result<(), McpError> {
    let mut missing = ClientCapabilities::default();
    for request in requests.values() {
        match request {
            InputRequest::CreateMessage(_) if declared.sampling.is_none() => {
                missing.sampling = Some(Default::default());
            }
            InputRequest::Elicitation(_) if declared.elicitation.is_none() => {
                missing.elicitation = Some(Default::default());
            }
            InputRequest::ListRoots(_) if declared.roots.is_none() => {
                missing.roots = Some(Default::default());
            }
            _ => {}
        }
    }
    if missing == ClientCapabilities::default() {
        Ok(())
    } else {
        Err(McpError::missing_required_client_capability(missing))
    }
}
