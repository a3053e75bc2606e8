//! Changed-lines gating: `--diff-base REV` keeps only findings on lines added
//! or changed since REV, read from `git diff`; untracked files count as
//! changed. What the diff cannot judge keeps its findings: a file outside the
//! repository, in a submodule, or in an untracked nested repository.

use crate::finding::Finding;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Lines added or changed per file (absolute paths); `None` means the whole file.
pub struct ChangedLines {
    files: HashMap<PathBuf, Option<Vec<(usize, usize)>>>,
    /// The repository's root (canonical): files outside it cannot be judged.
    root: PathBuf,
    /// Directories the superproject's diff does not look into (canonical):
    /// submodules and untracked nested repositories.
    opaque: Vec<PathBuf>,
    /// The places that held findings the diff could not judge, and why.
    undecided: std::cell::RefCell<std::collections::BTreeSet<String>>,
    /// For files with lone CR line ends, read when a finding is looked up:
    /// git's line of each of the lines findings count (git ends lines at
    /// `\n` only, Python at a lone `\r` too). `None` for other files.
    git_lines: std::cell::RefCell<HashMap<PathBuf, Option<Vec<usize>>>>,
}

/// Why `--diff-base` could not tell which lines changed.
#[derive(Debug)]
pub enum DiffError {
    /// git could not be run.
    NoGit(std::io::Error),
    /// The scanned path is not in a git repository.
    NotARepository {
        /// The directory git was asked about.
        dir: PathBuf,
    },
    /// The revision names no commit.
    NoCommit {
        /// The revision as given.
        rev: String,
        /// The repository's root.
        root: PathBuf,
        /// Whether the clone is shallow, so that the commit may exist but not have been fetched.
        shallow: bool,
    },
    /// A git command failed.
    Git {
        /// Its arguments.
        command: String,
        /// What git wrote on stderr.
        stderr: String,
    },
}

impl std::fmt::Display for DiffError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiffError::NoGit(e) => {
                write!(f, "--diff-base needs git on the PATH ({e}); install git, or leave out --diff-base")
            }
            DiffError::NotARepository { dir } => write!(
                f,
                "--diff-base needs a git repository, and {} is not inside one; scan a path in a git checkout, or \
                 leave out --diff-base",
                dir.display()
            ),
            DiffError::NoCommit { rev, root, shallow: true } => write!(
                f,
                "--diff-base {rev}: no such commit in {}; this is a shallow clone: fetch more history (e.g. `git \
                 fetch --deepen=50`, or `fetch-depth: 0` with actions/checkout)",
                root.display()
            ),
            DiffError::NoCommit { rev, root, shallow: false } => write!(
                f,
                "--diff-base {rev}: no such commit in {}; run `git fetch` or pass a revision that exists (a branch, \
                 tag or commit)",
                root.display()
            ),
            DiffError::Git { command, stderr } => {
                write!(f, "--diff-base: `git {command}` failed: {stderr}; run it yourself to see why")
            }
        }
    }
}

impl std::error::Error for DiffError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DiffError::NoGit(e) => Some(e),
            _ => None,
        }
    }
}

/// Runs git with `args` in `dir`: its stdout, or why it failed.
fn git(dir: &Path, args: &[&str]) -> Result<String, DiffError> {
    let out = Command::new("git").args(args).current_dir(dir).output().map_err(DiffError::NoGit)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(DiffError::Git { command: args.join(" "), stderr });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Options that pin `git diff`'s output to one format whatever the user's
/// configuration says: prefixes (`diff.noprefix`, `diff.mnemonicPrefix`),
/// external and text-converting drivers, colour, hunk merging and quoting
/// (every unusual byte octal-escaped, see [`diff_path`]). Every file is
/// compared as text, also one `.gitattributes` marks `binary` or `-diff`
/// (notebooks often are): "Binary files differ" names no line. Renames are
/// found, so a file moved with `git mv` brings no new lines.
const DIFF_ARGS: &[&str] = &[
    "-c",
    "core.quotePath=true",
    "diff",
    "--unified=0",
    "--inter-hunk-context=0",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--text",
    "--find-renames",
];

impl ChangedLines {
    /// Reads what changed since `rev` in the git repository around `dir`.
    pub fn since(rev: &str, dir: &Path) -> Result<Self, DiffError> {
        let dir = if dir.is_dir() {
            dir.to_path_buf()
        } else {
            // `plain.py` has the parent `""`: the current directory.
            dir.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        };
        let root = git(&dir, &["rev-parse", "--show-toplevel"]).map_err(|e| match e {
            DiffError::Git { .. } => DiffError::NotARepository { dir: dir.clone() },
            other => other,
        })?;
        let root = PathBuf::from(root.trim_end_matches(['\n', '\r']));
        if git(&root, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")]).is_err() {
            let shallow = git(&root, &["rev-parse", "--is-shallow-repository"]).is_ok_and(|s| s.trim() == "true");
            return Err(DiffError::NoCommit { rev: rev.to_string(), root, shallow });
        }
        let mut args = DIFF_ARGS.to_vec();
        args.extend([rev, "--"]);
        let diff = git(&root, &args)?;
        let mut files: HashMap<PathBuf, Option<Vec<(usize, usize)>>> = HashMap::new();
        let mut current: Option<PathBuf> = None;
        // Between `diff --git` and the first hunk; an added line `++ x` also starts with `+++ `.
        let mut in_header = false;
        for line in diff.lines() {
            if line.starts_with("diff --git ") {
                in_header = true;
                current = None;
            } else if let (Some(path), true) = (line.strip_prefix("+++ "), in_header) {
                current = diff_path(path).map(|p| root.join(p));
                if let Some(p) = &current {
                    files.entry(p.clone()).or_insert_with(|| Some(Vec::new()));
                }
            } else if let (Some(hunk), Some(path)) = (line.strip_prefix("@@ "), &current) {
                in_header = false;
                if let Some(range) = added_range(hunk) {
                    if let Some(Some(ranges)) = files.get_mut(path) {
                        ranges.push(range);
                    }
                }
            }
        }
        let mut opaque = Vec::new();
        for path in git(&root, &["ls-files", "--others", "--exclude-standard", "-z"])?.split('\0') {
            match path.strip_suffix('/') {
                // An untracked directory listed whole is a nested repository.
                Some(dir) => opaque.push(root.join(dir)),
                None if !path.is_empty() => {
                    files.insert(root.join(path), None);
                }
                None => {}
            }
        }
        // Submodules: the superproject's diff names their commit, not their lines.
        for entry in git(&root, &["ls-files", "--stage", "-z"])?.split('\0') {
            let submodule = entry.split_once('\t').filter(|(meta, _)| meta.starts_with("160000 "));
            opaque.extend(submodule.map(|(_, path)| root.join(path)));
        }
        let canonical = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
        let files = files.into_iter().map(|(p, r)| (canonical(p), r)).collect();
        let opaque = opaque.into_iter().map(canonical).collect();
        let root = canonical(root);
        Ok(ChangedLines { files, root, opaque, undecided: Default::default(), git_lines: Default::default() })
    }

    /// The places that held findings the diff could not judge, with why
    /// (their findings were all kept).
    pub fn undecided(&self) -> Vec<String> {
        self.undecided.borrow().iter().cloned().collect()
    }

    /// Whether `f` is on an added or changed line.
    pub fn touches(&self, f: &Finding) -> bool {
        let real = crate::shown_path::unshown(&f.path);
        let path = std::fs::canonicalize(&real).unwrap_or(real);
        let undecided = |why: String| {
            self.undecided.borrow_mut().insert(why);
            true
        };
        if !path.starts_with(&self.root) {
            return undecided(format!("{}: outside the git repository at {}", f.path, self.root.display()));
        }
        if let Some(dir) = self.opaque.iter().find(|d| path.starts_with(d)) {
            let what = format!("{}: in {}, a submodule or a nested repository", f.path, dir.display());
            return undecided(what);
        }
        match self.files.get(&path) {
            None => false,
            Some(None) => true,
            Some(Some(ranges)) => {
                // In a notebook, the line of the finding's source string in the JSON.
                let line = f.region_in_file().0;
                let line = if f.cell.is_none() { self.git_line(&path, line) } else { line };
                ranges.iter().any(|(start, end)| (*start..=*end).contains(&line))
            }
        }
    }

    /// The line git gives line `line` of the file at `path`: the same one,
    /// except in a file with lone CR line ends.
    fn git_line(&self, path: &Path, line: usize) -> usize {
        let mut cache = self.git_lines.borrow_mut();
        let lines = cache.entry(path.to_path_buf()).or_insert_with(|| {
            let text = String::from_utf8_lossy(&std::fs::read(path).ok()?).into_owned();
            crate::source::has_lone_cr(&text).then(|| {
                let mut lf_before = 0;
                let mut git = vec![1];
                for end in crate::source::line_ends(text.as_bytes()) {
                    lf_before += usize::from(text.as_bytes()[end] == b'\n');
                    git.push(lf_before + 1);
                }
                git
            })
        });
        lines.as_ref().and_then(|git| git.get(line.wrapping_sub(1)).copied()).unwrap_or(line)
    }
}

/// The path of a `+++ ` line of `git diff` run with [`DIFF_ARGS`], relative
/// to the repository root; `None` for `/dev/null` (a deleted file). Git writes
/// a name with unusual bytes (quote, backslash, control characters, non-ASCII)
/// as a C-style quoted string with octal escapes, and ends a name (quoted or
/// not) that contains a space with a tab.
fn diff_path(field: &str) -> Option<PathBuf> {
    // A name's own tabs are always quoted: a tab at the end is git's.
    let field = field.strip_suffix('\t').unwrap_or(field);
    let name = match field.strip_prefix('"') {
        Some(quoted) => unquote(quoted.strip_suffix('"')?)?,
        None => field.as_bytes().to_vec(),
    };
    name.strip_prefix(b"b/").map(path_of_bytes)
}

/// The path whose name is `bytes` (on Windows, where names are not bytes, as UTF-8).
fn path_of_bytes(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    return PathBuf::from(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes));
    #[cfg(not(unix))]
    return PathBuf::from(String::from_utf8_lossy(bytes).into_owned());
}

/// Undoes git's C-style quoting (`\"`, `\\`, `\t`, `\n`, octal `\303\251`, ...);
/// `None` on an escape git does not write.
fn unquote(quoted: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(quoted.len());
    let mut rest = quoted.bytes();
    while let Some(b) = rest.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        let escaped = match rest.next()? {
            b'a' => 7,
            b'b' => 8,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 11,
            b'f' => 12,
            b'r' => b'\r',
            digit @ b'0'..=b'3' => {
                let mut value = digit - b'0';
                for _ in 0..2 {
                    let d = rest.next().filter(|d| (b'0'..=b'7').contains(d))?;
                    value = value * 8 + (d - b'0');
                }
                value
            }
            other @ (b'"' | b'\\') => other,
            _ => return None,
        };
        bytes.push(escaped);
    }
    Some(bytes)
}

/// The new-side line range of a hunk header `-a,b +c,d @@`; `None` when it only deletes.
fn added_range(hunk: &str) -> Option<(usize, usize)> {
    let plus = hunk.split_whitespace().find(|w| w.starts_with('+'))?;
    let mut parts = plus[1..].split(',');
    let start: usize = parts.next()?.parse().ok()?;
    let count: usize = parts.next().map_or(Some(1), |c| c.parse().ok())?;
    (count > 0).then(|| (start, start + count - 1))
}

#[cfg(test)]
mod tests {
    use super::{added_range, diff_path};
    use std::path::PathBuf;

    #[test]
    fn hunk_headers() {
        assert_eq!(added_range("-3,0 +4,2 @@ def f():"), Some((4, 5)));
        assert_eq!(added_range("-10 +10 @@"), Some((10, 10)));
        assert_eq!(added_range("-5,2 +4,0 @@"), None);
    }

    #[test]
    fn quoted_and_spaced_names() {
        let path = |p: &str| Some(PathBuf::from(p));
        assert_eq!(diff_path("b/my model.py\t"), path("my model.py"));
        assert_eq!(diff_path("\"b/mod\\303\\251le.py\""), path("modéle.py"));
        assert_eq!(diff_path("\"b/ta\\tb \\\"q\\\".py\"\t"), path("ta\tb \"q\".py"));
        assert_eq!(diff_path("/dev/null"), None);
        assert_eq!(diff_path("\"b/bad\\9\""), None, "not an escape git writes");
    }
}
