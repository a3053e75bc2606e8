//! The rule facts of a whole scan: which facts hold somewhere in each
//! project, which hold in the process of a file (the file and the project
//! modules it imports), which hold in the modules loaded with a file (those
//! importing it, and library modules), which files a project or a project
//! with a marker around it names (an outer `nvcc` line compiles a nested
//! project's kernel), and which files the project loads only inside a `try`
//! catching `ImportError`. A finding whose rule asks about them
//! (`project_has`, `process_imports`, `loaded_with`, `named_in_project`,
//! `loaded_only_guarded`) is kept only where they hold.

use crate::analysis::KeptOutcome;
use crate::rules::engine::Engine;
use crate::rules::model::{Scope, NAMED_UNCONDITIONALLY};
use crate::semantic::named_files::Names;
use crate::walk::{FileKind, ScanFile, WalkResult};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::named_files::NamedFiles;
use super::processes;
use super::rereads::Rereads;

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
    /// By the display path of a file whose findings ask about the modules loaded with it, then fact.
    loaded: HashMap<String, Vec<bool>>,
    /// By project, the file names its files spell out.
    named: Vec<NamedFiles>,
    /// By project, the project with a marker that it is nested in, if any.
    enclosing: Vec<Option<usize>>,
    /// The display paths of the files, among those whose findings ask
    /// ([`Scope::Importers`]), that their project loads only inside a `try`
    /// catching `ImportError`.
    loaded_only_guarded: HashSet<String>,
}

impl ScanFacts {
    /// The facts of the whole scan, from `outcomes` (in the order of
    /// `walked`'s files): project facts always, process facts for the files
    /// whose findings have process conditions (their projects' import graphs
    /// are only built then).
    pub fn of(walked: &WalkResult, outcomes: &[KeptOutcome], engine: &Engine, rereads: &Rereads) -> Self {
        let files = &walked.files;
        let n_facts = engine.set.compiler.facts.len();
        let n_projects = outcomes.iter().map(|o| o.project() + 1).max().unwrap_or(0);
        let mut projects = vec![vec![false; n_facts]; n_projects];
        let mut names: Vec<Vec<&Names>> = vec![Vec::new(); n_projects];
        for o in outcomes {
            for (i, f) in facts_of(o).iter().enumerate() {
                projects[o.project()][i] |= *f;
            }
            names[o.project()].extend(o.adds().map(|a| &a.named_files));
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
            .map(|(i, o)| (i, facts_asked(o, Scope::Process)))
            .filter(|(_, wanted)| !wanted.is_empty())
            .collect();
        let projects_asking: BTreeSet<usize> = asking.keys().map(|&i| files[i].project).collect();
        let mut processes = HashMap::new();
        for project in projects_asking {
            // Graph node k is outcome members[k].
            let (members, python) = python_of(files, project);
            let Some(dir) = walked.projects.get(project) else { continue };
            let mut graph = processes::ImportGraph::new(python, &dir.display, rereads);
            for (k, wanted) in members.iter().enumerate().filter_map(|(k, i)| Some((k, asking.get(i)?))) {
                let mut facts = vec![false; n_facts];
                // Stops once every fact the file's findings ask about is known to hold.
                graph.search(&[k], |j| {
                    facts_of(&outcomes[members[j]]).iter().zip(facts.iter_mut()).for_each(|(f, all)| *all |= *f);
                    wanted.iter().all(|&f| facts[f])
                });
                processes.insert(files[members[k]].display().to_string(), facts);
            }
        }
        // A notebook imports nothing of its project: its process is itself.
        for &i in asking.keys() {
            processes.entry(files[i].display().to_string()).or_insert_with(|| all_facts_of(&outcomes[i], n_facts));
        }
        let (loaded, loaded_only_guarded) = whole_graph_facts(walked, outcomes, &projects, &vendoring, rereads);
        // Only a project with a marker of its own counts as around another: a
        // directory without one (ModelZoo's `PyTorch/`, the scan root) gathers
        // unrelated ports, one of whose `glob("*.cu")` would name every kernel.
        let marked = |q: &usize| walked.projects.get(*q).is_some_and(|d| d.marker.is_some());
        let enclosing = super::vendored::enclosing_projects(walked).into_iter().map(|q| q.filter(marked)).collect();
        ScanFacts { projects, processes, loaded, named, enclosing, loaded_only_guarded }
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
            Scope::Importers => return self.loaded_only_guarded.contains(path),
            Scope::Process => self.processes.get(path),
            Scope::LoadedWith => self.loaded.get(path),
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
    o.adds().map_or(&[], |a| &a.facts)
}

/// The Python files of project `project`: their indexes in `files`, and the files.
pub(super) fn python_of(files: &[ScanFile], project: usize) -> (Vec<usize>, Vec<&ScanFile>) {
    let members: Vec<usize> =
        (0..files.len()).filter(|&i| files[i].project == project && files[i].kind == FileKind::Python).collect();
    let python = members.iter().map(|&i| &files[i]).collect();
    (members, python)
}

/// Which of `n_facts` facts `o` makes true, every one of them given.
fn all_facts_of(o: &KeptOutcome, n_facts: usize) -> Vec<bool> {
    (0..n_facts).map(|f| facts_of(o).get(f).copied().unwrap_or(false)).collect()
}

/// The facts of `scope` that findings of `o` ask about.
fn facts_asked(o: &KeptOutcome, scope: Scope) -> BTreeSet<usize> {
    let clauses = o.full().into_iter().flat_map(|o| o.facts.findings.iter().flat_map(|(_, c)| c));
    clauses.flatten().filter(|l| l.0 == scope).map(|l| l.1).collect()
}

/// The facts that need a project's whole import graph, each project's
/// graph read once for both: by display path, the facts of the modules
/// loaded with each file that asks ([`loaded_with`]), and the files that
/// their project loads only inside a `try` catching `ImportError`
/// ([`processes::loaded_only_guarded`]). `projects` holds the project
/// facts and `vendoring` the project that imports each vendored copy.
fn whole_graph_facts(
    walked: &WalkResult,
    outcomes: &[KeptOutcome],
    projects: &[Vec<bool>],
    vendoring: &[Option<usize>],
    rereads: &Rereads,
) -> (HashMap<String, Vec<bool>>, HashSet<String>) {
    let files = &walked.files;
    let n_facts = projects.first().map_or(0, Vec::len);
    // The files whose findings ask, with the facts they ask about.
    let asking_loaded: BTreeMap<usize, BTreeSet<usize>> = (0..outcomes.len())
        .map(|i| (i, facts_asked(&outcomes[i], Scope::LoadedWith)))
        .filter(|(_, wanted)| !wanted.is_empty())
        .collect();
    let asking_guarded: BTreeSet<usize> =
        (0..outcomes.len()).filter(|&i| !facts_asked(&outcomes[i], Scope::Importers).is_empty()).collect();
    let asking_projects: BTreeSet<usize> =
        asking_loaded.keys().chain(&asking_guarded).map(|&i| files[i].project).collect();
    let (mut loaded, mut guarded) = (HashMap::new(), HashSet::new());
    for project in asking_projects {
        let Some(dir) = walked.projects.get(project) else { continue };
        // Graph node k is file members[k].
        let (members, python) = python_of(files, project);
        let graph = processes::ProjectGraph::new(&python, &dir.display, rereads);
        let outer = vendoring.get(project).copied().flatten().and_then(|q| projects.get(q));
        let project = ProjectOf { files, outcomes, members: &members, graph: &graph };
        project.loaded_with(&asking_loaded, outer, n_facts, &mut loaded);
        let nodes: Vec<usize> = (0..members.len()).filter(|k| asking_guarded.contains(&members[*k])).collect();
        if !nodes.is_empty() {
            let answers = processes::loaded_only_guarded(&graph, rereads, &nodes);
            let paths = nodes.iter().zip(answers).filter(|(_, g)| *g).map(|(&k, _)| files[members[k]].display());
            guarded.extend(paths.map(|p| p.into_owned()));
        }
    }
    // A notebook is imported by nothing of its project: only itself is loaded with it.
    for &i in asking_loaded.keys() {
        loaded.entry(files[i].display().to_string()).or_insert_with(|| all_facts_of(&outcomes[i], n_facts));
    }
    (loaded, guarded)
}

/// One project's files, their outcomes and its import graph.
struct ProjectOf<'a, 'f> {
    files: &'a [ScanFile],
    outcomes: &'a [KeptOutcome],
    /// Graph node k is file `members[k]`.
    members: &'a [usize],
    graph: &'a processes::ProjectGraph<'f>,
}

impl ProjectOf<'_, '_> {
    /// Adds to `loaded`, for each file of the project among `asking` (with
    /// the facts it asks about), the facts that hold in the modules loaded
    /// with it: the project modules that import it, directly or through each
    /// other (it included), and those some file of the project imports. A
    /// module nothing imports, and which does not import the file, runs in
    /// processes of its own (a script run by hand, a leftover), so what it
    /// does is not done for the file. A vendored copy also takes the facts
    /// of the project that imports it (`outer`), as for `project_has`: the
    /// import graph does not cross projects, so who loads the copy is not known.
    fn loaded_with(
        &self,
        asking: &BTreeMap<usize, BTreeSet<usize>>,
        outer: Option<&Vec<bool>>,
        n_facts: usize,
        loaded: &mut HashMap<String, Vec<bool>>,
    ) {
        let Self { files, outcomes, members, graph } = self;
        if !members.iter().any(|m| asking.contains_key(m)) {
            return;
        }
        let or_into = |all: &mut Vec<bool>, facts: &[bool]| all.iter_mut().zip(facts).for_each(|(a, f)| *a |= *f);
        let mut library = vec![false; n_facts];
        let imported = graph.imported_by_some();
        members
            .iter()
            .zip(&imported)
            .filter(|(_, i)| **i)
            .for_each(|(&m, _)| or_into(&mut library, facts_of(&outcomes[m])));
        if let Some(outer) = outer {
            or_into(&mut library, outer);
        }
        let importers = graph.importers();
        for (k, &m) in members.iter().enumerate() {
            let Some(wanted) = asking.get(&m) else { continue };
            let mut facts = library.clone();
            // The importers are searched only when the library does not settle it.
            if wanted.iter().all(|&f| facts[f]) {
                loaded.insert(files[m].display().to_string(), facts);
                continue;
            }
            let reached = importers.reachable(&[k]);
            members
                .iter()
                .zip(reached)
                .filter(|(_, r)| *r)
                .for_each(|(&j, _)| or_into(&mut facts, facts_of(&outcomes[j])));
            loaded.insert(files[m].display().to_string(), facts);
        }
    }
}
