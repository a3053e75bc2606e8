//! The pipeline: walk -> read -> parse -> analyse -> merge. Files are analysed
//! in parallel; everything after the merge is in a deterministic order.

use crate::cache::{Cache, ContentId, Parts, StoredOutcome};
use crate::cli::{Entries, Migration};
use crate::config::Setting;
use crate::finding::{FileProblem, Finding, ProblemKind, SharedText};
use crate::notebook::{Locator, Notebook};
use crate::parse::{first_error_line, parse_python};
use crate::progress::Progress;
use crate::project::configurations;
use crate::project::launches::{self, Launches};
use crate::project::migration::Assumed;
use crate::project::named_files::NamedFiles;
use crate::project::processes;
use crate::rules::engine::{Engine, FileAnalysis, TableRow};
use crate::rules::model::{Scope, NAMED_UNCONDITIONALLY};
use crate::rules::render::render_with;
use crate::rules::schema::SitesRole;
use crate::rules::slots::MAX_SCOPE_NODES;
use crate::semantic::launch_lines::{self, Launch};
use crate::semantic::named_files::{self, Names};
use crate::semantic::option_defs;
use crate::semantic::options::{self, Gate};
use crate::semantic::traverse::MAX_DEPTH;
use crate::source::{read_source, LineIndex};
use crate::suppress::{self, Directive};
use crate::walk::{FileKind, Project, ScanFile, WalkResult};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What a whole scan found.
pub struct ScanOutcome {
    /// Files looked at (read and analysed, wholly or partly).
    pub files_scanned: usize,
    /// Findings in (path, line, column, code) order.
    pub findings: Vec<Finding>,
    /// Files skipped or only partly analysed.
    pub problems: Vec<FileProblem>,
    /// Summary table rows as `(path, row)`, in path and line order.
    pub rows: Vec<(String, TableRow)>,
    /// Summary counts by count index.
    pub counts: Vec<usize>,
    /// Summary sites as `(sites index, path, line, detail)`, in path and line order.
    pub sites: Vec<(usize, String, usize, String)>,
    /// Summary groups as `(group index, key, value, count)`, sorted by group and key.
    pub groups: Vec<(usize, String, String, usize)>,
    /// Findings silenced by suppression comments, with the reason given.
    pub suppressed: Vec<(Finding, Option<String>)>,
    /// Findings recorded in the `--baseline` (not counted by the gate).
    pub baselined: Vec<Finding>,
    /// Baseline entries that match no finding any more.
    pub stale_baseline: Vec<crate::baseline::Entry>,
    /// Findings whose fixes `--fix` applied (positions before the fix).
    pub fixed: Vec<Finding>,
    /// Codes of the fixed findings that the fixes themselves created (see
    /// [`crate::fix::FixedFile::follow_ups`]), one entry per finding.
    pub fixed_follow_ups: Vec<String>,
    /// The projects, in the order of their first file; findings name theirs by index.
    pub projects: Vec<ProjectOutcome>,
}

/// What the scan learned about one project.
#[derive(Debug, Clone)]
pub struct ProjectOutcome {
    /// Its directory and marker.
    pub project: Project,
    /// Files looked at.
    pub files_scanned: usize,
    /// The migration style assumed, and why.
    pub migration: crate::project::migration::Assumed,
    /// Where the project imports `transfer_to_npu` (sites of the
    /// `automatic-migration` summary lists), in path and line order.
    pub transfer_imports: Vec<(String, usize)>,
    /// Its entry scripts (sites of the `entry-scripts` lists), in path and line order.
    pub entry_scripts: Vec<(String, usize)>,
    /// Scripts without a `__main__` guard that parse options at module
    /// level (sites of the `unguarded-scripts` lists), in path and line order.
    pub unguarded_scripts: Vec<(String, usize)>,
    /// Which entry scripts its launch scripts start, and which nothing names
    /// (see [`crate::project::launches`]); the files only those run are left out.
    pub launches: Launches,
}

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
}

impl ScanFacts {
    /// Whether fact `fact`, in `scope`, holds for file `path` of project `project`.
    pub fn holds(&self, scope: Scope, project: usize, path: &str, fact: usize) -> bool {
        let facts = match scope {
            Scope::NamedFile => {
                return self.named.get(project).is_some_and(|n| match fact {
                    NAMED_UNCONDITIONALLY => n.names_unconditionally(path),
                    _ => n.names(path),
                })
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

/// One file's analysis, before project facts and suppressions are applied.
pub struct FileOutcome {
    path: SharedText,
    directives: Vec<Directive>,
    analysis: FileAnalysis,
    /// Boxed: outcomes live until the report, and few files have a problem.
    problem: Option<Box<FileProblem>>,
    scanned: bool,
    /// For a notebook: the parsed notebook, to locate findings by cell
    /// (boxed: outcomes live until the report, and few files are notebooks).
    notebook: Option<Box<Notebook>>,
    /// The content analysed, when read from disk (what the cache keys on).
    content: Option<ContentId>,
    /// The project of the file (an index into the walk's projects).
    project: usize,
}

/// A file's outcome as the scan keeps it until the merge. Most files of a
/// large repository report nothing; of those only what the merge counts is
/// kept, so memory grows by a few bytes per such file, not by an outcome.
pub enum KeptOutcome {
    /// Analysed, with nothing to report (no finding, summary row, site or
    /// group, suppression comment or problem, and not a notebook); it may
    /// still make project facts true and add to summary counts.
    Quiet {
        /// The file's project.
        project: usize,
        /// The content analysed, when there is a cache to store it in.
        content: Option<ContentId>,
        /// What it adds to project facts and summary counts; `None` (the
        /// common case, and one pointer's room) when it adds nothing.
        tally: Option<Box<Tally>>,
    },
    /// Everything else.
    Full(Box<FileOutcome>),
}

impl KeptOutcome {
    /// Keeps `o` whole only if it has something to report.
    pub fn keep(mut o: FileOutcome) -> Self {
        o.analysis.shrink_to_fit();
        o.directives.shrink_to_fit();
        // Most files make no fact true and count nothing: keep no lists for them.
        if !o.analysis.facts.contains(&true) {
            o.analysis.facts = Vec::new();
        }
        if o.analysis.counts.iter().all(|&c| c == 0) {
            o.analysis.counts = Vec::new();
        }
        let a = &o.analysis;
        let quiet = o.scanned
            && o.problem.is_none()
            && o.notebook.is_none()
            && o.directives.is_empty()
            && a.findings.is_empty()
            && a.rows.is_empty()
            && a.sites.is_empty()
            && a.groups.is_empty();
        if !quiet {
            return KeptOutcome::Full(Box::new(o));
        }
        let a = o.analysis;
        let adds = !a.facts.is_empty() || !a.counts.is_empty() || !a.named_files.is_empty() || !a.launches.is_empty();
        let tally = adds.then(|| {
            Box::new(Tally { facts: a.facts, counts: a.counts, named_files: a.named_files, launches: a.launches })
        });
        KeptOutcome::Quiet { project: o.project, content: o.content, tally }
    }

    /// The whole outcome of a file that has something to report.
    pub fn full(&self) -> Option<&FileOutcome> {
        match self {
            KeptOutcome::Quiet { .. } => None,
            KeptOutcome::Full(o) => Some(o),
        }
    }

    fn project(&self) -> usize {
        match self {
            KeptOutcome::Quiet { project, .. } => *project,
            KeptOutcome::Full(o) => o.project,
        }
    }

    /// Which facts the file makes true, by fact index (possibly fewer than all).
    fn facts(&self) -> &[bool] {
        match self {
            KeptOutcome::Quiet { tally, .. } => tally.as_ref().map_or(&[], |t| &t.facts),
            KeptOutcome::Full(o) => &o.analysis.facts,
        }
    }

    /// The file names the file spells out.
    fn named_files(&self) -> Option<&Names> {
        match self {
            KeptOutcome::Quiet { tally, .. } => tally.as_ref().map(|t| &t.named_files),
            KeptOutcome::Full(o) => Some(&o.analysis.named_files),
        }
    }

    /// The Python scripts a shell script starts.
    fn launches(&self) -> &[Launch] {
        match self {
            KeptOutcome::Quiet { tally, .. } => tally.as_ref().map_or(&[], |t| &t.launches),
            KeptOutcome::Full(o) => &o.analysis.launches,
        }
    }

    /// The branches around the file's findings that test options.
    fn gates(&self) -> &[Gate] {
        self.full().map_or(&[], |o| &o.analysis.gates)
    }
}

/// A quiet file's project facts and summary counts.
pub struct Tally {
    /// Which facts the file makes true, by fact index.
    facts: Vec<bool>,
    /// Its summary counts, by count index.
    counts: Vec<usize>,
    /// The file names it spells out.
    named_files: Names,
    /// For a shell script: the Python scripts it starts.
    launches: Vec<Launch>,
}

/// Reads and analyses every file, in parallel, in `files` order, ticking
/// `progress`; files whose content `cache` has seen are not analysed again.
/// The outcomes are in `files` order.
pub fn analyse_files(
    files: &[ScanFile],
    engine: &Engine,
    progress: &Progress,
    cache: Option<&Cache>,
) -> Vec<KeptOutcome> {
    let seen = SeenFacts::new(files, engine);
    files
        .par_iter()
        .map(|f| {
            let mut outcome = scan_file(f, engine, cache);
            // The cache keeps each file's findings before its project's facts are
            // applied: another file's facts may change by the next scan.
            if cache.is_none() {
                seen.drop_findings_ruled_out(&mut outcome);
            }
            progress.tick();
            KeptOutcome::keep(outcome)
        })
        .collect()
}

/// The project facts that files analysed so far have found true. Facts only
/// ever become true, so a finding that needs one of them false can be dropped
/// as soon as it is seen, instead of being kept until the merge: on a large
/// project most such findings are (MEM007's "no activation checkpointing in
/// this project" was half of the findings the corpus kept).
struct SeenFacts {
    n_facts: usize,
    /// By project, then fact.
    true_in_project: Vec<std::sync::atomic::AtomicBool>,
}

impl SeenFacts {
    fn new(files: &[ScanFile], engine: &Engine) -> Self {
        let n_projects = files.iter().map(|f| f.project + 1).max().unwrap_or(0);
        let n_facts = engine.set.compiler.facts.len();
        let true_in_project = (0..n_projects * n_facts).map(|_| Default::default()).collect();
        SeenFacts { n_facts, true_in_project }
    }

    /// Records the facts `o` found true, then drops its findings whose project
    /// conditions can no longer hold.
    fn drop_findings_ruled_out(&self, o: &mut FileOutcome) {
        use std::sync::atomic::Ordering::Relaxed;
        let at = |fact: usize| self.true_in_project.get(o.project * self.n_facts + fact);
        for (fact, _) in o.analysis.facts.iter().enumerate().filter(|(_, holds)| **holds) {
            if let Some(seen) = at(fact) {
                seen.store(true, Relaxed);
            }
        }
        // A process fact may be false in this file's process while true elsewhere in the project.
        let ruled_out = |&(scope, fact, want): &(Scope, usize, bool)| {
            scope == Scope::Project && !want && at(fact).is_some_and(|seen| seen.load(Relaxed))
        };
        o.analysis.findings.retain(|(_, clauses)| !clauses.iter().any(|c| c.iter().all(ruled_out)));
    }
}

/// What to store in the cache: every file analysed from disk content
/// (`outcomes` are in `files` order).
pub fn cache_entries(
    files: &[ScanFile],
    outcomes: &[KeptOutcome],
) -> std::collections::BTreeMap<String, StoredOutcome> {
    files
        .iter()
        .zip(outcomes)
        .filter_map(|(f, kept)| match kept {
            KeptOutcome::Quiet { content, tally, .. } => {
                let analysis = tally.as_ref().map_or_else(FileAnalysis::default, |t| FileAnalysis {
                    facts: t.facts.clone(),
                    counts: t.counts.clone(),
                    named_files: t.named_files.clone(),
                    launches: t.launches.clone(),
                    ..FileAnalysis::default()
                });
                let parts = Parts { directives: &[], analysis: &analysis, problem: None };
                Some((f.display().to_string(), StoredOutcome::new((*content)?, parts)))
            }
            KeptOutcome::Full(o) => {
                let parts = Parts { directives: &o.directives, analysis: &o.analysis, problem: o.problem.as_deref() };
                Some((o.path.to_string(), StoredOutcome::new(o.content?, parts)))
            }
        })
        .collect()
}

/// Reads and parses every Python file and nothing else (the benchmark's
/// baseline); returns how many parsed.
pub fn parse_only(files: &[ScanFile]) -> usize {
    files
        .par_iter()
        .filter(|f| f.kind == FileKind::Python)
        .filter(|f| read_source(&f.path(), f.kind).ok().and_then(|s| parse_python(&s.text)).is_some())
        .count()
}

fn scan_file(file: &ScanFile, engine: &Engine, cache: Option<&Cache>) -> FileOutcome {
    if file.kind == FileKind::PathOnly {
        return analyse_text(file, "", engine);
    }
    match read_source(&file.path(), file.kind) {
        Ok(source) => {
            // Hashing is only worth its time when there is a cache to ask.
            let Some(cache) = cache else { return analyse_text(file, &source.text, engine) };
            let content = ContentId::of(&source.text);
            let mut outcome = match cache.get(&file.display(), content) {
                Some(stored) => from_cache(file, &source.text, stored),
                None => analyse_text(file, &source.text, engine),
            };
            outcome.content = Some(content);
            outcome
        }
        Err(e) => FileOutcome {
            path: file.display().as_ref().into(),
            directives: Vec::new(),
            analysis: FileAnalysis::default(),
            problem: Some(Box::new(FileProblem {
                path: file.display().to_string(),
                kind: ProblemKind::Skipped,
                message: e.to_string(),
            })),
            scanned: false,
            notebook: None,
            content: None,
            project: file.project,
        },
    }
}

/// A file's outcome rebuilt from the cache (a notebook is parsed again, to locate cells).
fn from_cache(file: &ScanFile, text: &str, stored: &StoredOutcome) -> FileOutcome {
    let (directives, analysis, problem) = stored.restore();
    let notebook = if file.kind == FileKind::Notebook { Notebook::parse(text).ok().map(Box::new) } else { None };
    FileOutcome {
        path: file.display().as_ref().into(),
        directives,
        analysis,
        scanned: problem.as_ref().is_none_or(|p| p.kind != ProblemKind::Skipped),
        problem: problem.map(Box::new),
        notebook,
        content: None,
        project: file.project,
    }
}

/// Analyses `text` as the contents of `file` (the fixer calls this on text
/// it has edited in memory).
pub fn analyse_text(file: &ScanFile, text: &str, engine: &Engine) -> FileOutcome {
    let mut out = FileOutcome {
        path: file.display().as_ref().into(),
        directives: Vec::new(),
        analysis: FileAnalysis::default(),
        problem: None,
        scanned: true,
        notebook: None,
        content: None,
        project: file.project,
    };
    let problem =
        |kind, message: String| Some(Box::new(FileProblem { path: file.display().to_string(), kind, message }));
    let path_findings = engine.analyse_path(&out.path);
    if file.kind == FileKind::PathOnly {
        out.analysis.findings = path_findings;
        return out;
    }
    let notebook = match file.kind {
        FileKind::Notebook => match Notebook::parse(text) {
            Ok(nb) => Some(nb),
            Err(e) => {
                out.problem = problem(ProblemKind::Skipped, e.to_string());
                out.scanned = false;
                return out;
            }
        },
        _ => None,
    };
    let text = notebook.as_ref().map_or(text, |nb| nb.python.as_str());
    if let Some(target) = link_saved_as_file(file.kind, text) {
        let message = format!(
            "holds only the path `{target}`: a symbolic link saved as a regular file (a checkout or archive that \
             did not keep the link); skipped: restore the link, or scan the file it names"
        );
        out.problem = problem(ProblemKind::Skipped, message);
        out.scanned = false;
        return out;
    }
    // A shell script is always read: it needs no parse, and what a launch
    // command passes can make a project fact true (`project_has`) without
    // any rule's trigger word in it.
    if file.kind == FileKind::Shell {
        out.directives = suppress::in_shell(text);
        out.analysis = engine.analyse_shell(text, &LineIndex::new(text), &out.path);
        out.analysis.named_files = named_files::in_shell(text, &engine.shell_named_extensions);
        out.analysis.launches = launch_lines::launches_in(text);
        out.analysis.findings.extend(path_findings);
        return out;
    }
    let Some(rules) = engine.rules_for(text) else {
        // Nothing to analyse, but suppressions are still checked and the file
        // names it spells out collected (a build script may trigger no rule);
        // a Python file is parsed only if it has either.
        if text.contains(suppress::MARKER) || mentions_named_extension(engine, text) {
            if let Some(tree) = parse_python(text) {
                out.directives = suppress::in_python(tree.root_node(), text);
                out.analysis.named_files = named_files::in_python(tree.root_node(), text, &engine.named_extensions);
            }
        }
        out.analysis.findings = path_findings;
        return out;
    };
    let lines = LineIndex::new(text);
    out.analysis = match parse_python(text) {
        Some(tree) => {
            out.directives = suppress::in_python(tree.root_node(), text);
            let place = |line| match notebook.as_ref().and_then(|nb| nb.cell_line(&lines, line)) {
                Some((cell, line)) => format!("cell {cell}, line {line}"),
                None => format!("line {line}"),
            };
            let mut partial = Vec::new();
            if let Some(line) = first_error_line(&tree) {
                partial.push(format!("syntax error near {}; analysed where the syntax tree is sound", place(line)));
            }
            let mut analysis = engine.analyse(tree.root_node(), text, &lines, &out.path, &rules);
            analysis.named_files = named_files::in_python(tree.root_node(), text, &engine.named_extensions);
            // A notebook's cells are not started with options.
            let finding_lines: Vec<usize> = match notebook {
                Some(_) => Vec::new(),
                None => analysis.findings.iter().map(|(f, _)| f.line).collect(),
            };
            analysis.gates = options::around(tree.root_node(), text, &finding_lines);
            analysis.cuda_only_tests = crate::semantic::cuda_only::tests(tree.root_node(), text, &finding_lines);
            if let Some(line) = analysis.cut_at_line {
                partial.push(format!(
                    "code near {} is nested more than {MAX_DEPTH} levels deep; the deeper part was not analysed",
                    place(line)
                ));
            }
            if let Some(line) = analysis.scope_search_cut_at_line {
                partial.push(format!(
                    "the search of the function (or module) around {} stopped after {MAX_SCOPE_NODES} nodes; rules \
                         that look through a whole function (function_has, preceded_in_function, \
                         followed_in_function) may miss findings in it",
                    place(line)
                ));
            }
            if !partial.is_empty() {
                out.problem = problem(ProblemKind::Partial, partial.join("; "));
            }
            analysis
        }
        None => {
            out.problem = problem(
                ProblemKind::Skipped,
                format!(
                    "the parser gave up on this file (parsing stops after {} s; tree-sitter's error recovery can \
                         take that long on long broken lines); skipped",
                    crate::parse::PARSE_TIME_LIMIT.as_secs()
                ),
            );
            out.scanned = false;
            return out;
        }
    };
    out.analysis.findings.extend(path_findings);
    out.notebook = notebook.map(Box::new);
    out
}

/// Whether `text` has `.EXT` for an extension whose file names rules ask
/// about: a file that no rule analyses is parsed only then.
fn mentions_named_extension(engine: &Engine, text: &str) -> bool {
    engine.named_extensions.iter().any(|ext| text.contains(&format!(".{ext}")))
}

/// The facts of the whole scan, from `outcomes` (in the order of `walked`'s
/// files): project facts always, process facts for the files whose findings
/// have process conditions (their projects' import graphs are only built then).
pub fn scan_facts(walked: &WalkResult, outcomes: &[KeptOutcome], engine: &Engine) -> ScanFacts {
    let files = &walked.files;
    let n_facts = engine.set.compiler.facts.len();
    let n_projects = outcomes.iter().map(|o| o.project() + 1).max().unwrap_or(0);
    let mut projects = vec![vec![false; n_facts]; n_projects];
    let mut names: Vec<Vec<&Names>> = vec![Vec::new(); n_projects];
    for o in outcomes {
        for (i, f) in o.facts().iter().enumerate() {
            projects[o.project()][i] |= *f;
        }
        names[o.project()].extend(o.named_files());
    }
    // A vendored copy runs in the processes of the project that imports it,
    // so it shares that project's facts; outer projects first, so the facts
    // of a copy inside a copy come from the outermost one too.
    let vendoring = crate::project::vendored::vendoring_projects(walked);
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
        let members: Vec<usize> =
            (0..files.len()).filter(|&i| files[i].project == project && files[i].kind == FileKind::Python).collect();
        let python: Vec<&ScanFile> = members.iter().map(|&i| &files[i]).collect();
        let Some(dir) = walked.projects.get(project) else { continue };
        let mut graph = processes::ImportGraph::new(python, &dir.display);
        for (k, wanted) in members.iter().enumerate().filter_map(|(k, i)| Some((k, asking.get(i)?))) {
            let mut facts = vec![false; n_facts];
            // Stops once every fact the file's findings ask about is known to hold.
            graph.search(k, |j| {
                outcomes[members[j]].facts().iter().zip(facts.iter_mut()).for_each(|(f, all)| *all |= *f);
                wanted.iter().all(|&f| facts[f])
            });
            processes.insert(files[members[k]].display().to_string(), facts);
        }
    }
    // A notebook imports nothing of its project: its process is itself.
    for &i in asking.keys() {
        let own = || (0..n_facts).map(|f| outcomes[i].facts().get(f).copied().unwrap_or(false)).collect();
        processes.entry(files[i].display().to_string()).or_insert_with(own);
    }
    ScanFacts { projects, processes, named }
}

/// The branches of project `project` that no run of its launch scripts
/// takes. Only a project whose launch scripts start some of its scripts and
/// that has findings in branches that test options is looked at; its
/// Python files are read again then, for the options they define.
fn untaken_in(
    walked: &WalkResult,
    outcomes: &[KeptOutcome],
    project: usize,
) -> HashMap<String, Vec<configurations::Untaken>> {
    let members = || walked.files.iter().zip(outcomes).filter(move |(f, _)| f.project == project);
    let gates: Vec<(String, &[Gate])> =
        members().filter(|(_, o)| !o.gates().is_empty()).map(|(f, o)| (f.display().into_owned(), o.gates())).collect();
    if gates.is_empty() {
        return HashMap::new();
    }
    let python: Vec<&ScanFile> = members().map(|(f, _)| f).filter(|f| f.kind == FileKind::Python).collect();
    let paths: Vec<String> = python.iter().map(|f| f.display().into_owned()).collect();
    let launches: Vec<&Launch> =
        members().flat_map(|(_, o)| o.launches()).filter(|l| paths.iter().any(|p| l.starts(p))).collect();
    let Some(dir) = walked.projects.get(project).filter(|_| !launches.is_empty()) else { return HashMap::new() };
    // What each launch's process runs: its script and the modules it imports;
    // kept as which launches reach each file with gates, and whether any reaches a file.
    let node: HashMap<&str, usize> = paths.iter().enumerate().map(|(i, p)| (p.as_str(), i)).collect();
    let gated: HashMap<usize, usize> =
        gates.iter().enumerate().filter_map(|(k, (path, _))| Some((*node.get(path.as_str())?, k))).collect();
    let mut reaching: Vec<Vec<usize>> = vec![Vec::new(); gates.len()];
    let mut run_anywhere = vec![false; paths.len()];
    let mut graph = processes::ImportGraph::new(python.clone(), &dir.display);
    for (i, launch) in launches.iter().enumerate() {
        let mut seen = vec![false; paths.len()];
        for root in (0..paths.len()).filter(|&j| launch.starts(&paths[j])) {
            graph.search(root, |j| {
                seen[j] = true;
                false
            });
        }
        for j in (0..paths.len()).filter(|&j| seen[j]) {
            run_anywhere[j] = true;
            gated.get(&j).into_iter().for_each(|&k| reaching[k].push(i));
        }
    }
    // Only what the launched processes run defines their options.
    let definitions: Vec<option_defs::Definitions> = (0..python.len())
        .into_par_iter()
        .filter(|&j| run_anywhere[j])
        .filter_map(|j| Some(option_defs::in_file(&read_source(&python[j].path(), python[j].kind).ok()?.text)))
        .filter(|d| !d.is_empty())
        .collect();
    let gates: Vec<(&str, &[Gate], &[usize])> =
        gates.iter().zip(&reaching).map(|((p, g), r)| (p.as_str(), *g, r.as_slice())).collect();
    configurations::untaken(&gates, &definitions, &launches)
}

/// The facts that findings of `o` ask about for the file's process.
fn process_facts_asked(o: &KeptOutcome) -> BTreeSet<usize> {
    let clauses = o.full().into_iter().flat_map(|o| o.analysis.findings.iter().flat_map(|(_, c)| c));
    clauses.flatten().filter(|l| l.0 == Scope::Process).map(|l| l.1).collect()
}

/// What one file reports once the scan's `facts` are known: findings whose
/// project and process conditions hold, minus overridden ones, split by
/// suppression comments.
pub fn file_findings(o: &FileOutcome, facts: &ScanFacts, engine: &Engine) -> suppress::Applied {
    let holds = |&(scope, i, want): &(Scope, usize, bool)| facts.holds(scope, o.project, &o.path, i) == want;
    let kept: Vec<Finding> = o
        .analysis
        .findings
        .iter()
        .filter(|(_, clauses)| clauses.iter().all(|c| c.iter().any(holds)))
        .map(|(f, _)| Finding { project: o.project, ..f.clone() })
        .collect();
    let known = |code: &str| engine.set.rules.iter().any(|r| r.code.starts_with(code));
    let mut applied = suppress::apply(apply_overrides(kept, engine), &o.directives, &known);
    if let Some(nb) = &o.notebook {
        let suppressed = applied.suppressed.iter_mut().map(|(f, _)| f);
        locate_in_cells(nb, applied.kept.iter_mut().chain(suppressed));
    }
    applied
}

/// Moves findings' positions from the notebook's joined Python to its cells;
/// the indexes that needs are built once, and only if there are findings.
fn locate_in_cells<'f>(nb: &Notebook, findings: impl Iterator<Item = &'f mut Finding>) {
    let mut findings = findings.peekable();
    if findings.peek().is_none() {
        return;
    }
    let lines = LineIndex::new(&nb.python);
    let mut locator = nb.locator();
    findings.for_each(|f| locate_in_cell(f, nb, &lines, &mut locator));
}

/// Moves a finding's positions from the notebook's joined Python to its cell.
fn locate_in_cell(f: &mut Finding, nb: &Notebook, lines: &LineIndex, locator: &mut Locator) {
    let Some((cell, line)) = nb.cell_line(lines, f.line) else { return };
    let end_line = nb.cell_line(lines, f.end_line).map_or(line, |(_, l)| l);
    let start = locator.file_position(cell, line, f.column);
    let end = locator.file_position(cell, end_line, f.end_column);
    if let (Some(s), Some(e)) = (start, end) {
        f.file_region = Some(Box::new((s.0, s.1, e.0, e.1)));
    }
    (f.cell, f.line, f.end_line) = (Some(cell), line, end_line);
    for e in f.fix.iter_mut().flat_map(|fix| fix.edits.iter_mut()) {
        e.start.line = nb.cell_line(lines, e.start.line).map_or(e.start.line, |(_, l)| l);
        e.end.line = nb.cell_line(lines, e.end.line).map_or(e.end.line, |(_, l)| l);
    }
}

/// Adds one file's summary counts (by count index) to the totals.
fn add_counts(totals: &mut [usize], file: &[usize]) {
    totals.iter_mut().zip(file).for_each(|(total, c)| *total += c);
}

/// Merges per-file outcomes (in the order of `walked`'s files) into the
/// scan's result, in a deterministic order; `migration` decides each
/// project's style.
pub fn merge(
    outcomes: Vec<KeptOutcome>,
    engine: &Engine,
    walked: &WalkResult,
    migration: &Setting<Migration>,
    entries: Entries,
) -> ScanOutcome {
    let projects = &walked.projects;
    let facts = scan_facts(walked, &outcomes, engine);
    // By project, then display path: the branches no run of its launch scripts takes.
    let untaken_branches: Vec<HashMap<String, Vec<configurations::Untaken>>> = match entries {
        Entries::Launched => (0..projects.len()).map(|p| untaken_in(walked, &outcomes, p)).collect(),
        Entries::All => Vec::new(),
    };
    let role = |i: usize| engine.set.sites.get(i).and_then(|s| s.role);
    let mut per_project: Vec<ProjectOutcome> = projects
        .iter()
        .map(|p| ProjectOutcome {
            project: p.clone(),
            files_scanned: 0,
            migration: Assumed::decide(migration, None),
            transfer_imports: Vec::new(),
            entry_scripts: Vec::new(),
            unguarded_scripts: Vec::new(),
            launches: Launches::default(),
        })
        .collect();
    let mut result = ScanOutcome {
        files_scanned: 0,
        findings: Vec::new(),
        problems: Vec::new(),
        rows: Vec::new(),
        counts: vec![0; engine.set.counts.len()],
        sites: Vec::new(),
        groups: Vec::new(),
        suppressed: Vec::new(),
        baselined: Vec::new(),
        stale_baseline: Vec::new(),
        fixed: Vec::new(),
        fixed_follow_ups: Vec::new(),
        projects: Vec::new(),
    };
    let mut groups: std::collections::BTreeMap<(usize, String), (String, usize)> = Default::default();
    // By display path, the tests that run only where CUDA is.
    let mut cuda_only_tests: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    for kept in outcomes {
        let mut o = match kept {
            KeptOutcome::Quiet { project, tally, .. } => {
                result.files_scanned += 1;
                if let Some(p) = per_project.get_mut(project) {
                    p.files_scanned += 1;
                }
                if let Some(t) = tally {
                    add_counts(&mut result.counts, &t.counts);
                }
                continue;
            }
            KeptOutcome::Full(o) => *o,
        };
        result.files_scanned += usize::from(o.scanned);
        if let Some(p) = per_project.get_mut(o.project) {
            p.files_scanned += usize::from(o.scanned);
        }
        if !o.analysis.cuda_only_tests.is_empty() {
            cuda_only_tests.insert(o.path.to_string(), std::mem::take(&mut o.analysis.cuda_only_tests));
        }
        let applied = file_findings(&o, &facts, engine);
        result.problems.extend(o.problem.map(|p| *p));
        result.findings.extend(applied.kept);
        result.suppressed.extend(applied.suppressed);
        let mut meta: Vec<Finding> = Vec::new();
        for (i, code) in &applied.unused {
            meta.extend(meta_finding(engine, "NPM001", &o.path, &o.directives[*i], code));
        }
        for (i, code) in &applied.unknown {
            meta.extend(meta_finding(engine, "NPM002", &o.path, &o.directives[*i], code));
        }
        if let Some(nb) = &o.notebook {
            locate_in_cells(nb, meta.iter_mut());
        }
        meta.iter_mut().for_each(|f| f.project = o.project);
        result.findings.extend(meta);
        add_counts(&mut result.counts, &o.analysis.counts);
        // Summary rows and sites in a notebook name the cell in their path.
        let lines = o.notebook.as_ref().map(|nb| LineIndex::new(&nb.python));
        let place = |line: usize| match (&o.notebook, &lines) {
            (Some(nb), Some(lines)) => match nb.cell_line(lines, line) {
                Some((cell, l)) => (format!("{}:cell {cell}", o.path), l),
                None => (o.path.to_string(), line),
            },
            _ => (o.path.to_string(), line),
        };
        for mut row in o.analysis.rows {
            let (path, line) = place(row.line);
            row.line = line;
            result.rows.push((path, row));
        }
        for (i, line, detail) in o.analysis.sites {
            let (path, line) = place(line);
            let listed = match (role(i), per_project.get_mut(o.project)) {
                (Some(SitesRole::AutomaticMigration), Some(p)) => Some(&mut p.transfer_imports),
                (Some(SitesRole::EntryScripts), Some(p)) => Some(&mut p.entry_scripts),
                (Some(SitesRole::UnguardedScripts), Some(p)) => Some(&mut p.unguarded_scripts),
                _ => None,
            };
            listed.into_iter().for_each(|l| l.push((path.clone(), line)));
            result.sites.push((i, path, line, detail));
        }
        for (i, key, value) in o.analysis.groups {
            groups.entry((i, key)).or_insert((value, 0)).1 += 1;
        }
    }
    result.groups = groups.into_iter().map(|((i, key), (value, n))| (i, key, value, n)).collect();
    result.sites.sort_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
    result.findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    result.suppressed.sort_by(|a, b| a.0.sort_key().cmp(&b.0.sort_key()));
    result.rows.sort_by(|a, b| (&a.0, a.1.line, a.1.table).cmp(&(&b.0, b.1.line, b.1.table)));
    // The lines of the findings by file: functions that hold some are looked for callers.
    let mut finding_lines: HashMap<&str, Vec<usize>> = HashMap::new();
    result.findings.iter().for_each(|f| finding_lines.entry(f.path.as_str()).or_default().push(f.line));
    let (unmigrated_files, unlaunched_files) =
        decide_processes(&mut per_project, walked, &facts, migration, entries, &finding_lines);
    // Functions nothing calls, and `__main__` blocks of scripts nothing starts.
    let nothing_runs = |f: &Finding| {
        let launches = per_project.get(f.project).map(|p| &p.launches);
        let functions = launches.and_then(|l| l.uncalled.get(f.path.as_str()));
        let main_block = launches.and_then(|l| l.main_blocks.get(f.path.as_str()));
        functions.is_some_and(|fs| fs.iter().any(|u| u.holds(f.line)))
            || main_block.is_some_and(|(first, last)| (*first..=*last).contains(&f.line))
    };
    // The test around a finding that an NPU host skips, by the line of its
    // `def`: without `transfer_to_npu` CUDA is never available there.
    let skipped_test = |f: &Finding| {
        let project = per_project.get(f.project);
        let without_transfer = project
            .is_some_and(|p| p.migration.style != crate::project::migration::Style::Automatic)
            || unmigrated_files.contains(f.path.as_str());
        let tests = cuda_only_tests.get(f.path.as_str()).filter(|_| entries == Entries::Launched && without_transfer);
        tests.and_then(|ts| ts.iter().find(|t| (t.0..=t.1).contains(&f.line))).map(|t| t.0)
    };
    // The tests an NPU host skips that hold findings, by project, for the report.
    let mut skipped: BTreeSet<(usize, String, usize)> = BTreeSet::new();
    // The branches no launch takes that hold findings, by project, for the report.
    let mut untaken: BTreeSet<(usize, String, configurations::Untaken)> = BTreeSet::new();
    let mut advise = |f: &mut Finding| {
        let in_file = untaken_branches.get(f.project).and_then(|p| p.get(f.path.as_str()));
        let branch = in_file.and_then(|bs| bs.iter().find(|b| (b.lines.0..=b.lines.1).contains(&f.line)));
        if let Some(b) = branch {
            untaken.insert((f.project, f.path.to_string(), b.clone()));
        }
        let test = skipped_test(f);
        if let Some(line) = test {
            skipped.insert((f.project, f.path.to_string(), line));
        }
        if unlaunched_files.contains(f.path.as_str()) || nothing_runs(f) || branch.is_some() || test.is_some() {
            // Code that no process runs blocks nothing either.
            (f.unlaunched, f.blocker, f.severity) = (true, false, crate::finding::Severity::Info);
        } else if let Some(p) = per_project.get(f.project) {
            p.migration.apply(f, unmigrated_files.contains(f.path.as_str()));
        }
    };
    result.findings.iter_mut().for_each(&mut advise);
    result.suppressed.iter_mut().for_each(|(f, _)| advise(f));
    for (project, path, branch) in untaken {
        if let Some(p) = per_project.get_mut(project) {
            p.launches.untaken.push((path, branch));
        }
    }
    for (project, path, line) in skipped {
        if let Some(p) = per_project.get_mut(project) {
            p.launches.cuda_only_tests.push((path, line));
        }
    }
    result.projects = per_project;
    result
}

/// Decides, for each project, its migration style and which of its files
/// run without `transfer_to_npu` or in no started process (both from the
/// project's import graph, read once and only when needed); returns the
/// files (display paths) of each kind.
fn decide_processes(
    per_project: &mut [ProjectOutcome],
    walked: &WalkResult,
    facts: &ScanFacts,
    migration: &Setting<Migration>,
    entries: Entries,
    finding_lines: &HashMap<&str, Vec<usize>>,
) -> (HashSet<String>, HashSet<String>) {
    let mut files_by_project: Vec<Vec<&ScanFile>> = vec![Vec::new(); per_project.len()];
    for f in &walked.files {
        files_by_project.get_mut(f.project).into_iter().for_each(|files| files.push(f));
    }
    let (mut unmigrated_files, mut unlaunched_files) = (HashSet::new(), HashSet::new());
    for (i, p) in per_project.iter_mut().enumerate() {
        p.transfer_imports.sort();
        p.entry_scripts.sort();
        p.unguarded_scripts.sort();
        let first = p.transfer_imports.first().map(|(path, line)| (path.as_str(), *line));
        p.migration = Assumed::decide(migration, first);
        let paths = |sites: &[(String, usize)]| -> BTreeSet<String> { sites.iter().map(|(p, _)| p.clone()).collect() };
        let (importers, entry_paths) = (paths(&p.transfer_imports), paths(&p.entry_scripts));
        let mut graph = processes::LazyGraph::new(&files_by_project[i], &p.project.display);
        if p.migration.detected_automatic() {
            let found = processes::unmigrated(&mut graph, &importers, &entry_paths);
            p.migration.unmigrated_entries = found.entries;
            unmigrated_files.extend(found.files);
        }
        if let (Entries::Launched, Some(shell_names)) = (entries, facts.named_files(i)) {
            let files = &files_by_project[i];
            let (dir, excluded) = (&p.project.display, &walked.excluded);
            let unguarded = paths(&p.unguarded_scripts);
            let scripts = launches::EntryScripts { guarded: &entry_paths, unguarded: &unguarded };
            p.launches = launches::find(files, dir, excluded, scripts, shell_names, &mut graph, finding_lines);
            unlaunched_files.extend(std::mem::take(&mut p.launches.files));
            // A script nothing starts needs no `transfer_to_npu` either.
            let unlaunched = &p.launches.unlaunched;
            p.migration.unmigrated_entries.retain(|e| !unlaunched.contains(e));
        }
    }
    (unmigrated_files, unlaunched_files)
}

/// The path a Python file holds when that path is all it holds
/// (`../../asr1/local/data_prep.py`): a symbolic link that a checkout on a
/// system without links, or an upload, turned into a file. Python would
/// reject it as a syntax error.
fn link_saved_as_file(kind: FileKind, text: &str) -> Option<&str> {
    let target = text.trim();
    let path_like = target.len() < 4096
        && target.ends_with(".py")
        && target.contains('/')
        && !target.contains(|c: char| c.is_whitespace() || matches!(c, '(' | '=' | '#' | '"' | '\''));
    (kind == FileKind::Python && path_like).then_some(target)
}

/// `per-file-ignores` from the configuration: glob -> codes; a glob without
/// `/` matches the file name, one with `/` the path relative to the
/// configuration file's directory (whatever directory the scan runs from).
pub struct PerFileIgnores {
    base: std::path::PathBuf,
    globs: Vec<(globset::GlobMatcher, bool, Vec<String>)>,
}

impl PerFileIgnores {
    /// Compiles the table; `config::check_codes` has rejected globs that do not compile.
    pub fn new(table: &crate::config::PerFileTable) -> Self {
        let globs = table
            .globs
            .iter()
            .filter_map(|(g, codes)| Some((crate::config::per_file_glob(g).ok()?, g.contains('/'), codes.clone())))
            .collect();
        PerFileIgnores { base: table.base.clone(), globs }
    }

    /// Whether the table silences `f`.
    pub fn ignores(&self, f: &Finding) -> bool {
        if self.globs.is_empty() {
            return false;
        }
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        // A file outside the configuration's directory only matches globs on its name.
        let relative = crate::config::relative_to(&self.base, &f.path);
        self.globs.iter().any(|(g, full, codes)| {
            let subject = if *full { relative.as_deref() } else { Some(name) };
            subject.is_some_and(|s| g.is_match(s)) && codes.iter().any(|c| f.code.starts_with(c.as_str()))
        })
    }
}

/// Applies `per-file-ignores` and severity overrides from the configuration;
/// an override names a code or a prefix, and the longest one matching a
/// finding's code wins (`TX = "info"` with `TX004 = "error"`). Advisory
/// findings (handled by automatic migration) stay `info`.
pub fn apply_settings(
    outcome: &mut ScanOutcome,
    per_file_ignores: &PerFileIgnores,
    severity: &std::collections::BTreeMap<String, crate::finding::Severity>,
) {
    outcome.findings.retain(|f| !per_file_ignores.ignores(f));
    // Advice stays advice: `migration = "manual"` and `entries = "all"` are how to count it again.
    for f in outcome.findings.iter_mut().filter(|f| !f.is_advice()) {
        let matching = severity.iter().filter(|(prefix, _)| f.code.starts_with(prefix.as_str()));
        if let Some((_, s)) = matching.max_by_key(|(prefix, _)| prefix.len()) {
            f.severity = *s;
        }
    }
}

/// A finding about a suppression comment, from the meta rule `code` (if active).
fn meta_finding(engine: &Engine, code: &str, path: &SharedText, d: &Directive, named: &str) -> Option<Finding> {
    let rule = engine.active.iter().map(|&i| &engine.set.rules[i]).find(|r| r.code == code)?;
    let message = render_with(&rule.message, |p| if p == "name" { named.to_string() } else { String::new() });
    let start = crate::finding::Position { line: d.line, column: d.column };
    let end = crate::finding::Position { line: d.line, column: d.end_column };
    Some(Finding { source_line: d.source_line.clone(), ..rule.finding(path, start, end, message) })
}

/// Drops findings that a more specific rule replaces on the same node
/// (one range contains the other) in one file.
fn apply_overrides(findings: Vec<Finding>, engine: &Engine) -> Vec<Finding> {
    let overrides =
        |code: &str| engine.set.rules.iter().find(|r| r.code == code).map(|r| r.overrides.as_slice()).unwrap_or(&[]);
    // The ranges of the findings that override each code.
    let mut by_code: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for g in &findings {
        for code in overrides(&g.code) {
            by_code.entry(code.as_str()).or_default().push(g.byte_range);
        }
    }
    if by_code.is_empty() {
        return findings;
    }
    let by_code: HashMap<&str, NestedRanges> =
        by_code.into_iter().map(|(code, ranges)| (code, NestedRanges::new(ranges))).collect();
    findings.into_iter().filter(|f| !by_code.get(f.code.as_str()).is_some_and(|r| r.nests_with(f.byte_range))).collect()
}

/// Byte ranges, indexed so that asking whether one of them contains, or lies
/// within, a given range costs a binary search, however many there are.
struct NestedRanges {
    /// The ranges' starts, sorted.
    starts: Vec<usize>,
    /// For each prefix of `starts`, the largest end among those ranges.
    max_end_before: Vec<usize>,
    /// For each suffix of `starts`, the smallest end among those ranges.
    min_end_after: Vec<usize>,
}

impl NestedRanges {
    fn new(mut ranges: Vec<(usize, usize)>) -> Self {
        ranges.sort_unstable();
        let starts = ranges.iter().map(|r| r.0).collect();
        let max_end_before = ranges
            .iter()
            .scan(0, |m, r| {
                *m = (*m).max(r.1);
                Some(*m)
            })
            .collect();
        let mut min_end_after: Vec<usize> = ranges
            .iter()
            .rev()
            .scan(usize::MAX, |m, r| {
                *m = (*m).min(r.1);
                Some(*m)
            })
            .collect();
        min_end_after.reverse();
        NestedRanges { starts, max_end_before, min_end_after }
    }

    /// Whether some range contains `(start, end)` or lies within it.
    fn nests_with(&self, (start, end): (usize, usize)) -> bool {
        // Ranges starting at or before `start` contain it if one ends at or after `end`.
        let before = self.starts.partition_point(|&s| s <= start);
        let contains = before > 0 && self.max_end_before[before - 1] >= end;
        // Ranges starting at or after `start` lie within it if one ends by `end`.
        let after = self.starts.partition_point(|&s| s < start);
        let within = self.min_end_after.get(after).is_some_and(|&e| e <= end);
        contains || within
    }
}

#[cfg(test)]
mod tests {
    use super::NestedRanges;

    #[test]
    fn nested_ranges_answer_like_comparing_every_pair() {
        let ranges = vec![(10, 20), (30, 60), (35, 40), (70, 70), (5, 8)];
        let index = NestedRanges::new(ranges.clone());
        let nested = |a: (usize, usize), b: (usize, usize)| (a.0 <= b.0 && b.1 <= a.1) || (b.0 <= a.0 && a.1 <= b.1);
        for start in 0..80 {
            for end in start..80 {
                let expected = ranges.iter().any(|&r| nested(r, (start, end)));
                assert_eq!(index.nests_with((start, end)), expected, "({start}, {end})");
            }
        }
    }
}
