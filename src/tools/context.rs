//! The seam between the pipeline and a tool: the argument trait every tool's
//! input implements, and the context its handler runs with.

use serde::de::DeserializeOwned;

use super::ToolId;
use super::check::Check;
use super::services::{Dealership, Services, unsupported};
use crate::adapters::{Adapter, AdapterError};
use crate::contract::{Owner, Principal, ToolError};
use crate::model::Domain;

/// Implemented by every tool's argument type.
pub trait ToolArgs: DeserializeOwned + Send {
    /// The dealership the call is scoped to (`None` for tools that span the caller's dealerships).
    fn dealership_id(&self) -> Option<&str>;

    /// Semantic checks the schema cannot express; push every problem found.
    fn validate(&self, _check: &mut Check<'_>) {}

    /// The caller's idempotency key for a write that should happen at most
    /// once per key (`None`: no key, or a dry run, which writes nothing).
    fn idempotency_key(&self) -> Option<&str> {
        None
    }

    /// The answer to a key reused for a different request.
    fn idempotency_conflict(&self) -> ToolError {
        ToolError::internal()
    }
}

/// What a handler gets: the services, the caller and the (already authorised) dealership.
#[derive(Clone, Copy)]
pub struct ToolContext<'a> {
    pub services: &'a Services,
    pub tool: ToolId,
    pub principal: &'a Principal,
    pub dealership: Option<&'a Dealership>,
}

impl<'a> ToolContext<'a> {
    pub fn dealership(&self) -> Result<&'a Dealership, ToolError> {
        self.dealership.ok_or_else(ToolError::internal)
    }

    /// The adapter routed for `domain`, or `capability.unsupported`.
    pub fn adapter(&self, domain: Domain) -> Result<&'a Adapter, ToolError> {
        let dealership = self.dealership()?;
        dealership
            .routes
            .get(&domain)
            .map(|r| r.adapter.as_ref())
            .ok_or_else(|| unsupported(domain))
    }

    /// Whose records this call may reach by id: everyone's when the caller
    /// holds the tool's staff scope, otherwise only its own (TOOLSET.md,
    /// "Who owns a record").
    pub fn owner(&self) -> Owner<'a> {
        match self.tool.staff_scope() {
            Some(staff) if self.principal.has_scope(staff) => Owner::Anyone,
            _ => Owner::Only(&self.principal.name),
        }
    }

    /// The page size for a validated `limit`.
    pub fn page_size(&self, limit: Option<u32>) -> u32 {
        limit.unwrap_or(self.services.limits.default_limit)
    }
}

/// Why a handler did not answer: a refusal it decided, or an upstream failure
/// it did not handle itself. Upstream failures are mapped to what the caller
/// sees in one place, the pipeline, so a handler cannot forget to (handlers
/// match the failures they treat specially, such as a taken slot, first).
#[derive(Debug)]
pub enum HandlerError {
    Refused(ToolError),
    Upstream(AdapterError),
}

impl From<ToolError> for HandlerError {
    fn from(error: ToolError) -> Self {
        Self::Refused(error)
    }
}

impl From<AdapterError> for HandlerError {
    fn from(error: AdapterError) -> Self {
        Self::Upstream(error)
    }
}

/// A store failure: the detail goes to the log, the caller gets `internal`.
impl From<crate::store::StoreError> for HandlerError {
    fn from(error: crate::store::StoreError) -> Self {
        tracing::error!(error = %error, "The store failed.");
        Self::Refused(ToolError::internal())
    }
}

/// A lead that could not be committed: the detail goes to the log, the caller gets `internal`.
impl From<crate::leads::submit::SubmitError> for HandlerError {
    fn from(error: crate::leads::submit::SubmitError) -> Self {
        tracing::error!(error = %error, "A lead could not be submitted.");
        Self::Refused(ToolError::internal())
    }
}

/// What every handler answers.
pub type Handled = Result<crate::contract::Payload, HandlerError>;
