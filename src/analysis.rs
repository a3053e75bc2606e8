//! One file's analysis: read it, parse it, match the rules, and collect the
//! per-file facts the project layer reads ([`FileFacts`]); or take all of it
//! from the cache when the content is unchanged. Every file is analysed on
//! its own, in parallel ([`crate::scan`] runs them).

use crate::cache::{Cache, ContentId, Stamp, StoredOutcome};
use crate::finding::{FileProblem, ProblemKind, SharedText};
use crate::notebook::Notebook;
use crate::parse::{first_error_line, parse_python};
use crate::rules::engine::{Engine, FileFacts, ProjectAdds};
use crate::rules::slots::MAX_SCOPE_NODES;
use crate::semantic::subclasses::ImportedClasses;
use crate::semantic::traverse::MAX_DEPTH;
use crate::semantic::{generated, launch_lines, named_files, options};
use crate::source::{read_file, LineIndex};
use crate::suppress;
use crate::walk::{FileKind, ScanFile};
use rayon::prelude::*;

/// One file's analysis, before project facts and suppressions are applied.
#[derive(Clone)]
pub struct FileOutcome {
    /// The display path.
    pub path: SharedText,
    /// What the analysis learned.
    pub facts: FileFacts,
    /// Whether the file was read and analysed, wholly or in part.
    pub scanned: bool,
    /// For a notebook: the parsed notebook, to locate findings by cell
    /// (boxed: outcomes live until the report, and few files are notebooks).
    pub notebook: Option<Box<Notebook>>,
    /// The content analysed, when read from disk (what the cache keys on).
    pub content: Option<ContentId>,
    /// The file's stamp just before it was read, if it had one (see [`Stamp::of`]).
    pub stamp: Option<Stamp>,
    /// The project of the file (an index into the walk's projects).
    pub project: usize,
    /// The derived classes of other files it imports, when the project
    /// layer found any (see [`analyse_importing`]): what an analysis of its
    /// text again (the fixer's) must be given too.
    pub imported_classes: Option<Box<ImportedClasses>>,
}

impl FileOutcome {
    /// An outcome of `file` with nothing found yet.
    fn new(file: &ScanFile) -> Self {
        FileOutcome {
            path: file.display().as_ref().into(),
            facts: FileFacts::default(),
            scanned: true,
            notebook: None,
            content: None,
            stamp: None,
            project: file.project,
            imported_classes: None,
        }
    }

    /// Records that the file was skipped, and why.
    fn skipped(mut self, message: String) -> Self {
        self.facts.problem = Some(FileProblem { path: self.path.to_string(), kind: ProblemKind::Skipped, message });
        self.scanned = false;
        self
    }

    /// Where line `line` of the analysed text is shown: the file and line,
    /// or in a notebook the cell (`nb.ipynb:cell 3`) and its line.
    pub fn placer(&self) -> impl Fn(usize) -> (String, usize) + '_ {
        let lines = self.notebook.as_ref().map(|nb| LineIndex::new(&nb.python));
        move |line| match (&self.notebook, &lines) {
            (Some(nb), Some(lines)) => match nb.cell_line(lines, line) {
                Some((cell, l)) => (format!("{}:cell {cell}", self.path), l),
                None => (self.path.to_string(), line),
            },
            _ => (self.path.to_string(), line),
        }
    }
}

/// A file's outcome as the scan keeps it until the merge. Most files of a
/// large repository report nothing; of those only what the merge counts is
/// kept, so memory grows by a few bytes per such file, not by an outcome.
/// Cloned by the language server, which merges its outcomes again after
/// each edit of a file.
#[derive(Clone)]
pub enum KeptOutcome {
    /// Analysed, with nothing to report (see [`FileFacts::reports`]) and
    /// not a notebook; it may still make project facts true and add to
    /// summary counts.
    Quiet {
        /// The file's project.
        project: usize,
        /// The content analysed, when there is a cache to store it in.
        content: Option<ContentId>,
        /// The file's stamp when it was read, if it had one.
        stamp: Option<Stamp>,
        /// What it adds to project facts and summary counts; `None` (the
        /// common case, and one pointer's room) when it adds nothing.
        adds: Option<Box<ProjectAdds>>,
    },
    /// Everything else.
    Full(Box<FileOutcome>),
}

impl KeptOutcome {
    /// Keeps `o` whole only if it has something to report.
    pub fn keep(mut o: FileOutcome) -> Self {
        o.facts.shrink_to_fit();
        // An importer of other files' classes keeps them, for its next analysis.
        if !o.scanned || o.notebook.is_some() || o.imported_classes.is_some() || o.facts.reports() {
            return KeptOutcome::Full(Box::new(o));
        }
        let adds = o.facts.adds.any().then(|| Box::new(o.facts.adds));
        KeptOutcome::Quiet { project: o.project, content: o.content, stamp: o.stamp, adds }
    }

    /// The whole outcome of a file that has something to report.
    pub fn full(&self) -> Option<&FileOutcome> {
        match self {
            KeptOutcome::Quiet { .. } => None,
            KeptOutcome::Full(o) => Some(o),
        }
    }

    /// [`KeptOutcome::full`], to change.
    pub fn full_mut(&mut self) -> Option<&mut FileOutcome> {
        match self {
            KeptOutcome::Quiet { .. } => None,
            KeptOutcome::Full(o) => Some(o),
        }
    }

    /// The file's project.
    pub fn project(&self) -> usize {
        match self {
            KeptOutcome::Quiet { project, .. } => *project,
            KeptOutcome::Full(o) => o.project,
        }
    }

    /// What the file adds to its project, if it was kept.
    pub fn adds(&self) -> Option<&ProjectAdds> {
        match self {
            KeptOutcome::Quiet { adds, .. } => adds.as_deref(),
            KeptOutcome::Full(o) => Some(&o.facts.adds),
        }
    }

    /// What the cache stores of it: its facts, if it was analysed from
    /// content read from disk.
    pub fn stored(&self) -> Option<StoredOutcome<'_>> {
        /// What a quiet file that adds nothing stores.
        static NO_ADDS: std::sync::LazyLock<ProjectAdds> = std::sync::LazyLock::new(ProjectAdds::default);
        Some(match self {
            KeptOutcome::Quiet { content, stamp, adds, .. } => {
                StoredOutcome::of_adds((*content)?, *stamp, adds.as_deref().unwrap_or(&NO_ADDS))
            }
            KeptOutcome::Full(o) => StoredOutcome::new(o.content?, o.stamp, &o.facts),
        })
    }
}

/// Reads and parses every Python file and nothing else (the benchmark's
/// baseline); returns how many parsed.
pub fn parse_only(files: &[ScanFile]) -> usize {
    files
        .par_iter()
        .filter(|f| f.kind == FileKind::Python)
        .filter(|f| read_file(f).ok().and_then(|s| parse_python(&s.text)).is_some())
        .count()
}

/// Reads and analyses `file`, or takes its analysis from `cache` when the
/// content is one the cache has seen.
pub(crate) fn scan_file(file: &ScanFile, engine: &Engine, cache: Option<&Cache>) -> FileOutcome {
    if file.kind == FileKind::PathOnly {
        return analyse_text(file, "", engine, None);
    }
    // Taken before the read: a write after it shows in the next run's stamp.
    // Only worth taking when there is a cache to ask; a text given in place
    // of the file's (an editor's buffer) has none.
    let stamp = cache.filter(|_| file.text().is_none()).and_then(|_| Stamp::of(&file.path()));
    let stored = cache.and_then(|c| c.take(&file.display()));
    // A notebook is read anyway, to place its findings in cells.
    let python = stamp.filter(|_| file.kind == FileKind::Python);
    let stored = match stored {
        Some(stored) if python.is_some() && stored.stamp() == python => {
            let content = stored.content();
            let mut outcome = from_cache(file, "", stored);
            (outcome.content, outcome.stamp) = (Some(content), stamp);
            return outcome;
        }
        stored => stored,
    };
    let source = match read_file(file) {
        Ok(source) => source,
        Err(e) => return FileOutcome::new(file).skipped(e.to_string()),
    };
    // Hashing is only worth its time when there is a cache to ask.
    if cache.is_none() {
        return analyse_text(file, &source.text, engine, None);
    }
    let content = ContentId::of(&source.text);
    let mut outcome = match stored.filter(|s| s.content() == content) {
        Some(stored) => from_cache(file, &source.text, stored),
        None => analyse_text(file, &source.text, engine, None),
    };
    (outcome.content, outcome.stamp) = (Some(content), stamp);
    outcome
}

/// A file's outcome rebuilt from the cache (a notebook is parsed again, to locate cells).
fn from_cache(file: &ScanFile, text: &str, stored: StoredOutcome<'_>) -> FileOutcome {
    let facts = stored.into_facts();
    let notebook = if file.kind == FileKind::Notebook { Notebook::parse(text).ok().map(Box::new) } else { None };
    FileOutcome {
        scanned: facts.problem.as_ref().is_none_or(|p| p.kind != ProblemKind::Skipped),
        facts,
        notebook,
        ..FileOutcome::new(file)
    }
}

/// Analyses `text` as the contents of `file`, which imports the derived
/// classes `imported` of other files, if any (the fixer calls this on text
/// it has edited in memory).
pub(crate) fn analyse_text(
    file: &ScanFile,
    text: &str,
    engine: &Engine,
    imported: Option<&ImportedClasses>,
) -> FileOutcome {
    analyse_into(file, text, engine, None, imported, &mut None)
}

/// [`analyse_text`] for a Python file whose syntax tree before an edit,
/// with the edit recorded on it, is `old` (see [`crate::parse::parse_python_edited`]);
/// also gives the new tree, when the file was parsed (for the next edit).
pub(crate) fn analyse_edited(
    file: &ScanFile,
    text: &str,
    engine: &Engine,
    old: Option<&tree_sitter::Tree>,
    imported: Option<&ImportedClasses>,
) -> (FileOutcome, Option<tree_sitter::Tree>) {
    let mut tree_out = None;
    let out = analyse_into(file, text, engine, old, imported, &mut tree_out);
    (out, tree_out)
}

/// Reads and analyses `file` again, now that the project layer found that it
/// imports the derived classes `imported` of other files. The outcome keeps
/// no content identity: it depends on those files too, so the cache must not
/// store it under this file's content alone.
pub(crate) fn analyse_importing(file: &ScanFile, engine: &Engine, imported: &ImportedClasses) -> FileOutcome {
    match read_file(file) {
        Ok(source) => analyse_into(file, &source.text, engine, None, Some(imported), &mut None),
        Err(e) => FileOutcome::new(file).skipped(e.to_string()),
    }
}

/// [`analyse_edited`]'s work, for a file that imports the derived classes
/// `imported` of other files; the new syntax tree, if any, goes to `tree_out`.
fn analyse_into(
    file: &ScanFile,
    text: &str,
    engine: &Engine,
    old: Option<&tree_sitter::Tree>,
    imported: Option<&ImportedClasses>,
    tree_out: &mut Option<tree_sitter::Tree>,
) -> FileOutcome {
    // A notebook's tree is of its joined cells, not of the text an editor changes.
    let old = old.filter(|_| file.kind == FileKind::Python);
    let parse = |text: &str| crate::parse::parse_python_edited(text, old);
    let mut out = FileOutcome::new(file);
    out.imported_classes = imported.map(|classes| Box::new(classes.clone()));
    let path_findings = engine.analyse_path(&out.path);
    if file.kind == FileKind::PathOnly {
        out.facts.findings = path_findings;
        return out;
    }
    let notebook = match file.kind {
        FileKind::Notebook => match Notebook::parse(text) {
            Ok(nb) => Some(nb),
            Err(e) => return out.skipped(e.to_string()),
        },
        _ => None,
    };
    let text = notebook.as_ref().map_or(text, |nb| nb.python.as_str());
    if let Some(target) = link_saved_as_file(file.kind, text) {
        return out.skipped(format!(
            "holds only the path `{target}`: a symbolic link saved as a regular file (a checkout or archive that \
             did not keep the link); skipped: restore the link, or scan the file it names"
        ));
    }
    // A shell script is always read: it is small, and what a launch
    // command passes can make a project fact true (`project_has`) without
    // any rule's trigger word in it.
    if file.kind == FileKind::Shell {
        let script = crate::parse::shell::read(text);
        out.facts = engine.analyse_shell(text, &script, &LineIndex::new(text), &out.path);
        out.facts.directives = suppress::in_shell(text, &script.comments);
        out.facts.adds.named_files = named_files::in_shell(text, &script.comments, &engine.shell_named_extensions);
        out.facts.adds.launches = launch_lines::launches_in(text, &script);
        out.facts.findings.extend(path_findings);
        return out;
    }
    // The source of a generated file runs only as its copy ([`generated`]).
    let generated_from = match notebook {
        None => generated::generated_from(text).map(str::to_owned),
        Some(_) => None,
    };
    let active = match imported {
        Some(_) => Some(engine.alternatives_for_importer(text)),
        None => engine.alternatives_for(text),
    };
    let Some(active) = active else {
        // Nothing to analyse, but suppressions are still checked and the file
        // names it spells out collected (a build script may trigger no rule);
        // a Python file is parsed only if it has either.
        if text.contains(suppress::MARKER) || mentions_named_extension(engine, text) {
            if let Some(tree) = parse(text) {
                out.facts.directives = suppress::in_python(tree.root_node(), text);
                out.facts.adds.named_files = named_files::in_python(tree.root_node(), text, &engine.named_extensions);
                *tree_out = Some(tree);
            }
        }
        out.facts.findings = path_findings;
        out.facts.adds.generated_from = generated_from;
        return out;
    };
    let lines = LineIndex::new(text);
    let Some(tree) = parse(text) else {
        return out.skipped(format!(
            "the parser gave up on this file (parsing stops after {} s; tree-sitter's error recovery can take that \
             long on long broken lines); skipped",
            crate::parse::PARSE_TIME_LIMIT.as_secs()
        ));
    };
    let place = |line| match notebook.as_ref().and_then(|nb| nb.cell_line(&lines, line)) {
        Some((cell, line)) => format!("cell {cell}, line {line}"),
        None => format!("line {line}"),
    };
    let mut partial = Vec::new();
    if let Some(line) = first_error_line(&tree) {
        partial.push(format!("syntax error near {}; analysed where the syntax tree is sound", place(line)));
    }
    let mut facts = engine.analyse(tree.root_node(), text, &lines, &out.path, &active, imported);
    facts.directives = suppress::in_python(tree.root_node(), text);
    facts.adds.named_files = named_files::in_python(tree.root_node(), text, &engine.named_extensions);
    // A notebook's cells are not started with options.
    let finding_lines = match notebook {
        Some(_) => crate::source::LineSet::default(),
        None => crate::source::LineSet::new(facts.findings.iter().map(|(f, _)| f.line)),
    };
    facts.gates = options::around(tree.root_node(), text, &finding_lines);
    if !finding_lines.is_empty() {
        facts.module_level_defs = module_level_defs(tree.root_node());
    }
    facts.cuda_only_tests = crate::semantic::cuda_only::tests(tree.root_node(), text, &finding_lines);
    if let Some(line) = facts.cut_at_line {
        partial.push(format!(
            "code near {} is nested more than {MAX_DEPTH} levels deep; the deeper part was not analysed",
            place(line)
        ));
    }
    if let Some(line) = facts.scope_search_cut_at_line {
        partial.push(format!(
            "the search of the function (or module) around {} stopped after {MAX_SCOPE_NODES} nodes; rules that \
             look through a whole function (function_has, preceded_in_function, followed_in_function) may miss \
             findings in it",
            place(line)
        ));
    }
    if !partial.is_empty() {
        let message = partial.join("; ");
        facts.problem = Some(FileProblem { path: out.path.to_string(), kind: ProblemKind::Partial, message });
    }
    facts.findings.extend(path_findings);
    facts.adds.generated_from = generated_from;
    out.facts = facts;
    out.notebook = notebook.map(Box::new);
    *tree_out = Some(tree);
    out
}

/// The lines (first, last; 1-based) of the module-level `def` and `class`
/// statements under `root`, with their decorators.
fn module_level_defs(root: tree_sitter::Node) -> Vec<(usize, usize)> {
    let mut cursor = root.walk();
    root.children(&mut cursor)
        .filter(|n| matches!(n.kind(), "function_definition" | "class_definition" | "decorated_definition"))
        .map(|n| (n.start_position().row + 1, n.end_position().row + 1))
        .collect()
}

/// Whether `text` has `.EXT` for an extension whose file names rules ask
/// about: a file that no rule analyses is parsed only then.
fn mentions_named_extension(engine: &Engine, text: &str) -> bool {
    engine.named_extensions.iter().any(|ext| text.contains(&format!(".{ext}")))
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
