//! AAP's errors: the `aap.error` payload in a JSON-RPC error, with AAP v1.3's
//! JSON-RPC codes, and the one mapping from the canonical tool errors.
//!
//! The AAP code also leads `error.message` (`"VEHICLE_NOT_FOUND: …"`): the
//! official Python A2A SDK keeps only the message of an error whose `data`
//! is an object, as AAP v1.3's is.

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use super::schemas::Violation;
use crate::contract::error::{ErrorCode, ToolError};

/// One AAP error, before it is put on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct AapError {
    /// One of AAP v1.3's twelve codes.
    pub code: &'static str,
    pub message: String,
    pub retryable: bool,
    pub details: Option<Value>,
}

/// A refusal that belongs to HTTP, not to AAP: A2A leaves authentication to
/// the transport (401 with a challenge, 403).
#[derive(Debug, Clone, PartialEq)]
pub enum AuthRefusal {
    /// No credentials, or ones that are not valid here: 401.
    Unauthorized,
    /// Valid credentials that do not grant this: 403, with the reason.
    Forbidden(String),
}

impl AapError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: matches!(code, "RATE_LIMITED" | "INTERNAL_ERROR"),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// A request that does not fit its schema, with every problem found.
    pub fn invalid(violations: Vec<Violation>) -> Self {
        // AAP names a condition from the wrong vocabulary on its own.
        let conditions_only = !violations.is_empty()
            && violations
                .iter()
                .all(|v| v.instance_location.ends_with("/condition") && v.keyword == "enum");
        let code = if conditions_only {
            "INVALID_CONDITION"
        } else {
            "SCHEMA_VALIDATION_FAILED"
        };
        Self::new(code, problems_message(violations.len()))
            .with_details(json!({ "errors": violations }))
    }

    pub fn internal() -> Self {
        Self::new(
            "INTERNAL_ERROR",
            "The dealer agent hit an unexpected error. It has been logged; try again later.",
        )
    }

    /// AAP v1.3's JSON-RPC code for this error.
    pub fn jsonrpc_code(&self) -> i64 {
        match self.code {
            "UNSUPPORTED_SKILL" => -32601,
            "SCHEMA_VALIDATION_FAILED" | "MISSING_REQUIRED_FIELD" | "INVALID_CONDITION" => -32602,
            "RATE_LIMITED" => -32002,
            "INTERNAL_ERROR" => -32603,
            _ => -32000,
        }
    }

    /// The JSON-RPC `error` member: AAP code first in the message, the
    /// `aap.error` payload as `data`.
    pub fn to_jsonrpc(&self) -> Value {
        let mut payload = json!({
            "type": "aap.error",
            "error_id": format!("err_{}", uuid::Uuid::new_v4().simple()),
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "created_at": Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
        });
        if let Some(details) = &self.details {
            payload["details"] = details.clone();
        }
        let mut message = format!("{}: {}", self.code, self.message);
        if let Some(ms) = self
            .details
            .as_ref()
            .and_then(|d| d["retry_after_ms"].as_u64())
        {
            message.push_str(&format!(" (retry after {ms} ms)"));
        }
        json!({ "code": self.jsonrpc_code(), "message": message, "data": payload })
    }
}

/// What a canonical tool error is on this door.
pub fn from_tool_error(
    error: &ToolError,
    pointers: impl Fn(&str) -> String,
) -> Result<AapError, AuthRefusal> {
    match error.code {
        ErrorCode::AuthUnauthorized => return Err(AuthRefusal::Unauthorized),
        ErrorCode::AuthForbidden => return Err(AuthRefusal::Forbidden(error.message.to_string())),
        _ => {}
    }
    let details = error.details.as_ref();
    let named = details
        .and_then(|d| d["aap_code"].as_str())
        .and_then(known_code);
    let code = named.or(error.code.aap_code()).unwrap_or("INTERNAL_ERROR");
    let mut aap = AapError::new(code, error.message.to_string());
    aap.retryable = error.code.retryable();
    match error.code {
        ErrorCode::RequestInvalidArguments => {
            let errors = problems_as_errors(details, code, &pointers);
            aap.message = problems_message(errors.len());
            aap.details = Some(json!({ "errors": errors }));
        }
        ErrorCode::LeadsInvalidConsent | ErrorCode::LeadsConsentRequired => {
            let errors = problems_as_errors(details, code, &pointers);
            if !errors.is_empty() {
                aap.details = Some(json!({ "errors": errors }));
            }
        }
        ErrorCode::RateLimited | ErrorCode::UpstreamRateLimited => {
            if let Some(ms) = details.and_then(|d| d["retry_after_ms"].as_u64()) {
                aap.details = Some(json!({ "retry_after_ms": ms }));
            }
        }
        ErrorCode::ServiceSlotUnavailable => {
            if let Some(d) = details {
                aap.details = Some(d.clone());
            }
        }
        _ if code == "INTERNAL_ERROR" && error.code != ErrorCode::Internal => {
            // An upstream's trouble: say which kind, never its text.
            aap.details = Some(json!({ "cause": error.code.as_str() }));
        }
        _ => {}
    }
    Ok(aap)
}

/// The message of an answer listing `n` problems in `details.errors`.
fn problems_message(n: usize) -> String {
    match n {
        1 => "The request has 1 problem; see details.errors.".to_owned(),
        n => format!("The request has {n} problems; see details.errors."),
    }
}

fn known_code(code: &str) -> Option<&'static str> {
    [
        "UNSUPPORTED_SKILL",
        "SCHEMA_VALIDATION_FAILED",
        "MISSING_REQUIRED_FIELD",
        "INVALID_CONDITION",
        "VEHICLE_NOT_FOUND",
        "VEHICLE_UNAVAILABLE",
        "CONTACT_CONSENT_REQUIRED",
        "INVALID_CONSENT",
        "APPOINTMENT_TIME_UNAVAILABLE",
        "IDEMPOTENCY_CONFLICT",
        "RATE_LIMITED",
        "INTERNAL_ERROR",
    ]
    .into_iter()
    .find(|known| *known == code)
}

/// The canonical `details.problems[] {pointer, message}` as AAP's
/// `details.errors[] {instanceLocation, keyword, error}`, at the AAP field.
fn problems_as_errors(
    details: Option<&Value>,
    code: &str,
    pointers: &impl Fn(&str) -> String,
) -> Vec<Value> {
    let keyword = if code == "MISSING_REQUIRED_FIELD" {
        "required"
    } else {
        "semantic"
    };
    details
        .and_then(|d| d["problems"].as_array())
        .into_iter()
        .flatten()
        .map(|p| {
            json!({
                "instanceLocation": pointers(p["pointer"].as_str().unwrap_or("")),
                "keyword": keyword,
                "error": p["message"].as_str().unwrap_or("invalid"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::error::Problem;

    #[test]
    fn codes_map_to_aap_v1_3_jsonrpc_codes() {
        let cases = [
            ("UNSUPPORTED_SKILL", -32601),
            ("MISSING_REQUIRED_FIELD", -32602),
            ("VEHICLE_NOT_FOUND", -32000),
            ("RATE_LIMITED", -32002),
            ("INTERNAL_ERROR", -32603),
        ];
        for (code, rpc) in cases {
            assert_eq!(AapError::new(code, "x").jsonrpc_code(), rpc, "{code}");
        }
    }

    #[test]
    fn invalid_arguments_keep_every_problem_at_the_aap_field() {
        let tool = ToolError::invalid_arguments(vec![
            Problem::new("/filters/drivetrain/0", "unknown"),
            Problem::new("/vin", "check digit"),
        ]);
        let aap = from_tool_error(&tool, |p| p.replace("drivetrain", "driveline")).unwrap();
        assert_eq!(aap.code, "SCHEMA_VALIDATION_FAILED");
        let errors = aap.details.unwrap()["errors"].clone();
        assert_eq!(errors[0]["instanceLocation"], "/filters/driveline/0");
        assert_eq!(errors[1]["instanceLocation"], "/vin");
    }

    #[test]
    fn auth_errors_go_to_http() {
        let tool = ToolError::new(ErrorCode::AuthUnauthorized, "token");
        assert_eq!(
            from_tool_error(&tool, str::to_owned),
            Err(AuthRefusal::Unauthorized)
        );
    }

    #[test]
    fn the_code_leads_the_message_and_the_payload_fits_aap() {
        let wire = AapError::new("VEHICLE_NOT_FOUND", "No vehicle matches.").to_jsonrpc();
        assert_eq!(wire["message"], "VEHICLE_NOT_FOUND: No vehicle matches.");
        let problems = super::super::schemas::check_error(&wire["data"]).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
    }
}
