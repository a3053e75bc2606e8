//! One project's runs, decided on its own so that projects are decided
//! side by side ([`super::runs::Runs::decide`] merges them in project
//! order): the launch lines its scripts reject, the branches no launch
//! takes, its migration style and what its launches start.

use super::configurations::{self, Untaken};
use super::facts::ScanFacts;
use super::ignored_launches::{self, Ignored};
use super::launches::{self, EntryScripts};
use super::migration::Assumed;
use super::named_files::NamedFiles;
use super::named_runs;
use super::outcome::ProjectOutcome;
use super::processes;
use super::rereads::Rereads;
use crate::analysis::KeptOutcome;
use crate::config::{Entries, Migration, Setting};
use crate::semantic::launch_lines::Launch;
use crate::semantic::option_defs;
use crate::semantic::options::Gate;
use crate::source::LineSet;
use crate::walk::{FileKind, ScanFile, WalkResult};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap, HashSet};

/// A file of a project with its analysis.
pub(super) type Member<'a> = (&'a ScanFile, &'a KeptOutcome);

/// What deciding one project reads.
pub(super) struct ProjectInputs<'a> {
    pub migration: &'a Setting<Migration>,
    pub entries: Entries,
    /// What the runs the user names start, if any are named.
    pub named: Option<&'a named_runs::Started>,
    /// Whether the project's texts say which scripts start (no named runs, `--entries launched`).
    pub guessing: bool,
    pub walked: &'a WalkResult,
    /// By project, its files with their analyses.
    pub members_by_project: &'a [Vec<Member<'a>>],
    pub facts: &'a ScanFacts,
    /// By project, its scripts that a project around it starts (when guessing).
    pub from_outside: &'a [BTreeSet<String>],
    /// By project, the scripts the named runs start.
    pub named_scripts: &'a [BTreeSet<String>],
    /// By display path, the lines of each file's findings.
    pub finding_lines: &'a HashMap<&'a str, LineSet>,
    pub rereads: &'a Rereads,
}

/// What deciding one project adds to the scan's files and branches
/// (`Runs`, in [`super::runs`], says what each holds).
#[derive(Default)]
pub(super) struct ProjectFiles {
    pub untaken_branches: HashMap<String, Vec<Untaken>>,
    pub unmigrated: HashSet<String>,
    pub late: HashSet<String>,
    pub import_lines: Vec<(String, usize)>,
    pub unlaunched: HashSet<String>,
    pub other_platform: HashSet<String>,
}

impl ProjectInputs<'_> {
    /// Decides project `i`, `p`: the launch lines its started scripts reject
    /// (they start nothing and give no options), the branches no launch
    /// takes, its migration style and its launches.
    pub(super) fn decide(&self, i: usize, p: &mut ProjectOutcome) -> ProjectFiles {
        let (members, rereads) = (&self.members_by_project[i][..], self.rereads);
        let ignored = self.guessing.then(|| ignored_launches::in_project(members, rereads));
        let dir = p.project.display.as_str();
        let untaken_branches = match (self.named, &ignored, self.entries) {
            (Some(s), _, Entries::Launched) => untaken_in(members, dir, RunLaunches::Named(&s.launches), rereads),
            (None, Some(ignored), _) => untaken_in(members, dir, RunLaunches::Read(ignored), rereads),
            _ => HashMap::new(),
        };
        let out = self.launches(i, p, ignored.as_ref());
        if let Some(ignored) = ignored {
            p.launches.ignored = ignored.lines;
        }
        ProjectFiles { untaken_branches, ..out }
    }

    /// Project `i`'s migration style and launches, `ignored` its rejected launch lines.
    fn launches(&self, i: usize, p: &mut ProjectOutcome, ignored: Option<&Ignored>) -> ProjectFiles {
        let mut out = ProjectFiles::default();
        p.transfer_imports.sort();
        p.late_transfer_imports.sort();
        p.entry_scripts.sort();
        p.unguarded_scripts.sort();
        let imports = p.transfer_imports.iter().chain(&p.late_transfer_imports);
        let first = imports.min().map(|(path, line)| (path.as_str(), *line));
        p.migration = Assumed::decide(self.migration, first);
        let paths = |sites: &[(String, usize)]| -> BTreeSet<String> { sites.iter().map(|(p, _)| p.clone()).collect() };
        let (importers, entry_paths) = (paths(&p.transfer_imports), paths(&p.entry_scripts));
        let files: Vec<&ScanFile> = self.members_by_project[i].iter().map(|&(f, _)| f).collect();
        let mut graph = processes::LazyGraph::new(&files, &p.project.display, self.rereads);
        if p.migration.detected_automatic() {
            let all_importers: BTreeSet<String> = importers.union(&paths(&p.late_transfer_imports)).cloned().collect();
            let found = processes::unmigrated(&mut graph, &all_importers, &entry_paths);
            if !p.late_transfer_imports.is_empty() {
                // Migrated, but only once a function that imports it runs.
                let early = processes::unmigrated(&mut graph, &importers, &entry_paths);
                out.late.extend(early.files.difference(&found.files).cloned());
            }
            p.migration.unmigrated_entries = found.entries;
            out.unmigrated = found.files;
            out.import_lines = p.transfer_imports.clone();
        }
        let no_names = NamedFiles::default();
        let shell_names = self.facts.named_files(i).or(self.named.map(|_| &no_names));
        let (Entries::Launched, Some(shell_names)) = (self.entries, shell_names) else { return out };
        let no_scripts = BTreeSet::new();
        let unguarded = paths(&p.unguarded_scripts);
        let scripts = EntryScripts {
            guarded: &entry_paths,
            unguarded: &unguarded,
            only_ignored_launches: ignored.map_or(&no_scripts, |g| &g.only_by_them),
            started_from_outside: self.from_outside.get(i).unwrap_or(&no_scripts),
            named: self.named.map(|_| &self.named_scripts[i]),
        };
        let (dir, excluded) = (&p.project.display, &self.walked.excluded);
        p.launches = launches::find(&files, dir, excluded, scripts, shell_names, &mut graph, self.finding_lines);
        out.unlaunched = std::mem::take(&mut p.launches.files);
        out.other_platform = std::mem::take(&mut p.launches.other_platform);
        // A script nothing starts needs no `transfer_to_npu` either.
        let unlaunched = &p.launches.unlaunched;
        p.migration.unmigrated_entries.retain(|e| !unlaunched.contains(e));
        out
    }
}

/// Where the options of a project's runs come from.
#[derive(Clone, Copy)]
enum RunLaunches<'a> {
    /// The launch lines of the project's shell scripts, but those that start no run.
    Read(&'a Ignored),
    /// The launch lines of the named runs.
    Named(&'a [Launch]),
}

/// The branches around the findings of `o` that test options.
fn gates_of(o: &KeptOutcome) -> &[Gate] {
    o.full().map_or(&[], |o| &o.facts.gates)
}

/// The branches of the project of `members`, in directory `dir`, that no
/// run of its launch scripts takes. Only a project whose launch scripts
/// start some of its scripts and that has findings in branches that test
/// options is looked at; its Python files are read again then, for the
/// options they define.
fn untaken_in(members: &[Member], dir: &str, runs: RunLaunches, rereads: &Rereads) -> HashMap<String, Vec<Untaken>> {
    let members = || members.iter().copied();
    let gates: Vec<(String, &[Gate])> = members()
        .filter(|(_, o)| !gates_of(o).is_empty())
        .map(|(f, o)| (f.display().into_owned(), gates_of(o)))
        .collect();
    if gates.is_empty() {
        return HashMap::new();
    }
    let python: Vec<&ScanFile> = members().map(|(f, _)| f).filter(|f| f.kind == FileKind::Python).collect();
    let paths: Vec<String> = python.iter().map(|f| f.display().into_owned()).collect();
    let launches: Vec<&Launch> = match runs {
        RunLaunches::Read(ignored) => members()
            .flat_map(|(f, o)| o.adds().map_or(&[][..], |a| &a.launches).iter().map(move |l| (f, l)))
            .filter(|(f, l)| !ignored.holds(&f.display(), l))
            .map(|(_, l)| l)
            .collect(),
        RunLaunches::Named(launches) => launches.iter().collect(),
    };
    let launches: Vec<&Launch> = launches.into_iter().filter(|l| paths.iter().any(|p| l.starts(p))).collect();
    if launches.is_empty() {
        return HashMap::new();
    }
    // What each launch's process runs: its script and the modules it imports;
    // kept as which launches reach each file with gates, and whether any reaches a file.
    let node: HashMap<&str, usize> = paths.iter().enumerate().map(|(i, p)| (p.as_str(), i)).collect();
    let gated: HashMap<usize, usize> =
        gates.iter().enumerate().filter_map(|(k, (path, _))| Some((*node.get(path.as_str())?, k))).collect();
    let mut reaching: Vec<Vec<usize>> = vec![Vec::new(); gates.len()];
    let mut run_anywhere = vec![false; paths.len()];
    let mut graph = processes::ImportGraph::new(python.clone(), dir, rereads);
    for (i, launch) in launches.iter().enumerate() {
        let roots: Vec<usize> = (0..paths.len()).filter(|&j| launch.starts(&paths[j])).collect();
        let seen = processes::reachable_in(&mut graph, &roots);
        for j in (0..paths.len()).filter(|&j| seen[j]) {
            run_anywhere[j] = true;
            gated.get(&j).into_iter().for_each(|&k| reaching[k].push(i));
        }
    }
    // Only what the launched processes run defines their options.
    let definitions: Vec<option_defs::Definitions> = (0..python.len())
        .into_par_iter()
        .filter(|&j| run_anywhere[j])
        .filter_map(|j| rereads.option_definitions(python[j]).as_ref().clone())
        .filter(|d| !d.is_empty())
        .collect();
    let gates: Vec<(&str, &[Gate], &[usize])> =
        gates.iter().zip(&reaching).map(|((p, g), r)| (p.as_str(), *g, r.as_slice())).collect();
    configurations::untaken(&gates, &definitions, &launches)
}
