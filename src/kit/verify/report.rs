//! What a verify run found: the canonical checks and the fault cells, as a
//! table a person reads and as JSON a CI keeps.

use std::fmt::Write;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
}

impl Verdict {
    /// How the tables print it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Warn => "warn",
            Self::Fail => "FAIL",
        }
    }
}

/// One canonical check.
#[derive(Debug, Serialize)]
pub struct Check {
    pub domain: &'static str,
    pub name: &'static str,
    pub verdict: Verdict,
    pub detail: String,
}

/// Problems shown per check, so one broken field does not print a thousand lines.
const SHOWN_PROBLEMS: usize = 5;

impl Check {
    pub fn pass(domain: &'static str, name: &'static str, detail: impl Into<String>) -> Self {
        Self::new(domain, name, Verdict::Pass, detail)
    }
    pub fn warn(domain: &'static str, name: &'static str, detail: impl Into<String>) -> Self {
        Self::new(domain, name, Verdict::Warn, detail)
    }
    pub fn fail(domain: &'static str, name: &'static str, detail: impl Into<String>) -> Self {
        Self::new(domain, name, Verdict::Fail, detail)
    }
    fn new(
        domain: &'static str,
        name: &'static str,
        verdict: Verdict,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            domain,
            name,
            verdict,
            detail: detail.into(),
        }
    }

    /// Passes without problems; fails listing the first few.
    pub fn from_problems(domain: &'static str, name: &'static str, problems: &[String]) -> Self {
        if problems.is_empty() {
            return Self::pass(domain, name, "");
        }
        let mut detail = problems
            .iter()
            .take(SHOWN_PROBLEMS)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if problems.len() > SHOWN_PROBLEMS {
            let _ = write!(detail, "; and {} more", problems.len() - SHOWN_PROBLEMS);
        }
        Self::fail(domain, name, detail)
    }
}

/// One cell of the fault matrix.
#[derive(Debug, Serialize)]
pub struct CellResult {
    pub domain: &'static str,
    pub fault: &'static str,
    /// What the agent must be told (`upstream.timeout retryable`, `success`).
    pub expected: String,
    /// What it was told.
    pub answered: String,
    /// Upstream text or customer data that reached the answer.
    pub leaked: Vec<String>,
    /// Whether the bridge still answered a call after the fault.
    pub survived: bool,
    pub verdict: Verdict,
    pub millis: u64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub upstream: String,
    pub kind: &'static str,
    pub dealership: String,
    pub domains: Vec<String>,
    pub checks: Vec<Check>,
    pub cells: Vec<CellResult>,
    /// Domains the dealership routes to the upstream that verify does not read (yet).
    pub not_verified: Vec<String>,
    pub seconds: f64,
}

impl Report {
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.verdict == Verdict::Fail)
            || self.cells.iter().any(|c| c.verdict == Verdict::Fail)
    }

    /// The report as a person reads it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "verify upstream {} ({}) for dealership {}: {}",
            self.upstream,
            self.kind,
            self.dealership,
            self.domains.join(", ")
        );
        let _ = writeln!(out, "\ncanonical contract");
        for c in &self.checks {
            let detail = if c.detail.is_empty() {
                String::new()
            } else {
                format!("  {}", c.detail)
            };
            let _ = writeln!(
                out,
                "  {:<4} {:<14} {}{detail}",
                c.verdict.label(),
                c.domain,
                c.name
            );
        }
        if !self.cells.is_empty() {
            let _ = writeln!(
                out,
                "\nfault matrix ({} cells)\n  {:<4} {:<14} {:<36} {:<46} answered",
                self.cells.len(),
                "",
                "domain",
                "fault",
                "expected"
            );
        }
        for c in &self.cells {
            let mut answered = c.answered.clone();
            if !c.leaked.is_empty() {
                let _ = write!(answered, "; LEAKED {:?}", c.leaked);
            }
            if !c.survived {
                answered.push_str("; the bridge stopped answering");
            }
            let _ = writeln!(
                out,
                "  {:<4} {:<14} {:<36} {:<46} {answered} ({} ms)",
                c.verdict.label(),
                c.domain,
                c.fault,
                c.expected,
                c.millis
            );
        }
        for d in &self.not_verified {
            let _ = writeln!(out, "\nnot verified: {d}");
        }
        let failed = self
            .checks
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .count()
            + self
                .cells
                .iter()
                .filter(|c| c.verdict == Verdict::Fail)
                .count();
        let _ = writeln!(
            out,
            "\n{}: {} check(s), {} cell(s), {failed} failed, in {:.1} s",
            if self.failed() { "FAILED" } else { "OK" },
            self.checks.len(),
            self.cells.len(),
            self.seconds
        );
        out
    }
}
