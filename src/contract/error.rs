//! The client-visible error contract: stable namespaced codes, fixed safe
//! messages, truthful `retryable`, JSON-pointer problems and recovery hints.
//! See TOOLSET.md; changing a code is a breaking change of the toolset.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

/// Stable error codes. `retryable` is a property of the code, so it cannot drift per call site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    AuthUnauthorized,
    AuthForbidden,
    RequestInvalidArguments,
    RequestResultTooLarge,
    RateLimited,
    CapabilityUnsupported,
    InventoryVehicleNotFound,
    InventoryVehicleUnavailable,
    LeadsConsentRequired,
    LeadsInvalidConsent,
    LeadsIdempotencyConflict,
    LeadsLeadNotFound,
    DealsTradeValueUnavailable,
    ServiceSlotUnavailable,
    ServiceAppointmentNotFound,
    ServiceIdempotencyConflict,
    ServiceRepairOrderNotFound,
    UpstreamUnavailable,
    UpstreamTimeout,
    UpstreamRejected,
    UpstreamRateLimited,
    UpstreamInvalidResponse,
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 23] = [
        Self::AuthUnauthorized,
        Self::AuthForbidden,
        Self::RequestInvalidArguments,
        Self::RequestResultTooLarge,
        Self::RateLimited,
        Self::CapabilityUnsupported,
        Self::InventoryVehicleNotFound,
        Self::InventoryVehicleUnavailable,
        Self::LeadsConsentRequired,
        Self::LeadsInvalidConsent,
        Self::LeadsIdempotencyConflict,
        Self::LeadsLeadNotFound,
        Self::DealsTradeValueUnavailable,
        Self::ServiceSlotUnavailable,
        Self::ServiceAppointmentNotFound,
        Self::ServiceIdempotencyConflict,
        Self::ServiceRepairOrderNotFound,
        Self::UpstreamUnavailable,
        Self::UpstreamTimeout,
        Self::UpstreamRejected,
        Self::UpstreamRateLimited,
        Self::UpstreamInvalidResponse,
        Self::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthUnauthorized => "auth.unauthorized",
            Self::AuthForbidden => "auth.forbidden",
            Self::RequestInvalidArguments => "request.invalid_arguments",
            Self::RequestResultTooLarge => "request.result_too_large",
            Self::RateLimited => "rate_limited",
            Self::CapabilityUnsupported => "capability.unsupported",
            Self::InventoryVehicleNotFound => "inventory.vehicle_not_found",
            Self::InventoryVehicleUnavailable => "inventory.vehicle_unavailable",
            Self::LeadsConsentRequired => "leads.consent_required",
            Self::LeadsInvalidConsent => "leads.invalid_consent",
            Self::LeadsIdempotencyConflict => "leads.idempotency_conflict",
            Self::LeadsLeadNotFound => "leads.lead_not_found",
            Self::DealsTradeValueUnavailable => "deals.trade_value_unavailable",
            Self::ServiceSlotUnavailable => "service.slot_unavailable",
            Self::ServiceAppointmentNotFound => "service.appointment_not_found",
            Self::ServiceIdempotencyConflict => "service.idempotency_conflict",
            Self::ServiceRepairOrderNotFound => "service.repair_order_not_found",
            Self::UpstreamUnavailable => "upstream.unavailable",
            Self::UpstreamTimeout => "upstream.timeout",
            Self::UpstreamRejected => "upstream.rejected",
            Self::UpstreamRateLimited => "upstream.rate_limited",
            Self::UpstreamInvalidResponse => "upstream.invalid_response",
            Self::Internal => "internal",
        }
    }

    /// Whether the same call may succeed later without the caller changing anything.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::UpstreamUnavailable
                | Self::UpstreamTimeout
                | Self::UpstreamRateLimited
                | Self::RateLimited
                | Self::Internal
        )
    }

    /// The Auto Agent Protocol code for the same condition, where AAP has one.
    pub fn aap_code(self) -> Option<&'static str> {
        Some(match self {
            Self::RequestInvalidArguments => "SCHEMA_VALIDATION_FAILED",
            Self::InventoryVehicleNotFound => "VEHICLE_NOT_FOUND",
            Self::InventoryVehicleUnavailable => "VEHICLE_UNAVAILABLE",
            Self::LeadsConsentRequired => "CONTACT_CONSENT_REQUIRED",
            Self::LeadsIdempotencyConflict | Self::ServiceIdempotencyConflict => {
                "IDEMPOTENCY_CONFLICT"
            }
            Self::LeadsInvalidConsent => "INVALID_CONSENT",
            Self::UpstreamRateLimited | Self::RateLimited => "RATE_LIMITED",
            Self::CapabilityUnsupported => "UNSUPPORTED_SKILL",
            Self::Internal
            | Self::UpstreamUnavailable
            | Self::UpstreamTimeout
            | Self::UpstreamInvalidResponse => "INTERNAL_ERROR",
            _ => return None,
        })
    }
}

/// One problem with the arguments, located by a JSON pointer into them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, PartialOrd, Ord)]
pub struct Problem {
    pub pointer: String,
    pub message: String,
    /// A required field is absent (AAP `MISSING_REQUIRED_FIELD`); not on the wire.
    #[serde(skip)]
    pub missing_field: bool,
}

impl Problem {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
            missing_field: false,
        }
    }
}

/// A collector for argument problems; validation reports all of them at once.
#[derive(Debug, Default)]
pub struct Problems(Vec<Problem>);

impl Problems {
    pub fn push(&mut self, pointer: impl Into<String>, message: impl Into<String>) {
        self.0.push(Problem::new(pointer, message));
    }

    /// A required field that is absent.
    pub fn push_missing(&mut self, pointer: impl Into<String>, message: impl Into<String>) {
        self.0.push(Problem {
            missing_field: true,
            ..Problem::new(pointer, message)
        });
    }

    /// The top-level argument each problem sits in (`/vin` for `/vin`,
    /// `/filters` for `/filters/year_min`); none for a problem at the root.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| {
            let rest = p.pointer.strip_prefix('/')?;
            Some(rest.split('/').next().unwrap_or(rest))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds `others` except those at or below a field already reported here
    /// (a problem at the root, such as a missing field, covers nothing else).
    pub fn extend_uncovered(&mut self, others: Problems) {
        let covered = |pointer: &str| {
            self.0.iter().any(|p| {
                !p.pointer.is_empty()
                    && (pointer == p.pointer
                        || pointer
                            .strip_prefix(p.pointer.as_str())
                            .is_some_and(|rest| rest.starts_with('/')))
            })
        };
        let fresh: Vec<Problem> = others
            .0
            .into_iter()
            .filter(|p| !covered(&p.pointer))
            .collect();
        self.0.extend(fresh);
    }

    pub fn into_result(mut self) -> Result<(), ToolError> {
        if self.0.is_empty() {
            return Ok(());
        }
        self.0.sort();
        self.0.dedup();
        Err(ToolError::invalid_arguments(self.0))
    }
}

/// A failure a caller sees as a tool result with `isError: true`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: Cow<'static, str>,
    pub details: Option<Value>,
    pub recovery: Option<Value>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
            recovery: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// A call the caller can make next, e.g. `{"name": "inventory.search", "arguments": {…}}`.
    pub fn with_next_tool_call(mut self, name: &str, arguments: Value, hint: &'static str) -> Self {
        self.recovery = Some(
            json!({ "hint": hint, "next_tool_call": { "name": name, "arguments": arguments } }),
        );
        self
    }

    pub fn with_hint(mut self, hint: &'static str) -> Self {
        self.recovery = Some(json!({ "hint": hint }));
        self
    }

    pub fn invalid_arguments(problems: Vec<Problem>) -> Self {
        let summary = match problems.len() {
            1 => "The arguments have 1 problem; see details.problems.".to_owned(),
            n => format!("The arguments have {n} problems; see details.problems."),
        };
        // AAP names the case of required fields absent (and nothing else wrong).
        let only_missing = !problems.is_empty() && problems.iter().all(|p| p.missing_field);
        let mut details = json!({ "problems": problems });
        if only_missing {
            details["aap_code"] = json!("MISSING_REQUIRED_FIELD");
        }
        Self::new(ErrorCode::RequestInvalidArguments, summary).with_details(details)
    }

    pub fn internal() -> Self {
        Self::new(
            ErrorCode::Internal,
            "The bridge hit an unexpected error. It has been logged; try again later.",
        )
    }

    /// A call that ran out of the time the bridge allows one.
    pub fn past_deadline() -> Self {
        Self::new(
            ErrorCode::UpstreamTimeout,
            "The call took longer than the bridge allows. Try again, or narrow the request.",
        )
    }

    /// The `structuredContent` of the error result.
    pub fn to_json(&self) -> Value {
        let mut error = json!({
            "code": self.code.as_str(),
            "message": self.message,
            "retryable": self.code.retryable(),
        });
        let mut details = self.details.clone().unwrap_or_else(|| json!({}));
        if let (Some(aap), Some(map)) = (self.code.aap_code(), details.as_object_mut()) {
            map.entry("aap_code").or_insert_with(|| json!(aap));
        }
        if details.as_object().is_some_and(|m| !m.is_empty()) {
            error["details"] = details;
        }
        if let Some(recovery) = &self.recovery {
            error["recovery"] = recovery.clone();
        }
        json!({ "error": error })
    }
}

/// The caller-visible error for a call refused by a quota (the caller's own,
/// `scope` naming which, or the upstream's).
pub fn rate_limited(scope: &str, retry_after: std::time::Duration) -> ToolError {
    let ms = retry_after.as_millis().max(1) as u64;
    ToolError::new(
        ErrorCode::RateLimited,
        "Too many requests. Wait for details.retry_after_ms, then try again.",
    )
    .with_details(json!({ "retry_after_ms": ms, "scope": scope }))
}
