//! Baselines: record today's findings so that a team can adopt the gate at
//! once and be judged only on new findings. A finding's identity is its code,
//! path and the normalised text of its line (plus an occurrence index), so it
//! survives edits elsewhere in the file.
//!
//! Paths in a baseline (version 2) are relative to the baseline file's
//! directory, so one baseline serves whatever directory the scan runs from.
//! Version 1 baselines, whose paths are as reported by the scan that wrote
//! them, are still read, with their paths taken relative to the current directory.

use crate::finding::Finding;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The version written.
const VERSION: u32 = 2;

/// Why a baseline could not be read or written; each message says what to do.
#[derive(Debug)]
pub enum BaselineError {
    /// The file could not be read.
    Unreadable { path: PathBuf, source: std::io::Error },
    /// It is not JSON in the baseline format.
    NotABaseline { path: PathBuf, line: usize, column: usize, source: serde_json::Error },
    /// It was written by a version of npu-mem this one does not read.
    Version { path: PathBuf, version: u32 },
    /// The file could not be written.
    Unwritable { path: PathBuf, source: std::io::Error },
}

impl std::fmt::Display for BaselineError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            BaselineError::Unreadable { path, source } => write!(
                f,
                "cannot read the baseline {}: {source}; name an existing file, or write one with --write-baseline",
                path.display()
            ),
            BaselineError::NotABaseline { path, line, column, source } => write!(
                f,
                "{}:{line}:{column}: not an npu-mem baseline: {source}; write one with --write-baseline",
                path.display()
            ),
            BaselineError::Version { path, version } => write!(
                f,
                "{}: baseline version {version} is not supported (expected 1 or {VERSION}); write it again with \
                 --write-baseline",
                path.display()
            ),
            BaselineError::Unwritable { path, source } => {
                write!(f, "cannot write the baseline {}: {source}; name a writable file", path.display())
            }
        }
    }
}

impl std::error::Error for BaselineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BaselineError::Unreadable { source, .. } | BaselineError::Unwritable { source, .. } => Some(source),
            BaselineError::NotABaseline { source, .. } => Some(source),
            BaselineError::Version { .. } => None,
        }
    }
}

/// One recorded finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Rule code.
    pub code: String,
    /// Path, relative to the baseline file's directory (absolute if outside
    /// it; as reported, in version 1). In a report's stale entries: as reported.
    pub path: String,
    /// Identity (see [`fingerprints`]).
    pub fingerprint: String,
    /// Line when recorded (informational).
    pub line: usize,
    /// Message when recorded (informational).
    pub message: String,
}

/// A baseline file.
#[derive(Debug, Serialize, Deserialize)]
pub struct Baseline {
    /// Format version: 2, or 1 (paths relative to the current directory).
    pub version: u32,
    /// The recorded findings.
    pub findings: Vec<Entry>,
    /// The directory entry paths are relative to: the baseline file's
    /// (version 2), or `None` for the current directory (version 1).
    #[serde(skip)]
    pub dir: Option<PathBuf>,
}

/// Each finding's identity: code, path, whitespace-normalised line text, and
/// which occurrence of that triple it is (in report order).
pub fn fingerprints(findings: &[Finding]) -> Vec<String> {
    identities(findings.iter().map(|f| (f, f.path.to_string())))
}

/// [`fingerprints`] with each finding's path given alongside it.
fn identities<'a>(findings: impl Iterator<Item = (&'a Finding, String)>) -> Vec<String> {
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    findings
        .map(|(f, path)| {
            let line = f.source_line.split_whitespace().collect::<Vec<_>>().join(" ");
            let identity = format!("{}\u{0}{}\u{0}{}", f.code, path, line);
            let n = seen.entry((f.code.to_string(), path, line)).or_insert(0);
            *n += 1;
            let identity = format!("{identity}\u{0}{n}");
            format!("{:016x}", crate::hash::fnv1a(identity.as_bytes()))
        })
        .collect()
}

/// The path of reported path `path` as a baseline in `dir` records it
/// (`None`: version 1, as reported).
fn recorded_path(dir: Option<&Path>, path: &str) -> String {
    match dir {
        Some(dir) => crate::config::relative_to(dir, path)
            .unwrap_or_else(|| crate::shown_path::shown(&crate::config::absolute(&crate::shown_path::unshown(path)))),
        None => path.to_string(),
    }
}

/// The directory of the baseline file `path`, absolute.
fn dir_of(path: &Path) -> PathBuf {
    crate::config::absolute(path).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Writes the baseline of `findings` to `path`.
pub fn write(path: &Path, findings: &[Finding]) -> Result<(), BaselineError> {
    let dir = dir_of(path);
    let paths: Vec<String> = findings.iter().map(|f| recorded_path(Some(&dir), &f.path)).collect();
    let entries = findings
        .iter()
        .zip(identities(findings.iter().zip(paths.iter().cloned())))
        .zip(paths)
        .map(|((f, fingerprint), path)| Entry {
            code: f.code.to_string(),
            path,
            fingerprint,
            line: f.line,
            message: f.message.clone(),
        })
        .collect();
    let baseline = Baseline { version: VERSION, findings: entries, dir: None };
    let text = serde_json::to_string_pretty(&baseline).unwrap_or_default();
    crate::atomic::write_whole(path, (text + "\n").as_bytes())
        .map_err(|source| BaselineError::Unwritable { path: path.to_path_buf(), source })
}

/// Reads a baseline file.
pub fn read(path: &Path) -> Result<Baseline, BaselineError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| BaselineError::Unreadable { path: path.to_path_buf(), source })?;
    // An editor on Windows may save the file with a byte order mark; JSON has none.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut b: Baseline = serde_json::from_str(text).map_err(|source| BaselineError::NotABaseline {
        path: path.to_path_buf(),
        line: source.line(),
        column: source.column(),
        source,
    })?;
    match b.version {
        1 => {}
        VERSION => b.dir = Some(dir_of(path)),
        version => return Err(BaselineError::Version { path: path.to_path_buf(), version }),
    }
    Ok(b)
}

/// Splits `findings` into new ones and baselined ones; also returns the
/// baseline entries that matched nothing (fixed, or changed beyond
/// recognition), with their paths as reported.
pub fn split(findings: Vec<Finding>, baseline: &Baseline) -> (Vec<Finding>, Vec<Finding>, Vec<Entry>) {
    let dir = baseline.dir.as_deref();
    let paths: Vec<String> = findings.iter().map(|f| recorded_path(dir, &f.path)).collect();
    let prints = identities(findings.iter().zip(paths.iter().cloned()));
    let mut recorded: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for (i, e) in baseline.findings.iter().enumerate() {
        recorded.insert((e.code.as_str(), e.path.as_str(), e.fingerprint.as_str()), i);
    }
    let mut used = vec![false; baseline.findings.len()];
    let (mut new, mut old) = (Vec::new(), Vec::new());
    for ((f, fp), path) in findings.into_iter().zip(prints).zip(&paths) {
        match recorded.get(&(f.code.as_str(), path.as_str(), fp.as_str())) {
            Some(&i) => {
                used[i] = true;
                old.push(f);
            }
            None => new.push(f),
        }
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let reported = |e: &Entry| match dir {
        Some(dir) => {
            let path = dir.join(crate::shown_path::unshown(&e.path));
            Entry { path: crate::walk::display_path(&path, &cwd), ..e.clone() }
        }
        None => e.clone(),
    };
    let stale = baseline.findings.iter().zip(used).filter(|(_, u)| !u).map(|(e, _)| reported(e)).collect();
    (new, old, stale)
}

#[cfg(test)]
mod tests {
    use super::{read, BaselineError};

    #[test]
    fn unreadable_malformed_and_future_baselines_are_told_apart() {
        let dir = crate::atomic::tests::scratch("baseline-errors");
        let missing = read(&dir.join("none.json")).unwrap_err();
        assert!(matches!(missing, BaselineError::Unreadable { .. }), "{missing}");
        assert!(missing.to_string().contains("--write-baseline"), "{missing}");

        let garbled = dir.join("garbled.json");
        std::fs::write(&garbled, "{\n  \"version\": 2,\n  \"findings\": [oops]\n}\n").unwrap();
        match read(&garbled).unwrap_err() {
            BaselineError::NotABaseline { line, .. } => assert_eq!(line, 3),
            other => panic!("expected NotABaseline, got {other}"),
        }

        let future = dir.join("future.json");
        std::fs::write(&future, "{\"version\": 9, \"findings\": []}\n").unwrap();
        let err = read(&future).unwrap_err();
        assert!(matches!(err, BaselineError::Version { version: 9, .. }), "{err}");
        assert!(err.to_string().contains("expected 1 or 2"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
