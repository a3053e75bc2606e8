//! The result cache: each file's analysis, keyed by a hash of its content,
//! in one file per combination of tool build, rule packs, target and enabled
//! rules (`.npu-mem-cache/<key>.json`). Content hashes, never modification
//! times, so a cache restored into a fresh checkout still hits.
//!
//! A cache file that does not parse is ignored and replaced; entries are
//! only trusted when path, content hash and length all match. Writes go to a
//! temporary file renamed into place, so concurrent runs never see half a
//! file (the last one to finish wins).

use crate::finding::{FileProblem, Finding};
use crate::rules::engine::{Engine, TableRow};
use crate::rules::matcher::Clause;
use crate::suppress::Directive;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bumped whenever the stored layout or the analysis changes incompatibly.
const FORMAT: u32 = 1;

/// What identifies a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentId {
    hash: u64,
    len: usize,
}

impl ContentId {
    /// The identity of `text`.
    pub fn of(text: &str) -> Self {
        ContentId { hash: crate::hash::fnv1a(text.as_bytes()), len: text.len() }
    }
}

/// One finding with what the JSON report leaves out but the merge needs.
#[derive(Serialize, Deserialize)]
struct StoredFinding {
    finding: Finding,
    clauses: Vec<Clause>,
    byte_range: (usize, usize),
    source_line: String,
    fix_description: Option<String>,
}

/// One file's analysis as stored.
#[derive(Serialize, Deserialize)]
pub struct StoredOutcome {
    content: ContentId,
    directives: Vec<Directive>,
    findings: Vec<StoredFinding>,
    facts: Vec<bool>,
    rows: Vec<TableRow>,
    counts: Vec<usize>,
    sites: Vec<(usize, usize, String)>,
    groups: Vec<(usize, String, String)>,
    problem: Option<FileProblem>,
}

/// The parts of an analysis that are stored, borrowed from the scan.
pub struct Parts<'a> {
    /// Suppression comments.
    pub directives: &'a [Directive],
    /// The engine's output for the file.
    pub analysis: &'a crate::rules::engine::FileAnalysis,
    /// A partial-parse problem, if any.
    pub problem: &'a Option<FileProblem>,
}

impl StoredOutcome {
    /// Captures an analysis of content `content`.
    pub fn new(content: ContentId, parts: Parts) -> Self {
        let a = parts.analysis;
        StoredOutcome {
            content,
            directives: parts.directives.to_vec(),
            findings: a
                .findings
                .iter()
                .map(|(f, clauses)| StoredFinding {
                    finding: f.clone(),
                    clauses: clauses.clone(),
                    byte_range: f.byte_range,
                    source_line: f.source_line.clone(),
                    fix_description: f.fix.as_ref().map(|x| x.description.clone()),
                })
                .collect(),
            facts: a.facts.clone(),
            rows: a.rows.clone(),
            counts: a.counts.clone(),
            sites: a.sites.clone(),
            groups: a.groups.clone(),
            problem: parts.problem.clone(),
        }
    }

    /// The stored analysis: directives, engine output and problem.
    pub fn restore(&self) -> (Vec<Directive>, crate::rules::engine::FileAnalysis, Option<FileProblem>) {
        let findings = self
            .findings
            .iter()
            .map(|s| {
                let mut finding =
                    Finding { byte_range: s.byte_range, source_line: s.source_line.clone(), ..s.finding.clone() };
                if let (Some(fix), Some(description)) = (finding.fix.as_mut(), &s.fix_description) {
                    fix.description = description.clone();
                }
                (finding, s.clauses.clone())
            })
            .collect();
        let analysis = crate::rules::engine::FileAnalysis {
            findings,
            facts: self.facts.clone(),
            rows: self.rows.clone(),
            counts: self.counts.clone(),
            sites: self.sites.clone(),
            groups: self.groups.clone(),
            // The stored problem already says where the analysis stopped.
            cut_at_line: None,
        };
        (self.directives.clone(), analysis, self.problem.clone())
    }
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    entries: BTreeMap<String, StoredOutcome>,
}

/// An open cache.
pub struct Cache {
    file: PathBuf,
    entries: BTreeMap<String, StoredOutcome>,
    /// Why the cache file on disk was not used, if it was not.
    pub note: Option<String>,
}

impl Cache {
    /// Opens the cache for `engine` under `dir` (nothing is created yet).
    pub fn open(dir: &Path, engine: &Engine, target: &str) -> Cache {
        let file = dir.join(format!("{:016x}.json", key(engine, target)));
        let mut note = None;
        let entries = match std::fs::read(&file) {
            Ok(bytes) => match serde_json::from_slice::<CacheFile>(&bytes) {
                Ok(c) if c.format == FORMAT => c.entries,
                Ok(_) => BTreeMap::new(),
                Err(e) => {
                    note = Some(format!("{}: ignored a damaged cache file ({e}); it is rebuilt", file.display()));
                    BTreeMap::new()
                }
            },
            Err(_) => BTreeMap::new(),
        };
        Cache { file, entries, note }
    }

    /// The stored analysis of `path` if it was made from exactly `content`.
    pub fn get(&self, path: &str, content: ContentId) -> Option<&StoredOutcome> {
        self.entries.get(path).filter(|e| e.content == content)
    }

    /// Replaces the cache file with `entries` (path -> analysis), atomically;
    /// creates the directory with a `.gitignore` that ignores it.
    pub fn save(&self, entries: BTreeMap<String, StoredOutcome>) -> Result<(), String> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        let fail = |e: std::io::Error| format!("cannot write the cache in {}: {e}", dir.display());
        std::fs::create_dir_all(dir).map_err(fail)?;
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "# Written by npu-mem: the whole cache directory stays out of git.\n*\n")
                .map_err(fail)?;
        }
        let text = serde_json::to_vec(&CacheFile { format: FORMAT, entries }).map_err(|e| e.to_string())?;
        let tmp = dir.join(format!(".{}.{}.tmp", std::process::id(), unique()));
        std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &self.file)).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            fail(e)
        })
    }
}

/// A number that differs between threads and calls, for temporary names.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// What the analysis of a file depends on besides its content and path.
fn key(engine: &Engine, target: &str) -> u64 {
    let mut parts = vec![FORMAT.to_string(), env!("CARGO_PKG_VERSION").to_string(), target.to_string()];
    parts.push(format!("{:x}", engine.set.fingerprint));
    parts.extend(engine.active.iter().map(|&i| engine.set.rules[i].code.clone()));
    // A development build changes without a version bump: its own identity counts too.
    if cfg!(debug_assertions) {
        let exe = std::env::current_exe().and_then(std::fs::metadata);
        parts.push(format!("{:?}", exe.map(|m| (m.len(), m.modified().ok())).ok()));
    }
    crate::hash::fnv1a(parts.join("\0").as_bytes())
}
