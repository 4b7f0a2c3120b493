//! `dms-bridge conform`: a running deployment checked from outside, the way
//! the project's own tests check the demo, for a report a dealer can hand to
//! an auditor. Given the deployment's MCP URL and a token it checks:
//!
//! - **the front door**: a forged token is refused with 401; a call without
//!   a token is refused, or answered anonymously where the deployment allows it;
//! - **both protocol eras**: `initialize` with a session, and 2026-07-28's
//!   `server/discover` without one, serving the same tools; an unknown method
//!   is -32601;
//! - **the tool contract**: every canonical tool, with input and output
//!   schemas, under names every host accepts;
//! - **AutomotiveMCP levels**: each level the server claims, backed by the
//!   tools (and, at Level 3, events and subscriptions) it needs;
//! - **the canonical contract** of inventory and repair orders on the
//!   deployment's own data (as `verify` checks an upstream);
//! - **AAP behaviour rules**: sold units never listed, consent before any
//!   lead (a `dry_run`, so nothing is stored or sent);
//! - **tenancy**: a dealership the token may not use is refused for every
//!   tool that names one, the same way whether it exists or not;
//! - **PII**: no error quotes the customer data it was sent.
//!
//! It writes nothing unless given a sandbox dealership (then: duplicates and
//! idempotency, with leads sent there).

mod checks;
pub mod remote;

use serde::Serialize;

use crate::kit::verify::report::{Check, Verdict};
pub use checks::run;

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The deployment's MCP endpoint (`https://bridge.example.com/mcp`).
    pub url: String,
    pub token: Option<String>,
    /// A dealership that exists but this token may not use.
    pub other_dealership: Option<String>,
    /// A dealership whose CRM is a sandbox: leads may be sent there.
    pub sandbox_dealership: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub url: String,
    pub checked_at: String,
    pub server: Option<String>,
    pub protocol_versions: Vec<String>,
    pub checks: Vec<Check>,
    pub seconds: f64,
}

impl Report {
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.verdict == Verdict::Fail)
    }

    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "conformance of {} ({}), checked {}",
            self.url,
            self.server.as_deref().unwrap_or("server unnamed"),
            self.checked_at
        );
        let _ = writeln!(
            out,
            "protocol versions answered: {}\n",
            self.protocol_versions.join(", ")
        );
        for c in &self.checks {
            let label = c.verdict.label();
            let detail = if c.detail.is_empty() {
                String::new()
            } else {
                format!("  {}", c.detail)
            };
            let _ = writeln!(out, "  {label:<4} {:<14} {}{detail}", c.domain, c.name);
        }
        let failed = self
            .checks
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .count();
        let _ = writeln!(
            out,
            "\n{}: {} check(s), {failed} failed, in {:.1} s",
            if self.failed() { "FAILED" } else { "OK" },
            self.checks.len(),
            self.seconds
        );
        out
    }
}
