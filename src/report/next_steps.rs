//! The text report's opening: the automatic-migration verdict, the blockers,
//! and what to do next, before the five checklist sections.

use super::summary::verdict;
use super::text::{plural, Paint};
use super::{visible, Report};
use crate::finding::{Applicability, Finding, Severity};
use crate::rules::schema::SitesRole;
use std::fmt::Write;

/// How many blockers, and how many entry scripts, are listed by name.
const LISTED: usize = 8;

/// Writes the verdict, the blockers and the next steps.
pub fn render(out: &mut String, report: &Report, paint: Paint) {
    let findings = &report.outcome.findings;
    let v = verdict(findings);
    let turned_on = sites(report, SitesRole::AutomaticMigration);
    out.push('\n');
    if v.blockers == 0 {
        let state = match turned_on.first() {
            Some((path, line)) => {
                format!("in use (imported at {}:{line}); it handles every pattern found", visible(path))
            }
            None => "compatible: no pattern it cannot handle was found".to_string(),
        };
        let _ = writeln!(out, "{} {state}.", paint.bold("Automatic migration (transfer_to_npu):"));
    } else {
        let codes: Vec<String> = v.by_code.iter().map(|c| format!("{} x{}", c.code, c.count)).collect();
        let _ = writeln!(
            out,
            "{} {} by {} ({}): change these by hand.",
            paint.bold("Automatic migration (transfer_to_npu):"),
            paint.severity(Severity::Error, "blocked"),
            plural(v.blockers, "finding"),
            codes.join(", ")
        );
        let blockers: Vec<&Finding> = findings.iter().filter(|f| f.blocker).collect();
        list(out, &blockers, "  ", "marked [blocker] below");
    }
    // Each step, with the findings listed under it.
    let mut steps: Vec<(String, Vec<&Finding>)> = Vec::new();
    if v.blockers == 0 && turned_on.is_empty() && !findings.is_empty() {
        steps.push((turn_on(report), Vec::new()));
    }
    let errors: Vec<&Finding> = findings.iter().filter(|f| f.severity == Severity::Error && !f.blocker).collect();
    if !errors.is_empty() {
        let step = format!("Fix {} first: code that fails on an NPU as written:", plural(errors.len(), "error"));
        steps.push((step, errors));
    }
    let (safe, unsafe_) = (report.fixable(Applicability::Safe), report.fixable(Applicability::Unsafe));
    if safe > 0 {
        let fixes = if safe == 1 { "1 safe fix".to_string() } else { format!("{safe} safe fixes") };
        steps.push((format!("{fixes}: `npu-mem scan --fix` (see them first with `--diff`)."), Vec::new()));
    }
    if unsafe_ > 0 {
        let more = if safe > 0 { " more" } else { "" };
        let have = if unsafe_ == 1 { "has" } else { "have" };
        let step = format!(
            "{unsafe_}{more} {have} an unsafe fix: review `npu-mem scan --diff --unsafe-fixes`, then add `--fix`."
        );
        steps.push((step, Vec::new()));
    }
    let info = report.count(Severity::Info);
    if info > 0 && report.min_severity == Severity::Info {
        let what =
            if info == 1 { "1 info finding is advice".to_string() } else { format!("{info} info findings are advice") };
        steps.push((format!("{what}: `--min-severity warning` leaves them out of this report."), Vec::new()));
    }
    if steps.is_empty() && findings.is_empty() {
        steps.push(("Nothing to change.".to_string(), Vec::new()));
    }
    if !steps.is_empty() {
        let _ = writeln!(out, "{}", paint.bold("Next steps:"));
        for (step, listed) in &steps {
            let _ = writeln!(out, "  - {step}");
            list(out, listed, "      ", "below");
        }
    }
}

/// Where `import torch_npu` and `transfer_to_npu` go, naming the entry scripts found.
fn turn_on(report: &Report) -> String {
    let imports = "`import torch_npu` and `from torch_npu.contrib import transfer_to_npu`";
    let entries = sites(report, SitesRole::EntryScripts);
    if entries.is_empty() {
        return format!("Turn it on: add {imports} at the top of the script you run, before the code that uses torch.");
    }
    let mut named: Vec<String> = entries.iter().take(LISTED).map(|(path, _)| visible(path).into_owned()).collect();
    named.dedup();
    if entries.len() > LISTED {
        named.push(format!("and {} more", entries.len() - LISTED));
    }
    format!("Turn it on: add {imports} at the top of each script you run ({}).", named.join(", "))
}

/// The `(path, line)` sites of the summary lists with this role.
fn sites<'a>(report: &'a Report, role: SitesRole) -> Vec<(&'a str, usize)> {
    let lists: Vec<usize> =
        report.engine.set.sites.iter().enumerate().filter(|(_, s)| s.role == Some(role)).map(|(i, _)| i).collect();
    report
        .outcome
        .sites
        .iter()
        .filter(|s| lists.contains(&s.0))
        .map(|(_, path, line, _)| (path.as_str(), *line))
        .collect()
}

/// Up to [`LISTED`] findings as `path:line:col CODE`, then how many more.
fn list(out: &mut String, findings: &[&Finding], indent: &str, where_: &str) {
    for f in findings.iter().take(LISTED) {
        let _ = writeln!(out, "{indent}{} {}", visible(&f.location()), f.code);
    }
    if findings.len() > LISTED {
        let _ = writeln!(out, "{indent}... and {} more, {where_}", findings.len() - LISTED);
    }
}
