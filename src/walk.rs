//! Finding the files to scan: Python sources, shell scripts, and files that
//! path-anchored rules ask for (such as `*.cu`), honouring ignore files.

use crate::config::Exclude;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::WalkBuilder;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a file is analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileKind {
    /// Parsed with tree-sitter-python.
    Python,
    /// Read with tree-sitter-bash: environment variables, commands, launches.
    Shell,
    /// Only matched by path (for example a `.cu` source in a Python project).
    PathOnly,
    /// A Jupyter notebook: its code cells are analysed as Python.
    Notebook,
}

/// One file to scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFile {
    /// Where it is, and how it is shown to users.
    place: Place,
    /// How to analyse it.
    pub kind: FileKind,
    /// The project it belongs to: an index into [`WalkResult::projects`].
    pub project: usize,
}

/// Where a file is. The file list lives for the whole scan and holds one
/// entry per file, so a walked file shares its directory with its siblings
/// and keeps only its own name (a full path per file would cost most of the
/// list's memory on a large repository).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// In a shared directory; shown as the directory's display path, `/`, the name.
    InDir { dir: Arc<Dir>, name: Box<str> },
    /// A path and display path of its own (a file named on the command line,
    /// a name that is not UTF-8, or a display path that is not the join).
    Own(Box<(Box<Path>, Box<str>)>),
    /// A path and display path of its own, and the text that stands for the
    /// file's content: an editor's unsaved buffer, or standard input.
    Buffer(Box<(Box<Path>, Box<str>, Arc<str>)>),
}

/// A directory that holds walked files.
#[derive(Debug, PartialEq, Eq)]
struct Dir {
    /// The directory as found on disk.
    path: Box<Path>,
    /// How it is shown to users; empty for the working directory itself.
    shown: Box<str>,
}

impl ScanFile {
    /// A file at `path`, shown to users as `display`.
    pub fn new(path: PathBuf, display: String, kind: FileKind, project: usize) -> Self {
        let place = Place::Own(Box::new((path.into_boxed_path(), display.into_boxed_str())));
        ScanFile { place, kind, project }
    }

    /// A file named `name` in `dir`, shown as `display`; it shares `dir`
    /// when `display` is the directory's display path joined with the name.
    fn in_dir(dir: &Arc<Dir>, path: PathBuf, display: String, kind: FileKind, project: usize) -> Self {
        let name = path.file_name().and_then(|n| n.to_str()).filter(|name| {
            let joined = match display.strip_suffix(name) {
                Some(head) if dir.shown.is_empty() => head.is_empty(),
                Some(head) => head.strip_suffix('/') == Some(&dir.shown),
                None => false,
            };
            joined && dir.path.join(name) == path
        });
        match name {
            Some(name) => ScanFile { place: Place::InDir { dir: dir.clone(), name: name.into() }, kind, project },
            None => ScanFile::new(path, display, kind, project),
        }
    }

    /// The same file with `text` standing for its content (an editor's
    /// unsaved buffer, or standard input): whatever reads the file reads that.
    pub fn with_text(&self, text: Arc<str>) -> Self {
        let place = Place::Buffer(Box::new((self.path().into_boxed_path(), self.display().into(), text)));
        ScanFile { place, kind: self.kind, project: self.project }
    }

    /// The text that stands for the file's content, if it has one (see [`ScanFile::with_text`]).
    pub fn text(&self) -> Option<&Arc<str>> {
        match &self.place {
            Place::Buffer(buffer) => Some(&buffer.2),
            _ => None,
        }
    }

    /// The path as found on disk.
    pub fn path(&self) -> PathBuf {
        match &self.place {
            Place::InDir { dir, name } => dir.path.join(&**name),
            Place::Own(own) => own.0.to_path_buf(),
            Place::Buffer(buffer) => buffer.0.to_path_buf(),
        }
    }

    /// The `/`-separated path shown to users: relative to the working directory when inside it.
    pub fn display(&self) -> Cow<'_, str> {
        match self.display_parts() {
            ("", "", name) => Cow::Borrowed(name),
            (dir, separator, name) => Cow::Owned([dir, separator, name].concat()),
        }
    }

    /// The display path in three parts (directory, separator, name), to
    /// compare display paths without building them.
    fn display_parts(&self) -> (&str, &str, &str) {
        match &self.place {
            Place::InDir { dir, name } if dir.shown.is_empty() => ("", "", name),
            Place::InDir { dir, name } => (&dir.shown, "/", name),
            Place::Own(own) => ("", "", &own.1),
            Place::Buffer(buffer) => ("", "", &buffer.1),
        }
    }

    /// Orders files by display path.
    fn display_cmp(&self, other: &ScanFile) -> std::cmp::Ordering {
        display_bytes(self.display_parts()).cmp(display_bytes(other.display_parts()))
    }
}

/// The bytes of a display path given in parts.
fn display_bytes<'a>((dir, separator, name): (&'a str, &'a str, &'a str)) -> impl Iterator<Item = u8> + 'a {
    dir.bytes().chain(separator.bytes()).chain(name.bytes())
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
#[derive(Clone)]
pub struct WalkResult {
    /// Files in deterministic (display path) order.
    pub files: Vec<ScanFile>,
    /// The projects the files belong to, in the order of their first file.
    pub projects: Vec<Project>,
    /// Problems met while walking (unreadable directories, link loops).
    pub problems: Vec<(String, String)>,
    /// The `exclude` globs, for later reads of the same directories.
    pub excluded: Excluded,
}

/// The compiled `exclude` and `extend-exclude` globs: one `.gitignore`-style
/// matcher per base directory, matched against absolute paths so that each
/// glob is relative to its own base.
#[derive(Debug, Clone, Default)]
pub struct Excluded(Arc<Vec<Gitignore>>);

/// Whether `glob` opens a character class (`[`) that it never closes; a
/// `\` escapes the next character, and a `]` right after `[` or `[!` is a
/// member of the class, not its end.
fn has_unclosed_class(glob: &str) -> bool {
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' => {
                if chars.peek() == Some(&'!') || chars.peek() == Some(&'^') {
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                }
                if !chars.by_ref().any(|c| c == ']') {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

impl Excluded {
    /// Compiles `excludes`.
    fn new(excludes: &[Exclude]) -> Result<Self, WalkError> {
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
            // The gitignore builder takes an unclosed `[` as a literal; a user
            // who wrote one most likely meant a class, and it would exclude nothing.
            if has_unclosed_class(&e.glob) {
                let err = "unclosed character class `[`; write `\\[` for a literal bracket".to_string();
                return Err(bad(ignore::Error::Glob { glob: Some(e.glob.clone()), err }));
            }
            builders[i].1.add_line(None, &e.glob).map_err(bad)?;
        }
        let matchers = builders.into_iter().map(|(_, b)| b.build().map_err(WalkError::Excludes));
        Ok(Excluded(Arc::new(matchers.collect::<Result<_, _>>()?)))
    }

    /// Whether the walk leaves out the file or directory at `path`.
    pub fn excludes(&self, path: &Path, is_dir: bool) -> bool {
        if self.0.is_empty() {
            return false;
        }
        let path = crate::config::absolute(path);
        self.0.iter().any(|m| m.matched(&path, is_dir).is_ignore())
    }

    /// A walk of `root` that leaves out what the scan's walk leaves out: the
    /// `exclude` globs, and `.gitignore`/`.ignore` files also outside a git
    /// repository; `skip` leaves out more entries (and what is under them).
    pub fn walker(&self, root: &Path, skip: impl Fn(&ignore::DirEntry) -> bool + Send + Sync + 'static) -> WalkBuilder {
        let mut walker = WalkBuilder::new(root);
        let excluded = self.clone();
        walker.filter_entry(move |entry| {
            !skip(entry) && !excluded.excludes(entry.path(), entry.file_type().is_some_and(|t| t.is_dir()))
        });
        walker.require_git(false);
        walker
    }
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

/// Classifies a file by its name; `extra` lists further extensions rules
/// match by path. A file without an extension is a shell script when its
/// first line runs a shell (`#!/bin/bash`, `#!/usr/bin/env sh`): launch
/// scripts are often kept so (`run`, `train`); only those few first bytes are read.
pub fn classify(path: &Path, extra: &[String]) -> Option<FileKind> {
    let Some(ext) = path.extension() else {
        return shell_shebang(path).then_some(FileKind::Shell);
    };
    let ext = ext.to_str()?;
    match ext {
        "py" | "pyi" => Some(FileKind::Python),
        "sh" | "bash" | "zsh" => Some(FileKind::Shell),
        "ipynb" => Some(FileKind::Notebook),
        _ if extra.iter().any(|e| e == ext) => Some(FileKind::PathOnly),
        _ => None,
    }
}

/// The shells whose scripts are read as shell scripts.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];

/// Whether the file at `path` starts with a `#!` line that runs one of [`SHELLS`].
fn shell_shebang(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 128];
    let Ok(mut file) = std::fs::File::open(path) else { return false };
    let Ok(n) = file.read(&mut head) else { return false };
    let line = head[..n].split(|&b| b == b'\n').next().unwrap_or_default();
    let Some(command) = line.strip_prefix(b"#!") else { return false };
    let command = String::from_utf8_lossy(command);
    let mut words = command.split_whitespace();
    let program = words.next().map(|p| p.rsplit('/').next().unwrap_or(p));
    // `#!/usr/bin/env bash`, `#!/usr/bin/env -S bash -e`.
    let program = match program {
        Some("env") => words.find(|w| !w.starts_with('-')),
        other => other,
    };
    program.is_some_and(|p| SHELLS.contains(&p))
}

/// The path shown to users: relative to `cwd` when inside it, with `/` separators.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    let shown = match std::path::absolute(path) {
        Ok(abs) => abs.strip_prefix(cwd).map(Path::to_path_buf).unwrap_or_else(|_| path.to_path_buf()),
        Err(_) => path.to_path_buf(),
    };
    let text = crate::shown_path::shown(&shown);
    text.strip_prefix("./").map(str::to_string).unwrap_or(text)
}

/// Walks `roots`. Directories are walked with `.gitignore`/`.ignore` rules and
/// `excludes` (each relative to its own base directory) applied; files named
/// explicitly are always scanned.
pub fn walk(roots: &[PathBuf], excludes: &[Exclude], extra_exts: &[String]) -> Result<WalkResult, WalkError> {
    walk_with_texts(roots, excludes, extra_exts, &HashMap::new())
}

/// [`walk`], where `texts` (by absolute path, as [`crate::config::absolute`]
/// spells it) stand for the content of the files at those paths: an
/// editor's unsaved buffers, or standard input. A root with a text is a named
/// file even if it is not on disk; a text for a file under a walked
/// directory is scanned as if the file were there (even if it is not yet),
/// unless an `exclude` glob or a hidden directory leaves its path out; other
/// texts are not scanned.
pub fn walk_with_texts(
    roots: &[PathBuf],
    excludes: &[Exclude],
    extra_exts: &[String],
    texts: &HashMap<PathBuf, Arc<str>>,
) -> Result<WalkResult, WalkError> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let excluded = Excluded::new(excludes)?;
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut finder = ProjectFinder::default();
    // Walked files share their directory (see [`Place`]).
    let mut dirs: HashMap<PathBuf, Arc<Dir>> = HashMap::new();
    // A file named on the command line (pre-commit names each staged file)
    // looks for its project up to the current directory.
    let named = |finder: &mut ProjectFinder, root: &Path| {
        let kind = classify(root, extra_exts).unwrap_or(FileKind::Python);
        let dir =
            crate::config::absolute(root.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")));
        let bound = if dir.starts_with(&cwd) { cwd.clone() } else { dir.clone() };
        let project = finder.project(&dir, &bound);
        ScanFile::new(root.to_path_buf(), display_path(root, &cwd), kind, project)
    };
    let mut walked_dirs = Vec::new();
    for root in roots {
        if texts.contains_key(&crate::config::absolute(root)) {
            files.push(named(&mut finder, root));
            continue;
        }
        let unusable = |source| WalkError::Unusable { path: root.clone(), source };
        let meta = std::fs::metadata(root).map_err(unusable)?;
        if meta.is_file() {
            // A file the user named must be readable: failing here beats a warning in a passing run.
            std::fs::File::open(root).map_err(unusable)?;
            files.push(named(&mut finder, root));
            continue;
        }
        // A directory the user named must be readable too: a walk that cannot
        // list it finds no file, and an empty scan passes the gate.
        std::fs::read_dir(root).map_err(unusable)?;
        let walker = excluded.walker(root, |_| false).build();
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
                        let file = match entry.path().parent() {
                            Some(parent) => {
                                let shared = match dirs.get(parent) {
                                    Some(shared) => shared.clone(),
                                    None => {
                                        let shown = display_path(parent, &cwd).into();
                                        let shared = Arc::new(Dir { path: parent.into(), shown });
                                        dirs.insert(parent.to_path_buf(), shared.clone());
                                        shared
                                    }
                                };
                                ScanFile::in_dir(&shared, entry.into_path(), display, kind, project)
                            }
                            None => ScanFile::new(entry.into_path(), display, kind, project),
                        };
                        files.push(file);
                    }
                }
                Err(err) => problems.push((root.display().to_string(), err.to_string())),
            }
        }
        walked_dirs.push((root, bound));
    }
    if !texts.is_empty() {
        add_texts(&mut files, texts, &walked_dirs, &excluded, extra_exts, &mut |root, bound| {
            finder.project(&root.parent().map_or_else(|| bound.to_path_buf(), crate::config::absolute), bound)
        });
    }
    files.sort_by(ScanFile::display_cmp);
    files.dedup_by(|a, b| a.display_cmp(b).is_eq());
    if roots.len() > 1 {
        // Roots can overlap (`a.py ../d/a.py`, `src src/m.py`): scanning a file
        // twice doubles its findings and makes `--fix` trip over its own write.
        let mut seen = std::collections::HashSet::new();
        files.retain(|f| {
            let path = f.path();
            seen.insert(std::fs::canonicalize(&path).unwrap_or(path))
        });
    }
    let projects = finder.finish(roots, &cwd, &mut files);
    // The list lives until the report is written: on a large repository its
    // spare capacity would cost as much as the findings.
    files.shrink_to_fit();
    Ok(WalkResult { files, projects, problems, excluded })
}

/// Gives the files that have one their text from `texts`, and adds a file
/// for each other text under a walked directory (`walked`: each root as
/// given, and absolute) that the walk would not leave out; `project` finds
/// an added file's project from its path and its root.
fn add_texts(
    files: &mut Vec<ScanFile>,
    texts: &HashMap<PathBuf, Arc<str>>,
    walked: &[(&PathBuf, PathBuf)],
    excluded: &Excluded,
    extra_exts: &[String],
    project: &mut dyn FnMut(&Path, &Path) -> usize,
) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut unused: HashMap<&PathBuf, &Arc<str>> = texts.iter().collect();
    for f in files.iter_mut() {
        if let Some(text) = unused.remove(&crate::config::absolute(&f.path())) {
            *f = f.with_text(text.clone());
        }
    }
    for (path, text) in unused {
        let Some((root, bound)) = walked.iter().find(|(_, bound)| path.starts_with(bound)) else { continue };
        let hidden = path.strip_prefix(bound).is_ok_and(|rest| {
            rest.components().any(|c| c.as_os_str().to_str().is_some_and(|name| name.starts_with('.')))
        });
        let left_out =
            hidden || path.ancestors().take_while(|a| a.starts_with(bound)).any(|a| excluded.excludes(a, a != path));
        let Some(kind) = classify(path, extra_exts).filter(|_| !left_out) else { continue };
        // Shown and found as the walk shows a file under `root`.
        let on_walk = root.join(path.strip_prefix(bound).unwrap_or(path));
        let file = ScanFile::new(on_walk.clone(), display_path(&on_walk, &cwd), kind, project(&on_walk, bound));
        files.push(file.with_text(text.clone()));
    }
}

/// The names that make a directory a project, besides a requirements file
/// ([`is_requirements_file`]).
const PROJECT_MARKERS: [&str; 4] = ["pyproject.toml", "setup.py", "setup.cfg", ".git"];

/// The file in `dir` that makes it a project, if any (one listing of the
/// directory); with several, the first of [`PROJECT_MARKERS`], then the first
/// requirements file by name, whatever order the directory lists them in,
/// then one in a `requirements/` directory (GPT-NeoX keeps
/// `requirements/requirements.txt` and no other marker).
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
            .or_else(|| is_requirements_file(name).then_some(PROJECT_MARKERS.len()))
    };
    let marker = names.iter().filter_map(|name| Some((rank(name)?, name))).min().map(|(_, name)| name.clone());
    marker.or_else(|| {
        names.iter().any(|n| n == "requirements").then(|| requirements_in(&dir.join("requirements"))).flatten()
    })
}

/// The requirements file of the directory `dir`, as `requirements/<name>`:
/// `requirements.txt`, else the first by name.
fn requirements_in(dir: &Path) -> Option<String> {
    let names = std::fs::read_dir(dir).ok()?.flatten().filter_map(|entry| entry.file_name().into_string().ok());
    let first = names.filter(|n| is_requirements_file(n)).min_by_key(|n| (n != "requirements.txt", n.clone()));
    first.map(|n| format!("requirements/{n}"))
}

/// Whether a file name is a project's requirements file: `requirements*.txt`,
/// `*-requirements.txt` (`pip-requirements.txt`), or the versioned
/// `1.8_requirements.txt` that Huawei's ModelZoo ports carry as their only
/// marker. Other spellings (`travis_requirements.txt` in a `tests/`
/// directory) pin a tool's environment rather than start a project.
fn is_requirements_file(name: &str) -> bool {
    let versioned = name.strip_suffix("_requirements.txt").is_some_and(|version| {
        !version.is_empty()
            && version.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
    });
    versioned || name.ends_with("-requirements.txt") || (name.starts_with("requirements") && name.ends_with(".txt"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requirements_file_or_a_versioned_one_makes_a_project() {
        let dir = std::env::temp_dir().join(format!("npu-mem-markers-{}", std::process::id()));
        let cases: [(&[&str], Option<&str>); 12] = [
            (&["1.8_requirements.txt", "README.md"], Some("1.8_requirements.txt")),
            (&["requirements-dev.txt"], Some("requirements-dev.txt")),
            (&["pip-requirements.txt"], Some("pip-requirements.txt")),
            (&["travis_requirements.txt"], None),
            (&["1._requirements.txt", "v2.1_requirements.txt"], None),
            (&["2.1_requirements.txt", "setup.py"], Some("setup.py")),
            (&["requirements.md", "notes.txt"], None),
            (&["__init__.py", "setup.py"], None),
            (
                &["requirements/requirements-dev.txt", "requirements/requirements.txt"],
                Some("requirements/requirements.txt"),
            ),
            (&["requirements/requirements-dev.txt"], Some("requirements/requirements-dev.txt")),
            (&["requirements/notes.md", "train.py"], None),
            (&["requirements/requirements.txt", "setup.cfg"], Some("setup.cfg")),
        ];
        for (names, marker) in cases {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("requirements")).unwrap();
            names.iter().for_each(|n| std::fs::write(dir.join(n), "").unwrap());
            assert_eq!(project_marker(&dir).as_deref(), marker, "{names:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unclosed_classes_are_told_from_closed_and_escaped_ones() {
        for unclosed in ["[abc", "src/[", "a[!b", "x[]", "*.py["] {
            assert!(has_unclosed_class(unclosed), "{unclosed}");
        }
        for fine in ["[abc]", "[]]", "[!]a]", "\\[literal", "plain/*.py", "a[0-9]b"] {
            assert!(!has_unclosed_class(fine), "{fine}");
        }
    }

    #[test]
    fn a_walked_file_shares_its_directory_when_its_display_path_is_the_join() {
        let src = Arc::new(Dir { path: Path::new("./src").into(), shown: "src".into() });
        let cwd = Arc::new(Dir { path: Path::new(".").into(), shown: "".into() });
        let cases = [
            (&src, "./src/train.py", "src/train.py", true),
            (&cwd, "./train.py", "train.py", true),
            (&src, "./src/ünï.py", "src/ünï.py", true),
            // Not the join: the file keeps its own path and display text.
            (&src, "./src/a.py", "elsewhere/a.py", false),
            (&src, "./other/a.py", "src/a.py", false),
            (&cwd, "./a.py", "x/a.py", false),
        ];
        for (dir, path, shown, shared) in cases {
            let f = ScanFile::in_dir(dir, PathBuf::from(path), shown.to_string(), FileKind::Python, 0);
            assert_eq!(f.display(), shown, "{path}");
            assert_eq!(f.path(), PathBuf::from(path), "{path}");
            assert_eq!(matches!(f.place, Place::InDir { .. }), shared, "{path}");
        }
    }

    #[test]
    fn texts_stand_for_files_on_disk_and_for_files_not_saved_yet() {
        let root = std::env::temp_dir().join(format!("npu-mem-walk-texts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("vendor")).unwrap();
        std::fs::write(root.join("a.py"), "on disk\n").unwrap();
        let root = crate::config::absolute(&root);
        let text = |t: &str| -> Arc<str> { t.into() };
        let texts: HashMap<PathBuf, Arc<str>> = [
            (root.join("a.py"), text("buffer a\n")),
            (root.join("new/b.py"), text("buffer b\n")),
            (root.join("vendor/c.py"), text("excluded\n")),
            (root.join(".hidden/d.py"), text("hidden\n")),
            (root.join("notes.txt"), text("not scanned\n")),
            (std::env::temp_dir().join("elsewhere.py"), text("outside\n")),
        ]
        .into_iter()
        .collect();
        let exclude = Exclude { glob: "vendor/".into(), base: root.clone(), source: "test".into() };
        let walked = walk_with_texts(std::slice::from_ref(&root), &[exclude], &[], &texts).unwrap();
        let found: Vec<(String, Option<&str>)> = walked
            .files
            .iter()
            .map(|f| (f.path().strip_prefix(&root).unwrap().display().to_string(), f.text().map(|t| &**t)))
            .collect();
        assert_eq!(found, [("a.py".into(), Some("buffer a\n")), ("new/b.py".into(), Some("buffer b\n"))]);
        // A named file with a text need not exist.
        let named = root.join("unsaved.py");
        let texts: HashMap<PathBuf, Arc<str>> = [(named.clone(), text("x\n"))].into_iter().collect();
        let walked = walk_with_texts(std::slice::from_ref(&named), &[], &[], &texts).unwrap();
        assert_eq!(walked.files.len(), 1);
        assert_eq!((walked.files[0].path(), walked.files[0].text().map(|t| &**t)), (named, Some("x\n")));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_file_without_an_extension_is_a_shell_script_by_its_first_line() {
        let dir = std::env::temp_dir().join(format!("npu-mem-shebang-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let kind = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            classify(&path, &[])
        };
        for text in ["#!/bin/bash\npython3 train.py\n", "#!/usr/bin/env bash\n", "#!/bin/sh -e\n", "#!/usr/bin/env zsh"]
        {
            assert_eq!(kind("run", text), Some(FileKind::Shell), "{text}");
        }
        for text in ["#!/usr/bin/env python3\n", "python3 train.py\n", "", "#!/bin/bashful\n"] {
            assert_eq!(kind("run", text), None, "{text}");
        }
        assert_eq!(kind("train.zsh", "python3 train.py\n"), Some(FileKind::Shell));
        assert_eq!(classify(&dir.join("missing"), &[]), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn files_sort_by_display_path_whichever_way_it_is_kept() {
        let src = Arc::new(Dir { path: Path::new("src").into(), shown: "src".into() });
        let mut files = vec![
            ScanFile::in_dir(&src, PathBuf::from("src/b.py"), "src/b.py".into(), FileKind::Python, 0),
            ScanFile::new(PathBuf::from("src-a.py"), "src-a.py".into(), FileKind::Python, 0),
            ScanFile::new(PathBuf::from("src/a.py"), "src/a.py".into(), FileKind::Python, 0),
            ScanFile::in_dir(&src, PathBuf::from("src/a.py"), "src/a.py".into(), FileKind::Python, 0),
        ];
        files.sort_by(ScanFile::display_cmp);
        files.dedup_by(|a, b| a.display_cmp(b).is_eq());
        let shown: Vec<_> = files.iter().map(|f| f.display().into_owned()).collect();
        // Byte order, as `str` sorts: `-` (0x2d) before `/` (0x2f).
        assert_eq!(shown, ["src-a.py", "src/a.py", "src/b.py"]);
    }
}
