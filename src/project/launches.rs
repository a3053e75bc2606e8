//! Which entry scripts of a project run at all. A port keeps the original's
//! scripts beside its own: Huawei's ModelZoo ports start `train_8p.py` from
//! `test/train_full_8p.sh` and leave the upstream `train.py`, MLPerf or
//! TensorRT tools untouched, and no NPU process ever runs them. When a
//! project's shell scripts start some of its entry scripts, an entry script
//! that nothing of the project names (no shell script, no other Python
//! file, notebook or document runs it: a mention in a comment, docstring
//! or prose does not) is taken as not
//! launched; it and the modules only it imports are reported as advice. An
//! import statement does not start a script: it runs the module, so where
//! other code imports a script nothing starts, the module's code runs but
//! its `if __name__ == "__main__":` block (a model file's self-test) does
//! not, and the findings there are advice too.
//!
//! Two kinds of entry script are taken as meant to run whatever the launch
//! scripts say: one the port edited for the NPU (it names `npu` or
//! `torch_npu`: nobody ports a script they do not run), and an application
//! a person starts by hand (it imports a web or UI framework such as
//! gradio, streamlit, flask or fastapi, or reads `input()`): demos and API
//! servers that a port left on CUDA fail when run on an NPU host.
//!
//! Training platforms start some scripts from a job configuration that is
//! not in the repository: a Huawei Cloud ModelArts job names its boot file
//! in the console, and ModelZoo ports keep theirs as `modelarts/train_start.py`
//! or `modelarts_entry_*.py` (20 of the 24 `modelarts/train_start.py` in
//! Ascend/ModelZoo-PyTorch `PyTorch/` are named by no file of their port).
//! Those count as started.
//!
//! Test modules (`test_*.py`, `*_test.py` in a `tests/` or `test/`
//! directory, `conftest.py`) are started by a test runner: in such a
//! project they count as not started unless something names them, or a
//! line of a shell script, Makefile, CI workflow or README runs a test
//! runner (`pytest tests/`, `python -m unittest`, `tox`). Upstream test
//! suites that a port keeps (mmdetection's, detectron2's) run on no NPU.
//!
//! A project whose shell scripts start none of its entry scripts (most
//! upstream repositories: their README is the launcher) is left alone, and
//! so is every entry script that something names, however it is named: the
//! file name (`train.py`) or its dotted module path (`tools.train`).
//!
//! In a project whose scripts start some entry scripts, a module-level
//! function that nothing in the project calls is code no process runs too
//! ([`crate::project::uncalled`]).

use crate::project::named_files::NamedFiles;
use crate::project::other_platforms;
use crate::project::processes::LazyGraph;
use crate::source::{read_file, LineSet};
use crate::walk::{Excluded, FileKind, ScanFile};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// Documents and configuration files that may hold a launch command
/// (README steps, CI workflows, Makefiles), searched only in projects that
/// have candidates: by extension, or by the whole file name.
const DOC_EXTENSIONS: &[&str] = &["md", "rst", "txt", "yml", "yaml", "cfg", "toml", "ini", "json"];
const DOC_NAMES: &[&str] = &["Makefile", "Dockerfile", "Procfile", "Jenkinsfile"];

/// Path parts that mark a script a training platform starts from its own
/// job configuration (ModelArts boot files), matched without case.
const PLATFORM_STARTED: &[&str] = &["modelarts"];

/// Larger documents are not searched (a data file, not a launch step).
const MAX_DOC_BYTES: u64 = 2 << 20;

/// What a project's launch scripts start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launches {
    /// Entry scripts that the project's shell scripts (or a training
    /// platform) start, in path order (display paths).
    pub launched: Vec<String>,
    /// Entry scripts that nothing of the project names, in path order.
    pub unlaunched: Vec<String>,
    /// Those scripts and the files only they import (display paths).
    pub files: HashSet<String>,
    /// The files in directories for another platform that no started run
    /// imports, and the shell scripts there (display paths; see
    /// [`crate::project::other_platforms`]).
    pub other_platform: HashSet<String>,
    /// By display path, the module-level functions that nothing in the
    /// project calls, among those that hold findings, in line order.
    pub uncalled: HashMap<String, Vec<crate::project::uncalled::Function>>,
    /// By display path, the first and last line of the `if __name__ ==
    /// "__main__":` block of each entry script nothing starts: only running
    /// the file as a script runs it, even where other code imports the module.
    pub main_blocks: HashMap<String, (usize, usize)>,
    /// By display path, in path and line order: the branches that hold
    /// findings and that no run of the launch scripts takes
    /// ([`crate::project::configurations`]).
    pub untaken: Vec<(String, crate::project::configurations::Untaken)>,
    /// By display path, in path and line order: the first line of each test
    /// that holds findings and runs only where CUDA is, in files that run
    /// without `transfer_to_npu` ([`crate::semantic::cuda_only`]).
    pub cuda_only_tests: Vec<(String, usize)>,
    /// The launch lines that start no run: the scripts they name reject
    /// their options ([`crate::project::ignored_launches`]).
    pub ignored: Vec<crate::project::ignored_launches::IgnoredLaunch>,
}

/// A project's entry scripts, by display path: those with an `if __name__
/// == "__main__":` guard, and scripts without one that parse their options
/// at module level (Hilander's `train.py`), which count only where a launch
/// script starts them or nothing imports them (a `config.py` that parses
/// options is a module).
pub(crate) struct EntryScripts<'a> {
    /// Scripts with a `__main__` guard.
    pub guarded: &'a BTreeSet<String>,
    /// Scripts that parse options at module level, without a guard.
    pub unguarded: &'a BTreeSet<String>,
    /// Scripts that only ignored launch lines name: no shell script starts them.
    pub only_ignored_launches: &'a BTreeSet<String>,
    /// Scripts that a shell script of a project around this one starts by
    /// path ([`crate::project::outer_launches`]).
    pub started_from_outside: &'a BTreeSet<String>,
    /// With runs the user names ([`crate::project::named_runs`]), the
    /// project's scripts they start: then no other script counts as started.
    pub named: Option<&'a BTreeSet<String>>,
}

/// Finds which of `entries` (one project's entry scripts) run: `files`
/// are the project's files, `dir` its directory as displayed,
/// `shell_names` the file names its shell scripts spell out, `graph` its
/// import graph (read only when some entry is not launched, or a script
/// without a guard may be a module); documents
/// under `dir` that the scan excludes are not read. `finding_lines` holds
/// the lines of the scan's findings by display path: only functions that
/// hold some are looked for callers.
pub(crate) fn find(
    files: &[&ScanFile],
    dir: &str,
    excluded: &Excluded,
    entries: EntryScripts,
    shell_names: &NamedFiles,
    graph: &mut LazyGraph,
    finding_lines: &HashMap<&str, LineSet>,
) -> Launches {
    let scripts: BTreeSet<String> = entries.guarded.union(entries.unguarded).cloned().collect();
    // Where some shell scripts are written for the NPU, only they (and what
    // they run) start NPU runs; the others are the original's recipes.
    let (by_npu_launchers, inert_shell) = match entries.named {
        // The shell scripts they do not run are left to reach (`named_runs`).
        Some(named) => (Some(named.clone()), HashSet::new()),
        None => {
            npu_runs(files, dir, &scripts).map_or((None, HashSet::new()), |(started, inert)| (Some(started), inert))
        }
    };
    let ignored = entries.only_ignored_launches;
    let started_by_shell = |path: &str| {
        !ignored.contains(path)
            && match &by_npu_launchers {
                Some(named) => named.contains(path),
                // Another platform's script: only a text outside such directories starts it (read below).
                None => shell_names.names(path) && !other_platforms::holds(path, dir),
            }
    };
    let guessed = |e: &str| entries.named.is_none() && platform_started(e);
    let (mut launched, mut candidates): (BTreeSet<String>, BTreeSet<String>) =
        scripts.iter().cloned().partition(|e| started_by_shell(e) || guessed(e));
    // What the NPU launchers start runs, guard or not (the module of an
    // installed command has none: its function is called directly).
    launched.extend(by_npu_launchers.iter().flatten().filter(|p| !ignored.contains(*p)).cloned());
    if launched.is_empty() && entries.named.is_none() {
        return Launches::default();
    }
    // A project around this one starts them, whatever its own scripts say.
    launched.extend(entries.started_from_outside.intersection(&scripts).cloned());
    candidates.retain(|c| !launched.contains(c));
    // A script without a guard that something imports is a module.
    let unguarded: BTreeSet<String> = candidates.intersection(entries.unguarded).cloned().collect();
    if !unguarded.is_empty() {
        let imported = graph.get().imported(&unguarded);
        candidates.retain(|c| !imported.contains(c));
    }
    // Test modules are started by a test runner, which is a launcher too.
    let tests: BTreeSet<String> = files
        .iter()
        .filter(|f| f.kind == FileKind::Python && is_test_module(&f.display()))
        .map(|f| f.display().into_owned())
        .filter(|t| !launched.contains(t) && !started_by_shell(t))
        .collect();
    candidates.extend(tests.iter().cloned());
    let functions = functions_with_findings(files, finding_lines);
    let python = files.iter().filter(|f| f.kind == FileKind::Python).map(|f| f.display());
    let callers = crate::project::uncalled::Callers::new(&functions, python);
    // The project's texts are read only when there is something to decide.
    let texts = match candidates.is_empty() && functions.is_empty() {
        true => ProjectTexts::default(),
        false => {
            let shell = ShellTexts { inert: &inert_shell, ignored };
            read_project(files, dir, excluded, shell, &candidates, &tests, &callers)
        }
    };
    let ProjectTexts { mut started, mut main_blocks, mut uncalled } = texts;
    // Their same-file callers were only read to decide them.
    for (path, functions) in uncalled.iter_mut() {
        let lines = finding_lines.get(path.as_str());
        functions.retain(|u| lines.is_some_and(|l| l.any_within(u.first, u.last)));
    }
    uncalled.retain(|_, functions| !functions.is_empty());
    if entries.named.is_some() {
        // What the texts name is a guess the named runs replace.
        started.clear();
    }
    let unlaunched: BTreeSet<String> = candidates.into_iter().filter(|c| !started.contains(c)).collect();
    main_blocks.retain(|path, _| unlaunched.contains(path));
    let others: BTreeSet<String> =
        scripts.iter().chain(&tests).chain(&launched).filter(|e| !unlaunched.contains(*e)).cloned().collect();
    // Named runs decide reach themselves.
    let other_platform = match entries.named {
        Some(_) => HashSet::new(),
        None => other_platform_files(files, dir, &others, graph),
    };
    let mut files = match unlaunched.is_empty() || entries.named.is_some() {
        true => HashSet::new(),
        false => {
            let graph = graph.get();
            graph.only_reached_from(&graph.ids(&unlaunched), &graph.ids(&others))
        }
    };
    files.extend(inert_shell);
    Launches {
        launched: launched.into_iter().collect(),
        unlaunched: unlaunched.into_iter().collect(),
        files,
        other_platform,
        uncalled,
        main_blocks,
        untaken: Vec::new(),
        cuda_only_tests: Vec::new(),
        ignored: Vec::new(),
    }
}

/// The files of `files` (one project's, displayed under `dir`) in its
/// directories for another platform that none of the `started` scripts
/// imports, with the Python files only those import, and the shell scripts
/// there ([`crate::project::other_platforms`]).
fn other_platform_files(
    files: &[&ScanFile],
    dir: &str,
    started: &BTreeSet<String>,
    graph: &mut LazyGraph,
) -> HashSet<String> {
    let there: Vec<&ScanFile> = files.iter().copied().filter(|f| other_platforms::holds(&f.display(), dir)).collect();
    if there.is_empty() {
        return HashSet::new();
    }
    let python: BTreeSet<String> =
        there.iter().filter(|f| f.kind == FileKind::Python).map(|f| f.display().into_owned()).collect();
    let graph = graph.get();
    let mut found = graph.only_reached_from(&graph.ids(&python), &graph.ids(started));
    found.extend(there.iter().filter(|f| f.kind == FileKind::Shell).map(|f| f.display().into_owned()));
    found
}

/// Where the project's NPU launch scripts start some of `entries`
/// ([`crate::project::npu_launchers`]): the Python files they start (by path or
/// module, or by a command the project installs, [`crate::project::console_scripts`]), and the shell
/// scripts that start no NPU run (the original's recipes), by display path.
/// `None` where no shell script names the NPU, or the ones that do start
/// no entry script (a Docker start script naming the NPU devices).
fn npu_runs(files: &[&ScanFile], dir: &str, entries: &BTreeSet<String>) -> Option<(BTreeSet<String>, HashSet<String>)> {
    // The README steps of the project's top directory: the port's own
    // instructions (the original's documents below it have their own).
    let documents = || {
        let readme = |p: &Path| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let small = p.metadata().is_ok_and(|m| m.is_file() && m.len() <= MAX_DOC_BYTES);
            name.to_ascii_lowercase().starts_with("readme") && small
        };
        let read = |p: std::path::PathBuf| {
            let text = String::from_utf8_lossy(&std::fs::read(&p).ok()?).into_owned();
            Some((p.display().to_string().trim_start_matches("./").to_string(), text))
        };
        let listed = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path());
        listed.filter(|p| readme(p)).filter_map(read).collect()
    };
    let is_command = |text: &str, at: usize| starts_there(text, at, TextKind::Document, &Skipped::default());
    let scripts = crate::project::npu_launchers::closure(files, dir, documents, is_command)?;
    let python: BTreeSet<String> =
        files.iter().filter(|f| f.kind == FileKind::Python).map(|f| f.display().into_owned()).collect();
    let names = ScriptNames::new(&python, dir);
    let by_index: Vec<&String> = python.iter().collect();
    // Scripts run by path, and modules run by the commands the project installs (`fairseq-train`).
    let commands = crate::project::console_scripts::of_project(dir, &python);
    let started: BTreeSet<String> = scripts
        .iter()
        .flat_map(|(_, text)| names.named_in(text, TextKind::Shell))
        .map(|i| by_index[i].clone())
        .chain(scripts.iter().flat_map(|(_, text)| crate::project::console_scripts::started_in(text, &commands)))
        .collect();
    if !started.iter().any(|s| entries.contains(s)) {
        return None;
    }
    let npu: HashSet<&str> = scripts.iter().map(|(p, _)| p.as_str()).collect();
    let shell = files.iter().filter(|f| f.kind == FileKind::Shell).map(|f| f.display().into_owned());
    Some((started, shell.filter(|p| !npu.contains(p.as_str())).collect()))
}

/// By display path, the functions and methods of the project's Python files
/// that hold findings (at `finding_lines`), and those of the same files that
/// mention one of them: those whose callers are looked for. A same-file
/// caller may be the only one (`MetricLogger.synchronize_between_processes`
/// calls each meter's), and whether it is called itself decides the other.
fn functions_with_findings(
    files: &[&ScanFile],
    finding_lines: &HashMap<&str, LineSet>,
) -> HashMap<String, Vec<crate::project::uncalled::Function>> {
    files
        .par_iter()
        .filter(|f| f.kind == FileKind::Python)
        .filter_map(|f| {
            let path = f.display();
            let lines = finding_lines.get(path.as_ref())?;
            let mut functions = crate::project::uncalled::functions_and_methods(&read_file(f).ok()?.text);
            // `torch.hub.load(repo, "name")` calls a hubconf.py's public
            // functions by name, from outside the project.
            let hub = path.rsplit('/').next() == Some("hubconf.py");
            functions.retain(|u| !hub || u.name.starts_with('_'));
            let holders: Vec<String> =
                functions.iter().filter(|u| lines.any_within(u.first, u.last)).map(|u| u.name.clone()).collect();
            functions.retain(|u| holders.contains(&u.name) || holders.iter().any(|name| u.mentions(name)));
            (!functions.is_empty()).then(|| (path.into_owned(), functions))
        })
        .collect()
}

/// Whether the file at `path` is a test module, as pytest finds them
/// (`test_*.py`, `*_test.py`) in a test directory, or the `conftest.py` it
/// loads; a library's `test_time_aug.py` outside one is a module.
fn is_test_module(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or(path);
    let in_tests = parts.any(|d| matches!(d, "tests" | "test" | "unittests" | "unit_tests"));
    name == "conftest.py"
        || in_tests && (name.starts_with("test_") && name.ends_with(".py") || name.ends_with("_test.py"))
}

/// Whether a training platform starts the script at `path` (a ModelArts boot file).
fn platform_started(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    PLATFORM_STARTED.iter().any(|part| lower.contains(part))
}

/// What names an entry script: its file name, and its dotted module path
/// in the project (`tools.train`; `-m train` for a script at the top), also
/// as Python finds it from a `src/` directory on `PYTHONPATH` (`src/pkg/train.py`
/// is `pkg.train`); a package's `__main__.py` is run as the package (`-m pkg.train`).
fn needles(entry: &str, dir: &str) -> Vec<String> {
    let relative =
        if dir == "." { entry } else { entry.strip_prefix(dir).map_or(entry, |r| r.trim_start_matches('/')) };
    let file = relative.rsplit('/').next().unwrap_or(relative).to_string();
    let module = relative.trim_end_matches(".py").replace('/', ".");
    let mut modules = vec![module.clone()];
    if let Some(package) = module.strip_suffix(".__main__") {
        modules.push(package.to_string());
    }
    let under_src: Vec<String> = modules.iter().filter_map(|m| m.strip_prefix("src.").map(str::to_string)).collect();
    modules.extend(under_src);
    let dotted = modules.into_iter().map(|m| if m.contains('.') { m } else { format!("-m {m}") });
    std::iter::once(file).chain(dotted).collect()
}

/// Reads the project's texts (its Python files, notebooks and shell
/// scripts, and the documents in its directory) one at a time, for two
/// answers. First, the `candidates` taken as started although no shell
/// script names them: those that a text other than their own names, and
/// those whose own text shows an NPU port or an application; the `tests`
/// among them when a shell script or document runs a test runner. Second,
/// by display path, the functions of `callers` that nothing calls.
fn read_project(
    files: &[&ScanFile],
    dir: &str,
    excluded: &Excluded,
    shell: ShellTexts,
    candidates: &BTreeSet<String>,
    tests: &BTreeSet<String>,
    callers: &crate::project::uncalled::Callers,
) -> ProjectTexts {
    let names = ScriptNames::new(candidates, dir);
    let own: HashMap<&str, usize> = candidates.iter().enumerate().map(|(i, c)| (c.as_str(), i)).collect();
    let by_index: Vec<&String> = candidates.iter().collect();
    // What one text says: the candidates it starts, whether it runs a test runner, what it calls.
    let read = |path: &str, kind: Option<FileKind>, commands: bool, text: &str| {
        let mut started = names.named_in(text, TextKind::of(kind));
        if other_platforms::holds(path, dir) {
            // Another platform's steps: no NPU run follows them.
            started.clear();
        }
        if kind == Some(FileKind::Shell) {
            // Their only launch lines there stop at a usage error.
            started.retain(|&j| !shell.ignored.contains(by_index[j]));
        }
        let mut main_blocks = Vec::new();
        // A script's own text names it in its usage line; it counts only as an NPU port or an application.
        if let Some(&i) = own.get(path) {
            started.retain(|&j| j != i);
            if runs_by_itself(text) {
                started.push(i);
            }
            main_blocks.extend(main_block(text).filter(|_| kind == Some(FileKind::Python)).map(|b| (i, b)));
        }
        let started = started.into_iter().collect::<BTreeSet<usize>>();
        (started, main_blocks, commands && TEST_RUNNER.is_match(text), callers.seen_in(path, text))
    };
    let scanned = files
        .par_iter()
        .filter(|f| matches!(f.kind, FileKind::Python | FileKind::Notebook | FileKind::Shell))
        .filter(|f| !shell.inert.contains(f.display().as_ref()))
        .filter_map(|f| {
            let text = read_file(f).ok()?.text;
            Some(read(&f.display(), Some(f.kind), f.kind == FileKind::Shell, &text))
        });
    let here = |p: &Path| !other_platforms::holds(&p.to_string_lossy().replace('\\', "/"), dir);
    let docs = documents(dir, excluded).into_par_iter().filter(|p| here(p)).filter_map(|p| {
        let commands = p.file_name().is_some_and(|n| n == "Makefile")
            || p.extension().and_then(|e| e.to_str()).is_some_and(|e| COMMAND_EXTENSIONS.contains(&e));
        // A document in another encoding (a GBK README) still names scripts in ASCII.
        Some(read("", None, commands, &String::from_utf8_lossy(&std::fs::read(p).ok()?)))
    });
    // Added up as they are read: the texts are never all held at once.
    let nothing = || (BTreeSet::new(), Vec::new(), false, callers.nothing_seen());
    let (named, blocks, runner_named, seen) =
        scanned.chain(docs).reduce(nothing, |(mut all, mut all_blocks, runner, seen), (named, blocks, r, calls)| {
            all.extend(named);
            all_blocks.extend(blocks);
            (all, all_blocks, runner || r, seen.and(calls))
        });
    let mut started: HashSet<String> = named.into_iter().map(|i: usize| by_index[i].clone()).collect();
    if runner_named {
        started.extend(tests.iter().cloned());
    }
    let main_blocks = blocks.into_iter().map(|(i, b)| (by_index[i].clone(), b)).collect();
    ProjectTexts { started, main_blocks, uncalled: callers.uncalled(&seen) }
}

/// How [`read_project`] reads a project's shell scripts.
#[derive(Clone, Copy)]
struct ShellTexts<'a> {
    /// Those that start no NPU run, not read.
    inert: &'a HashSet<String>,
    /// The scripts that they name only in ignored launch lines.
    ignored: &'a BTreeSet<String>,
}

/// What [`read_project`] finds in a project's texts.
#[derive(Default)]
struct ProjectTexts {
    /// The candidates that something starts.
    started: HashSet<String>,
    /// By display path, the `__main__` block of each candidate that has one.
    main_blocks: HashMap<String, (usize, usize)>,
    /// By display path, the functions that nothing calls.
    uncalled: HashMap<String, Vec<crate::project::uncalled::Function>>,
}

/// Documents whose lines may be commands that run the tests: CI workflows
/// and README steps. Requirement lists and tool settings (`pytest.ini`,
/// `setup.cfg`) name a runner without running it.
const COMMAND_EXTENSIONS: &[&str] = &["md", "rst", "yml", "yaml"];

/// A line that runs a test runner (`pytest tests/`, `- run: python -m
/// pytest`, `$ tox`): the project runs its tests.
static TEST_RUNNER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?m)^[\s>$-]*(?:run:\s*)?(?:(?:pytest|py\.test|nosetests|tox)(?:\s|$)|python3?\s+-m\s+(?:pytest|unittest)\b)",
    )
    .expect("a valid pattern")
});

/// Whether a script's own text says it is meant to run: it uses the NPU
/// (the port edited it), or it is an application a person starts. An
/// `import torch_npu` alone is no sign: Huawei added one, under a check of
/// the torch version, to every Python file of many ports, scripts they never
/// run included (720 such imports in ModelZoo `PyTorch/`).
fn runs_by_itself(text: &str) -> bool {
    static MEANT_TO_RUN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?m)\bnpu\b|transfer_to_npu|^\s*(?:import|from)\s+(?:gradio|streamlit|flask|fastapi|uvicorn|tornado)\b|\binput\(",
        )
        .expect("a valid pattern")
    });
    let uses_torch_npu = |line: &str| {
        !(crate::semantic::import_lines::is_import_line(line) || line.trim_start().starts_with('#'))
            && line.contains("torch_npu")
    };
    MEANT_TO_RUN.is_match(text) || (text.contains("torch_npu") && crate::source::python_lines(text).any(uses_torch_npu))
}

/// The documents of the project directory `dir` (as displayed) that may
/// hold launch steps, hidden directories included (`.github/workflows`);
/// ignored and excluded files and the `.git` directory not.
fn documents(dir: &str, excluded: &Excluded) -> Vec<std::path::PathBuf> {
    let root = Path::new(dir);
    if !root.is_dir() {
        return Vec::new();
    }
    let is_doc = |p: &Path| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        DOC_NAMES.contains(&name) || p.extension().and_then(|e| e.to_str()).is_some_and(|e| DOC_EXTENSIONS.contains(&e))
    };
    excluded
        .walker(root, |e| e.file_name() == ".git")
        .hidden(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| e.metadata().is_ok_and(|m| m.len() <= MAX_DOC_BYTES))
        .map(ignore::DirEntry::into_path)
        .filter(|p| is_doc(p) && !inert_ci(p))
        .collect()
}

/// Where a CI service looks for its configuration, relative to the root of
/// the repository: a directory of jobs, or a file at the top.
const CI_DIRS: &[&str] = &[".github", ".circleci", ".buildkite"];
const CI_FILES: &[&str] = &[
    ".travis.yml",
    ".gitlab-ci.yml",
    "azure-pipelines.yml",
    "appveyor.yml",
    ".appveyor.yml",
    ".drone.yml",
    "bitbucket-pipelines.yml",
    "Jenkinsfile",
];

/// Whether the document at `path` is a CI configuration that no CI service
/// reads: CI services read theirs only at the root of the repository, and
/// this one sits in a directory below it (a port keeps upstream's
/// `.circleci/config.yml` or `.travis.yml` in its own directory of a larger
/// repository). The repository is the nearest directory above holding
/// `.git`; with none (an exported tree), nothing is known and the file counts.
fn inert_ci(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let ci_root = match path
        .ancestors()
        .skip(1)
        .find(|a| a.file_name().and_then(|n| n.to_str()).is_some_and(|n| CI_DIRS.contains(&n)))
    {
        Some(ci_dir) => ci_dir.parent(),
        None if CI_FILES.contains(&name) => path.parent(),
        None => return false,
    };
    let Some(ci_root) = ci_root.map(|r| std::path::absolute(r).unwrap_or_else(|_| r.to_path_buf())) else {
        return false;
    };
    let repository = ci_root.ancestors().find(|a| a.join(".git").exists());
    repository.is_some_and(|repo| repo != ci_root)
}

/// The names of a set of scripts, searched in one pass over a text.
struct ScriptNames {
    /// Over every script's [`needles`]; `None` if it could not be built
    /// (too many names), when no text names any script.
    automaton: Option<aho_corasick::AhoCorasick>,
    /// For each pattern, the script's index (in the set's order).
    owner: Vec<usize>,
}

impl ScriptNames {
    fn new(scripts: &BTreeSet<String>, dir: &str) -> Self {
        let (patterns, owner): (Vec<String>, Vec<usize>) =
            scripts.iter().enumerate().flat_map(|(i, s)| needles(s, dir).into_iter().map(move |n| (n, i))).unzip();
        ScriptNames { automaton: aho_corasick::AhoCorasick::new(&patterns).ok(), owner }
    }

    /// The scripts (indexes) that `text`, a text of `kind`, names as whole
    /// names where a command could start them ([`starts_there`]).
    fn named_in(&self, text: &str, kind: TextKind) -> Vec<usize> {
        let Some(automaton) = &self.automaton else { return Vec::new() };
        let mentions: Vec<_> = automaton
            .find_overlapping_iter(text)
            .filter(|m| crate::semantic::named_files::whole_name(text.as_bytes(), m.start(), m.end()))
            .collect();
        if mentions.is_empty() {
            return Vec::new();
        }
        let skipped = Skipped::of(text, kind);
        let mut named: Vec<usize> = mentions
            .iter()
            .filter(|m| starts_there(text, m.start(), kind, &skipped))
            .map(|m| self.owner[m.pattern().as_usize()])
            .collect();
        named.sort_unstable();
        named.dedup();
        named
    }
}

/// The kinds of text that may name a script, each read its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextKind {
    /// A Python module: its code may start a script (`subprocess`, `os.system`).
    Python,
    /// A shell script: its commands start scripts.
    Shell,
    /// A document, configuration file or notebook: its command lines
    /// (README steps, CI `run:` lines, `!python` cells) start scripts.
    Document,
}

impl TextKind {
    fn of(kind: Option<FileKind>) -> TextKind {
        match kind {
            Some(FileKind::Python) => TextKind::Python,
            Some(FileKind::Shell) => TextKind::Shell,
            _ => TextKind::Document,
        }
    }
}

/// What [`starts_there`] looks up for every mention of one text, found once.
#[derive(Default)]
struct Skipped<'t> {
    /// Where a Python text's triple quotes stand, by position.
    triple_quotes: Vec<(usize, &'t str)>,
    /// A shell script's text, and its comments once a mention needs them.
    shell: Option<(&'t str, std::cell::OnceCell<crate::parse::shell::Comments>)>,
}

impl<'t> Skipped<'t> {
    fn of(text: &'t str, kind: TextKind) -> Self {
        match kind {
            TextKind::Python => Skipped {
                triple_quotes: text.match_indices("\"\"\"").chain(text.match_indices("'''")).collect(),
                ..Skipped::default()
            },
            TextKind::Shell => Skipped { shell: Some((text, std::cell::OnceCell::new())), ..Skipped::default() },
            TextKind::Document => Skipped::default(),
        }
    }

    /// Whether byte `at` of a shell script is in one of its comments; the
    /// script is parsed only when one may be.
    fn in_shell_comment(&self, at: usize) -> bool {
        let Some((text, comments)) = &self.shell else { return false };
        crate::parse::shell::comment_may_cover(text, at, at + 1)
            && comments.get_or_init(|| crate::parse::shell::read(text).comments).contain(at)
    }
}

/// Whether a script's name at byte `at` of `text` (a text of `kind`) is
/// where a command could start it. Mentions that start nothing do not
/// count: in Python, an import line (importing a script's module runs it as
/// a module, not as a script), a comment or a docstring ("write your own
/// loop like `tools/plain_train_net.py`"); in a shell script, a comment;
/// in a document, a line with no command before the name (prose, a link,
/// a URL in a list of upstream sources).
fn starts_there(text: &str, at: usize, kind: TextKind, skipped: &Skipped) -> bool {
    let line_start = crate::source::line_start_at(text, at);
    let before = &text[line_start..at];
    match kind {
        TextKind::Python => {
            let import = crate::semantic::import_lines::is_import_line(before);
            !(import || in_comment(before) || in_triple_quotes(&skipped.triple_quotes, at))
        }
        TextKind::Shell => !skipped.in_shell_comment(at),
        // A pipe stage (`| tok.py`) runs the script by its name.
        TextKind::Document => before.ends_with("./") || before.trim_end().ends_with('|') || RUN_WORD.is_match(before),
    }
}

/// A word that runs a script when a line says it before the script's name:
/// an interpreter (`python3`, `$(PYTHON)`, `bash`), a launcher (`torchrun`,
/// `accelerate launch`, `mpirun`), a notebook's `%run` or a prompt's `$`;
/// in Chinese documents (Huawei's READMEs), "run", "execute" or "start".
static RUN_WORD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r#"(?i)(?:^|[\s`'"(\[;&|=!%])(?:python[\w.]*|py|sh|bash|zsh|source|exec|nohup|torchrun|deepspeed|accelerate|mpirun|srun|horovodrun|launch|run|streamlit|uvicorn|gunicorn|-m)(?:[^\w-]|$)|^\s*[$>!%]|运行|执行|启动"#,
    )
    .expect("a valid pattern")
});

/// Whether the end of `line_before` (a line up to some point) is inside a
/// `#` comment: a `#` outside quotes comes before it.
fn in_comment(line_before: &str) -> bool {
    let mut quote: Option<char> = None;
    for c in line_before.chars() {
        match (quote, c) {
            (None, '#') => return true,
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    false
}

/// Whether byte `at` of a Python text is inside a triple-quoted string (a
/// docstring): an odd number of one kind of `triple_quotes` (the text's
/// `"""` and `'''`, by position) stand before it.
fn in_triple_quotes(triple_quotes: &[(usize, &str)], at: usize) -> bool {
    let opened = |quote: &str| triple_quotes.iter().filter(|(i, q)| *i < at && *q == quote).count();
    opened("\"\"\"") % 2 == 1 || opened("'''") % 2 == 1
}

/// The first and last line of the `if __name__ == "__main__":` block at
/// the top level of a Python text, if it has one: the lines up to the next
/// statement at the top level.
fn main_block(text: &str) -> Option<(usize, usize)> {
    static GUARD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"^if\s*\(?\s*(__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)\s*\)?\s*:"#,
        )
        .expect("a valid pattern")
    });
    let lines: Vec<&str> = crate::source::python_lines(text).collect();
    let guard = lines.iter().position(|l| GUARD.is_match(l))?;
    let top_level = |l: &&str| !l.trim().is_empty() && !l.starts_with([' ', '\t', '#']) && !l.starts_with("else");
    let next = lines[guard + 1..].iter().position(top_level).map_or(lines.len(), |n| guard + 1 + n);
    Some((guard + 1, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `text` names the script `p/tools/train.py` of project `p`.
    fn names_trainer(text: &str) -> bool {
        ScriptNames::new(&BTreeSet::from(["p/tools/train.py".to_string()]), "p").named_in(text, TextKind::Python) == [0]
    }

    #[test]
    fn the_main_block_runs_to_the_next_top_level_statement() {
        let text = "import x\n\nif __name__ == '__main__':\n    main()\n\n    # done\nelse:\n    pass\nprint(1)\n";
        assert_eq!(main_block(text), Some((3, 8)));
        assert_eq!(
            main_block("def f():\n    if __name__ == \"__main__\":\n        pass\n"),
            None,
            "not at the top level"
        );
        assert_eq!(main_block("if ('__main__' == __name__):\n    run()\n"), Some((1, 2)));
    }

    #[test]
    fn a_name_counts_only_whole() {
        assert!(names_trainer("python3 tools/train.py --cfg x"));
        assert!(!names_trainer("from tools.train import main"), "an import runs the module, not the script");
        assert!(names_trainer("run `train.py`."));
        assert!(!names_trainer("python pretrain.py"));
        assert!(!names_trainer("python train.pyc"));
        assert!(!names_trainer("python my-train.py"));
        assert!(names_trainer("python -m tools.train --x"));
        assert!(!names_trainer("python -m tools.train_net"));
        assert!(!names_trainer("python -m tools.train.sub"));
        assert!(names_trainer("see tools.train."));
    }

    /// Whether `text`, a text of `kind`, starts the script `p/tools/train.py`.
    fn starts_trainer(text: &str, kind: TextKind) -> bool {
        ScriptNames::new(&BTreeSet::from(["p/tools/train.py".to_string()]), "p").named_in(text, kind) == [0]
    }

    #[test]
    fn only_a_command_starts_a_script() {
        let python = TextKind::Python;
        assert!(starts_trainer("subprocess.run(['python', 'tools/train.py'])\n", python));
        assert!(starts_trainer("os.system(f'python train.py --lr {lr}')  # run it\n", python));
        assert!(!starts_trainer("x = 1  # as in train.py\n", python));
        assert!(!starts_trainer("def f():\n    \"\"\"Write a loop like `tools/train.py`.\"\"\"\n", python));
        assert!(starts_trainer("\"\"\"Doc.\"\"\"\nCMD = 'python train.py'\n", python), "after a docstring closes");
        assert!(!starts_trainer("#!/bin/bash\n# python3 tools/train.py --amp\n", TextKind::Shell));
        assert!(starts_trainer("nohup python3 tools/train.py --amp &\n", TextKind::Shell));
        let document = TextKind::Document;
        assert!(starts_trainer("    python3 tools/train.py --cfg a.yaml\n", document));
        assert!(starts_trainer("$ ./tools/train.py\n", document));
        assert!(starts_trainer("      - run: torchrun --nproc_per_node 8 tools/train.py\n", document));
        assert!(starts_trainer("Run `tools/train.py` to train.\n", document));
        assert!(starts_trainer("\"!python train.py --epochs 1\\n\",\n", document), "a notebook cell");
        assert!(starts_trainer("    | normalize.py | train.py \\\n", document), "a pipe stage");
        assert!(starts_trainer("或运行`tools/train.py`文件\n", document), "Huawei's READMEs say \"run\" in Chinese");
        assert!(!starts_trainer("One such loop is in [tools/train.py](../../tools/train.py).\n", document));
        assert!(!starts_trainer("| code | https://github.com/o/r/blob/main/tools/train.py | |\n", document));
    }

    #[test]
    fn npu_code_and_applications_run_by_themselves() {
        assert!(!runs_by_itself("import torch\nif torch.__version__ >= '1.8':\n    import torch_npu\nx.cuda()\n"));
        assert!(runs_by_itself("import torch_npu\ntorch_npu.npu_format_cast(x, 29)\n"));
        assert!(runs_by_itself("from torch_npu.contrib import transfer_to_npu\n"));
        assert!(runs_by_itself("model.to('npu:0')\n"));
        assert!(runs_by_itself("    x = x.npu()\n"));
        assert!(runs_by_itself("import gradio as gr\n"));
        assert!(runs_by_itself("from fastapi import FastAPI\n"));
        assert!(runs_by_itself("while True:\n    query = input('> ')\n"));
        assert!(!runs_by_itself("size = cfg.INPUT.MIN_SIZE  # inputs\n"));
        assert!(!runs_by_itself("x = raw_input()\nmodel.cuda()\n"));
        assert!(!runs_by_itself("# pip install streamlit\n"));
    }

    #[test]
    fn a_test_runner_counts_where_a_command_runs_it() {
        assert!(TEST_RUNNER.is_match("cd repo\npytest tests/ -x\n"));
        assert!(TEST_RUNNER.is_match("    $ python -m pytest\n"));
        assert!(TEST_RUNNER.is_match("      - run: python3 -m unittest discover\n"));
        assert!(TEST_RUNNER.is_match("tox\n"));
        assert!(!TEST_RUNNER.is_match("We test with pytest on GPUs.\n"));
        assert!(!TEST_RUNNER.is_match("import unittest\n"));
        assert!(!TEST_RUNNER.is_match("pytest-cov\n"));
    }

    #[test]
    fn test_modules_are_what_pytest_collects() {
        assert!(is_test_module("p/tests/test_model.py"));
        assert!(is_test_module("p/tests/unit/model_test.py"));
        assert!(!is_test_module("p/mmdet/datasets/pipelines/test_time_aug.py"));
        assert!(is_test_module("p/tests/conftest.py"));
        assert!(!is_test_module("p/test/train_full_8p.py"));
        assert!(!is_test_module("p/testing.py"));
        assert!(!is_test_module("p/latest_model.py"));
    }

    #[test]
    fn ci_configuration_below_the_repository_root_runs_nothing() {
        let root = std::env::temp_dir().join(format!("npu-mem-inert-ci-{}", std::process::id()));
        let file = |rel: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "script: pytest tests/\n").unwrap();
            p
        };
        let (top, port, travis) =
            (file("repo/.circleci/config.yml"), file("repo/port/.circleci/config.yml"), file("repo/port/.travis.yml"));
        let workflow = file("repo/port/.github/workflows/ci.yml");
        let readme = file("repo/port/README.md");
        let exported = file("tree/port/.travis.yml");
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        assert!(!inert_ci(&top), "at the root of the repository");
        assert!(inert_ci(&port) && inert_ci(&travis) && inert_ci(&workflow), "below it");
        assert!(!inert_ci(&readme), "not a CI configuration");
        assert!(!inert_ci(&exported), "no repository: nothing known");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn an_entry_is_named_by_its_file_name_and_its_module_path() {
        assert_eq!(needles("p/tools/train.py", "p"), ["train.py", "tools.train"]);
        assert_eq!(needles("train.py", "."), ["train.py", "-m train"]);
        assert_eq!(needles("p/train.py", "p"), ["train.py", "-m train"]);
        // Issue 47, item 6: a package run as `-m pkg.train`, a module under `src/`.
        assert_eq!(needles("p/pkg/train/__main__.py", "p"), ["__main__.py", "pkg.train.__main__", "pkg.train"]);
        assert_eq!(needles("p/src/pkg/train.py", "p"), ["train.py", "src.pkg.train", "pkg.train"]);
        assert_eq!(
            needles("p/src/app/__main__.py", "p"),
            ["__main__.py", "src.app.__main__", "src.app", "app.__main__", "-m app"]
        );
    }
}
