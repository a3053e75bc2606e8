//! Which code of a project its runs execute, and so which findings are
//! advice: files in no started process ([`super::launches`]), functions
//! nothing calls ([`super::uncalled`]), branches no launch takes
//! ([`super::configurations`]), tests an NPU host skips
//! ([`crate::semantic::cuda_only`]), sources of generated files
//! ([`super::generated`]), and, per file, whether
//! `transfer_to_npu` runs in its process ([`super::processes`]).

use super::backend_files;
use super::configurations::Untaken;
use super::facts::ScanFacts;
use super::generated;
use super::migration::Style;
use super::named_runs::{self, RunSummary};
use super::other_platforms;
use super::outcome::ProjectOutcome;
use super::outer_launches;
use super::project_runs::{Member, ProjectFiles, ProjectInputs};
use super::rereads::Rereads;
use crate::analysis::KeptOutcome;
use crate::config::{Entries, Migration, Setting};
use crate::finding::{Advice, Finding, Severity};
use crate::source::LineSet;
use crate::walk::WalkResult;
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The settings that decide which code runs and how it is migrated.
#[derive(Clone, Copy)]
pub struct RunSettings<'a> {
    /// The migration style to assume.
    pub migration: &'a Setting<Migration>,
    /// Which entry scripts count as run.
    pub entries: Entries,
    /// What the runs the user names start ([`named_runs::start`]), if any are named.
    pub named: Option<&'a named_runs::Started>,
}

/// What the scan found that deciding the runs reads.
#[derive(Clone, Copy)]
pub(super) struct ScanInputs<'a> {
    pub walked: &'a WalkResult,
    /// The walked files' analyses, in walk order.
    pub outcomes: &'a [KeptOutcome],
    /// By outcome: whether its analysis found anything (before project conditions).
    pub with_findings: &'a [bool],
    pub facts: &'a ScanFacts,
    /// By display path, the lines of each file's findings.
    pub finding_lines: &'a HashMap<&'a str, LineSet>,
}

/// What decides, finding by finding, whether code runs and how it is migrated.
pub(super) struct Runs {
    entries: Entries,
    /// By project, then display path: the branches no run of its launch scripts takes.
    untaken_branches: Vec<HashMap<String, Vec<Untaken>>>,
    /// Files that run without `transfer_to_npu` in a project on automatic migration.
    unmigrated_files: HashSet<String>,
    /// Files whose process imports `transfer_to_npu` only inside a function:
    /// what they run at import time runs before it.
    late_files: HashSet<String>,
    /// By file, the line of its first module-level `transfer_to_npu` import:
    /// module-level code above it runs before it.
    import_lines: HashMap<String, usize>,
    /// By file with findings, its module-level `def` and `class` lines.
    definitions: HashMap<String, Vec<(usize, usize)>>,
    /// Files that no started process runs.
    unlaunched_files: HashSet<String>,
    /// Files in a directory for another platform that no started run imports.
    other_platform_files: HashSet<String>,
    /// CUDA backend files with an NPU twin ([`backend_files`]).
    cuda_backend_files: HashSet<String>,
    /// By display path, the tests that run only where CUDA is.
    cuda_only_tests: HashMap<String, Vec<(usize, usize)>>,
    /// Files another file says it was generated from ([`generated`]).
    generator_sources: HashSet<String>,
    /// The branches no launch takes that hold findings, by project, for the report.
    untaken: BTreeSet<(usize, String, Untaken)>,
    /// The tests an NPU host skips that hold findings, by project, for the report.
    skipped: BTreeSet<(usize, String, usize)>,
    /// With runs the user names: what they reach.
    named: Option<NamedReach>,
}

/// What the runs the user names reach, by display path.
struct NamedReach {
    /// The files none of them reaches.
    unreached: HashSet<String>,
    /// In reached files, the registered classes no configuration of theirs selects.
    unselected: HashMap<String, Vec<(usize, usize)>>,
    /// What the report says of them.
    summary: RunSummary,
}

impl Runs {
    /// Decides the runs of every project: its migration style, which of its
    /// files run without `transfer_to_npu` or in no started process (both
    /// from the project's import graph, read once and only when needed), and
    /// which branches no launch takes. Only functions and branches that
    /// hold findings (`scan.finding_lines`) are looked at.
    pub(super) fn decide(
        per_project: &mut [ProjectOutcome],
        scan: ScanInputs,
        settings: RunSettings,
        rereads: &Rereads,
    ) -> Self {
        let ScanInputs { walked, outcomes, with_findings, facts, finding_lines } = scan;
        let RunSettings { migration, entries, named } = settings;
        // Named runs say which scripts start; without them the project's texts tell.
        let guessing = named.is_none() && entries == Entries::Launched;
        let from_outside = match guessing {
            true => {
                let scripts = |p: &ProjectOutcome| -> BTreeSet<String> {
                    p.entry_scripts.iter().chain(&p.unguarded_scripts).map(|s| s.0.clone()).collect()
                };
                let by_project: Vec<BTreeSet<String>> = per_project.iter().map(scripts).collect();
                outer_launches::started_from_outside(walked, &by_project)
            }
            false => Vec::new(),
        };
        // The scripts the named runs start, by project.
        let mut named_scripts: Vec<BTreeSet<String>> = vec![BTreeSet::new(); per_project.len()];
        for f in named.iter().flat_map(|s| &s.scripts).filter_map(|&i| walked.files.get(i)) {
            named_scripts.get_mut(f.project).into_iter().for_each(|n| _ = n.insert(f.display().into_owned()));
        }
        let (mut cuda_only_tests, mut definitions) = (HashMap::new(), HashMap::new());
        for (o, with_findings) in outcomes.iter().zip(with_findings).filter_map(|(o, w)| Some((o.full()?, *w))) {
            if !o.facts.cuda_only_tests.is_empty() {
                cuda_only_tests.insert(o.path.to_string(), o.facts.cuda_only_tests.clone());
            }
            if o.notebook.is_none() && with_findings {
                definitions.insert(o.path.to_string(), o.facts.module_level_defs.clone());
            }
        }
        let mut members_by_project: Vec<Vec<Member>> = vec![Vec::new(); per_project.len()];
        for (f, o) in walked.files.iter().zip(outcomes) {
            members_by_project.get_mut(f.project).into_iter().for_each(|members| members.push((f, o)));
        }
        let inputs = ProjectInputs {
            migration,
            entries,
            named,
            guessing,
            walked,
            members_by_project: &members_by_project,
            facts,
            from_outside: &from_outside,
            named_scripts: &named_scripts,
            finding_lines,
            rereads,
        };
        // Projects are decided side by side; what each adds is merged in project order.
        let decided: Vec<ProjectFiles> =
            per_project.par_iter_mut().enumerate().map(|(i, p)| inputs.decide(i, p)).collect();
        let (mut unmigrated_files, mut unlaunched_files) = (HashSet::new(), HashSet::new());
        let mut other_platform_files = HashSet::new();
        let (mut late_files, mut import_lines) = (HashSet::new(), HashMap::new());
        let mut untaken_branches = Vec::with_capacity(decided.len());
        for d in decided {
            untaken_branches.push(d.untaken_branches);
            unmigrated_files.extend(d.unmigrated);
            late_files.extend(d.late);
            for (path, line) in d.import_lines {
                import_lines.entry(path).or_insert(line);
            }
            unlaunched_files.extend(d.unlaunched);
            other_platform_files.extend(d.other_platform);
        }
        if guessing {
            let launching: Vec<bool> = per_project.iter().map(|p| !p.launches.launched.is_empty()).collect();
            let nested = other_platforms::nested(walked, &launching);
            let deployed = walked.files.iter().filter(|f| nested.get(f.project) == Some(&true));
            other_platform_files.extend(deployed.map(|f| f.display().into_owned()));
        }
        let named = named.map(|started| {
            let reach = named_runs::reach(started, walked, rereads);
            let shown = |i: usize| walked.files[i].display().into_owned();
            let unreached = reach.reached.iter().enumerate().filter(|(_, r)| !**r).map(|(i, _)| shown(i)).collect();
            let unselected = reach.unselected.iter().map(|(&i, lines)| (shown(i), lines.clone())).collect();
            let with_findings = |path: &str| finding_lines.contains_key(path);
            NamedReach { unreached, unselected, summary: RunSummary::of(started, &reach, walked, &with_findings) }
        });
        Runs {
            entries,
            untaken_branches,
            unmigrated_files,
            late_files,
            import_lines,
            definitions,
            unlaunched_files,
            other_platform_files,
            // Like directories for another platform: the automatic guess only
            // (named runs decide by reach, `--entries all` runs everything).
            cuda_backend_files: if guessing { backend_files::cuda_files_with_npu_twin(walked) } else { HashSet::new() },
            cuda_only_tests,
            generator_sources: generated::sources(walked, outcomes),
            untaken: BTreeSet::new(),
            skipped: BTreeSet::new(),
            named,
        }
    }

    /// Makes `f` advice where no process runs its code (a file nothing
    /// starts, a function nothing calls, the `__main__` block of a script
    /// nothing starts, a branch no launch takes, a test an NPU host skips);
    /// elsewhere applies its project's migration style.
    pub(super) fn advise(&mut self, per_project: &[ProjectOutcome], f: &mut Finding) {
        let project = per_project.get(f.project);
        let in_file = self.untaken_branches.get(f.project).and_then(|p| p.get(f.path.as_str()));
        let branch = in_file.and_then(|bs| bs.iter().find(|b| (b.lines.0..=b.lines.1).contains(&f.line)));
        if let Some(b) = branch {
            self.untaken.insert((f.project, f.path.to_string(), b.clone()));
        }
        let test = self.skipped_test(project, f);
        if let Some(line) = test {
            self.skipped.insert((f.project, f.path.to_string(), line));
        }
        let unreached = self.named.as_ref().map(|n| n.unreached.contains(f.path.as_str()));
        let in_class = |(first, last): &(usize, usize)| (*first..=*last).contains(&f.line) && f.cell.is_none();
        let unselected = self
            .named
            .as_ref()
            .and_then(|n| n.unselected.get(f.path.as_str()))
            .is_some_and(|ls| ls.iter().any(in_class));
        f.reached = unreached.map(|u| !u && !unselected);
        f.at_module_level = self.at_module_level(f);
        let unlaunched = if unreached == Some(true) {
            Some(Advice::Unreached)
        } else if unselected {
            Some(Advice::UnselectedClass)
        } else if self.unlaunched_files.contains(f.path.as_str()) {
            Some(Advice::UnlaunchedFile)
        } else if self.other_platform_files.contains(f.path.as_str()) {
            Some(Advice::OtherPlatform)
        } else if self.cuda_backend_files.contains(f.path.as_str()) {
            Some(Advice::CudaBackendFile)
        } else if unreached.is_none() && self.generator_sources.contains(f.path.as_str()) {
            // (A named run that reaches the source imports it: then it runs.)
            Some(Advice::GeneratorSource)
        } else {
            nothing_runs(project, f).or(branch.map(|_| Advice::UntakenBranch)).or(test.map(|_| Advice::CudaOnlyTest))
        };
        if let Some(reason) = unlaunched {
            // Code that no process runs blocks nothing either.
            (f.unlaunched, f.blocker, f.severity, f.advice) = (true, false, Severity::Info, Some(reason));
        } else if let Some(p) = project {
            let unmigrated = self.unmigrated_files.contains(f.path.as_str()) || self.runs_before_migration(f);
            p.migration.apply(f, unmigrated);
        }
    }

    /// Whether `f` runs before `transfer_to_npu` patches torch in its
    /// process: module-level code (outside every `def` and `class`) above
    /// the file's own module-level import, or anywhere in a file whose
    /// process imports it only inside a function.
    fn runs_before_migration(&self, f: &Finding) -> bool {
        let path = f.path.as_str();
        let above_import = self.import_lines.get(path).is_some_and(|&line| f.line < line);
        f.at_module_level && (above_import || self.late_files.contains(path))
    }

    /// Whether `f` lies outside every module-level `def` and `class` of its
    /// Python file (a notebook's cells, a shell script: no).
    fn at_module_level(&self, f: &Finding) -> bool {
        let Some(defs) = self.definitions.get(f.path.as_str()).filter(|_| f.cell.is_none()) else { return false };
        !defs.iter().any(|(first, last)| (*first..=*last).contains(&f.line))
    }

    /// The test around `f` that an NPU host skips, by the line of its `def`:
    /// without `transfer_to_npu` CUDA is never available there.
    fn skipped_test(&self, project: Option<&ProjectOutcome>, f: &Finding) -> Option<usize> {
        let without_transfer = project.is_some_and(|p| p.migration.style != Style::Automatic)
            || self.unmigrated_files.contains(f.path.as_str());
        let tests =
            self.cuda_only_tests.get(f.path.as_str()).filter(|_| self.entries == Entries::Launched && without_transfer);
        tests.and_then(|ts| ts.iter().find(|t| (t.0..=t.1).contains(&f.line))).map(|t| t.0)
    }

    /// Records, in each project's launches, the untaken branches and skipped
    /// tests that hold findings; gives what the report says of the named runs.
    pub(super) fn record(self, per_project: &mut [ProjectOutcome]) -> Option<RunSummary> {
        for (project, path, branch) in self.untaken {
            if let Some(p) = per_project.get_mut(project) {
                p.launches.untaken.push((path, branch));
            }
        }
        for (project, path, line) in self.skipped {
            if let Some(p) = per_project.get_mut(project) {
                p.launches.cuda_only_tests.push((path, line));
            }
        }
        self.named.map(|n| n.summary)
    }
}

/// Whether `f` lies in a function nothing calls, or in the `__main__` block
/// of a script nothing starts, and which.
fn nothing_runs(project: Option<&ProjectOutcome>, f: &Finding) -> Option<Advice> {
    let launches = project.map(|p| &p.launches);
    let functions = launches.and_then(|l| l.uncalled.get(f.path.as_str()));
    let main_block = launches.and_then(|l| l.main_blocks.get(f.path.as_str()));
    // In line order, without overlaps (module-level functions): the last one starting at or before the line.
    let within = |fs: &Vec<crate::project::uncalled::Function>| {
        let at = fs.partition_point(|u| u.first <= f.line);
        at > 0 && fs[at - 1].holds(f.line)
    };
    if functions.is_some_and(within) {
        Some(Advice::UncalledFunction)
    } else {
        main_block.is_some_and(|(first, last)| (*first..=*last).contains(&f.line)).then_some(Advice::UnlaunchedMain)
    }
}
