//! `--format gitlab`: a GitLab Code Quality report (the `codequality` CI
//! artifact), a JSON array with one issue per finding that counts.
//!
//! Severities map as error -> `critical`, warning -> `major`, info -> `info`;
//! `blocker` and `minor` are not used (whether a finding stops the pipeline is
//! `--fail-on`'s decision, not the severity's). Fingerprints are the ones
//! SARIF and baselines use, so they survive edits elsewhere in the file.
//! Suppressed and baselined findings are left out: the format cannot mark them.

use super::Report;
use crate::baseline::fingerprints;
use crate::finding::{Finding, Section, Severity};
use serde_json::{json, Value};

/// The Code Quality severity of a finding.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Info => "info",
    }
}

/// The Code Climate category of a report section (GitLab ignores it; other
/// Code Climate readers use it).
fn category(section: Section) -> &'static str {
    match section {
        Section::DataLoading | Section::MixedPrecision | Section::Memory => "Performance",
        Section::Transfer | Section::NpuApi => "Compatibility",
        Section::Meta => "Clarity",
    }
}

fn issue(f: &Finding, fingerprint: String) -> Value {
    // In a notebook, the lines are those of the notebook's JSON, which is what
    // GitLab shows in a merge request's diff; the description names the cell.
    let (line, _, end_line, _) = f.region_in_file();
    let description = match f.cell {
        Some(cell) => format!("{}: {} (cell {cell}, line {})", f.code, f.message, f.line),
        None => format!("{}: {}", f.code, f.message),
    };
    json!({
        "type": "issue",
        "check_name": f.code,
        "description": description,
        "categories": [category(f.section)],
        "severity": severity(f.severity),
        "fingerprint": fingerprint,
        "location": { "path": f.path, "lines": { "begin": line, "end": end_line } },
    })
}

/// Renders the Code Quality report (pretty-printed, with a trailing newline).
pub fn render(report: &Report) -> String {
    let findings = &report.outcome.findings;
    let issues: Vec<Value> = findings.iter().zip(fingerprints(findings)).map(|(f, fp)| issue(f, fp)).collect();
    let mut out = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".to_string());
    out.push('\n');
    out
}
