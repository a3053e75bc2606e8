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
use crate::rules::model::Rule;
use serde_json::{json, Value};

/// The Code Quality severity of a finding.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Info => "info",
    }
}

/// The Code Climate category of a finding (GitLab ignores it; other Code
/// Climate readers use it). The report section decides, except that in the
/// torch_npu API and mixed precision sections an opportunity is filed under
/// `Performance`: a rule whose own severity is `info` (an opportunity or a
/// piece of advice), which `transfer_to_npu` does not handle and which does
/// not take over another rule's finding (a more specific report of a CUDA API
/// use). So API007's fused optimizer and AMP005's missing mixed precision are
/// `Performance`; API001's renamed `torch.cuda` API and AMP010's deprecated
/// `torch.cuda.amp.custom_fwd` stay `Compatibility`.
fn category(section: Section, rule: Option<&Rule>) -> &'static str {
    let opportunity = rule.is_some_and(|r| r.severity == Severity::Info && !r.auto_migrated && r.overrides.is_empty());
    match section {
        Section::DataLoading | Section::Memory => "Performance",
        Section::NpuApi | Section::MixedPrecision if opportunity => "Performance",
        Section::Transfer | Section::NpuApi | Section::MixedPrecision => "Compatibility",
        Section::Meta => "Clarity",
    }
}

/// The issue's description: the rule code, the message, whether the finding
/// blocks automatic migration, and why it is only advice.
fn description(f: &Finding) -> String {
    let blocker = if f.blocker { " [blocker]" } else { "" };
    let message = f.message_with_advice();
    // In a notebook, the lines are those of the notebook's JSON, which is what
    // GitLab shows in a merge request's diff; the description names the cell.
    match f.cell {
        Some(cell) => format!("{}{blocker}: {message} (cell {cell}, line {})", f.code, f.line),
        None => format!("{}{blocker}: {message}", f.code),
    }
}

fn issue(f: &Finding, rule: Option<&Rule>, fingerprint: String) -> Value {
    let (line, _, end_line, _) = f.region_in_file();
    json!({
        "type": "issue",
        "check_name": f.code,
        "description": description(f),
        "categories": [category(f.section, rule)],
        "severity": severity(f.severity),
        "fingerprint": fingerprint,
        "location": { "path": f.path, "lines": { "begin": line, "end": end_line } },
    })
}

/// Renders the Code Quality report (pretty-printed, with a trailing newline).
pub fn render(report: &Report) -> String {
    let findings = &report.outcome.findings;
    let rules = &report.engine.set;
    let issues: Vec<Value> =
        findings.iter().zip(fingerprints(findings)).map(|(f, fp)| issue(f, rules.rule(&f.code), fp)).collect();
    let mut out = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".to_string());
    out.push('\n');
    out
}
