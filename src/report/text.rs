//! `--format text` (the default): a header, then the five checklist sections,
//! each with its summary and its findings with source excerpts. Text from the
//! scanned files (excerpts, paths, messages) is printed through
//! [`super::visible`], so a control character in it shows as `\x1b` instead of
//! acting on the terminal.

use super::next_steps::PlannedFixes;
use super::style::{plural, Paint};
use super::summary::{section_summary, SectionSummary, SiteList};
use super::{visible, Report};
use crate::finding::{Advice, Finding, ProblemKind, Section, Severity};
use crate::rules::schema::SitesRole;
use std::fmt::Write;

/// Renders the full text report.
pub fn render(report: &Report, paint: Paint) -> String {
    let mut out = String::new();
    let o = report.outcome;
    let _ = writeln!(
        out,
        "{} {} · advice for torch_npu {} · {} file{} scanned in {} ms",
        paint.bold("npu-mem"),
        env!("CARGO_PKG_VERSION"),
        report.target,
        o.files_scanned,
        if o.files_scanned == 1 { "" } else { "s" },
        report.elapsed_ms
    );
    let hidden = report.outcome.findings.iter().filter(|f| !report.shown(f)).count();
    let _ = writeln!(
        out,
        "Findings: {}, {}, {}{}",
        paint.severity(Severity::Error, &plural(report.count(Severity::Error), "error")),
        paint.severity(Severity::Warning, &plural(report.count(Severity::Warning), "warning")),
        paint.severity(Severity::Info, &plural(report.count(Severity::Info), "info")),
        match hidden {
            0 => String::new(),
            n => format!(" ({n} below --min-severity {} not shown)", report.min_severity),
        }
    );
    let planned = super::next_steps::render(&mut out, report, paint);
    for section in Section::ALL {
        let findings: Vec<&Finding> = report.section_findings(section).filter(|f| report.shown(f)).collect();
        let summary = section_summary(report, section);
        let _ = writeln!(
            out,
            "\n{}",
            paint.bold(&format!("== {} ({}) ==", section.title(), plural(findings.len(), "finding")))
        );
        let summary_text = render_summary(&summary, paint);
        if findings.is_empty() && summary_text.is_empty() {
            let _ = writeln!(out, "Nothing to report in this section.");
            render_notes(&mut out, &summary, paint);
            continue;
        }
        out.push_str(&summary_text);
        let (advice, listed): (Vec<&Finding>, Vec<&Finding>) = findings.into_iter().partition(|f| f.is_advice());
        let (unreached, advice): (Vec<&Finding>, Vec<&Finding>) =
            advice.into_iter().partition(|f| f.advice == Some(Advice::Unreached));
        let (unlaunched, advisory): (Vec<&Finding>, Vec<&Finding>) = advice.into_iter().partition(|f| f.unlaunched);
        render_advice(&mut out, &advisory, Advice::TransferToNpu.describe(), paint);
        render_advice(&mut out, &unlaunched, "in code that nothing runs on the NPU", paint);
        if !unreached.is_empty() {
            let n = plural(unreached.len(), "finding");
            let _ = writeln!(out, "{n} in files no named run reaches (advice, counted by directory at the end)");
        }
        for f in listed {
            render_finding(&mut out, f, paint);
        }
        render_notes(&mut out, &summary, paint);
    }
    let meta: Vec<&Finding> = report.section_findings(Section::Meta).filter(|f| report.shown(f)).collect();
    if !meta.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            paint.bold(&format!("== {} ({}) ==", Section::Meta.title(), plural(meta.len(), "finding")))
        );
        for f in meta {
            render_finding(&mut out, f, paint);
        }
    }
    render_unreached(&mut out, report, paint);
    let silenced = report.outcome.suppressed.len();
    if silenced > 0 {
        let _ = writeln!(
            out,
            "\n{} silenced by `# npu-mem: ignore[...]` comments (not counted above).",
            plural(silenced, "finding")
        );
    }
    let baselined = report.outcome.baselined.len();
    if baselined > 0 {
        let _ = writeln!(out, "{} recorded in the baseline (not counted above).", plural(baselined, "finding"));
    }
    let stale = &report.outcome.stale_baseline;
    if !stale.is_empty() {
        let _ = writeln!(
            out,
            "\n{} no longer found (fixed, or their line changed); refresh it with --write-baseline:",
            plural(stale.len(), "baseline entry").replace("entrys", "entries")
        );
        for e in stale {
            let _ = writeln!(out, "  {}:{} {} {}", visible(&e.path), e.line, e.code, visible(&e.message));
        }
    }
    render_fixes(&mut out, report, planned);
    render_problems(&mut out, report);
    out
}

fn render_summary(s: &SectionSummary, paint: Paint) -> String {
    let mut out = String::new();
    for t in &s.tables {
        if t.rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}", paint.bold(&t.title));
        let mut grid: Vec<Vec<String>> =
            vec![std::iter::once("location".to_string()).chain(t.columns.iter().cloned()).collect()];
        for r in &t.rows {
            let values = r.values.iter().map(|v| visible(v).into_owned());
            grid.push(std::iter::once(format!("{}:{}", visible(&r.path), r.line)).chain(values).collect());
        }
        let widths: Vec<usize> =
            (0..grid[0].len()).map(|c| grid.iter().map(|row| row[c].chars().count()).max().unwrap_or(0)).collect();
        for row in grid {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
            let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
        }
        out.push('\n');
    }
    if !s.counts.is_empty() && s.counts.iter().any(|c| c.count > 0) {
        let _ = writeln!(out, "{}", paint.bold("Patterns"));
        let width = s.counts.iter().map(|c| c.label.chars().count()).max().unwrap_or(0);
        for c in &s.counts {
            let _ = writeln!(out, "  {:<width$}  {}", c.label, c.count);
        }
        out.push('\n');
    }
    // The entry scripts are named in the opening, where they are needed; a
    // project can have hundreds.
    let listed = |l: &&SiteList| {
        !l.sites.is_empty() && !matches!(l.role, Some(SitesRole::EntryScripts | SitesRole::UnguardedScripts))
    };
    for list in s.sites.iter().filter(listed) {
        let _ = writeln!(out, "{}", paint.bold(&format!("In use: {}", list.label)));
        for site in &list.sites {
            let _ = writeln!(out, "  {}:{}  {}", visible(&site.path), site.line, visible(&site.detail));
        }
        out.push('\n');
    }
    for g in s.groups.iter().filter(|g| !g.rows.is_empty()) {
        let _ = writeln!(out, "{}", paint.bold(&g.title));
        let width = |s: &str| visible(s).chars().count();
        let w0 = g.rows.iter().map(|r| width(&r.key)).chain([width(&g.columns[0])]).max().unwrap_or(0);
        let w1 = g.rows.iter().map(|r| width(&r.value)).chain([width(&g.columns[1])]).max().unwrap_or(0);
        let _ = writeln!(out, "  {:<w0$}  {:<w1$}  {}", g.columns[0], g.columns[1], g.columns[2]);
        for r in &g.rows {
            let _ = writeln!(out, "  {:<w0$}  {:<w1$}  {}", visible(&r.key), visible(&r.value), r.count);
        }
        out.push('\n');
    }
    out
}

/// Notes go after the findings: they are advice on what the findings ask for.
fn render_notes(out: &mut String, s: &SectionSummary, paint: Paint) {
    for n in &s.notes {
        let _ = writeln!(out, "\n{}", paint.bold(&n.title));
        for line in n.text.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// Findings that are advice for one reason (`why`): one line per rule, with
/// how many there are and in how many files, instead of one block each.
fn render_advice(out: &mut String, findings: &[&Finding], why: &str, paint: Paint) {
    let mut by_code: std::collections::BTreeMap<&str, (&str, usize, std::collections::BTreeSet<&str>)> =
        Default::default();
    for f in findings {
        let entry = by_code.entry(&f.code).or_insert((&f.name, 0, Default::default()));
        entry.1 += 1;
        entry.2.insert(&f.path);
    }
    for (code, (name, count, files)) in by_code {
        let _ = writeln!(
            out,
            "{} [{}] x{count} {name} in {}: {why}",
            paint.severity(Severity::Info, code),
            paint.severity(Severity::Info, Severity::Info.as_str()),
            plural(files.len(), "file")
        );
    }
}

/// The findings in files no named run reaches, counted by directory.
fn render_unreached(out: &mut String, report: &Report, paint: Paint) {
    let mut by_dir: std::collections::BTreeMap<&str, usize> = Default::default();
    let unreached = report.outcome.findings.iter().filter(|f| f.advice == Some(Advice::Unreached) && report.shown(f));
    for f in unreached {
        *by_dir.entry(f.path.rsplit_once('/').map_or(".", |(dir, _)| dir)).or_default() += 1;
    }
    if by_dir.is_empty() {
        return;
    }
    let total: usize = by_dir.values().sum();
    let heading = format!("== Not reached by the named runs ({}, advice) ==", plural(total, "finding"));
    let _ = writeln!(out, "\n{}", paint.bold(&heading));
    let width = by_dir.keys().map(|d| visible(d).chars().count()).max().unwrap_or(0);
    for (dir, n) in by_dir {
        let _ = writeln!(out, "  {:<width$}  {n}", visible(dir));
    }
}

fn render_finding(out: &mut String, f: &Finding, paint: Paint) {
    let tag = if f.blocker { " [blocker]" } else { "" };
    let _ = writeln!(
        out,
        "{} {} [{}]{} {}",
        paint.bold(&visible(&f.location())),
        paint.severity(f.severity, &f.code),
        paint.severity(f.severity, f.severity.as_str()),
        tag,
        visible(&f.message)
    );
    if !f.source_line.is_empty() {
        let gutter = f.line.to_string();
        let pad = " ".repeat(gutter.len());
        // A tab is one column wide here, so the carets stay under the finding.
        let source = f.source_line.replace('\t', " ");
        let line = visible(&source);
        let _ = writeln!(out, " {} | {}", paint.dim(&gutter), line);
        // Columns count characters of the source; escapes widen what is shown.
        let escaped = matches!(line, std::borrow::Cow::Owned(_));
        let shown = |from: usize, to: usize| match escaped {
            false => to.saturating_sub(from),
            true => {
                visible(&source.chars().skip(from).take(to.saturating_sub(from)).collect::<String>()).chars().count()
            }
        };
        let start = shown(0, f.column.saturating_sub(1));
        let len = if f.end_line == f.line {
            shown(f.column.saturating_sub(1), f.end_column.saturating_sub(1))
        } else {
            line.chars().count().saturating_sub(start)
        };
        let _ =
            writeln!(out, " {} | {}{}", pad, " ".repeat(start), paint.severity(f.severity, &"^".repeat(len.max(1))));
    }
    if let Some(fix) = &f.fix {
        let _ = writeln!(out, "  = {} fix: {}", fix.applicability.as_str(), visible(&fix.description));
    }
    if let Some(why) = &f.fix_withheld {
        let _ = writeln!(out, "  = no fix here: {}", visible(why));
    }
}

fn render_problems(out: &mut String, report: &Report) {
    let (unfixed, unread): (Vec<_>, Vec<_>) =
        report.outcome.problems.iter().partition(|p| p.kind == ProblemKind::NotFixed);
    if !unread.is_empty() || !report.walk_problems.is_empty() {
        let _ = writeln!(out, "\nFiles not fully analysed:");
        for p in unread {
            let kind = if p.kind == ProblemKind::Partial { "partially parsed" } else { "skipped" };
            let _ = writeln!(out, "  {} ({kind}): {}", visible(&p.path), visible(&p.message));
        }
        for (path, message) in report.walk_problems {
            let _ = writeln!(out, "  {} (not walked): {}", visible(path), visible(message));
        }
    }
    if !unfixed.is_empty() {
        let _ = writeln!(out, "\nFiles --fix left unchanged:");
        for p in unfixed {
            let _ = writeln!(out, "  {}: {}", visible(&p.path), visible(&p.message));
        }
    }
}

/// What `--fix` did, and what it could still do, as the next steps
/// `planned` it: fixes that transfer_to_npu makes unnecessary are not
/// counted as fixes to apply.
fn render_fixes(out: &mut String, report: &Report, planned: PlannedFixes) {
    let fixed = &report.outcome.fixed;
    if !fixed.is_empty() {
        let files: std::collections::BTreeSet<&str> = fixed.iter().map(|f| f.path.as_str()).collect();
        let counts = super::describe_fixed(fixed.len(), &report.outcome.fixed_follow_ups);
        let _ = writeln!(out, "\nFixed {counts} in {}.", plural(files.len(), "file"));
    }
    let (safe, unsafe_) = planned.steps;
    if safe > 0 {
        let _ = writeln!(out, "{} a safe fix: `npu-mem scan --fix` applies them.", have(safe));
    }
    if unsafe_ > 0 {
        let _ = writeln!(
            out,
            "{} an unsafe fix: `npu-mem scan --fix --unsafe-fixes` applies them too (review the diff with --diff first).",
            have(unsafe_)
        );
    }
    let fixes = match planned.instead {
        (0, 0) => return,
        (safe, 0) => plural(safe, "safe fix"),
        (0, unsafe_) => plural(unsafe_, "unsafe fix"),
        (safe, unsafe_) => format!("{} and {}", plural(safe, "safe fix"), plural(unsafe_, "unsafe fix")),
    };
    let why = match planned.in_use {
        Some(true) => "not needed while transfer_to_npu is on",
        Some(false) => "to migrate by hand instead of turning on transfer_to_npu",
        None => "to migrate by hand instead of relying on transfer_to_npu",
    };
    let _ = writeln!(out, "{fixes} {why} (see Next steps).");
}

/// `1 finding has`, `3 findings have`.
fn have(n: usize) -> String {
    format!("{} {}", plural(n, "finding"), if n == 1 { "has" } else { "have" })
}
