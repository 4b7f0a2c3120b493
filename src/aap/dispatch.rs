//! One AAP request, from its data part to the canonical tool that answers
//! it and back: which skill, the checks A2A and AAP ask for before any tool
//! runs (output modes, AAP's request schema), and the call through the
//! gateway's pipeline.

use serde_json::{Map, Value, json};

use super::errors::{AapError, AuthRefusal, from_tool_error};
use super::skill::Skill;
use super::translate::{dealer, inventory, lead};
use super::{card, schemas};
use crate::contract::payload::Payload;
use crate::gateway::{CallError, Caller, Gateway};
use crate::tools::Dealership;

/// A successful SendMessage: the AAP answer as JSON text this door made
/// (an inventory search is ~18 KB of vehicles, rendered once per cached
/// canonical answer), and the message that goes with it.
pub(super) struct Reply {
    pub(super) skill: Skill,
    pub(super) context_id: String,
    pub(super) data: String,
    pub(super) note: Option<String>,
}

impl Reply {
    /// The JSON-RPC response, put together around the answer's text rather
    /// than serializing (or validating) it again.
    pub(super) fn to_text(&self, id: &Value) -> String {
        let quoted = |s: &str| Value::from(s).to_string();
        let mut out = String::with_capacity(self.data.len() + 400);
        out.push_str(r#"{"jsonrpc":"2.0","id":"#);
        out.push_str(&id.to_string());
        out.push_str(r#","result":{"message":{"messageId":"#);
        out.push_str(&quoted(&uuid::Uuid::new_v4().to_string()));
        out.push_str(r#","contextId":"#);
        out.push_str(&quoted(&self.context_id));
        out.push_str(r#","role":"ROLE_AGENT","parts":[{"data":{"type":"#);
        out.push_str(&quoted(&self.skill.response_type()));
        out.push_str(r#","data":"#);
        out.push_str(&self.data);
        if let Some(note) = &self.note {
            out.push_str(r#","message":"#);
            out.push_str(&quoted(note));
        }
        out.push_str(r#"},"mediaType":"#);
        out.push_str(&quoted(&self.skill.response_media_type()));
        out.push_str("}]}}}");
        out
    }
}

pub(super) enum Failure {
    Aap(AapError),
    Rpc(i64, String, &'static str),
    Auth(AuthRefusal),
}

impl From<AapError> for Failure {
    fn from(e: AapError) -> Self {
        Failure::Aap(e)
    }
}

fn invalid_params(message: impl Into<String>) -> Failure {
    Failure::Rpc(
        -32602,
        format!("Invalid params: {}", message.into()),
        "INVALID_PARAMS",
    )
}

pub(super) async fn send_message(
    gateway: &Gateway,
    caller: &Caller,
    dealership: &Dealership,
    params: &Value,
) -> Result<Reply, Failure> {
    let message = params
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| invalid_params("params.message is required"))?;
    if message
        .get("messageId")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(invalid_params("params.message.messageId is required"));
    }
    if let Some(role) = message.get("role")
        && role != "ROLE_USER"
    {
        return Err(invalid_params("params.message.role must be ROLE_USER"));
    }
    let parts = message["parts"]
        .as_array()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| invalid_params("params.message.parts must hold at least one part"))?;
    // AAP: text parts carry no meaning; the request is the first data part.
    let mut data = parts
        .iter()
        .find_map(|p| p.get("data"))
        .cloned()
        .ok_or_else(|| {
            AapError::new("SCHEMA_VALIDATION_FAILED", "The message has no data part with an AAP request.")
                .with_details(json!({ "errors": [{ "instanceLocation": "", "keyword": "required", "error": "a data part holding {type: \"<skill>.request\", …} is required" }] }))
        })?;
    let skill = select_skill(&data, dealership)?;
    check_output_modes(&params["configuration"], skill)?;
    whole_numbers(&mut data);
    let violations = schemas::check_request(skill, &data).map_err(|_| AapError::internal())?;
    if !violations.is_empty() {
        return Err(AapError::invalid(violations).into());
    }
    let (data, note) = run(gateway, caller, dealership, skill, &data).await?;
    let context_id = message
        .get("contextId")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    Ok(Reply {
        skill,
        context_id,
        data,
        note,
    })
}

/// The skill a data part's `type` asks for, if this dealership offers it.
fn select_skill(data: &Value, dealership: &Dealership) -> Result<Skill, Failure> {
    let Some(kind) = data.get("type").and_then(Value::as_str) else {
        return Err(AapError::new("SCHEMA_VALIDATION_FAILED", "The data part has no AAP type.")
            .with_details(json!({ "errors": [{ "instanceLocation": "/type", "keyword": "required", "error": "type (\"<skill>.request\") is required" }] }))
            .into());
    };
    match Skill::from_request_type(kind) {
        Some(skill) if card::offered(dealership).contains(&skill) => Ok(skill),
        Some(skill) => Err(AapError::new(
            "UNSUPPORTED_SKILL",
            format!("This dealership does not offer {} (see its agent card).", skill.id()),
        )
        .into()),
        None if kind.ends_with(".request") => Err(AapError::new(
            "UNSUPPORTED_SKILL",
            "No AAP v1.3 skill takes this request type (see the agent card).",
        )
        .into()),
        None => Err(AapError::new("SCHEMA_VALIDATION_FAILED", "The data part's type is not an AAP request type.")
            .with_details(json!({ "errors": [{ "instanceLocation": "/type", "keyword": "pattern", "error": "must be \"<skill>.request\"" }] }))
            .into()),
    }
}

/// A2A: a client that accepts none of the skill's answer types gets
/// `ContentTypeNotSupportedError` rather than an answer it cannot read.
fn check_output_modes(configuration: &Value, skill: Skill) -> Result<(), Failure> {
    let Some(modes) = configuration
        .get("acceptedOutputModes")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
    else {
        return Ok(());
    };
    let media = skill.response_media_type();
    let readable = modes.iter().filter_map(Value::as_str).any(|m| {
        let m = m.split(';').next().unwrap_or("").trim();
        m == media || m == "application/json" || m == "*/*" || m == "application/*"
    });
    if readable {
        Ok(())
    } else {
        Err(Failure::Rpc(
            -32005,
            format!(
                "ContentTypeNotSupportedError: {} answers {media}",
                skill.id()
            ),
            "CONTENT_TYPE_NOT_SUPPORTED",
        ))
    }
}

/// Whole numbers sent as floats (`2020.0`: the Python A2A SDK carries data
/// parts as protobuf Values, which hold doubles) become integers, as JSON
/// Schema already counts them.
fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *value = json!(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(map) => map.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// Runs the skill as its canonical tool, through the whole pipeline.
async fn run(
    gateway: &Gateway,
    caller: &Caller,
    dealership: &Dealership,
    skill: Skill,
    data: &Value,
) -> Result<(String, Option<String>), Failure> {
    let rooftop = dealership.profile.name.as_str();
    let id = dealership.profile.id.as_str();
    let (answer, note) = match skill {
        Skill::DealerInformation => {
            let args = Map::from_iter([("dealership_id".to_owned(), json!(id))]);
            let result = call(gateway, caller, skill, args, same).await?;
            (Ok(dealer::answer(result.value()).to_string()), None)
        }
        Skill::InventorySearch => {
            let search = inventory::search(data, dealership, gateway.services());
            let (skip, limit) = (search.skip, search.limit);
            let result = call(gateway, caller, skill, search.args, search_pointer).await?;
            if !search.possible {
                return raw(inventory::nothing_found(skip, limit), None);
            }
            let answer = inventory::search_answer(&result, skip, limit, rooftop);
            (answer, stale_note(&result))
        }
        Skill::InventoryFacets => {
            let (args, possible) = inventory::facets(data, dealership);
            let result = call(gateway, caller, skill, args, search_pointer).await?;
            if !possible {
                return raw(json!({}), None);
            }
            let answer = inventory::facets_answer(result.value(), rooftop);
            (Ok(answer.to_string()), stale_note(&result))
        }
        Skill::InventoryVehicle => {
            let args = inventory::vehicle(data, dealership);
            let result = call(gateway, caller, skill, args, same).await?;
            let answer = inventory::vehicle_answer(result.text(), rooftop);
            (answer, stale_note(&result))
        }
        Skill::LeadSubmit => {
            let args = lead::request(data, id);
            let result = call(gateway, caller, skill, args, same).await?;
            let (answer, note) = lead::answer(result.value());
            (Ok(answer.to_string()), note)
        }
    };
    match answer {
        Ok(answer) => Ok((answer, note)),
        Err(e) => {
            tracing::error!(error = %e, skill = skill.id(), "A canonical answer did not translate to AAP.");
            Err(AapError::internal().into())
        }
    }
}

fn raw(answer: Value, note: Option<String>) -> Result<(String, Option<String>), Failure> {
    Ok((answer.to_string(), note))
}

async fn call(
    gateway: &Gateway,
    caller: &Caller,
    skill: Skill,
    args: Map<String, Value>,
    pointers: fn(&str) -> String,
) -> Result<Payload, Failure> {
    let outcome = gateway
        .call_tool(caller, skill.tool(), Some(args))
        .await
        .map_err(|CallError::UnknownTool| AapError::internal())?;
    outcome
        .result
        .map_err(|e| match from_tool_error(&e, pointers) {
            Ok(aap) => Failure::Aap(aap),
            // Without credentials, a refusal is an invitation to bring some.
            Err(_) if caller.principal.anonymous => Failure::Auth(AuthRefusal::Unauthorized),
            Err(refusal) => Failure::Auth(refusal),
        })
}

fn same(pointer: &str) -> String {
    pointer.to_owned()
}

/// Canonical search pointers at the AAP request's fields.
fn search_pointer(pointer: &str) -> String {
    if let Some(rest) = pointer.strip_prefix("/filters/drivetrain") {
        return format!("/filters/driveline{rest}");
    }
    match pointer {
        "/limit" => "/pagination/limit".to_owned(),
        "/cursor" => "/pagination/skip".to_owned(),
        "/sort/field/last_verified_at" => "/sort/field".to_owned(),
        other => other.to_owned(),
    }
}

/// The canonical stale notice as the answer's message. A JSON string cannot
/// hold `"stale":` unescaped, so an answer without the notice is not parsed.
fn stale_note(result: &Payload) -> Option<String> {
    if !result.text().contains("\"stale\":") {
        return None;
    }
    let result = result.value();
    result["stale"]["message"].as_str().map(|m| {
        format!(
            "{m} (last synced {})",
            result["stale"]["last_synced_at"]
                .as_str()
                .unwrap_or("unknown")
        )
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_floats_become_integers_and_fractions_stay() {
        let mut v = json!({"year_min": 2020.0, "pagination": {"limit": 20.0}, "x": [1.5, 3.0]});
        whole_numbers(&mut v);
        assert_eq!(
            v,
            json!({"year_min": 2020, "pagination": {"limit": 20}, "x": [1.5, 3]})
        );
    }
}
