//! AAP consent rules shared by `leads.create` and `service.book_appointment`
//! (each with its own scope). A missing grant, or a contact channel the grant
//! does not allow, is `leads.consent_required` (AAP CONTACT_CONSENT_REQUIRED);
//! a grant that is malformed, expired, dated in the future or scoped to
//! something else is `leads.invalid_consent` (AAP INVALID_CONSENT). Every
//! problem with the grant is listed at once.

use chrono::{DateTime, Duration, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::notice::WithheldContactPoint;
use crate::contract::error::{ErrorCode, ToolError};
use crate::leads::lead::{self, PreferredContact, parse_instant};

const CHANNELS: [&str; 3] = ["email", "phone", "sms"];
/// Clock skew tolerated between the agent and the bridge.
const SKEW: Duration = Duration::minutes(5);

// The consent grant (AAP `ConsentGrant`), kept verbatim as an audit record with the lead or booking.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsentGrant {
    /// RFC 3339, not in the future.
    pub granted_at: String,
    /// Of `email`, `phone`, `sms`.
    pub allowed_channels: Vec<String>,
    /// The exact text the customer agreed to.
    #[schemars(length(max = 8000))]
    pub consent_text: String,
    /// The tool's scope: `["lead_submission"]` or `["service_appointment"]`.
    pub scope: Vec<String>,
    /// RFC 3339; an expired grant is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub source_agent: Option<String>,
}

/// A consent grant as the bridge records it (leads and bookings alike).
pub fn consent_record(g: &ConsentGrant) -> lead::ConsentGrant {
    lead::ConsentGrant {
        granted_at: g.granted_at.clone(),
        allowed_channels: g.allowed_channels.clone(),
        consent_text: g.consent_text.clone(),
        scope: g.scope.clone(),
        expires_at: g.expires_at.clone(),
        source_agent: g.source_agent.clone(),
    }
}

/// The grant is present, well formed, current and scoped to exactly `scope`.
pub(crate) fn check_grant<'a>(
    grant: Option<&'a ConsentGrant>,
    scope: &str,
    now: DateTime<Utc>,
) -> Result<&'a ConsentGrant, ToolError> {
    let Some(grant) = grant else {
        return Err(ToolError::new(
            ErrorCode::LeadsConsentRequired,
            "Customer contact data needs the customer's consent: add a consent grant.",
        )
        .with_details(json!({ "missing": "consent" }))
        .with_hint("Ask the customer for consent (show the text, let them pick channels), then send it in `consent`."));
    };
    let problems = grant_problems(grant, scope, now);
    if !problems.is_empty() {
        return Err(ToolError::new(
            ErrorCode::LeadsInvalidConsent,
            "The consent grant is not valid for this request; see details.problems.",
        )
        .with_details(json!({ "problems": problems, "expected_scope": [scope] }))
        .with_hint("Capture a fresh consent from the customer and resubmit."));
    }
    Ok(grant)
}

/// The channels the request would use are allowed: the preferred one, or
/// without one, at least one the customer gave details for.
pub(crate) fn check_channels(
    grant: &ConsentGrant,
    email: bool,
    phone: bool,
    preferred: Option<PreferredContact>,
) -> Result<(), ToolError> {
    let missing = missing_channels(grant, email, phone, preferred);
    if missing.is_empty() {
        return Ok(());
    }
    Err(ToolError::new(
        ErrorCode::LeadsConsentRequired,
        "The customer has not allowed the contact channel this request asks for.",
    )
    .with_details(
        json!({ "missing_channels": missing, "allowed_channels": grant.allowed_channels }),
    )
    .with_hint(
        "Ask the customer to allow that channel, or change preferred_contact to one they allowed.",
    ))
}

/// Takes out the contact points no allowed channel uses, so they are neither
/// sent nor stored: the e-mail address needs `email`; the phone number needs
/// `phone` (calls) or `sms` (texts). A dealer system dials or writes to every
/// contact point it receives, so sending one the customer did not allow would
/// be using a channel they did not authorise. Without a grant nothing is allowed.
pub fn withhold(
    grant: Option<&ConsentGrant>,
    email: &mut Option<String>,
    phone: &mut Option<String>,
) -> Vec<WithheldContactPoint> {
    let allowed = |c: &str| grant.is_some_and(|g| g.allowed_channels.iter().any(|a| a == c));
    let mut withheld = Vec::new();
    if email.is_some() && !allowed("email") {
        *email = None;
        withheld.push(WithheldContactPoint {
            field: "/customer/email".into(),
            reason: "The consent grant does not allow email, so the e-mail address was not passed on to the dealership. Add `email` to allowed_channels only if the customer agrees to it.".into(),
        });
    }
    if phone.is_some() && !allowed("phone") && !allowed("sms") {
        *phone = None;
        withheld.push(WithheldContactPoint {
            field: "/customer/phone".into(),
            reason: "The consent grant allows neither `phone` nor `sms`, so the phone number was not passed on to the dealership. Add one of them to allowed_channels only if the customer agrees to it.".into(),
        });
    }
    withheld
}

/// Reasons the grant itself is invalid, as `{pointer, message}` objects.
fn grant_problems(grant: &ConsentGrant, scope: &str, now: DateTime<Utc>) -> Vec<serde_json::Value> {
    let mut problems = Vec::new();
    let mut push = |at: &str, message: &str| {
        problems.push(json!({ "pointer": format!("/consent/{at}"), "message": message }));
    };
    match parse_instant(&grant.granted_at) {
        None => push("granted_at", "must be an RFC 3339 time with an offset"),
        Some(t) if t > now + SKEW => push("granted_at", "is in the future"),
        Some(_) => {}
    }
    if let Some(expires) = &grant.expires_at {
        match parse_instant(expires) {
            None => push("expires_at", "must be an RFC 3339 time with an offset"),
            Some(t) if t <= now => push("expires_at", "the grant has expired"),
            Some(_) => {}
        }
    }
    if grant.consent_text.trim().is_empty() {
        push(
            "consent_text",
            "must be the verbatim text the customer agreed to",
        );
    }
    if grant.scope.len() != 1 || grant.scope[0] != scope {
        push("scope", &format!("must be exactly [\"{scope}\"]"));
    }
    if grant.allowed_channels.is_empty() {
        push("allowed_channels", "must list at least one channel");
    }
    for (i, c) in grant.allowed_channels.iter().enumerate() {
        if !CHANNELS.contains(&c.as_str()) {
            push(
                &format!("allowed_channels/{i}"),
                "must be email, phone or sms",
            );
        } else if grant.allowed_channels[..i].contains(c) {
            push(&format!("allowed_channels/{i}"), "is listed twice");
        }
    }
    problems
}

/// Channels the request would use that the grant does not allow. With a
/// preferred contact, that channel must be allowed; without one, at least one
/// channel the customer gave details for must be.
fn missing_channels(
    grant: &ConsentGrant,
    email: bool,
    phone: bool,
    preferred: Option<PreferredContact>,
) -> Vec<&'static str> {
    let allowed = |c: &str| grant.allowed_channels.iter().any(|a| a == c);
    let reachable: Vec<&'static str> = [
        email.then_some("email"),
        phone.then_some("phone"),
        phone.then_some("sms"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let wanted: Vec<&'static str> = match preferred {
        Some(PreferredContact::Email) => vec!["email"],
        Some(PreferredContact::Phone) => vec!["phone"],
        Some(PreferredContact::Sms) => vec!["sms"],
        Some(PreferredContact::Any) | None => {
            if reachable.iter().any(|c| allowed(c)) {
                return Vec::new();
            }
            reachable
        }
    };
    wanted.into_iter().filter(|c| !allowed(c)).collect()
}
