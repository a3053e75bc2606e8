//! `--add-ignore`: adopt the gate in one commit by appending a suppression
//! comment to every line that has findings, changing nothing else in the file.

use crate::finding::Finding;
use crate::parse::parse_python;
use crate::parse::KindOf;
use crate::source::{ReadError, SourceText};
use crate::suppress::Directive;
use crate::walk::FileKind;
use crate::write::WriteError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The reason `--add-ignore` writes when none is given (and the language
/// server's "Ignore this finding", unless the client sets another).
pub const DEFAULT_REASON: &str = "existing finding, suppressed when adopting npu-mem";

/// Why `--add-ignore` left a file alone.
#[derive(Debug)]
pub enum AddIgnoreError {
    /// The file could not be read.
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// It is not text in an encoding it may be in, so comments cannot be added safely.
    NotText {
        /// The file.
        path: PathBuf,
        /// Why not (the scan says the same).
        reason: String,
    },
    /// Its encoding would not write it back as the bytes it was read from,
    /// or has no form for a character of the comment.
    NotReversible {
        /// The file.
        path: PathBuf,
        /// The encoding's name.
        encoding: &'static str,
    },
    /// The comments would turn a file that parses into one that does not.
    BreaksSyntax {
        /// The file.
        path: PathBuf,
    },
    /// The new text could not be written.
    Write(WriteError),
}

impl std::fmt::Display for AddIgnoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AddIgnoreError::Unreadable { path, source } => {
                write!(f, "{}: cannot read: {source}; it was left alone", path.display())
            }
            AddIgnoreError::NotText { path, reason } => {
                write!(f, "{}: {reason}; left alone (add the comments by hand)", path.display())
            }
            AddIgnoreError::NotReversible { path, encoding } => write!(
                f,
                "{}: the file is in {encoding}, which would not write it back unchanged with the comments; left \
                 alone (re-save it as UTF-8, or add the comments by hand)",
                path.display()
            ),
            AddIgnoreError::BreaksSyntax { path } => write!(
                f,
                "{}: adding comments would break the syntax; left alone (add `# npu-mem: ignore[CODE] -- reason` by \
                 hand)",
                path.display()
            ),
            AddIgnoreError::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AddIgnoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AddIgnoreError::Unreadable { source, .. } => Some(source),
            AddIgnoreError::Write(e) => Some(e),
            AddIgnoreError::NotText { .. }
            | AddIgnoreError::NotReversible { .. }
            | AddIgnoreError::BreaksSyntax { .. } => None,
        }
    }
}

/// What `--add-ignore` did.
#[derive(Debug, Default)]
pub struct Added {
    /// Comments added or extended.
    pub comments: usize,
    /// Files written.
    pub files: usize,
    /// Lines or files left alone, and why.
    pub skipped: Vec<String>,
}

/// Appends `# npu-mem: ignore[CODES] -- reason` to each line with findings
/// (or adds the codes to the suppression already there).
pub fn add_ignores(findings: &[Finding], reason: &str) -> Added {
    let mut by_file: BTreeMap<&str, BTreeMap<usize, Vec<&str>>> = BTreeMap::new();
    let mut notebooks = std::collections::BTreeSet::new();
    for f in findings.iter().filter(|f| !f.code.starts_with("NPM")) {
        if f.path.ends_with(".py") || f.path.ends_with(".pyi") || f.path.ends_with(".sh") {
            let codes = by_file.entry(&f.path).or_default().entry(f.line).or_default();
            if !codes.contains(&f.code.as_str()) {
                codes.push(&f.code);
            }
        } else if f.cell.is_some() {
            notebooks.insert(&f.path);
        }
    }
    let mut added = Added::default();
    added.skipped.extend(notebooks.into_iter().map(|p| {
        format!("{p}: --add-ignore does not edit notebooks; add `# npu-mem: ignore[CODE] -- reason` in the cells")
    }));
    for (path, lines) in by_file {
        match edit_file(&crate::shown_path::unshown(path), &lines, reason) {
            Ok((n, skipped)) => {
                added.comments += n;
                added.files += usize::from(n > 0);
                added.skipped.extend(skipped);
            }
            Err(e) => added.skipped.push(e.to_string()),
        }
    }
    added
}

/// Adds the comments to one file: how many, and the lines left alone and why.
fn edit_file(
    path: &Path,
    lines: &BTreeMap<usize, Vec<&str>>,
    reason: &str,
) -> Result<(usize, Vec<String>), AddIgnoreError> {
    let original =
        std::fs::read(path).map_err(|source| AddIgnoreError::Unreadable { path: path.to_path_buf(), source })?;
    let kind = if path.to_string_lossy().ends_with(".sh") { FileKind::Shell } else { FileKind::Python };
    let not_text = |e: ReadError| AddIgnoreError::NotText { path: path.to_path_buf(), reason: e.to_string() };
    let source = crate::source::decode(original.clone(), kind).map_err(not_text)?;
    let encoding = source.encoding;
    let not_reversible = || AddIgnoreError::NotReversible { path: path.to_path_buf(), encoding: encoding.name() };
    if !source.gives_back(&original) {
        return Err(not_reversible());
    }
    let SourceText { text, .. } = source;
    let added = with_suppressions(path, &text, kind, lines, reason)?;
    if added.comments == 0 {
        return Ok((0, added.skipped));
    }
    let bytes = encoding.encode(&added.text).ok_or_else(not_reversible)?;
    crate::write::replace_file(path, &original, &bytes).map_err(AddIgnoreError::Write)?;
    Ok((added.comments, added.skipped))
}

/// A file's text with suppression comments added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppressed {
    /// The new text.
    pub text: String,
    /// Comments added or extended.
    pub comments: usize,
    /// Lines left alone, and why.
    pub skipped: Vec<String>,
}

/// `text`, of the Python or shell file (`kind`) at `path`, with
/// `# npu-mem: ignore[CODES] -- reason` appended to each of `lines` (by
/// 1-based line number, the codes to suppress there), or the codes added to
/// the suppression already on the line; nothing else changes. What
/// `--add-ignore` writes, and what the language server's "Ignore this
/// finding" offers as an edit.
pub fn with_suppressions(
    path: &Path,
    text: &str,
    kind: FileKind,
    lines: &BTreeMap<usize, Vec<&str>>,
    reason: &str,
) -> Result<Suppressed, AddIgnoreError> {
    let python = kind != FileKind::Shell;
    let tree = if python { parse_python(text) } else { None };
    let directives = match &tree {
        Some(tree) => crate::suppress::in_python(tree.root_node(), text),
        None if python => Vec::new(),
        None => crate::suppress::in_shell(text, &crate::parse::shell::read(text).comments),
    };
    // The line suppression already on a line, to extend rather than repeat.
    let existing: BTreeMap<usize, &Directive> =
        directives.iter().filter(|d| !d.whole_file).map(|d| (d.line, d)).collect();
    let mut out = String::with_capacity(text.len() + lines.len() * 48);
    let mut skipped = Vec::new();
    let mut count = 0;
    let mut offset = 0;
    // Lines as the findings count them: a lone CR ends one, as in Python.
    for (i, raw) in crate::source::python_lines_with_ends(text).enumerate() {
        let line_no = i + 1;
        let body = raw.trim_end_matches(['\n', '\r']);
        let ending = &raw[body.len()..];
        let Some(codes) = lines.get(&line_no) else {
            out.push_str(raw);
            offset += raw.len();
            continue;
        };
        let end_in_string = tree.as_ref().is_some_and(|t| {
            let end = offset + body.trim_end().len();
            end > 0
                && t.root_node().descendant_for_byte_range(end - 1, end).is_some_and(|n| {
                    matches!(n.kind_name(), "string_content" | "string_start" | "string")
                        && n.end_byte() > offset + body.len()
                })
        });
        if body.trim_end().ends_with('\\') || end_in_string {
            skipped.push(format!(
                "{}:{line_no}: the line continues (backslash or multi-line string); add the comment by hand",
                path.display()
            ));
            out.push_str(raw);
        } else {
            out.push_str(&with_codes(body, existing.get(&line_no).copied(), codes, reason));
            out.push_str(ending);
            count += 1;
        }
        offset += raw.len();
    }
    if python && count > 0 {
        let errors = |t: &str| parse_python(t).map(|tree| tree.root_node().has_error());
        if errors(&out) == Some(true) && errors(text) == Some(false) {
            return Err(AddIgnoreError::BreaksSyntax { path: path.to_path_buf() });
        }
    }
    Ok(Suppressed { text: out, comments: count, skipped })
}

/// The line with `codes` suppressed: merged into its `existing` suppression
/// `ignore[...]`, or a new comment.
fn with_codes(body: &str, existing: Option<&Directive>, codes: &[&str], reason: &str) -> String {
    let brackets = existing.and_then(|d| {
        // The directive's `#`, then the first `[` and `]` after the marker.
        let hash = body.char_indices().nth(d.column.checked_sub(1)?)?.0;
        let marker = hash + body[hash..].find(crate::suppress::MARKER)?;
        let open = marker + body[marker..].find('[')?;
        let close = open + body[open..].find(']')?;
        Some((d, open, close))
    });
    if let Some((d, open, close)) = brackets {
        let mut all = d.codes.clone();
        all.extend(codes.iter().map(|c| c.to_string()).filter(|c| !d.codes.contains(c)));
        return format!("{}[{}]{}", &body[..open], all.join(", "), &body[close + 1..]);
    }
    format!("{body}  # npu-mem: ignore[{}] -- {reason}", codes.join(", "))
}
