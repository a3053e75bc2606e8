//! The rule facts of a whole scan: which facts hold somewhere in each
//! project, which hold in the process of a file (the file and the project
//! modules it imports), and which files a project or a project with a
//! marker around it names (an outer `nvcc` line compiles a nested
//! project's kernel). A finding whose
//! rule asks about them (`project_has`, `process_imports`,
//! `named_in_project`) is kept only where they hold.

use crate::analysis::KeptOutcome;
use crate::rules::engine::Engine;
use crate::rules::model::{Scope, NAMED_UNCONDITIONALLY};
use crate::semantic::named_files::Names;
use crate::walk::{FileKind, ScanFile, WalkResult};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::named_files::NamedFiles;
use super::processes;

/// The facts decided after every file is analysed: per project, which facts
/// hold in at least one of its files; per process, for the files whose
/// findings ask, which hold in the file or a module of its project that it
/// imports.
#[derive(Debug, Clone, Default)]
pub struct ScanFacts {
    /// By project, then fact.
    projects: Vec<Vec<bool>>,
    /// By the display path of a file whose findings have process conditions, then fact.
    processes: HashMap<String, Vec<bool>>,
    /// By project, the file names its files spell out.
    named: Vec<NamedFiles>,
    /// By project, the project with a marker that it is nested in, if any.
    enclosing: Vec<Option<usize>>,
}

impl ScanFacts {
    /// The facts of the whole scan, from `outcomes` (in the order of
    /// `walked`'s files): project facts always, process facts for the files
    /// whose findings have process conditions (their projects' import graphs
    /// are only built then).
    pub fn of(walked: &WalkResult, outcomes: &[KeptOutcome], engine: &Engine) -> Self {
        let files = &walked.files;
        let n_facts = engine.set.compiler.facts.len();
        let n_projects = outcomes.iter().map(|o| o.project() + 1).max().unwrap_or(0);
        let mut projects = vec![vec![false; n_facts]; n_projects];
        let mut names: Vec<Vec<&Names>> = vec![Vec::new(); n_projects];
        for o in outcomes {
            for (i, f) in facts_of(o).iter().enumerate() {
                projects[o.project()][i] |= *f;
            }
            names[o.project()].extend(o.facts().map(|f| &f.named_files));
        }
        // A vendored copy runs in the processes of the project that imports it,
        // so it shares that project's facts; outer projects first, so the facts
        // of a copy inside a copy come from the outermost one too.
        let vendoring = super::vendored::vendoring_projects(walked);
        let mut order: Vec<usize> = (0..n_projects).collect();
        let depth = |d: &str| if d == "." { 0 } else { 1 + d.matches('/').count() };
        order.sort_by_key(|&p| walked.projects.get(p).map_or(0, |d| depth(&d.display)));
        for p in order {
            if let Some(q) = vendoring.get(p).copied().flatten().filter(|&q| q < n_projects) {
                let outer = projects[q].clone();
                projects[p].iter_mut().zip(outer).for_each(|(f, o)| *f |= o);
            }
        }
        let named = names.into_iter().map(NamedFiles::new).collect();
        // The files whose findings ask about process facts, with the facts they ask about.
        let asking: BTreeMap<usize, BTreeSet<usize>> = outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| (i, process_facts_asked(o)))
            .filter(|(_, wanted)| !wanted.is_empty())
            .collect();
        let projects_asking: BTreeSet<usize> = asking.keys().map(|&i| files[i].project).collect();
        let mut processes = HashMap::new();
        for project in projects_asking {
            // Graph node k is outcome members[k].
            let members: Vec<usize> = (0..files.len())
                .filter(|&i| files[i].project == project && files[i].kind == FileKind::Python)
                .collect();
            let python: Vec<&ScanFile> = members.iter().map(|&i| &files[i]).collect();
            let Some(dir) = walked.projects.get(project) else { continue };
            let mut graph = processes::ImportGraph::new(python, &dir.display);
            for (k, wanted) in members.iter().enumerate().filter_map(|(k, i)| Some((k, asking.get(i)?))) {
                let mut facts = vec![false; n_facts];
                // Stops once every fact the file's findings ask about is known to hold.
                graph.search(k, |j| {
                    facts_of(&outcomes[members[j]]).iter().zip(facts.iter_mut()).for_each(|(f, all)| *all |= *f);
                    wanted.iter().all(|&f| facts[f])
                });
                processes.insert(files[members[k]].display().to_string(), facts);
            }
        }
        // A notebook imports nothing of its project: its process is itself.
        for &i in asking.keys() {
            let own = || (0..n_facts).map(|f| facts_of(&outcomes[i]).get(f).copied().unwrap_or(false)).collect();
            processes.entry(files[i].display().to_string()).or_insert_with(own);
        }
        // Only a project with a marker of its own counts as around another: a
        // directory without one (ModelZoo's `PyTorch/`, the scan root) gathers
        // unrelated ports, one of whose `glob("*.cu")` would name every kernel.
        let marked = |q: &usize| walked.projects.get(*q).is_some_and(|d| d.marker.is_some());
        let enclosing = super::vendored::enclosing_projects(walked).into_iter().map(|q| q.filter(marked)).collect();
        ScanFacts { projects, processes, named, enclosing }
    }

    /// Whether fact `fact`, in `scope`, holds for file `path` of project `project`.
    pub fn holds(&self, scope: Scope, project: usize, path: &str, fact: usize) -> bool {
        let facts = match scope {
            Scope::NamedFile => {
                // A build or `nvcc` line of a project around a nested one names its files too.
                let names = |p: usize| {
                    self.named.get(p).is_some_and(|n| match fact {
                        NAMED_UNCONDITIONALLY => n.names_unconditionally(path),
                        _ => n.names(path),
                    })
                };
                let mut around = std::iter::successors(Some(project), |&p| self.enclosing.get(p).copied().flatten());
                return around.any(names);
            }
            Scope::Process => self.processes.get(path),
            _ => self.projects.get(project),
        };
        facts.and_then(|facts| facts.get(fact)).copied().unwrap_or(false)
    }

    /// The file names that project `project`'s files spell out.
    pub fn named_files(&self, project: usize) -> Option<&NamedFiles> {
        self.named.get(project)
    }
}

/// Which facts `o` makes true, by fact index (possibly fewer than all).
fn facts_of(o: &KeptOutcome) -> &[bool] {
    o.facts().map_or(&[], |f| &f.facts)
}

/// The facts that findings of `o` ask about for the file's process.
fn process_facts_asked(o: &KeptOutcome) -> BTreeSet<usize> {
    let clauses = o.full().into_iter().flat_map(|o| o.facts.findings.iter().flat_map(|(_, c)| c));
    clauses.flatten().filter(|l| l.0 == Scope::Process).map(|l| l.1).collect()
}
