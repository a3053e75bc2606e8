//! The project layer: what holds across the files of a project, decided
//! once every file is analysed. One entry point, [`analyse`]: the walked
//! files and their per-file facts ([`crate::analysis::KeptOutcome`]) go in;
//! out come the rule facts across files ([`ScanFacts`]), each file's
//! findings once those are known ([`FileFindings`]), and per project its
//! migration style and runs: which entry scripts its launch scripts start,
//! which files, functions and branches no run reaches, which commands it
//! installs, which projects it vendors and which kernels it names.
//!
//! Where a new project fact goes: a fact a rule asks about is declared in a
//! rule pack and decided in [`facts`]; a fact about which code runs goes in
//! [`runs`] (with its own module beside [`launches`] when it needs more
//! than a few lines), and the per-file observations it needs are fields of
//! [`crate::rules::engine::FileFacts`].

mod backend_files;
pub(crate) mod configurations;
pub(crate) mod console_scripts;
mod edges;
pub(crate) mod facts;
pub(crate) mod findings;
mod generated;
pub(crate) mod ignored_launches;
pub(crate) mod imported_classes;
pub(crate) mod launches;
pub(crate) mod migration;
pub(crate) mod named_files;
pub mod named_runs;
pub(crate) mod npu_launchers;
mod other_platforms;
mod outcome;
mod outer_launches;
pub(crate) mod processes;
mod project_runs;
mod rereads;
mod run_configs;
mod runs;
pub(crate) mod uncalled;
pub(crate) mod vendored;

pub use facts::ScanFacts;
pub(crate) use findings::{file_findings, take_file_findings, FileFindings};
pub use outcome::ProjectOutcome;
pub use rereads::Rereads;
pub use runs::RunSettings;

use crate::analysis::KeptOutcome;
use crate::finding::Finding;
use crate::rules::engine::Engine;
use crate::rules::schema::SitesRole;
use crate::source::LineSet;
use crate::walk::WalkResult;
use launches::Launches;
use migration::Assumed;
use std::collections::HashMap;

/// What the project layer decided for a whole scan.
pub(crate) struct Projects {
    /// By outcome (in the order of the walked files), for a file with
    /// something to report: its findings once the facts are known.
    pub findings: Vec<Option<FileFindings>>,
    /// The projects, in walk order.
    outcomes: Vec<ProjectOutcome>,
    runs: runs::Runs,
}

impl Projects {
    /// Makes `f` advice where no run of its project executes its code, and
    /// applies its project's migration style elsewhere.
    pub(crate) fn advise(&mut self, f: &mut Finding) {
        self.runs.advise(&self.outcomes, f);
    }

    /// Each project's outcome, with the branches and tests that hold
    /// advised findings.
    pub(crate) fn finish(mut self, files_scanned: &[usize]) -> (Vec<ProjectOutcome>, Option<named_runs::RunSummary>) {
        let summary = self.runs.record(&mut self.outcomes);
        for (p, n) in self.outcomes.iter_mut().zip(files_scanned) {
            p.files_scanned = *n;
        }
        (self.outcomes, summary)
    }
}

/// Decides the project facts of a scan: `outcomes` are the walked files'
/// analyses, in walk order; what is read again of the files goes through `rereads`.
pub(crate) fn analyse(
    walked: &WalkResult,
    outcomes: &mut [KeptOutcome],
    engine: &Engine,
    settings: RunSettings,
    rereads: &Rereads,
) -> Projects {
    let facts = ScanFacts::of(walked, outcomes, engine, rereads);
    let with_findings: Vec<bool> =
        outcomes.iter().map(|o| o.full().is_some_and(|o| !o.facts.findings.is_empty())).collect();
    // The findings move out of the outcomes: `findings` holds them from here on.
    let findings: Vec<Option<FileFindings>> =
        outcomes.iter_mut().map(|o| o.full_mut().map(|o| take_file_findings(o, &facts, engine))).collect();
    let outcomes: &[KeptOutcome] = outcomes;
    let mut per_project: Vec<ProjectOutcome> = walked
        .projects
        .iter()
        .map(|p| ProjectOutcome {
            project: p.clone(),
            files_scanned: 0,
            migration: Assumed::decide(settings.migration, None),
            transfer_imports: Vec::new(),
            late_transfer_imports: Vec::new(),
            entry_scripts: Vec::new(),
            unguarded_scripts: Vec::new(),
            launches: Launches::default(),
        })
        .collect();
    // The sites of the summary lists that name a project's imports of
    // `transfer_to_npu` and its entry scripts.
    for o in outcomes.iter().filter_map(KeptOutcome::full) {
        let place = o.placer();
        for (i, line, _) in &o.facts.sites {
            let role = engine.set.sites.get(*i).and_then(|s| s.role);
            let listed = match (role, per_project.get_mut(o.project)) {
                (Some(SitesRole::AutomaticMigration), Some(p)) => &mut p.transfer_imports,
                (Some(SitesRole::LateAutomaticMigration), Some(p)) => &mut p.late_transfer_imports,
                (Some(SitesRole::EntryScripts), Some(p)) => &mut p.entry_scripts,
                (Some(SitesRole::UnguardedScripts), Some(p)) => &mut p.unguarded_scripts,
                _ => continue,
            };
            listed.push(place(*line));
        }
    }
    // The lines of the findings by file: functions that hold some are looked for callers.
    let mut by_path: HashMap<&str, Vec<usize>> = HashMap::new();
    for f in findings.iter().flatten().flat_map(|f| &f.kept) {
        by_path.entry(f.path.as_str()).or_default().push(f.line);
    }
    let finding_lines: HashMap<&str, LineSet> = by_path.into_iter().map(|(p, l)| (p, LineSet::new(l))).collect();
    let inputs = runs::ScanInputs {
        walked,
        outcomes,
        with_findings: &with_findings,
        facts: &facts,
        finding_lines: &finding_lines,
    };
    let runs = runs::Runs::decide(&mut per_project, inputs, settings, rereads);
    Projects { findings, outcomes: per_project, runs }
}
