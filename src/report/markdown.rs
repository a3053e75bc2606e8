//! `--format markdown`: a compact report for a pull-request comment or the
//! GitHub job summary: totals, the migration verdict, and findings per section.

use super::summary::verdict;
use super::Report;
use crate::finding::{Section, Severity};
use std::fmt::Write;

/// How many projects the table of migration styles lists.
const PROJECT_ROWS: usize = 20;

/// Escapes text for a Markdown table cell.
fn cell(s: &str) -> String {
    super::visible(&s.replace('|', "\\|").replace('\n', " ")).into_owned()
}

/// Renders the Markdown report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let o = report.outcome;
    let _ = writeln!(out, "## npu-mem: Ascend NPU migration report\n");
    let _ = writeln!(
        out,
        "Advice for torch_npu {} · {} files scanned · **{}** errors, **{}** warnings, **{}** info\n",
        report.target,
        o.files_scanned,
        report.count(Severity::Error),
        report.count(Severity::Warning),
        report.count(Severity::Info)
    );
    match o.projects.as_slice() {
        [] => {}
        [p] => {
            let _ = writeln!(out, "Migration style: {}.\n", cell(&p.migration.describe()));
            let advice = |out: &mut String, what: &str, names: Vec<String>| {
                if !names.is_empty() {
                    let _ = writeln!(out, "{what} (their findings are advice): {}.\n", names.join(", "));
                }
            };
            let scripts = p.launches.unlaunched.iter().map(|e| format!("`{}`", cell(e))).collect();
            advice(&mut out, "Entry scripts that nothing in the project starts", scripts);
            let functions = super::next_steps::uncalled_functions(p)
                .into_iter()
                .map(|(path, f)| format!("`{}` (`{}:{}`)", cell(&f.name), cell(path), f.first))
                .collect();
            advice(&mut out, "Functions and classes that nothing in the project calls", functions);
            let branches =
                p.launches.untaken.iter().map(|(path, b)| format!("`{}` (`{}:{}`)", cell(&b.test), cell(path), b.line));
            advice(&mut out, "Branches that no run of the launch scripts takes", branches.collect());
            let tests = p.launches.cuda_only_tests.iter().map(|(path, line)| format!("`{}:{line}`", cell(path)));
            advice(&mut out, "Tests that run only where CUDA is, which an NPU host skips", tests.collect());
        }
        projects => {
            let _ = writeln!(out, "| project | migration style | automatic migration |\n|---|---|---|");
            for (i, p) in projects.iter().enumerate().take(PROJECT_ROWS) {
                let v = verdict(o.findings.iter().filter(|f| f.project == i));
                let status = match v.blockers {
                    0 => "compatible".to_string(),
                    n => format!("**blocked** by {n}"),
                };
                let _ =
                    writeln!(out, "| `{}` | {} | {status} |", cell(&p.project.display), cell(&p.migration.describe()));
            }
            if projects.len() > PROJECT_ROWS {
                let _ = writeln!(out, "| … and {} more | | |", projects.len() - PROJECT_ROWS);
            }
            out.push('\n');
        }
    }
    let v = verdict(&o.findings);
    if v.blockers == 0 {
        let _ = writeln!(out, "Automatic migration (`transfer_to_npu`): **compatible**.\n");
    } else {
        let codes: Vec<String> = v.by_code.iter().map(|c| format!("{} ×{}", c.code, c.count)).collect();
        let _ = writeln!(
            out,
            "Automatic migration (`transfer_to_npu`): **blocked** by {} findings ({}).\n",
            v.blockers,
            codes.join(", ")
        );
    }
    for section in Section::ALL.into_iter().chain([Section::Meta]) {
        let findings: Vec<_> = report.section_findings(section).collect();
        if findings.is_empty() {
            continue;
        }
        let _ = writeln!(out, "### {} ({})\n", section.title(), findings.len());
        let _ = writeln!(out, "| location | rule | severity | message |\n|---|---|---|---|");
        for f in findings {
            let _ = writeln!(
                out,
                "| `{}` | {} `{}` | {} | {} |",
                cell(&f.location()),
                f.code,
                f.name,
                f.severity,
                cell(&f.message)
            );
        }
        out.push('\n');
    }
    if o.findings.is_empty() {
        let _ = writeln!(out, "No findings.");
    }
    out
}
