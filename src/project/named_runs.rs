//! The runs the user names (`--entry`, `entry = [...]`): what they start
//! and what they reach. A named run replaces the guess that the launch
//! scripts and documents of a project give ([`super::launches`]): the
//! scripts it starts are the project's started scripts, the shell scripts
//! it runs (and those they run) are its launch scripts, and their launch
//! lines give the options ([`super::configurations`]).
//!
//! An entry is a script (`train.py`), a module (`-m pkg.train`) or a
//! command line (`bash scripts/train_8p.sh`, `torchrun train.py --amp`),
//! with paths relative to the directory it runs in. One that starts
//! nothing the scan holds is an error: a typo must not pass as a run that
//! reaches nothing.
//!
//! Reached are the files the started scripts import, directly or through
//! each other, in any project of the scan (an import resolves in another
//! project as an installed package would); an import of a computed name is
//! not followed, but the modules the runs' configurations instantiate
//! (`_target_`) are, and registered classes no configuration selects are
//! not reached ([`super::run_configs`]). Where a launch script runs a
//! command it builds and npu-mem cannot read, that run may start any script
//! of its project: every file there stays reached.

use super::processes::{reachable_in, ImportGraph};
use super::rereads::Rereads;
use super::run_configs;
use crate::config::{absolute, NamedRun};
use crate::parse::shell::{self, split_words};
use crate::semantic::import_lines::{computed_loads, ComputedLoad};
use crate::semantic::launch_lines::{launches_in, Launch, ANY_SCRIPT};
use crate::semantic::shell_dirs::{dir_at, literal_tail};
use crate::source::read_file;
use crate::walk::{display_path, FileKind, ScanFile, WalkResult};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

/// What the named runs start, found from their commands and the shell
/// scripts those run.
#[derive(Debug, Default, Clone)]
pub struct Started {
    /// How many runs the user named.
    pub runs: usize,
    /// The Python files they start, by index into the walked files.
    pub scripts: BTreeSet<usize>,
    /// Each run as written, with the Python files it starts.
    pub by_run: Vec<(String, BTreeSet<usize>)>,
    /// The shell scripts they run, by index into the walked files.
    pub shell: BTreeSet<usize>,
    /// Those of them that a named command runs with no arguments: their
    /// positional parameters (`$1`, `$@`) are empty.
    pub without_arguments: BTreeSet<usize>,
    /// Their launch lines: the options each started script is given.
    pub launches: Vec<Launch>,
    /// The directories their launch lines may run in, which the
    /// configuration files they name are relative to (absolute).
    pub dirs: BTreeSet<PathBuf>,
    /// The projects where a launch script runs a command that cannot be
    /// read: it may start any script there.
    pub any_script: BTreeSet<usize>,
}

/// What the named runs reach.
#[derive(Debug, Default)]
pub(crate) struct Reach {
    /// By index into the walked files: whether a named run reaches the
    /// file. Files that are neither Python nor shell scripts (kernels,
    /// notebooks) count as reached: no run is known to leave them out.
    pub reached: Vec<bool>,
    /// By index into the walked files, in reached files: the lines of the
    /// registered classes that no configuration of the runs selects.
    pub unselected: HashMap<usize, Vec<(usize, usize)>>,
    /// How many Python modules the scan holds, and how many of them are reached.
    pub modules: (usize, usize),
    /// By project: why every file there counts as reached.
    pub undecided: BTreeMap<usize, String>,
    /// By run, by index into the walked files: whether its started scripts
    /// import the file, directly or through others.
    pub by_run: Vec<Vec<bool>>,
}

/// What the report says of the named runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunSummary {
    /// How many runs the user named.
    pub runs: usize,
    /// The Python scripts they start, by display path.
    pub scripts: Vec<String>,
    /// How many Python modules the scan holds.
    pub modules: usize,
    /// How many of them the runs reach.
    pub reached: usize,
    /// For each reached file that holds findings, the runs that import it
    /// (as written); empty when only a configuration's target or a module
    /// loaded by a computed name reaches it.
    pub reached_by: BTreeMap<String, Vec<String>>,
    /// The projects where what the runs start or load cannot be read, so
    /// every file there counts as reached, and why.
    pub undecided: Vec<Undecided>,
}

/// A project where every file counts as reached, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Undecided {
    /// The project's directory, as displayed.
    pub project: String,
    /// Why, in words.
    pub reason: String,
}

impl RunSummary {
    /// What the report says of `started`, which reach `reach`; `with_findings`
    /// are the display paths of the files that hold findings.
    pub(crate) fn of(
        started: &Started,
        reach: &Reach,
        walked: &WalkResult,
        with_findings: &dyn Fn(&str) -> bool,
    ) -> Self {
        let mut reached_by = BTreeMap::new();
        for (i, f) in walked.files.iter().enumerate().filter(|(i, _)| reach.reached.get(*i) == Some(&true)) {
            let path = f.display();
            if f.kind == FileKind::Python && with_findings(&path) {
                let runs = started.by_run.iter().zip(&reach.by_run).filter(|(_, r)| r.get(i) == Some(&true));
                reached_by.insert(path.into_owned(), runs.map(|((command, _), _)| command.clone()).collect());
            }
        }
        let shown = |i: &usize| walked.files.get(*i).map(|f| f.display().into_owned());
        let project = |p: &usize| walked.projects.get(*p).map(|p| p.display.clone());
        RunSummary {
            runs: started.runs,
            scripts: started.scripts.iter().filter_map(shown).collect(),
            modules: reach.modules.0,
            reached: reach.modules.1,
            reached_by,
            undecided: reach
                .undecided
                .iter()
                .filter_map(|(p, why)| Some(Undecided { project: project(p)?, reason: why.clone() }))
                .collect(),
        }
    }
}

/// An entry that starts nothing the scan holds.
#[derive(Debug)]
pub struct EntryError {
    /// Where it was written: `` `--entry` `` or `` FILE:LINE: `entry` ``.
    pub source: String,
    /// The entry as written.
    pub command: String,
    /// What is wrong with it.
    pub problem: EntryProblem,
}

/// What is wrong with an entry.
#[derive(Debug)]
pub enum EntryProblem {
    /// A path it names is not there.
    NoSuchFile(PathBuf),
    /// A path it names is there, but not among the scanned files.
    NotScanned(PathBuf),
    /// The module it runs with `-m` is no file of the scan.
    NoModule(String),
    /// It names no script, module or shell script.
    NothingStarted,
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (source, command) = (&self.source, &self.command);
        write!(f, "{source}: entry `{command}` ")?;
        match &self.problem {
            EntryProblem::NoSuchFile(path) => write!(f, "names {}, which does not exist", path.display()),
            EntryProblem::NotScanned(path) => write!(
                f,
                "names {}, which is not among the scanned files; scan a directory that holds it, \
                 or check `exclude`",
                path.display()
            ),
            EntryProblem::NoModule(module) => {
                write!(f, "runs module `{module}`, which is no Python file of the scan (as `{module}.py` or a package's `__main__.py`)")
            }
            EntryProblem::NothingStarted => write!(
                f,
                "starts no script; name a script (`train.py`), a module (`-m pkg.train`) or a command line \
                 (`bash scripts/train.sh`)"
            ),
        }?;
        write!(f, "; paths in `--entry` are relative to the current directory, in `entry` to the configuration file")
    }
}

impl std::error::Error for EntryError {}

/// Finds what `runs` start among the walked files: `None` when no run is named.
pub fn start(runs: &[NamedRun], walked: &WalkResult) -> Result<Option<Started>, EntryError> {
    if runs.is_empty() {
        return Ok(None);
    }
    let files = Files::new(walked);
    let mut started = Started { runs: runs.len(), ..Started::default() };
    for run in runs {
        let mut one = start_one(&files, run)?;
        follow_shell_scripts(&files, &mut one);
        started.by_run.push((run.command.clone(), one.scripts.clone()));
        started.scripts.extend(one.scripts);
        started.shell.extend(one.shell);
        started.launches.extend(one.launches);
        started.dirs.extend(one.dirs);
        started.any_script.extend(one.any_script);
    }
    Ok(Some(started))
}

/// What one run's command starts itself, before the shell scripts it runs are read.
fn start_one(files: &Files, run: &NamedRun) -> Result<Started, EntryError> {
    let error = |problem| EntryError { source: run.source.clone(), command: run.command.clone(), problem };
    let mut started = Started::default();
    started.dirs.insert(run.base.clone());
    let (text, bare) = as_command(&run.command);
    let words = split_words(&text);
    for (i, word) in words.iter().enumerate().filter(|(_, w)| w.ends_with(".sh")) {
        let script = files.at(&run.base, word).map_err(error)?;
        started.shell.insert(script);
        if i + 1 == words.len() {
            started.without_arguments.insert(script);
        }
    }
    for launch in launches_in(&text, &shell::read(&text)).into_iter().filter(|l| l.script != ANY_SCRIPT) {
        if launch.script.ends_with(".py") {
            let written = words.iter().find(|w| file_name(w) == launch.script).unwrap_or(&launch.script);
            started.scripts.insert(files.at(&run.base, written).map_err(error)?);
        } else {
            let found = files.module(&run.base, &launch.script);
            if found.is_empty() {
                return Err(error(EntryProblem::NoModule(launch.script.clone())));
            }
            started.scripts.extend(found);
        }
        // A script or module named alone is given options the user did not say.
        started.launches.push(Launch { opaque: launch.opaque || bare, ..launch });
    }
    if started.scripts.is_empty() && started.shell.is_empty() {
        return Err(error(EntryProblem::NothingStarted));
    }
    Ok(started)
}

/// An entry as a command line (a script or module runs under Python), and
/// whether it names a script or module alone, without its options.
fn as_command(entry: &str) -> (String, bool) {
    let words = split_words(entry);
    let first = words.first().map_or("", String::as_str);
    match (first.ends_with(".py"), first == "-m") {
        (true, _) => (format!("python {entry}"), words.len() == 1),
        (_, true) => (format!("python {entry}"), words.len() == 2),
        _ => (entry.to_string(), false),
    }
}

/// Adds what the started shell scripts start: Python scripts, and other
/// shell scripts, which are read in turn.
fn follow_shell_scripts(files: &Files, started: &mut Started) {
    let mut todo: Vec<usize> = started.shell.iter().copied().collect();
    while let Some(s) = todo.pop() {
        let caller = &files.walked[s];
        // Its launch lines run where it is started, or where it `cd`s: its own directory, its project's.
        started.dirs.extend(caller.path().parent().map(Path::to_path_buf));
        if let Some(project) = files.projects.get(caller.project) {
            started.dirs.insert(absolute(Path::new(&project.display)));
        }
        let Ok(source) = read_file(caller) else {
            started.any_script.insert(caller.project);
            continue;
        };
        let text = match started.without_arguments.contains(&s) {
            true => shell::without_positional_parameters(&source.text),
            false => source.text,
        };
        let text = text.as_str();
        let script = shell::read(text);
        let words: Vec<String> = script.commands.iter().flat_map(|c| c.words()).collect();
        let line_of = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
        // A part the shell parser cannot read starts a script only if it names
        // Python or a launcher. A part around other such parts is the parser's
        // recovery, whose commands were read: only the innermost ones count.
        let unreadable = &script.unreadable;
        let around =
            |(from, to): &(usize, usize)| unreadable.iter().any(|(f, t)| (f, t) != (from, to) && from <= f && t <= to);
        let harmless: BTreeSet<usize> = unreadable
            .iter()
            .filter(|r| around(r) || !may_start_python(text.get(r.0..r.1).unwrap_or("python")))
            .map(|(from, _)| line_of(*from))
            .collect();
        for launch in launches_in(text, &script) {
            if launch.script == ANY_SCRIPT {
                if !harmless.contains(&launch.line) {
                    // It may start any script with any options: no branch is decided by the others.
                    started.any_script.insert(caller.project);
                    started.launches.push(launch);
                }
                continue;
            }
            let written: Vec<&str> =
                words.iter().filter(|w| file_name(w) == launch.script).filter_map(|w| literal_tail(w)).collect();
            // Where the script's own `cd`s have put the command, when their order settles it.
            let own_command = |c: &&shell::ShellCommand| {
                line_of(c.range.0) == launch.line && c.words().iter().any(|w| written.contains(&w.as_str()))
            };
            let dir = script.commands.iter().find(own_command).and_then(|c| dir_at(text, &script, c));
            started.scripts.extend(files.started_by(caller, &launch, &written, dir.as_deref()));
            started.launches.push(launch);
        }
        for word in words.iter().filter(|w| w.ends_with(".sh")) {
            for j in files.shell_named(caller, word) {
                if started.shell.insert(j) {
                    todo.push(j);
                }
            }
        }
    }
}

/// The walked files, looked up by display path.
struct Files<'w> {
    walked: &'w [ScanFile],
    projects: &'w [crate::walk::Project],
    by_display: HashMap<String, usize>,
    cwd: PathBuf,
}

impl<'w> Files<'w> {
    fn new(walked: &'w WalkResult) -> Self {
        let by_display = walked.files.iter().enumerate().map(|(i, f)| (f.display().into_owned(), i)).collect();
        Files { walked: &walked.files, projects: &walked.projects, by_display, cwd: absolute(Path::new(".")) }
    }

    /// The file at `written`, relative to `base`.
    fn at(&self, base: &Path, written: &str) -> Result<usize, EntryProblem> {
        let path = absolute(&base.join(written));
        match self.by_display.get(&display_path(&path, &self.cwd)) {
            Some(&i) => Ok(i),
            None if path.is_file() => Err(EntryProblem::NotScanned(path)),
            None => Err(EntryProblem::NoSuchFile(path)),
        }
    }

    /// The files that `python -m module` runs from `base`: the module's
    /// file or package `__main__.py` there, else wherever the scan holds one
    /// (a `src/` layout, an installed project).
    fn module(&self, base: &Path, module: &str) -> Vec<usize> {
        let path = module.replace('.', "/");
        let forms = [format!("{path}.py"), format!("{path}/__main__.py")];
        let here: Vec<usize> = forms.iter().filter_map(|f| self.at(base, f).ok()).collect();
        if !here.is_empty() {
            return here;
        }
        let ends = |d: &str| forms.iter().any(|f| d == f || d.ends_with(&format!("/{f}")));
        self.python().filter(|(_, f)| ends(&f.display())).map(|(i, _)| i).collect()
    }

    fn python(&self) -> impl Iterator<Item = (usize, &'w ScanFile)> {
        self.walked.iter().enumerate().filter(|(_, f)| f.kind == FileKind::Python)
    }

    /// The Python files that `launch`, a line of the shell script `caller`,
    /// starts. When the caller has changed into a directory whose path ends
    /// with `dir` (`cd nested`), those there, in the caller's project or one
    /// nested in it, if any are. Else in the caller's project (else
    /// anywhere), those whose path ends with a literal path written for the
    /// script (`tools/train.py` of `${dir}/tools/train.py`), and of those the
    /// ones under `dir`, if some are; else every file it may name.
    fn started_by(&self, caller: &ScanFile, launch: &Launch, written: &[&str], dir: Option<&str>) -> Vec<usize> {
        let named = |(_, f): &(usize, &ScanFile)| launch.starts(&f.display());
        let in_dir =
            |path: &str| dir.is_some_and(|d| written.iter().any(|w| ends_with_path(path, &format!("{d}/{w}"))));
        // Where the script's `cd`s put the command, a file there decides, also
        // in a project nested in the caller's (ModelZoo's `cd
        // $cur_path/references/classification`, a directory with its own
        // requirements.txt).
        let home = self.projects.get(caller.project).map_or(".", |p| p.display.as_str());
        let nested = |f: &ScanFile| home == "." || f.display().starts_with(&format!("{home}/"));
        let placed: Vec<usize> =
            self.python().filter(named).filter(|(_, f)| nested(f) && in_dir(&f.display())).map(|(i, _)| i).collect();
        if !placed.is_empty() {
            return placed;
        }
        let mut found: Vec<(usize, &ScanFile)> =
            self.python().filter(named).filter(|(_, f)| f.project == caller.project).collect();
        if found.is_empty() {
            found = self.python().filter(named).collect();
        }
        let by_path: Vec<usize> = found
            .iter()
            .filter(|(_, f)| written.iter().any(|w| ends_with_path(&f.display(), w)))
            .map(|(i, _)| *i)
            .collect();
        let under_dir: Vec<usize> = by_path.iter().copied().filter(|&i| in_dir(&self.walked[i].display())).collect();
        match (by_path.is_empty(), under_dir.is_empty()) {
            (true, _) => found.into_iter().map(|(i, _)| i).collect(),
            (false, true) => by_path,
            (false, false) => under_dir,
        }
    }

    /// The shell scripts that `word`, a word of the shell script `caller`,
    /// names: by its literal path's end; a bare name beside the caller,
    /// else anywhere in its project.
    fn shell_named(&self, caller: &ScanFile, word: &str) -> Vec<usize> {
        let Some(tail) = literal_tail(word) else { return Vec::new() };
        let shell = || self.walked.iter().enumerate().filter(|(_, f)| f.kind == FileKind::Shell);
        let matching = |(_, f): &(usize, &ScanFile)| f.project == caller.project && ends_with_path(&f.display(), tail);
        let found: Vec<usize> = shell().filter(matching).map(|(i, _)| i).collect();
        let caller_dir = parent(&caller.display()).to_string();
        let beside: Vec<usize> =
            found.iter().copied().filter(|&j| parent(&self.walked[j].display()) == caller_dir).collect();
        if tail.contains('/') || beside.is_empty() {
            found
        } else {
            beside
        }
    }
}

/// By index into the walked files: whether the `started` scripts reach the
/// file (see [`reach`]); what `--fix` may edit when runs are named.
pub fn reached_files(started: &Started, walked: &WalkResult) -> Vec<bool> {
    reach(started, walked, &Rereads::default()).reached
}

/// Decides which files the `started` scripts reach: those they import,
/// directly or through each other, across the scan's projects, those they
/// load by a name computed in a package they name, and the modules their
/// configurations instantiate ([`super::run_configs`]).
pub(crate) fn reach(started: &Started, walked: &WalkResult, rereads: &Rereads) -> Reach {
    let python: Vec<(usize, &ScanFile)> =
        walked.files.iter().enumerate().filter(|(_, f)| f.kind == FileKind::Python).collect();
    let node_of: HashMap<usize, usize> = python.iter().enumerate().map(|(n, (i, _))| (*i, n)).collect();
    let dir_of = |p: usize| walked.projects.get(p).map_or(".", |p| p.display.as_str());
    let files: Vec<&ScanFile> = python.iter().map(|(_, f)| *f).collect();
    let mut search = Search::new(ImportGraph::across(files.clone(), &dir_of, rereads), files);
    for &p in &started.any_script {
        search.undecided.entry(p).or_insert_with(|| "a launch script runs a command npu-mem cannot read".into());
    }
    let roots: Vec<usize> = started.scripts.iter().filter_map(|i| node_of.get(i).copied()).collect();
    search.grow(&roots);
    let words: Vec<&str> = started.launches.iter().flat_map(Launch::words).collect();
    let dirs: Vec<PathBuf> = started.dirs.iter().cloned().collect();
    let selection = {
        let scripts: Vec<(&ScanFile, &str)> =
            search.texts.iter().map(|(n, t)| (search.files[*n], t.as_str())).collect();
        run_configs::read(&words, &dirs, &scripts)
    };
    for &p in &selection.undecided {
        search
            .undecided
            .entry(p)
            .or_insert_with(|| "`@hydra.main` names its configuration directory by a computed value".into());
    }
    let targets: Vec<String> = selection.targets.iter().flat_map(|t| module_forms(t)).collect();
    let instantiated: Vec<usize> = roots.iter().flat_map(|&r| search.graph.resolve_from(r, &targets)).collect();
    search.grow(&instantiated);
    let undecided = |p: &usize| search.undecided.contains_key(p);
    let mut reached: Vec<bool> = walked
        .files
        .iter()
        .map(|f| !matches!(f.kind, FileKind::Python | FileKind::Shell) || undecided(&f.project))
        .collect();
    for (n, (i, _)) in python.iter().enumerate() {
        reached[*i] |= search.reached[n];
    }
    started.shell.iter().for_each(|&i| reached[i] = true);
    let modules = (python.len(), python.iter().filter(|(i, _)| reached[*i]).count());
    let mut unselected = HashMap::new();
    if let Some(names) = &selection.names {
        for (n, text) in &search.texts {
            let classes = run_configs::registered_classes(text);
            let chosen = |r: &run_configs::Registered| r.names.is_empty() || r.names.iter().any(|x| names.contains(x));
            let lines: Vec<(usize, usize)> = classes.iter().filter(|r| !chosen(r)).map(|r| r.lines).collect();
            if !lines.is_empty() {
                unselected.insert(python[*n].0, lines);
            }
        }
    }
    // Which run imports what, for the report (`--verbose`).
    let by_run = started
        .by_run
        .iter()
        .map(|(_, scripts)| {
            let roots: Vec<usize> = scripts.iter().filter_map(|i| node_of.get(i).copied()).collect();
            let nodes = reachable_in(&mut search.graph, &roots);
            let mut files = vec![false; walked.files.len()];
            python.iter().zip(nodes).for_each(|((i, _), r)| files[*i] = r);
            files
        })
        .collect();
    Reach { reached, unselected, modules, undecided: search.undecided, by_run }
}

/// A search of what the named runs reach, over the graph of the scan's Python files.
struct Search<'f> {
    graph: ImportGraph<'f, 'f>,
    files: Vec<&'f ScanFile>,
    /// By node: whether it is reached.
    reached: Vec<bool>,
    /// The reached files' texts, by node.
    texts: Vec<(usize, String)>,
    /// By project: why every file there counts as reached.
    undecided: BTreeMap<usize, String>,
}

impl<'f> Search<'f> {
    fn new(graph: ImportGraph<'f, 'f>, files: Vec<&'f ScanFile>) -> Self {
        let reached = vec![false; files.len()];
        Search { graph, files, reached, texts: Vec::new(), undecided: BTreeMap::new() }
    }

    /// Adds what `roots` reach: the files they import, and those they load
    /// by a name computed in a package (`import_module("models." + name)`:
    /// every module of `models`). A name computed from nothing literal may
    /// be any module: its project is undecided.
    fn grow(&mut self, roots: &[usize]) {
        let mut roots = roots.to_vec();
        while !roots.is_empty() {
            let now = reachable_in(&mut self.graph, &roots);
            roots.clear();
            let new: Vec<usize> = (0..now.len()).filter(|&n| now[n] && !self.reached[n]).collect();
            for n in new {
                self.reached[n] = true;
                let file = self.files[n];
                let Ok(source) = read_file(file) else { continue };
                for load in computed_loads(&source.text) {
                    match load {
                        ComputedLoad::InPackage(package) => roots.extend(self.graph.package_files(&package)),
                        ComputedLoad::Any => {
                            let why = format!("{} loads a module by a name it computes", file.display());
                            self.undecided.entry(file.project).or_insert(why);
                        }
                    }
                }
                self.texts.push((n, source.text));
            }
            roots.retain(|&m| !self.reached[m]);
        }
    }
}

/// The modules a `_target_` may name: `a.b.C` is class `C` of module `a.b`, or module `a.b.C`.
fn module_forms(target: &str) -> Vec<String> {
    let module = target.rsplit_once('.').map(|(m, _)| m.to_string());
    std::iter::once(target.to_string()).chain(module).collect()
}

/// Whether shell text may start a Python script: it names Python, a
/// script, a launcher, or runs a command it computes (`eval`, `$CMD`).
fn may_start_python(text: &str) -> bool {
    static STARTS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"python|\.py\b|\b(?:torchrun|deepspeed|accelerate|mpirun|horovodrun|srun|msrun|eval|exec)\b|(?:^|[;&|(`]|\$\()\s*\$",
        )
        .expect("a valid pattern")
    });
    text.lines().any(|line| STARTS.is_match(line))
}

/// Whether the display path `path` is `tail` or ends with `/tail`.
fn ends_with_path(path: &str, tail: &str) -> bool {
    path == tail || path.strip_suffix(tail).is_some_and(|rest| rest.ends_with('/'))
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The directory of a display path (`.` at the top).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(d, _)| d)
}
