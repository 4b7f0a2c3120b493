//! Semantic validation of a tool's arguments: what the schema cannot express,
//! reported with the schema's problems in one answer.

use super::services::{Dealership, Services};
use crate::contract::{Problems, ToolError};
use crate::model::{Money, vin};

/// Semantic validation with what it needs to know.
pub struct Check<'a> {
    pub problems: Problems,
    pub services: &'a Services,
    pub dealership: Option<&'a Dealership>,
    /// A domain rule the arguments break (e.g. consent); reported when the
    /// arguments are otherwise well formed.
    rejection: Option<ToolError>,
}

impl<'a> Check<'a> {
    pub fn new(services: &'a Services, dealership: Option<&'a Dealership>) -> Self {
        Self {
            problems: Problems::default(),
            services,
            dealership,
            rejection: None,
        }
    }

    /// Refuses the call with a domain error (the first one given wins).
    pub fn reject(&mut self, error: ToolError) {
        self.rejection.get_or_insert(error);
    }

    /// Puts the schema's problems first. A semantic problem at or below a
    /// field the schema already refused says nothing new and is dropped.
    pub(crate) fn after_schema(mut self, schema: Problems) -> Self {
        let semantic = std::mem::replace(&mut self.problems, schema);
        self.problems.extend_uncovered(semantic);
        self
    }

    /// Argument problems first, then a domain rejection.
    pub fn into_result(self) -> Result<(), ToolError> {
        self.problems.into_result()?;
        self.rejection.map_or(Ok(()), Err)
    }

    pub fn limit(&mut self, at: &str, limit: Option<u32>) {
        let max = self.services.limits.max_limit;
        if let Some(l) = limit
            && (l == 0 || l > max)
        {
            self.problems
                .push(at, format!("limit must be between 1 and {max}"));
        }
    }

    pub fn vin(&mut self, at: &str, value: &str) {
        if let Err(problem) = vin::check(&vin::normalize(value)) {
            self.problems
                .push(at, format!("not a valid VIN: {problem}"));
        }
    }

    pub fn money(&mut self, at: &str, money: &Money) {
        if money.amount < 0 {
            self.problems
                .push(format!("{at}/amount"), "must not be negative");
        }
        if let Some(d) = self.dealership
            && money.currency != d.profile.currency
        {
            self.problems.push(
                format!("{at}/currency"),
                format!("this dealership prices in {}", d.profile.currency),
            );
        }
    }

    pub fn cursor(&mut self, at: &str, cursor: &str, dealership_id: &str, query_hash: &str) {
        if let Err(e) = self
            .services
            .cursors
            .decode(cursor, dealership_id, query_hash)
        {
            self.problems.push(at, e.to_string());
        }
    }
}
