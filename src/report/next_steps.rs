//! The text report's opening: the migration style assumed, the
//! automatic-migration verdict and the blockers (for each project when the
//! scan holds several), and what to do next, before the five checklist sections.

use super::style::{plural, Paint};
use super::summary::verdict;
use super::{visible, Report};
use crate::finding::{Advice, Applicability, Finding, Severity};
use crate::outcome::ProjectOutcome;
use crate::project::migration::{Style, Why};
use crate::project::named_runs::RunSummary;
use crate::rules::schema::BreaksAt;
use std::fmt::Write;

/// How many blockers, entry scripts and projects are listed by name.
const LISTED: usize = 8;

/// The verdict's heading.
const VERDICT: &str = "Automatic migration (transfer_to_npu):";

/// The fixes the next steps name: those that are steps of the plan, and
/// those that are the other way to migrate, where the plan is transfer_to_npu.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PlannedFixes {
    /// Safe and unsafe fixes that are steps.
    pub steps: (usize, usize),
    /// Safe and unsafe fixes of what transfer_to_npu handles: migrating by hand instead.
    pub instead: (usize, usize),
    /// Where the findings of the fixes `instead` are, transfer_to_npu is on
    /// already (`Some(true)`: they are not needed), or the plan turns it on
    /// (`Some(false)`); `None`: some of each (several projects).
    pub in_use: Option<bool>,
}

/// Writes the migration style, the verdict, the blockers and the next
/// steps; gives the fixes they name, for the report's closing lines.
pub fn render(out: &mut String, report: &Report, paint: Paint) -> PlannedFixes {
    let findings = &report.outcome.findings;
    let projects = &report.outcome.projects;
    let named_runs = report.outcome.run.is_some();
    // Each step, with the findings listed under it.
    let mut steps: Vec<(String, Vec<&Finding>)> = Vec::new();
    // By project, where its plan is automatic migration: whether
    // transfer_to_npu is on already (`Some(true)`) or the plan turns it on
    // (`Some(false)`). Fixes of what it handles are then the other way, not
    // one more step.
    let mut automatic_plans: Vec<Option<bool>> = vec![None; projects.len()];
    match projects.as_slice() {
        [] | [_] => {
            if let Some(p) = projects.first() {
                let _ = writeln!(out, "{} {}", paint.bold("Migration style:"), visible(&p.migration.describe()));
                render_launches(out, p, named_runs, "", paint);
            }
            out.push('\n');
            let all: Vec<&Finding> = findings.iter().collect();
            let turn_on = render_verdict(out, report, projects.first(), &all, "", paint);
            if let Some(p) = projects.first() {
                automatic_plans[0] = automatic_plan(p, turn_on.is_some());
            }
            steps.extend(turn_on.map(|step| (step, Vec::new())));
        }
        _ => {
            let _ = writeln!(
                out,
                "{} {}, each with its own migration style and verdict.",
                paint.bold("Projects:"),
                projects.len()
            );
            out.push('\n');
            for (i, p) in projects.iter().enumerate() {
                let own: Vec<&Finding> = findings.iter().filter(|f| f.project == i).collect();
                if i >= LISTED {
                    // Not shown, but its plan still decides what its fixes are.
                    let turn_on = turn_on_step(Some(p), &own, verdict(own.iter().copied()).blockers);
                    automatic_plans[i] = automatic_plan(p, turn_on.is_some());
                    continue;
                }
                let marker = p.project.marker.as_deref().map_or(String::new(), |m| format!(" ({})", visible(m)));
                let _ = writeln!(out, "{}{marker}", paint.bold(&visible(&p.project.display)));
                let _ = writeln!(out, "  Migration style: {}", visible(&p.migration.describe()));
                render_launches(out, p, named_runs, "  ", paint);
                let turn_on = render_verdict(out, report, Some(p), &own, "  ", paint);
                automatic_plans[i] = automatic_plan(p, turn_on.is_some());
                if let Some(step) = turn_on {
                    let _ = writeln!(out, "  {step}");
                }
            }
            if projects.len() > LISTED {
                let rest = &projects[LISTED..];
                let automatic = rest.iter().filter(|p| p.migration.style == Style::Automatic).count();
                let blocked = rest
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| findings.iter().any(|f| f.blocker && f.project == LISTED + i));
                let _ = writeln!(
                    out,
                    "... and {} more ({automatic} automatic, {} manual, {} blocked; the JSON report lists each)",
                    plural(rest.len(), "project"),
                    rest.len() - automatic,
                    blocked.count()
                );
            }
        }
    }
    if let Some(run) = &report.outcome.run {
        render_run(out, run, report.verbose, paint);
    }
    let errors = in_run_order(report, findings.iter().filter(|f| f.severity == Severity::Error && !f.blocker));
    if !errors.is_empty() {
        let them = if errors.len() == 1 { "it" } else { "them" };
        let step = format!(
            "Fix {} first: code that fails on an NPU as written, in the order a run meets {them}:",
            plural(errors.len(), "error")
        );
        steps.push((step, errors));
    }
    // Turning it on handles every finding (the verdict found no blocker); once it is on, the advisory ones.
    let plan_of = |f: &Finding| automatic_plans.get(f.project).copied().flatten();
    let alternative = |f: &Finding| plan_of(f).is_some_and(|in_use| !in_use || f.advisory);
    let fixable = |a: Applicability, instead: bool| report.fixable_where(a, |f| alternative(f) == instead);
    let (safe, unsafe_) = (fixable(Applicability::Safe, false), fixable(Applicability::Unsafe, false));
    if safe > 0 {
        steps.push((
            format!("{}: `npu-mem scan --fix` (see them first with `--diff`).", plural(safe, "safe fix")),
            Vec::new(),
        ));
    }
    if unsafe_ > 0 {
        let more = if safe > 0 { " more" } else { "" };
        let have = if unsafe_ == 1 { "has" } else { "have" };
        let step = format!(
            "{unsafe_}{more} {have} an unsafe fix: review `npu-mem scan --diff --unsafe-fixes`, then add `--fix`."
        );
        steps.push((step, Vec::new()));
    }
    let (safe_instead, unsafe_instead) = (fixable(Applicability::Safe, true), fixable(Applicability::Unsafe, true));
    let instead_plans: Vec<bool> =
        findings.iter().filter(|f| f.fix.is_some() && alternative(f)).filter_map(plan_of).collect();
    let in_use = match (instead_plans.contains(&true), instead_plans.contains(&false)) {
        (true, true) => None,
        (on, _) => Some(on),
    };
    let planned = PlannedFixes { steps: (safe, unsafe_), instead: (safe_instead, unsafe_instead), in_use };
    if safe_instead + unsafe_instead > 0 {
        steps.push((migrate_by_hand_instead(safe_instead, unsafe_instead, planned.in_use), Vec::new()));
    }
    let advisory = findings.iter().filter(|f| f.advisory).count();
    let unreached = findings.iter().filter(|f| f.advice == Some(Advice::Unreached)).count();
    let unlaunched = findings.iter().filter(|f| f.unlaunched).count() - unreached;
    let info = report.count(Severity::Info) - advisory - unlaunched - unreached;
    if report.min_severity == Severity::Info {
        if advisory > 0 {
            let are = if advisory == 1 { "is" } else { "are" };
            let step = format!(
                "{} {are} handled by transfer_to_npu at run time: advice, one line per rule below \
                 (`--migration manual` lists each).",
                plural(advisory, "finding")
            );
            steps.push((step, Vec::new()));
        }
        if unlaunched > 0 {
            let are = if unlaunched == 1 { "is" } else { "are" };
            let step = format!(
                "{} {are} in code that nothing runs ({}): advice, one line per rule below \
                 (`--entries all` lists each).",
                plural(unlaunched, "finding"),
                why_nothing_runs(findings)
            );
            steps.push((step, Vec::new()));
        }
        if unreached > 0 {
            let are = if unreached == 1 { "is" } else { "are" };
            let step = format!(
                "{} {are} in files that no named run reaches: advice, counted by directory at the end.",
                plural(unreached, "finding")
            );
            steps.push((step, Vec::new()));
        }
        if info > 0 {
            let what = if info == 1 {
                "1 info finding is advice".to_string()
            } else {
                format!("{info} info findings are advice")
            };
            steps.push((format!("{what}: `--min-severity warning` leaves them out of this report."), Vec::new()));
        }
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
    planned
}

/// Where `project`'s plan is automatic migration: whether transfer_to_npu
/// is on already (`Some(true)`) or the plan turns it on (`Some(false)`:
/// its verdict said to); `None` for a manual plan.
fn automatic_plan(project: &ProjectOutcome, turns_on: bool) -> Option<bool> {
    match (turns_on, project.migration.style == Style::Automatic) {
        (true, _) => Some(false),
        (false, true) => Some(true),
        (false, false) => None,
    }
}

/// The fixes that transfer_to_npu makes unnecessary, offered as the other
/// way to migrate rather than as one more step (`in_use`: see [`PlannedFixes::in_use`]).
fn migrate_by_hand_instead(safe: usize, unsafe_: usize, in_use: Option<bool>) -> String {
    let mut ways = Vec::new();
    if safe > 0 {
        ways.push(format!("{} (`npu-mem scan --fix`; `--diff` shows the changes first)", plural(safe, "safe fix")));
    }
    if unsafe_ > 0 {
        let fixes = plural(unsafe_, "unsafe fix");
        ways.push(format!("{fixes} to review (`npu-mem scan --diff --unsafe-fixes`, then add `--fix`)"));
    }
    match in_use {
        Some(true) => format!(
            "Not needed while transfer_to_npu is on: {} for findings it handles, if you would rather migrate by hand.",
            ways.join(" and ")
        ),
        Some(false) => format!("Or, instead of turning it on, migrate by hand: {}.", ways.join(" and ")),
        None => format!(
            "Or migrate by hand where transfer_to_npu is on or turned on above: {} for findings it handles.",
            ways.join(" and ")
        ),
    }
}

/// The line under the verdict that says what the named runs start and reach.
fn render_run(out: &mut String, run: &RunSummary, verbose: bool, paint: Paint) {
    let _ = writeln!(
        out,
        "{} {}, {} of {} reached",
        paint.bold("Run:"),
        plural(run.scripts.len(), "entry script"),
        run.reached,
        plural(run.modules, "module")
    );
    for u in &run.undecided {
        let _ = writeln!(out, "  every module of {} counts as reached: {}", visible(&u.project), visible(&u.reason));
    }
    if verbose && !run.reached_by.is_empty() {
        let _ = writeln!(out, "  Reached modules that hold findings, and the runs that import them:");
        for (path, runs) in &run.reached_by {
            let runs: Vec<String> = runs.iter().map(|r| format!("`{}`", visible(r))).collect();
            let by = match runs.is_empty() {
                true => "a configuration's target, or a module loaded by a computed name".to_string(),
                false => runs.join(", "),
            };
            let _ = writeln!(out, "    {}: {by}", visible(path));
        }
    }
}

/// Says which entry scripts of `project` no launch script runs, which of
/// its functions that hold findings nothing calls, which branches no run
/// takes and which tests an NPU host skips, if any: the findings in their
/// code are advice.
fn render_launches(out: &mut String, project: &ProjectOutcome, named_runs: bool, indent: &str, paint: Paint) {
    let l = &project.launches;
    if !l.unlaunched.is_empty() {
        let named = first_few(l.unlaunched.iter().cloned());
        let (scripts, they, their) = match l.unlaunched.len() {
            1 => (named, "it runs", "its"),
            n => (format!("{n} others ({named})"), "they run", "their"),
        };
        let _ = writeln!(
            out,
            "{indent}{} {} started by {}; nothing in it starts {}, so findings in code \
             only {they} and in {their} `__main__` blocks are advice (`--entries all` keeps their severity).",
            paint.bold("Entry scripts:"),
            l.launched.len(),
            if named_runs { "the named runs" } else { "the project's launch scripts" },
            visible(&scripts)
        );
    }
    render_ignored(out, project, indent, paint);
    render_uncalled(out, project, indent, paint);
    render_untaken(out, project, indent, paint);
    render_cuda_only_tests(out, project, indent, paint);
}

/// Says which launch lines count as no launch: the scripts they start reject their options.
fn render_ignored(out: &mut String, project: &ProjectOutcome, indent: &str, paint: Paint) {
    let ignored = &project.launches.ignored;
    if ignored.is_empty() {
        return;
    }
    let named = first_few(
        ignored.iter().map(|l| format!("{}:{} ({} defines no option {})", l.path, l.line, l.script, l.option)),
    );
    let _ = writeln!(
        out,
        "{indent}{} {} ignored as {}: {}; argparse stops {} with a usage error, so {} neither {} nor {} options.",
        paint.bold("Launch lines:"),
        plural(ignored.len(), "line"),
        if ignored.len() == 1 { "a launch" } else { "launches" },
        visible(&named),
        if ignored.len() == 1 { "it" } else { "them" },
        if ignored.len() == 1 { "it" } else { "they" },
        if ignored.len() == 1 { "starts its script" } else { "start their scripts" },
        if ignored.len() == 1 { "gives it" } else { "give them" },
    );
}

/// Says which tests that hold findings an NPU host skips, for want of CUDA.
fn render_cuda_only_tests(out: &mut String, project: &ProjectOutcome, indent: &str, paint: Paint) {
    let tests = &project.launches.cuda_only_tests;
    if tests.is_empty() {
        return;
    }
    let named = first_few(tests.iter().map(|(path, line)| format!("{path}:{line}")));
    let (holds, runs, its) = if tests.len() == 1 { ("holds", "runs", "its") } else { ("hold", "run", "their") };
    let _ = writeln!(
        out,
        "{indent}{} {} that {holds} findings {runs} only where CUDA is available ({}): an NPU host without \
         transfer_to_npu skips {}, so {its} findings are advice too (`--entries all` keeps their severity).",
        paint.bold("Tests:"),
        plural(tests.len(), "test"),
        visible(&named),
        if tests.len() == 1 { "it" } else { "them" }
    );
}

/// Says which branches that hold findings no run of the launch scripts takes.
fn render_untaken(out: &mut String, project: &ProjectOutcome, indent: &str, paint: Paint) {
    let branches = &project.launches.untaken;
    if branches.is_empty() {
        return;
    }
    let named = first_few(branches.iter().map(|(path, b)| format!("{path}:{} `{}`", b.line, b.test)));
    let (fails, its) = if branches.len() == 1 { ("fails", "its") } else { ("fail", "their") };
    let _ = writeln!(
        out,
        "{indent}{} {} that {} findings {fails} with the options of every run the launch scripts start ({}), so \
         {its} findings are advice too (`--entries all` keeps their severity).",
        paint.bold("Branches:"),
        plural(branches.len(), "branch test"),
        if branches.len() == 1 { "guards" } else { "guard" },
        visible(&named)
    );
}

/// The first [`LISTED`] of `items`, joined with commas, and how many more there are.
fn first_few(items: impl ExactSizeIterator<Item = String>) -> String {
    let more = items.len().saturating_sub(LISTED);
    let mut named: Vec<String> = items.take(LISTED).collect();
    if more > 0 {
        named.push(format!("and {more} more"));
    }
    named.join(", ")
}

/// Names the functions of `project` that nothing calls and that hold findings.
fn render_uncalled(out: &mut String, project: &ProjectOutcome, indent: &str, paint: Paint) {
    let functions = uncalled_functions(project);
    if functions.is_empty() {
        return;
    }
    let named = first_few(functions.iter().map(|(path, f)| format!("{} at {path}:{}", f.qualified_name(), f.first)));
    let (holds, is, its) = if functions.len() == 1 { ("holds", "is", "its") } else { ("hold", "are", "their") };
    // Autograd functions and modules are whole classes, named like functions.
    let classes = functions.iter().filter(|(_, f)| f.is_class).count();
    let what = match (classes, functions.len()) {
        (0, n) => plural(n, "function"),
        (1, 1) => "1 class".to_string(),
        (c, n) if c == n => format!("{n} classes"),
        (_, n) => format!("{n} functions and classes"),
    };
    let _ = writeln!(
        out,
        "{indent}{} {what} that {holds} findings {is} called by nothing in the project ({}), so {its} findings are \
         advice too (`--entries all` keeps their severity).",
        paint.bold("Functions:"),
        visible(&named)
    );
}

/// The functions of `project` that nothing calls and that hold findings, by path and line.
pub fn uncalled_functions(project: &ProjectOutcome) -> Vec<(&str, &crate::project::uncalled::Function)> {
    let mut functions: Vec<(&str, &crate::project::uncalled::Function)> =
        project.launches.uncalled.iter().flat_map(|(path, fs)| fs.iter().map(move |f| (path.as_str(), f))).collect();
    functions.sort_by_key(|(path, f)| (*path, f.first));
    functions
}

/// Writes the verdict on `findings` (those of `project`, or of the whole
/// scan), indented by `indent`, with the blockers listed; returns the step
/// that turns automatic migration on, when it is worth taking ([`turn_on_step`]).
fn render_verdict(
    out: &mut String,
    report: &Report,
    project: Option<&ProjectOutcome>,
    findings: &[&Finding],
    indent: &str,
    paint: Paint,
) -> Option<String> {
    let v = verdict(findings.iter().copied());
    let imported = project.and_then(|p| p.transfer_imports.first());
    let unmigrated = project.map_or(&[][..], |p| p.migration.unmigrated_entries.as_slice());
    if v.blockers == 0 {
        let state = match (imported, unmigrated.is_empty()) {
            (Some((path, line)), true) => {
                format!("in use (imported at {}:{line}); it handles every pattern found", visible(path))
            }
            (Some((path, line)), false) => format!(
                "in use (imported at {}:{line}); it handles every pattern found in the code that imports it",
                visible(path)
            ),
            (None, _) => "compatible: no pattern it cannot handle was found".to_string(),
        };
        let _ = writeln!(out, "{indent}{} {state}.", paint.bold(VERDICT));
    } else {
        let codes: Vec<String> = v.by_code.iter().map(|c| format!("{} x{}", c.code, c.count)).collect();
        let _ = writeln!(
            out,
            "{indent}{} {} by {} ({}): change these by hand.",
            paint.bold(VERDICT),
            paint.severity(Severity::Error, "blocked"),
            plural(v.blockers, "finding"),
            codes.join(", ")
        );
        let blockers = in_run_order(report, findings.iter().copied().filter(|f| f.blocker));
        list(out, &blockers, &format!("{indent}  "), "marked [blocker] below");
    }
    turn_on_step(project, findings, v.blockers)
}

/// The step that turns automatic migration on for `findings` (those of
/// `project`, or of the whole scan), which have `blockers` blockers, when it
/// is worth taking.
fn turn_on_step(project: Option<&ProjectOutcome>, findings: &[&Finding], blockers: usize) -> Option<String> {
    let imported = project.and_then(|p| p.transfer_imports.first());
    let unmigrated = project.map_or(&[][..], |p| p.migration.unmigrated_entries.as_slice());
    // Whoever chose manual migration on purpose is not told to turn automatic migration on.
    let chose_manual = project.is_some_and(|p| {
        p.migration.style == Style::Manual && matches!(p.migration.why, Why::CommandLine | Why::Config(_))
    });
    if !unmigrated.is_empty() {
        return Some(turn_on(
            "Turn it on where it is off",
            "each entry script that runs without it",
            unmigrated.iter().map(String::as_str),
        ));
    }
    let worth_it = blockers == 0 && imported.is_none() && !findings.is_empty() && !chose_manual;
    // The scripts nothing starts need no import.
    let entries = project.map_or(Vec::new(), |p| {
        let started = |path: &&String| !p.launches.unlaunched.contains(*path);
        p.entry_scripts.iter().map(|(path, _)| path).filter(started).map(String::as_str).collect()
    });
    worth_it.then(|| turn_on("Turn it on", "each script you run", entries.into_iter()))
}

/// Where `import torch_npu` and `transfer_to_npu` go (`step`: add them at the
/// top of `which`), naming the entry scripts found.
fn turn_on<'a>(step: &str, which: &str, entries: impl Iterator<Item = &'a str>) -> String {
    let imports = "`import torch_npu` and `from torch_npu.contrib import transfer_to_npu`";
    let mut named: Vec<String> = entries.map(|path| visible(path).into_owned()).collect();
    if named.is_empty() {
        return format!("{step}: add {imports} at the top of the script you run, before the code that uses torch.");
    }
    named.dedup();
    let more = named.len().saturating_sub(LISTED);
    named.truncate(LISTED);
    if more > 0 {
        named.push(format!("and {more} more"));
    }
    format!("{step}: add {imports} at the top of {which} ({}).", named.join(", "))
}

/// `findings` (in report order) in the order a run meets them: first where
/// their rules stop a run (imports, device, process group, then the rest;
/// each rule's `breaks_at`); within that, code at a module's top level,
/// which runs when it is imported or started, before code in functions;
/// then in report order.
fn in_run_order<'f>(report: &Report, findings: impl Iterator<Item = &'f Finding>) -> Vec<&'f Finding> {
    let breaks_at = |f: &Finding| report.engine.set.rule(&f.code).map_or(BreaksAt::Step, |r| r.breaks_at);
    let mut ordered: Vec<&Finding> = findings.collect();
    ordered.sort_by_key(|f| (breaks_at(f), !f.at_module_level));
    ordered
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

/// Why the findings of code that nothing runs are advice, each reason that
/// some of them have, in a fixed order: "nothing calls it, or it is a test an
/// NPU host skips".
fn why_nothing_runs(findings: &[Finding]) -> String {
    let reasons: [(&[Advice], &str); 8] = [
        (&[Advice::UnlaunchedFile, Advice::UnlaunchedMain], "no launch script starts it"),
        (&[Advice::UntakenBranch], "no run takes its branch"),
        (&[Advice::UncalledFunction], "nothing calls it"),
        (&[Advice::UnselectedClass], "no configuration selects its class"),
        (&[Advice::CudaOnlyTest], "it is a test an NPU host skips"),
        (&[Advice::OtherPlatform], "it is code for another platform"),
        (&[Advice::CudaBackendFile], "it is a CUDA backend with an NPU twin"),
        (&[Advice::GeneratorSource], "it is the source of a generated file"),
    ];
    let said: Vec<&str> = reasons
        .iter()
        .filter(|(kinds, _)| findings.iter().any(|f| f.unlaunched && f.advice.is_some_and(|a| kinds.contains(&a))))
        .map(|(_, text)| *text)
        .collect();
    match said.split_last() {
        None => "no run reaches it".to_string(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{}, or {last}", rest.join(", ")),
    }
}
