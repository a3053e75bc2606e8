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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFile {
    /// The path as found on disk.
    pub path: Box<Path>,
    /// The path shown to users; see [`ScanFile::display`].
    shown: Shown,
    /// How to analyse it.
    pub kind: FileKind,
    /// The project it belongs to: an index into [`WalkResult::projects`].
    pub project: usize,
}

/// Where a file's display path is kept. It is almost always the end of the
/// path on disk (`./src/a.py` is shown as `src/a.py`), and the file list
/// lives for the whole scan, so the text is only kept twice when it differs
/// (then behind one thin pointer: the list holds one entry per file).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shown {
    /// The path's text from this byte offset on.
    SuffixFrom(u32),
    /// A text of its own (a path that is not UTF-8, or that was rewritten).
    Own(Box<Box<str>>),
}

impl ScanFile {
    /// A file at `path`, shown to users as `display`.
    pub fn new(path: PathBuf, display: String, kind: FileKind, project: usize) -> Self {
        let suffix_from = |text: &str| u32::try_from(text.len() - display.len()).ok();
        let shown = match path.to_str().filter(|text| text.ends_with(&display)).and_then(suffix_from) {
            Some(start) => Shown::SuffixFrom(start),
            None => Shown::Own(Box::new(display.into_boxed_str())),
        };
        ScanFile { path: path.into_boxed_path(), shown, kind, project }
    }

    /// The `/`-separated path shown to users: relative to the working directory when inside it.
    pub fn display(&self) -> &str {
        match &self.shown {
            Shown::SuffixFrom(start) => {
                self.path.to_str().and_then(|text| text.get(*start as usize..)).unwrap_or_default()
            }
            Shown::Own(text) => text,
        }
    }
}

/// A project: the files whose nearest project directory is the same. Facts
/// decided for the whole project (`project_has`, `project_imports`) and the
/// migration style are decided per project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The directory, as shown to users (`.` for the current directory); for
    /// the files that lie in no project directory, the scan root (the roots
    /// named, joined with `, `, when there are several).
    pub display: String,
    /// The file that makes the directory a project (`pyproject.toml`, `.git`,
    /// ...); `None` for the scan root that holds none.
    pub marker: Option<String>,
}

/// What the walk found, and what it could not walk into.
pub struct WalkResult {
    /// Files in deterministic (display path) order.
    pub files: Vec<ScanFile>,
    /// The projects the files belong to, in the order of their first file.
    pub projects: Vec<Project>,
    /// Problems met while walking (unreadable directories, link loops).
    pub problems: Vec<(String, String)>,
}

/// Why the walk could not start: a path named to scan, or an `exclude`
/// glob, that cannot be used.
#[derive(Debug)]
pub enum WalkError {
    /// A path named on the command line is missing or unreadable.
    Unusable {
        /// The path as given.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// An `exclude` or `extend-exclude` glob does not compile.
    BadExclude {
        /// Where it was written: `` FILE:LINE: `exclude` `` or `` `--exclude` ``.
        written: String,
        /// The glob.
        glob: String,
        /// What the glob compiler said.
        source: ignore::Error,
    },
    /// The exclude globs together do not build.
    Excludes(ignore::Error),
}

impl std::fmt::Display for WalkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WalkError::Unusable { path, source } => match source.kind() {
                std::io::ErrorKind::NotFound => {
                    write!(f, "{}: no such file or directory; check the path to scan", path.display())
                }
                std::io::ErrorKind::PermissionDenied => {
                    write!(f, "{}: permission denied; make it readable, or leave it out", path.display())
                }
                _ => write!(f, "{}: {source}", path.display()),
            },
            WalkError::BadExclude { written, glob, source } => {
                write!(f, "{written} glob `{glob}`: {source}; fix the glob (.gitignore syntax)")
            }
            WalkError::Excludes(e) => write!(f, "exclude: {e}; fix the exclude globs (.gitignore syntax)"),
        }
    }
}

impl std::error::Error for WalkError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WalkError::Unusable { source, .. } => Some(source),
            WalkError::BadExclude { source, .. } | WalkError::Excludes(source) => Some(source),
        }
    }
}

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
pub fn walk(roots: &[PathBuf], excludes: &[Exclude], extra_exts: &[String]) -> Result<WalkResult, WalkError> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let excluded = exclude_matchers(excludes)?;
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut finder = ProjectFinder::default();
    for root in roots {
        let unusable = |source| WalkError::Unusable { path: root.clone(), source };
        let meta = std::fs::metadata(root).map_err(unusable)?;
        if meta.is_file() {
            // A file the user named must be readable: failing here beats a warning in a passing run.
            std::fs::File::open(root).map_err(unusable)?;
            let kind = classify(root, extra_exts).unwrap_or(FileKind::Python);
            // A file named on the command line (pre-commit names each staged
            // file) looks for its project up to the current directory.
            let dir =
                crate::config::absolute(root.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")));
            let bound = if dir.starts_with(&cwd) { cwd.clone() } else { dir.clone() };
            let project = finder.project(&dir, &bound);
            files.push(ScanFile::new(root.clone(), display_path(root, &cwd), kind, project));
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
        let bound = crate::config::absolute(root);
        for entry in walker {
            match entry {
                Ok(entry) => {
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        continue;
                    }
                    if let Some(kind) = classify(entry.path(), extra_exts) {
                        let display = display_path(entry.path(), &cwd);
                        let dir = entry.path().parent().map_or_else(|| bound.clone(), crate::config::absolute);
                        let project = finder.project(&dir, &bound);
                        files.push(ScanFile::new(entry.into_path(), display, kind, project));
                    }
                }
                Err(err) => problems.push((root.display().to_string(), err.to_string())),
            }
        }
    }
    files.sort_by(|a, b| a.display().cmp(b.display()));
    files.dedup_by(|a, b| a.display() == b.display());
    if roots.len() > 1 {
        // Roots can overlap (`a.py ../d/a.py`, `src src/m.py`): scanning a file
        // twice doubles its findings and makes `--fix` trip over its own write.
        let mut seen = std::collections::HashSet::new();
        files.retain(|f| seen.insert(std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.to_path_buf())));
    }
    let projects = finder.finish(roots, &cwd, &mut files);
    // The list lives until the report is written: on a large repository its
    // spare capacity would cost as much as the findings.
    files.shrink_to_fit();
    Ok(WalkResult { files, projects, problems })
}

/// The names that make a directory a project: `requirements*.txt` besides these.
const PROJECT_MARKERS: [&str; 4] = ["pyproject.toml", "setup.py", "setup.cfg", ".git"];

/// The file in `dir` that makes it a project, if any (one listing of the
/// directory); with several, the first of [`PROJECT_MARKERS`], then the first
/// `requirements*.txt` by name, whatever order the directory lists them in.
/// A `setup.py` beside an `__init__.py` is a module of a package (as
/// `pytorch_lightning/trainer/setup.py` is), not a project's.
fn project_marker(dir: &Path) -> Option<String> {
    let names: Vec<String> =
        std::fs::read_dir(dir).ok()?.flatten().filter_map(|entry| entry.file_name().into_string().ok()).collect();
    let package = names.iter().any(|n| n == "__init__.py");
    let rank = |name: &str| {
        if package && name == "setup.py" {
            return None;
        }
        PROJECT_MARKERS
            .iter()
            .position(|m| *m == name)
            .or_else(|| (name.starts_with("requirements") && name.ends_with(".txt")).then_some(PROJECT_MARKERS.len()))
    };
    names.into_iter().filter_map(|name| Some((rank(&name)?, name))).min().map(|(_, name)| name)
}

/// Finds each file's project, listing each directory at most once per bound.
#[derive(Default)]
struct ProjectFinder {
    /// (bound, absolute directory) -> the index in `dirs` of the directory's
    /// project, or `None` for the scan root.
    by_dir: std::collections::HashMap<(PathBuf, PathBuf), Option<usize>>,
    /// Project directories found, with their marker.
    dirs: Vec<(PathBuf, String)>,
    /// Project directory -> its index in `dirs` (two roots can reach one project).
    dir_index: std::collections::HashMap<PathBuf, usize>,
}

/// Temporary project index of the files in no project directory, until [`ProjectFinder::finish`].
const NO_PROJECT_DIR: usize = usize::MAX;

impl ProjectFinder {
    /// The project of a file in the absolute directory `dir`: the nearest
    /// directory from `dir` up to `bound` that holds a marker.
    fn project(&mut self, dir: &Path, bound: &Path) -> usize {
        let mut unknown: Vec<PathBuf> = Vec::new();
        let mut current = Some(dir);
        let found = loop {
            let Some(d) = current else { break None };
            if let Some(known) = self.by_dir.get(&(bound.to_path_buf(), d.to_path_buf())) {
                break *known;
            }
            unknown.push(d.to_path_buf());
            if let Some(marker) = project_marker(d) {
                let next = self.dirs.len();
                let index = *self.dir_index.entry(d.to_path_buf()).or_insert(next);
                if index == next {
                    self.dirs.push((d.to_path_buf(), marker));
                }
                break Some(index);
            }
            if d == bound || !d.starts_with(bound) {
                break None;
            }
            current = d.parent();
        };
        for d in unknown {
            self.by_dir.insert((bound.to_path_buf(), d), found);
        }
        found.unwrap_or(NO_PROJECT_DIR)
    }

    /// Numbers the projects in the order of their first file (after sorting)
    /// and rewrites the files' indices; returns the projects.
    fn finish(self, roots: &[PathBuf], cwd: &Path, files: &mut [ScanFile]) -> Vec<Project> {
        let mut renumbered: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        let mut projects = Vec::new();
        for file in files.iter_mut() {
            let next = renumbered.len();
            let index = *renumbered.entry(file.project).or_insert(next);
            if index == projects.len() {
                projects.push(match self.dirs.get(file.project) {
                    Some((dir, marker)) => Project { display: shown_dir(dir, cwd), marker: Some(marker.clone()) },
                    None => Project {
                        display: roots.iter().map(|r| shown_dir(r, cwd)).collect::<Vec<_>>().join(", "),
                        marker: None,
                    },
                });
            }
            file.project = index;
        }
        projects
    }
}

/// A directory as shown to users: relative to `cwd` when inside it, `.` for `cwd` itself.
fn shown_dir(dir: &Path, cwd: &Path) -> String {
    let shown = display_path(dir, cwd);
    if shown.is_empty() {
        ".".to_string()
    } else {
        shown
    }
}

/// One `.gitignore`-style matcher per base directory of `excludes`, matched
/// against absolute paths so that each glob is relative to its own base.
fn exclude_matchers(excludes: &[Exclude]) -> Result<Vec<Gitignore>, WalkError> {
    let mut builders: Vec<(&Path, GitignoreBuilder)> = Vec::new();
    for e in excludes {
        let i = match builders.iter().position(|(base, _)| *base == e.base) {
            Some(i) => i,
            None => {
                builders.push((&e.base, GitignoreBuilder::new(&e.base)));
                builders.len() - 1
            }
        };
        let bad = |source| WalkError::BadExclude { written: e.source.clone(), glob: e.glob.clone(), source };
        builders[i].1.add_line(None, &e.glob).map_err(bad)?;
    }
    builders.into_iter().map(|(_, b)| b.build().map_err(WalkError::Excludes)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_display_path_is_kept_once_when_it_ends_the_path() {
        let cases = [
            ("./src/train.py", "src/train.py", true),
            ("/abs/outside/cwd/train.py", "/abs/outside/cwd/train.py", true),
            ("/work/repo/src/ünï.py", "src/ünï.py", true),
            // Not a suffix: the display text is kept as given.
            ("src\\win.py", "src/win.py", false),
            ("a.py", "other.py", false),
        ];
        for (path, shown, suffix) in cases {
            let f = ScanFile::new(PathBuf::from(path), shown.to_string(), FileKind::Python, 0);
            assert_eq!(f.display(), shown, "{path}");
            assert_eq!(matches!(f.shown, Shown::SuffixFrom(_)), suffix, "{path}");
        }
    }
}
