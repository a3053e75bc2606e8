//! `--fix` and `--diff`: applying the edits that findings carry, pass after
//! pass and in memory, and keeping a result only when it still parses.
//!
//! Per file: re-read the bytes, analyse, take the fixable findings in source
//! order and apply every fix whose edits touch nothing an earlier fix touched;
//! the rest wait for the next pass, on the re-analysed text. A file whose
//! fixes do not settle within [`MAX_PASSES`], or whose fixes would add a
//! syntax error, is reported and left alone.

use crate::analysis::{analyse_text, FileOutcome, KeptOutcome};
use crate::config::PerFileIgnores;
use crate::finding::{Applicability, FileProblem, Finding, ProblemKind, SharedText};
use crate::notebook::{Notebook, NotebookError};
use crate::parse::parse_python;
use crate::project::{file_findings, ScanFacts};
use crate::rules::engine::Engine;
use crate::semantic::subclasses::ImportedClasses;
use crate::source::{read_file_bytes, ReadError, SourceText};
use crate::walk::{FileKind, ScanFile};
use rayon::prelude::*;
use std::collections::HashSet;

mod error;
mod patch;
pub use error::FixError;
pub use patch::unified;

/// Passes after which a file whose fixes keep producing new fixes is given up.
pub const MAX_PASSES: usize = 8;

/// A file that takes longer than this to parse is not fixed: each pass parses
/// it twice, so a broken file on which tree-sitter's error recovery is slow
/// (the fuzzer found one that takes 10 s a parse) would take minutes. Sound
/// files of any realistic size parse in well under a second.
pub const SLOW_PARSE: std::time::Duration = std::time::Duration::from_secs(2);

/// Which fixes to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixMode {
    /// Only fixes marked safe.
    Safe,
    /// Safe and unsafe fixes (`--unsafe-fixes`).
    Unsafe,
}

impl FixMode {
    /// Whether this mode applies `f`'s fix (a finding without a fix: no).
    pub fn applies(self, f: &Finding) -> bool {
        f.fix.as_ref().is_some_and(|fix| self == FixMode::Unsafe || fix.applicability == Applicability::Safe)
    }
}

/// One file's fixed contents.
pub struct FixedFile {
    /// The file on disk.
    pub path: std::path::PathBuf,
    /// The path shown to users.
    pub display: String,
    /// The bytes read before fixing (what must still be on disk when writing).
    pub original: Vec<u8>,
    /// The bytes after fixing.
    pub fixed: Vec<u8>,
    /// The findings whose fixes were applied, at their positions in the pass that fixed them.
    pub findings: Vec<Finding>,
    /// Codes of the findings among `findings` that the first analysis did not
    /// have: the fixes created them (an import a new call needs, say).
    pub follow_ups: Vec<String>,
}

/// What fixing a whole scan produced.
#[derive(Default)]
pub struct FixRun {
    /// Files whose contents changed.
    pub files: Vec<FixedFile>,
    /// Files that had fixes but were left alone, and why.
    pub problems: Vec<FileProblem>,
}

/// What a `--fix` run of a whole scan is asked to do.
pub struct FixRequest<'a> {
    /// Which fixes.
    pub mode: FixMode,
    /// The findings the configuration silences, whose fixes are not applied.
    pub ignores: &'a PerFileIgnores,
    /// Replace the fixed files on disk (else only say what would change).
    pub write: bool,
    /// By index into the scan's files: which files may be edited; `None`:
    /// all. With runs named (`--entry`), the files they reach: the others
    /// are not part of the migration.
    pub files: Option<&'a [bool]>,
}

/// Fixes every file of the scan that `request` lets it edit and that has
/// findings whose fixes it asks for. With `request.write`, each fixed file
/// is replaced on disk atomically, and its outcome becomes the analysis of
/// the new text; a file that cannot be written keeps its outcome and
/// becomes a problem.
pub fn fix_files(
    files: &[ScanFile],
    outcomes: &mut [KeptOutcome],
    facts: &ScanFacts,
    engine: &Engine,
    request: &FixRequest,
) -> FixRun {
    let FixRequest { mode, ignores, write, .. } = *request;
    let fixable = |f: &Finding| mode.applies(f) && !ignores.ignores(f);
    let wanted = Wanted { mode, ignores, only: None };
    let may_edit = |i: usize| request.files.is_none_or(|edit| edit.get(i).copied().unwrap_or(true));
    let results: Vec<_> = files
        .par_iter()
        .zip(outcomes.par_iter_mut())
        .enumerate()
        .filter(|(i, _)| may_edit(*i))
        .map(|(_, pair)| pair)
        .filter(|(_, o)| o.full().is_some_and(|o| file_findings(o, facts, engine).kept.iter().any(fixable)))
        .map(|(file, outcome)| {
            let imported = outcome.full().and_then(|o| o.imported_classes.clone());
            let fixed = fix_file(file, facts, engine, &wanted, imported.as_deref()).and_then(|fixed| {
                let Some((f, new_outcome)) = fixed else { return Ok(None) };
                if write {
                    crate::write::replace_file(&f.path, &f.original, &f.fixed)?;
                }
                *outcome = KeptOutcome::keep(new_outcome);
                Ok(Some(f))
            });
            (file, fixed)
        })
        .collect();
    let mut run = FixRun::default();
    for (file, result) in results {
        match result {
            Ok(Some(fixed)) => run.files.push(fixed),
            Ok(None) => {}
            Err(e) => run.problems.push(FileProblem {
                path: file.display().to_string(),
                kind: ProblemKind::NotFixed,
                message: e.to_string(),
            }),
        }
    }
    run
}

/// One finding of a file: its code and the byte where it starts, in the
/// text the analysis sees (a notebook's joined cells).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FindingAt<'a> {
    /// The rule code.
    pub code: &'a str,
    /// The first byte of its range ([`Finding::byte_range`]).
    pub start: usize,
}

impl FindingAt<'_> {
    /// Whether `f` is this finding.
    fn is(&self, f: &Finding) -> bool {
        f.code == self.code && f.byte_range.0 == self.start
    }
}

/// Which findings' fixes to apply.
struct Wanted<'a> {
    mode: FixMode,
    ignores: &'a PerFileIgnores,
    /// Only this finding's fix (and the companions it names), not every fix `mode` applies.
    only: Option<FindingAt<'a>>,
}

impl Wanted<'_> {
    /// Whether to apply `f`'s fix in the pass after `passes` others;
    /// `companions` are codes an applied fix named in `then`, whose fixes
    /// come with it whatever their safety.
    fn wants(&self, f: &Finding, companions: &HashSet<String>, passes: usize) -> bool {
        let picked = self.mode.applies(f) && self.only.is_none_or(|at| passes == 0 && at.is(f));
        let chosen = picked || (f.fix.is_some() && companions.contains(f.code.as_str()));
        chosen && !self.ignores.ignores(f)
    }
}

/// Fixes one file in memory, as `--fix` (`mode`), or only finding `only`
/// (with the fixes its fix brings along: the import a new call needs, say),
/// where the file imports the derived classes `imported` of other files;
/// `Ok(None)` when nothing changed. Nothing is written: the server's code
/// actions, which must give what `--fix` gives, are built from the result.
pub fn fix_in_memory(
    file: &ScanFile,
    facts: &ScanFacts,
    engine: &Engine,
    mode: FixMode,
    ignores: &PerFileIgnores,
    only: Option<FindingAt>,
    imported: Option<&ImportedClasses>,
) -> Result<Option<FixedFile>, FixError> {
    let wanted = Wanted { mode, ignores, only };
    Ok(fix_file(file, facts, engine, &wanted, imported)?.map(|(fixed, _)| fixed))
}

/// Fixes one file in memory, which imports the derived classes `imported`
/// of other files, if any: `Ok(None)` when nothing changed.
fn fix_file(
    file: &ScanFile,
    facts: &ScanFacts,
    engine: &Engine,
    wanted: &Wanted,
    imported: Option<&ImportedClasses>,
) -> Result<Option<(FixedFile, FileOutcome)>, FixError> {
    let (original, source) = read_file_bytes(file).map_err(|e| match e {
        ReadError::Io(e) => FixError::Unreadable(e),
        e => FixError::Undecodable(e),
    })?;
    // Edits are written back in the file's own encoding.
    if !source.gives_back(&original) {
        return Err(FixError::NotReversible { encoding: source.encoding.name() });
    }
    let SourceText { mut text, encoding } = source;
    let doc = Document::of(file.kind);
    let parse_started = std::time::Instant::now();
    let errors_before = doc.syntax_errors(&text)?;
    let parse_time = parse_started.elapsed();
    if parse_time > SLOW_PARSE {
        return Err(FixError::SlowParse { seconds: parse_time.as_secs_f64(), parses: 2 * MAX_PASSES });
    }
    let mut fixed: Vec<Finding> = Vec::new();
    let mut follow_ups: Vec<String> = Vec::new();
    // The fixable findings of the first analysis, by code and start, with the
    // starts moved along as edits land: the findings the report promised.
    let mut promised: Option<Vec<(SharedText, usize)>> = None;
    let mut companions: HashSet<String> = HashSet::new();
    // Companion fixes are for findings the fixes create, not ones already there.
    let mut present_before: Option<HashSet<SharedText>> = None;
    for passes in 0..MAX_PASSES {
        let outcome = analyse_text(file, &text, engine, imported);
        let findings = file_findings(&outcome, facts, engine).kept;
        let before = present_before.get_or_insert_with(|| findings.iter().map(|f| f.code.clone()).collect());
        companions.retain(|c| !before.contains(c.as_str()));
        let mut pending: Vec<Finding> = findings.into_iter().filter(|f| wanted.wants(f, &companions, passes)).collect();
        let promised =
            promised.get_or_insert_with(|| pending.iter().map(|f| (f.code.clone(), f.byte_range.0)).collect());
        if pending.is_empty() {
            if fixed.is_empty() {
                return Ok(None);
            }
            let bytes = encoding.encode(&text).ok_or(FixError::NotReversible { encoding: encoding.name() })?;
            let changed = FixedFile {
                path: file.path(),
                display: file.display().to_string(),
                original,
                fixed: bytes,
                findings: fixed,
                follow_ups,
            };
            return Ok(Some((changed, outcome)));
        }
        pending.sort_by_key(|f| (first_edit(f), f.code.clone()));
        let (edits, applied) = select_fixes(&doc.python(&text)?, pending);
        let new_text = doc.apply(&text, &edits)?;
        if new_text == text {
            let codes = applied.iter().map(|f| f.code.to_string()).collect();
            return Err(FixError::NoChange { codes });
        }
        if doc.syntax_errors(&new_text)? > errors_before {
            let fixes = applied.iter().map(|f| format!("{} at line {}", f.code, f.line)).collect();
            return Err(FixError::BreaksSyntax { fixes });
        }
        text = new_text;
        for f in &applied {
            if !promised.iter().any(|(code, start)| *code == f.code && *start == f.byte_range.0) {
                follow_ups.push(f.code.to_string());
            }
        }
        for (_, start) in promised.iter_mut() {
            *start = moved(*start, &edits);
        }
        for f in &applied {
            let rule = engine.set.rule(&f.code);
            companions.extend(rule.and_then(|r| r.fix.as_ref()).into_iter().flat_map(|t| t.then.iter().cloned()));
        }
        fixed.extend(applied);
    }
    Err(FixError::Unsettled { passes: MAX_PASSES })
}

/// Where byte `at` of the text is once `edits` (sorted, disjoint) are
/// applied; a position inside an edit moves to where the edit starts.
fn moved(at: usize, edits: &[(usize, usize, String)]) -> usize {
    let mut shift: isize = 0;
    for (s, e, content) in edits {
        if *e <= at && (*s < at || s == e) {
            shift += content.len() as isize - (*e - *s) as isize;
        } else if *s <= at && at < *e {
            return (*s as isize + shift) as usize;
        } else {
            break;
        }
    }
    (at as isize + shift) as usize
}

/// Where a finding's first edit starts.
fn first_edit(f: &Finding) -> usize {
    f.fix.as_ref().and_then(|fix| fix.edits.iter().map(|e| e.byte_range.0).min()).unwrap_or(usize::MAX)
}

/// What kind of text a file is, for applying edits and checking syntax.
enum Document {
    /// Python source: edits apply to the text itself.
    Python,
    /// A notebook: edits apply to its joined code cells.
    Notebook,
    /// Anything else (shell scripts): edits apply to the text, no syntax check.
    Other,
}

impl Document {
    fn of(kind: FileKind) -> Self {
        match kind {
            FileKind::Python => Document::Python,
            FileKind::Notebook => Document::Notebook,
            _ => Document::Other,
        }
    }

    /// The text the analysis sees (edit offsets are into it).
    fn python(&self, text: &str) -> Result<String, NotebookError> {
        match self {
            Document::Notebook => Ok(Notebook::parse(text)?.python),
            _ => Ok(text.to_string()),
        }
    }

    /// `text` with `edits` (sorted, disjoint) applied.
    fn apply(&self, text: &str, edits: &[(usize, usize, String)]) -> Result<String, NotebookError> {
        match self {
            Document::Notebook => Notebook::parse(text)?.with_edits(edits),
            _ => Ok(splice(text, edits)),
        }
    }

    /// Syntax errors of the Python in `text` (0 for other files).
    fn syntax_errors(&self, text: &str) -> Result<usize, NotebookError> {
        Ok(match self {
            Document::Other => 0,
            _ => syntax_errors(&self.python(text)?),
        })
    }
}

/// `text` with sorted, disjoint `edits` applied.
fn splice(text: &str, edits: &[(usize, usize, String)]) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (s, e, content) in edits {
        out.push_str(&text[at..*s]);
        out.push_str(content);
        at = *e;
    }
    out.push_str(&text[at..]);
    out
}

/// Takes the fixes of `pending` (in order) whose edits neither overlap nor
/// touch an edit already taken; returns their edits, sorted, and the findings.
fn select_fixes(text: &str, pending: Vec<Finding>) -> (Vec<(usize, usize, String)>, Vec<Finding>) {
    let mut taken: Vec<(usize, usize, String)> = Vec::new();
    let mut applied = Vec::new();
    for f in pending {
        let Some(fix) = &f.fix else { continue };
        // Findings that share one fix (see `rules::guards`) are all fixed
        // when it is applied.
        let same = |e: &crate::finding::Edit| taken.iter().any(|(s, t, c)| (*s, *t) == e.byte_range && *c == e.content);
        if !fix.edits.is_empty() && fix.edits.iter().all(same) {
            applied.push(f);
            continue;
        }
        let ranges: Vec<(usize, usize)> = fix.edits.iter().map(|e| e.byte_range).collect();
        // Touching ranges count as overlapping: two insertions at one place
        // have no meaningful order, so the later one waits for the next pass.
        let clashes = ranges.iter().any(|&(s, e)| taken.iter().any(|&(ts, te, _)| s <= te && ts <= e));
        let in_bounds = ranges.iter().all(|&(s, e)| s <= e && text.get(s..e).is_some());
        if clashes || !in_bounds {
            continue;
        }
        taken.extend(fix.edits.iter().map(|e| (e.byte_range.0, e.byte_range.1, e.content.clone())));
        applied.push(f);
    }
    taken.sort_by_key(|(s, e, _)| (*s, *e));
    (taken, applied)
}

/// How many error and missing nodes tree-sitter finds in `text`
/// (`usize::MAX` if it gives up, so a fix can never look like an improvement).
fn syntax_errors(text: &str) -> usize {
    let Some(tree) = parse_python(text) else { return usize::MAX };
    if !tree.root_node().has_error() {
        return 0;
    }
    let mut count = 0;
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        count += usize::from(node.is_error() || node.is_missing());
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return count;
            }
        }
    }
}
