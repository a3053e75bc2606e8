//! Finding the files to scan: Python sources, shell scripts, and files that
//! path-anchored rules ask for (such as `*.cu`), honouring ignore files.

use crate::config::Exclude;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::WalkBuilder;
use std::path::{Path, PathBuf};

/// How a file is analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileKind {
    /// Parsed with tree-sitter-python.
    Python,
    /// Scanned for environment-variable assignments and reads.
    Shell,
    /// Only matched by path (for example a `.cu` source in a Python project).
    PathOnly,
    /// A Jupyter notebook: its code cells are analysed as Python.
    Notebook,
}

/// One file to scan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ScanFile {
    /// The path as found on disk.
    pub path: PathBuf,
    /// `/`-separated path shown to users.
    pub display: String,
    /// How to analyse it.
    pub kind: FileKind,
}

/// What the walk found, and what it could not walk into.
pub struct WalkResult {
    /// Files in deterministic (display path) order.
    pub files: Vec<ScanFile>,
    /// Problems met while walking (unreadable directories, link loops).
    pub problems: Vec<(String, String)>,
}

/// A command-line path that cannot be scanned.
#[derive(Debug)]
pub struct MissingPath(pub String);

/// Classifies a file name; `extra` lists further extensions rules match by path.
pub fn classify(path: &Path, extra: &[String]) -> Option<FileKind> {
    let ext = path.extension()?.to_str()?;
    match ext {
        "py" | "pyi" => Some(FileKind::Python),
        "sh" | "bash" => Some(FileKind::Shell),
        "ipynb" => Some(FileKind::Notebook),
        _ if extra.iter().any(|e| e == ext) => Some(FileKind::PathOnly),
        _ => None,
    }
}

/// The path shown to users: relative to `cwd` when inside it, with `/` separators.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    let shown = match std::path::absolute(path) {
        Ok(abs) => abs.strip_prefix(cwd).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf()),
        Err(_) => path.to_path_buf(),
    };
    let text = shown.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").map(str::to_string).unwrap_or(text)
}

/// Walks `roots`. Directories are walked with `.gitignore`/`.ignore` rules and
/// `excludes` (each relative to its own base directory) applied; files named
/// explicitly are always scanned.
pub fn walk(roots: &[PathBuf], excludes: &[Exclude], extra_exts: &[String]) -> Result<WalkResult, MissingPath> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let excluded = exclude_matchers(excludes)?;
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for root in roots {
        let unusable = |e: std::io::Error| MissingPath(format!("{}: {}", root.display(), describe_io(&e)));
        let meta = std::fs::metadata(root).map_err(unusable)?;
        if meta.is_file() {
            // A file the user named must be readable: failing here beats a warning in a passing run.
            std::fs::File::open(root).map_err(unusable)?;
            let kind = classify(root, extra_exts).unwrap_or(FileKind::Python);
            files.push(ScanFile { path: root.clone(), display: display_path(root, &cwd), kind });
            continue;
        }
        let mut walker = WalkBuilder::new(root);
        if !excluded.is_empty() {
            let excluded = excluded.clone();
            walker.filter_entry(move |entry| {
                let (path, is_dir) =
                    (crate::config::absolute(entry.path()), entry.file_type().is_some_and(|t| t.is_dir()));
                !excluded.iter().any(|m| m.matched(&path, is_dir).is_ignore())
            });
        }
        let walker = walker.require_git(false).build();
        for entry in walker {
            match entry {
                Ok(entry) => {
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        continue;
                    }
                    if let Some(kind) = classify(entry.path(), extra_exts) {
                        let display = display_path(entry.path(), &cwd);
                        files.push(ScanFile { path: entry.into_path(), display, kind });
                    }
                }
                Err(err) => problems.push((root.display().to_string(), err.to_string())),
            }
        }
    }
    files.sort_by(|a, b| a.display.cmp(&b.display));
    files.dedup_by(|a, b| a.display == b.display);
    if roots.len() > 1 {
        // Roots can overlap (`a.py ../d/a.py`, `src src/m.py`): scanning a file
        // twice doubles its findings and makes `--fix` trip over its own write.
        let mut seen = std::collections::HashSet::new();
        files.retain(|f| seen.insert(std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone())));
    }
    Ok(WalkResult { files, problems })
}

/// One `.gitignore`-style matcher per base directory of `excludes`, matched
/// against absolute paths so that each glob is relative to its own base.
fn exclude_matchers(excludes: &[Exclude]) -> Result<Vec<Gitignore>, MissingPath> {
    let mut builders: Vec<(&Path, GitignoreBuilder)> = Vec::new();
    for e in excludes {
        let i = match builders.iter().position(|(base, _)| *base == e.base) {
            Some(i) => i,
            None => {
                builders.push((&e.base, GitignoreBuilder::new(&e.base)));
                builders.len() - 1
            }
        };
        let bad = |err| MissingPath(format!("{} glob `{}`: {err}", e.source, e.glob));
        builders[i].1.add_line(None, &e.glob).map_err(bad)?;
    }
    builders.into_iter().map(|(_, b)| b.build().map_err(|e| MissingPath(format!("exclude: {e}")))).collect()
}

fn describe_io(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}
