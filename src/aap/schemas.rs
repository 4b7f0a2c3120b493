//! AAP v1.3's own JSON Schemas (Apache-2.0, copied unchanged into `aap/v1.3/`),
//! compiled once: every request is checked against its skill's request schema
//! before it is translated, and the tests check every answer against the
//! response schemas and the agent card against the card schema.

use std::sync::LazyLock;

use jsonschema::{Draft, Registry, Validator};
use serde_json::Value;

use super::skill::Skill;

macro_rules! schema_files {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../aap/v1.3/schemas/", $name)))),*]
    };
}

/// Every schema file of AAP v1.3, by its path under `schemas/`.
const FILES: &[(&str, &str)] = schema_files![
    "_primitives/aap-message.schema.json",
    "_primitives/address.schema.json",
    "_primitives/dealer-fee.schema.json",
    "agent-card.schema.json",
    "appointment.schema.json",
    "consent-grant.schema.json",
    "customer.schema.json",
    "dealer-information-request.schema.json",
    "dealer-information-response.schema.json",
    "dealer-information.schema.json",
    "error.schema.json",
    "event.schema.json",
    "facets.schema.json",
    "inventory-facets-request.schema.json",
    "inventory-facets-response.schema.json",
    "inventory-search-request.schema.json",
    "inventory-search-response.schema.json",
    "lead-submit-request.schema.json",
    "lead-submit-response.schema.json",
    "vehicle-detail-request.schema.json",
    "vehicle-detail-response.schema.json",
    "vehicle.schema.json",
];

/// Where AAP publishes the v1.3 schemas (their `$id`s start with it).
pub const SCHEMA_BASE_URL: &str = "https://autoagentprotocol.org/v1.3/schemas/";

/// One way a document breaks its schema, as AAP's `details.errors[]` lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// JSON Pointer into the document.
    #[serde(rename = "instanceLocation")]
    pub instance_location: String,
    /// The JSON Schema keyword that failed (`required`, `enum`, `type`, …).
    pub keyword: String,
    pub error: String,
}

struct Compiled {
    requests: Vec<(Skill, Validator)>,
    responses: Vec<(Skill, Validator)>,
    card: Validator,
    error: Validator,
}

static COMPILED: LazyLock<Result<Compiled, String>> = LazyLock::new(compile);

fn compile() -> Result<Compiled, String> {
    let mut documents = Vec::new();
    for (name, text) in FILES {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("{name}: {e}"))?;
        documents.push((format!("{SCHEMA_BASE_URL}{name}"), value));
    }
    let registry = Registry::new()
        .draft(Draft::Draft202012)
        .extend(documents.iter().map(|(uri, v)| (uri.as_str(), v)))
        .and_then(|b| b.prepare())
        .map_err(|e| e.to_string())?;
    let build = |name: &str| -> Result<Validator, String> {
        let (_, schema) = documents
            .iter()
            .find(|(uri, _)| uri.ends_with(&format!("/{name}")))
            .ok_or_else(|| format!("{name} is not embedded"))?;
        jsonschema::options()
            .with_draft(Draft::Draft202012)
            .with_registry(&registry)
            .should_validate_formats(true)
            .build(schema)
            .map_err(|e| format!("{name}: {e}"))
    };
    let mut requests = Vec::new();
    let mut responses = Vec::new();
    for skill in Skill::ALL {
        requests.push((
            skill,
            build(&format!("{}-request.schema.json", skill.stem()))?,
        ));
        responses.push((
            skill,
            build(&format!("{}-response.schema.json", skill.stem()))?,
        ));
    }
    Ok(Compiled {
        requests,
        responses,
        card: build("agent-card.schema.json")?,
        error: build("error.schema.json")?,
    })
}

fn compiled() -> Result<&'static Compiled, &'static str> {
    COMPILED.as_ref().map_err(String::as_str)
}

fn violations(validator: &Validator, document: &Value) -> Vec<Violation> {
    let mut out: Vec<Violation> = validator
        .iter_errors(document)
        .map(|e| Violation {
            instance_location: e.instance_path().as_str().to_owned(),
            keyword: e.kind().keyword().to_owned(),
            error: e.to_string(),
        })
        .collect();
    out.sort_by(|a, b| a.instance_location.cmp(&b.instance_location));
    out.dedup();
    out
}

fn check(
    pick: impl FnOnce(&'static Compiled) -> Option<&'static Validator>,
    document: &Value,
) -> Result<Vec<Violation>, SchemasUnavailable> {
    let compiled = compiled().map_err(|e| {
        tracing::error!(error = e, "The embedded AAP schemas do not compile.");
        SchemasUnavailable
    })?;
    let validator = pick(compiled).ok_or(SchemasUnavailable)?;
    Ok(violations(validator, document))
}

/// The embedded schemas failed to compile: a build defect, never caller input.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the AAP schemas are unavailable")]
pub struct SchemasUnavailable;

/// Problems of a request's data part against its skill's request schema.
pub fn check_request(skill: Skill, data: &Value) -> Result<Vec<Violation>, SchemasUnavailable> {
    check(
        |c| c.requests.iter().find(|(s, _)| *s == skill).map(|(_, v)| v),
        data,
    )
}

/// Problems of an answer's data part (`{type, data, message?}`) against its
/// skill's response schema.
pub fn check_response(skill: Skill, part: &Value) -> Result<Vec<Violation>, SchemasUnavailable> {
    check(
        |c| {
            c.responses
                .iter()
                .find(|(s, _)| *s == skill)
                .map(|(_, v)| v)
        },
        part,
    )
}

/// Problems of an agent card against AAP's card schema.
pub fn check_card(card: &Value) -> Result<Vec<Violation>, SchemasUnavailable> {
    check(|c| Some(&c.card), card)
}

/// Problems of an `aap.error` payload against AAP's error schema.
pub fn check_error(error: &Value) -> Result<Vec<Violation>, SchemasUnavailable> {
    check(|c| Some(&c.error), error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_schema_compiles() {
        assert!(compiled().is_ok(), "{:?}", compiled().err());
    }

    #[test]
    fn a_request_lists_every_problem_with_its_location() {
        let problems = check_request(
            Skill::InventorySearch,
            &json!({"type": "inventory.search.request", "filters": {"condition": ["salvage"], "colour": "red"}, "pagination": {"limit": 0}}),
        )
        .unwrap();
        let at: Vec<&str> = problems
            .iter()
            .map(|p| p.instance_location.as_str())
            .collect();
        assert!(at.contains(&"/filters"), "{problems:?}");
        assert!(at.contains(&"/filters/condition/0"), "{problems:?}");
        assert!(at.contains(&"/pagination/limit"), "{problems:?}");
        assert!(problems.iter().any(|p| p.keyword == "additionalProperties"));
    }

    #[test]
    fn refs_across_files_resolve() {
        // The lead request refers to customer, consent, vehicle and dealer-fee schemas.
        let problems = check_request(
            Skill::LeadSubmit,
            &json!({"type": "lead.submit.request", "customer": {"first_name": "A", "last_name": "B", "email": "not-an-email"},
                    "consent": {"granted_at": "2026-01-01T00:00:00Z", "allowed_channels": ["email"], "consent_text": "ok", "scope": ["lead_submission"]},
                    "source_agent": {"name": "t"}, "vehicle_of_interest": {"fees": [{"name": "Doc", "amount": -1}]}}),
        )
        .unwrap();
        let at: Vec<&str> = problems
            .iter()
            .map(|p| p.instance_location.as_str())
            .collect();
        assert!(at.contains(&"/customer/email"), "{problems:?}");
        assert!(
            at.contains(&"/vehicle_of_interest/fees/0/amount"),
            "{problems:?}"
        );
    }
}
