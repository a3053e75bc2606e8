//! `--format json`: the machine-readable report documented in docs/report.md
//! (schema: docs/report.schema.json).

use super::summary::{section_summary, SectionSummary};
use super::Report;
use crate::finding::{FileProblem, Finding, ProblemKind, Section, Severity};
use serde::Serialize;
use std::io::Write;

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct Totals {
    error: usize,
    warning: usize,
    info: usize,
}

#[derive(Serialize)]
struct Summary {
    totals: Totals,
    sections: Vec<SectionSummary>,
}

/// A finding silenced by a suppression comment.
#[derive(Serialize)]
struct Suppressed<'a> {
    #[serde(flatten)]
    finding: &'a Finding,
    /// The reason given after `--`, if any.
    reason: Option<&'a str>,
}

/// Where a project imports `transfer_to_npu`.
#[derive(Serialize)]
struct Place<'a> {
    path: &'a str,
    line: usize,
}

/// A function that nothing in its project calls, at its `def`.
#[derive(Serialize)]
struct UncalledFunction<'a> {
    path: &'a str,
    /// `Class.method` for a method.
    name: String,
    line: usize,
}

/// One project: its directory, the migration style assumed and its verdict.
#[derive(Serialize)]
struct JsonProject<'a> {
    path: &'a str,
    marker: Option<&'a str>,
    files_scanned: usize,
    migration: crate::project::migration::Style,
    reason: String,
    transfer_to_npu: Option<Place<'a>>,
    /// Entry scripts the project's shell scripts (or a training platform) start.
    launched_entries: &'a [String],
    /// Entry scripts nothing runs, when the shell scripts start others: their code's findings are advice.
    unlaunched_entries: &'a [String],
    /// Functions nothing in the project calls that hold findings (advice too).
    uncalled_functions: Vec<UncalledFunction<'a>>,
    /// Branches that hold findings and that no run of the launch scripts takes (advice too).
    untaken_branches: Vec<UntakenBranch<'a>>,
    /// Tests that hold findings and run only where CUDA is: an NPU host skips them (advice too).
    cuda_only_tests: Vec<Place<'a>>,
    /// Launch lines whose script rejects an option they pass: they start no run.
    ignored_launches: Vec<IgnoredLaunch<'a>>,
    verdict: super::summary::Verdict,
}

/// A launch line that starts no run: its script rejects `option`.
#[derive(Serialize)]
struct IgnoredLaunch<'a> {
    path: &'a str,
    line: usize,
    script: &'a str,
    option: &'a str,
}

/// A branch no run of the launch scripts takes.
#[derive(Serialize)]
struct UntakenBranch<'a> {
    path: &'a str,
    line: usize,
    end_line: usize,
    test: &'a str,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    version: u32,
    tool: Tool,
    target: &'a str,
    files_scanned: usize,
    findings: &'a [Finding],
    suppressed: Vec<Suppressed<'a>>,
    baselined: &'a [Finding],
    stale_baseline: &'a [crate::baseline::Entry],
    fixed: &'a [Finding],
    projects: Vec<JsonProject<'a>>,
    /// With runs named by `--entry`: what they start and reach.
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a crate::project::named_runs::RunSummary>,
    summary: Summary,
    errors: Vec<FileProblem>,
}

/// Writes the JSON report to `out` as it is rendered.
pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut errors: Vec<FileProblem> = report.outcome.problems.clone();
    errors.extend(report.walk_problems.iter().map(|(path, message)| FileProblem {
        path: path.clone(),
        kind: ProblemKind::Skipped,
        message: message.clone(),
    }));
    let doc = JsonReport {
        version: 1,
        tool: Tool { name: "npu-mem", version: env!("CARGO_PKG_VERSION") },
        target: report.target,
        files_scanned: report.outcome.files_scanned,
        findings: &report.outcome.findings,
        suppressed: report
            .outcome
            .suppressed
            .iter()
            .map(|(finding, reason)| Suppressed { finding, reason: reason.as_deref() })
            .collect(),
        baselined: &report.outcome.baselined,
        stale_baseline: &report.outcome.stale_baseline,
        fixed: &report.outcome.fixed,
        projects: report
            .outcome
            .projects
            .iter()
            .enumerate()
            .map(|(i, p)| JsonProject {
                path: &p.project.display,
                marker: p.project.marker.as_deref(),
                files_scanned: p.files_scanned,
                migration: p.migration.style,
                reason: p.migration.reason(),
                transfer_to_npu: p.transfer_imports.first().map(|(path, line)| Place { path, line: *line }),
                launched_entries: &p.launches.launched,
                unlaunched_entries: &p.launches.unlaunched,
                uncalled_functions: super::next_steps::uncalled_functions(p)
                    .into_iter()
                    .map(|(path, f)| UncalledFunction { path, name: f.qualified_name(), line: f.first })
                    .collect(),
                untaken_branches: p
                    .launches
                    .untaken
                    .iter()
                    .map(|(path, b)| UntakenBranch { path, line: b.line, end_line: b.lines.1, test: &b.test })
                    .collect(),
                cuda_only_tests: p
                    .launches
                    .cuda_only_tests
                    .iter()
                    .map(|(path, line)| Place { path, line: *line })
                    .collect(),
                ignored_launches: p
                    .launches
                    .ignored
                    .iter()
                    .map(|l| IgnoredLaunch { path: &l.path, line: l.line, script: &l.script, option: &l.option })
                    .collect(),
                verdict: super::summary::verdict(report.outcome.findings.iter().filter(|f| f.project == i)),
            })
            .collect(),
        run: report.outcome.run.as_ref(),
        summary: Summary {
            totals: Totals {
                error: report.count(Severity::Error),
                warning: report.count(Severity::Warning),
                info: report.count(Severity::Info),
            },
            sections: Section::ALL.iter().map(|s| section_summary(report, *s)).collect(),
        },
        errors,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    out.write_all(b"\n")
}
