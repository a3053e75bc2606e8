//! The server's one door into the analysis core: every call the server
//! makes into the rest of the crate is in this file, so that a change of
//! the core's interfaces is adapted here alone. What the server needs:
//!
//! 1. A workspace's configuration, as `scan` resolves it from the nearest
//!    configuration file, with `target` and `select` overridden by the
//!    client; the rule packs it names; where a problem with it is written.
//! 2. A walk of the workspace in which the open buffers stand for their
//!    files (also files not saved yet), and the analysis of every file,
//!    re-using the analyses of files whose content did not change.
//! 3. The analysis of one buffer after an edit, re-using its syntax tree.
//! 4. The project facts (migration style, what the launch scripts run, ...)
//!    from every file's analysis, and each file's findings once they are
//!    applied: what `scan` of the workspace would report.
//! 5. The `--fix` engine on one file in memory (all its fixes of a mode, or
//!    one finding's), and `--add-ignore`'s comment as text.
//! 6. The rules' documentation.

use crate::analysis::KeptOutcome;
use crate::cache::{Cache, StoredOutcome};
use crate::config::{self, CommandLine, ConfigError, PerFileIgnores};
use crate::fix::{self, FindingAt, FixMode};
use crate::project::{Rereads, ScanFacts};
use crate::rules::compile::parse_version;
use crate::rules::engine::{Engine, RuleSet};
use crate::rules::model::Version;
use crate::scan;
use crate::walk::{self, WalkResult};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(super) use crate::add_ignore::DEFAULT_REASON as DEFAULT_IGNORE_REASON;
pub(super) use crate::atomic::write_whole;
pub(super) use crate::config::absolute;
pub(super) use crate::finding::{Applicability, FileProblem, Finding, ProblemKind, Severity};
pub(super) use crate::source::line_ends;
pub(super) use crate::walk::FileKind;

/// What the client may set over the configuration file (`initializationOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Overrides {
    /// The torch_npu version the advice is for.
    pub target: Option<String>,
    /// Only these codes or prefixes.
    pub select: Vec<String>,
}

/// A configuration that cannot be used: what to tell the user, and where
/// it is written (the configuration file and line), when that is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ConfigProblem {
    /// The file at fault.
    pub path: Option<PathBuf>,
    /// Its 1-based line.
    pub line: Option<usize>,
    /// What is wrong and what to do, as `scan` says it.
    pub message: String,
}

/// A workspace's resolved configuration and the rule packs it loads.
pub(super) struct Config {
    settings: config::Settings,
    file: Option<PathBuf>,
    set: RuleSet,
    target: Version,
    ignores: PerFileIgnores,
}

impl Config {
    /// The configuration `scan` of `root` would use (the nearest configuration
    /// file in or above it, unless not `with_file`), with `overrides` as if
    /// given on the command line.
    pub(super) fn load(root: &Path, overrides: &Overrides, with_file: bool) -> Result<Config, ConfigProblem> {
        let args = CommandLine {
            target: overrides.target.clone(),
            select: overrides.select.clone(),
            ..CommandLine::default()
        };
        let loaded = if with_file { config::discover(root).map_err(|e| problem(&e, None))? } else { None };
        let file = loaded.as_ref().map(|l| l.path.clone());
        let settings = config::resolve(&args, loaded.as_ref());
        let set = crate::rules::packs::load(&settings.rules.value).map_err(|e| ConfigProblem {
            path: Some(PathBuf::from(&e.origin)).filter(|p| p.is_file()).or_else(|| file.clone()),
            line: e.line,
            message: format!("invalid rule pack: {e}"),
        })?;
        let known = |code: &str| set.rules.iter().any(|r| r.code.starts_with(code));
        config::check_codes(&settings, loaded.as_ref(), &known).map_err(|e| problem(&e, file.as_deref()))?;
        let target = parse_version(&settings.target.value).map_err(|e| ConfigProblem {
            path: file.clone(),
            line: None,
            message: format!("target: {e}"),
        })?;
        let ignores = PerFileIgnores::new(&settings.per_file_ignores.value);
        Ok(Config { settings, file, set, target, ignores })
    }

    /// The configuration file read, if any.
    pub(super) fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The rule set's identity (changes with any pack or data file).
    pub(super) fn fingerprint(&self) -> u64 {
        self.set.fingerprint
    }

    /// The codes of every rule, with their documentation in Markdown.
    pub(super) fn rule_docs(&self) -> impl Iterator<Item = (&str, String)> {
        self.set.rules.iter().map(|r| (r.code.as_str(), crate::report::rules::markdown(r)))
    }

    /// The documentation of rule `code` in Markdown.
    pub(super) fn rule_doc(&self, code: &str) -> Option<String> {
        self.set.rule(code).map(crate::report::rules::markdown)
    }

    /// The engine for the enabled rules at the target, for an analysis of `files` files.
    fn engine(&self, files: usize) -> Engine<'_> {
        let mut engine = Engine::new(&self.set, self.target, &|code: &str| self.settings.enables(code));
        engine.skip_for(files);
        engine
    }

    /// The `.py`/`.sh`/`.ipynb` kind of the file at `path`, or the kind of a file a rule matches by name.
    pub(super) fn kind_of(&self, path: &Path) -> Option<FileKind> {
        walk::classify(path, &self.set.compiler.file_extensions)
    }
}

/// Where a configuration error is written.
fn problem(e: &ConfigError, file: Option<&Path>) -> ConfigProblem {
    let (path, line) = match e {
        ConfigError::Unreadable { path, .. } | ConfigError::NoTable { path } => (Some(path.clone()), None),
        ConfigError::Syntax { path, line, .. } => (Some(path.clone()), *line),
        ConfigError::EmptyCode { at, .. }
        | ConfigError::UnknownCode { at, .. }
        | ConfigError::EmptyGlob { at }
        | ConfigError::BadGlob { at, .. } => {
            (at.as_ref().map(|p| p.path.clone()).or(file.map(Path::to_path_buf)), at.as_ref().map(|p| p.line))
        }
        ConfigError::Target { .. } => (file.map(Path::to_path_buf), None),
    };
    ConfigProblem { path, line, message: e.to_string() }
}

/// The analysis of every file of a workspace, made away from the client's
/// messages; becomes a [`Project`].
pub(super) struct Pass {
    walked: WalkResult,
    outcomes: Vec<KeptOutcome>,
    /// What the next pass may re-use.
    stored: BTreeMap<String, StoredOutcome<'static>>,
    /// The buffers the pass read, by absolute path.
    pub texts: HashMap<PathBuf, Arc<str>>,
}

/// What a pass re-uses of the one before: each file's analysis, by its content.
#[derive(Default)]
pub(super) struct Stored(BTreeMap<String, StoredOutcome<'static>>);

/// Walks `root` with `texts` (open buffers, by absolute path) standing for
/// their files, and analyses every file, re-using `stored` analyses of
/// unchanged content (on the first pass: those of the CLI's cache in the
/// workspace, if any; nothing is written there).
pub(super) fn analyse_workspace(
    config: &Config,
    root: &Path,
    texts: HashMap<PathBuf, Arc<str>>,
    stored: Option<Stored>,
) -> Result<Pass, ConfigProblem> {
    let exts = &config.set.compiler.file_extensions;
    let walked = walk::walk_with_texts(&[root.to_path_buf()], &config.settings.exclude.value, exts, &texts)
        .map_err(|e| ConfigProblem { path: config.file.clone(), line: None, message: e.to_string() })?;
    let engine = config.engine(walked.files.len());
    let cache = match stored {
        Some(Stored(entries)) => Cache::in_memory(entries),
        None => {
            let target = &config.settings.target.value;
            let cli_cache = Cache::open(&root.join(".npu-mem-cache"), &engine, target, &[root.to_path_buf()]);
            cli_cache.unwrap_or_else(|_| Cache::in_memory(BTreeMap::new()))
        }
    };
    let mut outcomes = scan::analyse_files(&walked.files, &engine, &Default::default(), Some(&cache));
    let first_analyses = scan::follow_imported_classes(&walked, &mut outcomes, &engine);
    // The server keeps them beside its outcomes, for its in-memory cache.
    let stored = scan::cache_entries(&walked.files, &outcomes, first_analyses);
    let stored = stored.into_iter().map(|(path, s)| (path, s.into_owned())).collect();
    Ok(Pass { walked, outcomes, stored, texts })
}

/// A file's findings once the whole project's facts are applied, and what
/// kept it from being analysed fully.
#[derive(Debug, Clone, Default)]
pub(super) struct FileReport {
    /// Its findings, in report order.
    pub findings: Vec<Finding>,
    /// Why it was skipped, or analysed only in part.
    pub problem: Option<FileProblem>,
    /// Where its project imports `transfer_to_npu` (the first place), if it does.
    pub migration_site: Option<(PathBuf, usize)>,
}

/// The analysis of a workspace (or of one file outside it), kept up to
/// date edit by edit.
pub(super) struct Project {
    config: Arc<Config>,
    walked: WalkResult,
    outcomes: Vec<KeptOutcome>,
    stored: BTreeMap<String, StoredOutcome<'static>>,
    /// Absolute path -> index into the walk's files.
    index: HashMap<PathBuf, usize>,
    /// Absolute path -> what `scan` reports for it, as of the last [`Project::merge`].
    reports: HashMap<PathBuf, FileReport>,
    /// What the merges read again of the files, remembered from one merge to the next.
    rereads: Arc<Rereads>,
}

impl Project {
    /// The project a pass analysed.
    pub(super) fn new(config: Arc<Config>, pass: Pass) -> Project {
        let index = pass.walked.files.iter().enumerate().map(|(i, f)| (config::absolute(&f.path()), i)).collect();
        let Pass { walked, outcomes, stored, .. } = pass;
        let rereads = Arc::new(Rereads::remembering());
        Project { config, walked, outcomes, stored, index, reports: HashMap::new(), rereads }
    }

    /// A project of one file, `path`, with `text` as its content: what `scan
    /// --stdin-filename PATH -` sees (for a file outside the workspace).
    pub(super) fn lone(config: Arc<Config>, path: &Path, text: Arc<str>) -> Result<Project, ConfigProblem> {
        let texts: HashMap<PathBuf, Arc<str>> = [(path.to_path_buf(), text)].into_iter().collect();
        let walked = walk::walk_with_texts(&[path.to_path_buf()], &[], &config.set.compiler.file_extensions, &texts)
            .map_err(|e| ConfigProblem { path: None, line: None, message: e.to_string() })?;
        let engine = config.engine(walked.files.len());
        let outcomes = scan::analyse_files(&walked.files, &engine, &Default::default(), None);
        drop(engine);
        let pass = Pass { walked, outcomes, stored: BTreeMap::new(), texts };
        Ok(Project::new(config, pass))
    }

    /// The configuration it was analysed with.
    pub(super) fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// What the next workspace pass may re-use (taken: the project itself does not need it).
    pub(super) fn take_stored(&mut self) -> Stored {
        Stored(std::mem::take(&mut self.stored))
    }

    /// Whether the file at `path` is one of the project's.
    pub(super) fn has(&self, path: &Path) -> bool {
        self.index.contains_key(path)
    }

    /// Analyses `text` as the new content of the file at `path` (one of the
    /// project's), re-using `tree`, its syntax tree with the edits since
    /// recorded; gives the new tree (for Python files that were parsed).
    pub(super) fn edit(
        &mut self,
        path: &Path,
        text: &Arc<str>,
        tree: Option<&tree_sitter::Tree>,
    ) -> Option<tree_sitter::Tree> {
        let &i = self.index.get(path)?;
        let file = self.walked.files[i].with_text(text.clone());
        let engine = self.config.engine(1);
        // The classes of other files it imported at the last workspace pass.
        let imported = self.outcomes[i].full().and_then(|o| o.imported_classes.clone());
        let (outcome, tree) = match crate::source::read_file(&file) {
            Ok(source) => {
                let (outcome, tree) =
                    crate::analysis::analyse_edited(&file, &source.text, &engine, tree, imported.as_deref());
                (KeptOutcome::keep(outcome), tree)
            }
            // Too large or binary: skipped as `scan` skips it, with the reason.
            Err(_) => {
                (scan::analyse_files(std::slice::from_ref(&file), &engine, &Default::default(), None).remove(0), None)
            }
        };
        self.walked.files[i] = file;
        self.outcomes[i] = outcome;
        tree
    }

    /// Decides the project facts from every file's analysis and applies them,
    /// with the configuration's settings, to each file's findings.
    pub(super) fn merge(&mut self) {
        self.reports = self.snapshot().merge().0;
    }

    /// What a merge needs, to run it on another thread while the project takes edits.
    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            config: self.config.clone(),
            walked: self.walked.clone(),
            outcomes: self.outcomes.clone(),
            index: self.index.clone(),
            rereads: self.rereads.clone(),
        }
    }

    /// Takes the reports of a merge of one of its snapshots.
    pub(super) fn set_reports(&mut self, reports: Reports) {
        self.reports = reports.0;
    }

    /// What `scan` reports for the file at `path`, as of the last [`Project::merge`].
    pub(super) fn report(&self, path: &Path) -> FileReport {
        self.reports.get(path).cloned().unwrap_or_default()
    }

    /// The text of the file at `path` with the fixes `--fix` (`mode`) applies,
    /// or only those of finding `only` (and of the findings its fix brings
    /// along); `Ok(None)` when nothing changes, `Err` with the reason when
    /// the file's fixes cannot be applied.
    pub(super) fn fix(
        &self,
        path: &Path,
        mode: Applicability,
        only: Option<&Finding>,
    ) -> Result<Option<String>, String> {
        let &i = self.index.get(path).ok_or("the file is not one of the project's")?;
        let engine = self.config.engine(1);
        let facts = ScanFacts::of(&self.walked, &self.outcomes, &engine, &self.rereads);
        let mode = match mode {
            Applicability::Safe => FixMode::Safe,
            Applicability::Unsafe => FixMode::Unsafe,
        };
        let only = only.map(|f| FindingAt { code: &f.code, start: f.byte_range.0 });
        let imported = self.outcomes[i].full().and_then(|o| o.imported_classes.as_deref());
        let file = &self.walked.files[i];
        let fixed = fix::fix_in_memory(file, &facts, &engine, mode, &self.config.ignores, only, imported)
            .map_err(|e| e.to_string())?;
        Ok(fixed.map(|f| String::from_utf8_lossy(&f.fixed).into_owned()))
    }
}

/// A project's files and their analyses as of one moment.
pub(super) struct Snapshot {
    config: Arc<Config>,
    walked: WalkResult,
    outcomes: Vec<KeptOutcome>,
    index: HashMap<PathBuf, usize>,
    rereads: Arc<Rereads>,
}

/// What `scan` reports for each file of a project, by absolute path.
pub(super) struct Reports(HashMap<PathBuf, FileReport>);

impl Snapshot {
    /// Decides the project facts from every file's analysis and applies
    /// them, with the configuration's settings, to each file's findings.
    pub(super) fn merge(self) -> Reports {
        let Snapshot { config, walked, outcomes, index, rereads } = self;
        let engine = config.engine(walked.files.len());
        let settings = &config.settings;
        // An entry that starts nothing stops `scan`; here the findings keep their severity.
        let named = crate::project::named_runs::start(&settings.entry.value, &walked).ok().flatten();
        let runs = scan::RunSettings {
            migration: &settings.migration,
            entries: settings.entries.value,
            named: named.as_ref(),
        };
        let mut outcome = scan::merge(outcomes, &engine, &walked, runs, &rereads);
        scan::apply_settings(&mut outcome, &config.ignores, &settings.severity.value);
        let by_display: HashMap<String, &PathBuf> =
            index.iter().map(|(path, &i)| (walked.files[i].display().into_owned(), path)).collect();
        let mut reports: HashMap<PathBuf, FileReport> = HashMap::new();
        for f in outcome.findings {
            if let Some(&path) = by_display.get(f.path.as_str()) {
                reports.entry(path.clone()).or_default().findings.push(f);
            }
        }
        for p in outcome.problems {
            if let Some(&path) = by_display.get(p.path.as_str()) {
                reports.entry(path.clone()).or_default().problem = Some(p);
            }
        }
        for (path, r) in reports.iter_mut() {
            let project = index.get(path).and_then(|&i| outcome.projects.get(walked.files[i].project));
            let first = project.and_then(|p| p.transfer_imports.first());
            r.migration_site = first.and_then(|(display, line)| Some(((*by_display.get(display)?).clone(), *line)));
        }
        Reports(reports)
    }
}

/// `text`, the content of the Python or shell file at `path`, with `code`
/// suppressed on 1-based `line` as `--add-ignore` writes it (`reason` after
/// `--`); `Err` with the reason when it cannot be added there.
pub(super) fn with_suppression(
    path: &Path,
    text: &str,
    line: usize,
    code: &str,
    reason: &str,
) -> Result<String, String> {
    let kind = if walk::classify(path, &[]) == Some(FileKind::Shell) { FileKind::Shell } else { FileKind::Python };
    let lines: BTreeMap<usize, Vec<&str>> = [(line, vec![code])].into_iter().collect();
    let added = crate::add_ignore::with_suppressions(path, text, kind, &lines, reason).map_err(|e| e.to_string())?;
    match added.skipped.into_iter().next() {
        Some(why) => Err(why),
        None => Ok(added.text),
    }
}
