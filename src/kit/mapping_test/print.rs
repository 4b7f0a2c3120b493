//! The report as a person reads it: the first records field by field, how
//! often each path matched, then the findings and the verdict.

use std::fmt::Write;

use super::report::{Report, Severity};

/// Renders `report`, showing at most `shown` records field by field.
pub fn render(report: &Report, shown: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "mapping {} ({}){} · answer(s) {}",
        report.mapping,
        report.entity,
        report
            .profile
            .as_deref()
            .map(|p| format!(" · profile {p}"))
            .unwrap_or_default(),
        report.responses.join(", ")
    );
    let path = if report.records_path.is_empty() {
        "(whole answer)"
    } else {
        &report.records_path
    };
    let _ = writeln!(
        out,
        "records at {path} ({}): {}",
        report.records_from,
        report.records.len()
    );
    for record in report.records.iter().take(shown) {
        let _ = writeln!(
            out,
            "\nrecord {}: {}{}",
            record.index,
            record.outcome,
            record
                .id
                .as_deref()
                .map(|id| format!(" · {id}"))
                .unwrap_or_default()
        );
        for f in &record.fields {
            let value = f
                .value
                .as_ref()
                .map(|v| clip(&v.to_string(), 48))
                .unwrap_or_else(|| "-".into());
            let from = match (&f.source, &f.reason) {
                (_, Some(reason)) => format!("({reason})"),
                (Some(source), None) => format!("<- {source}"),
                (None, None) => String::new(),
            };
            let _ = writeln!(out, "  {:<16} {:<50} {from}", f.field, value);
        }
    }
    if report.records.len() > shown {
        let _ = writeln!(
            out,
            "\n({} more record(s); --show N prints more, --json all of them)",
            report.records.len() - shown
        );
    }
    let _ = writeln!(out, "\npaths (rows with a value / rows read)");
    for p in &report.paths {
        let _ = writeln!(
            out,
            "  {:>5}/{:<5} {} [{}]",
            p.matched, p.of, p.path, p.role
        );
    }
    let errors = count(report, Severity::Error);
    let warnings = count(report, Severity::Warning);
    if !report.findings.is_empty() {
        let _ = writeln!(out, "\nfindings");
        for f in &report.findings {
            let label = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let _ = writeln!(out, "  {label}: {}", f.message);
        }
    }
    let verdict = if report.failed() { "FAILED" } else { "OK" };
    let _ = writeln!(
        out,
        "\n{verdict}: {} record(s), {errors} error(s), {warnings} warning(s)",
        report.records.len()
    );
    out
}

fn count(report: &Report, severity: Severity) -> usize {
    report
        .findings
        .iter()
        .filter(|f| f.severity == severity)
        .count()
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max - 1).collect();
    format!("{cut}…")
}
