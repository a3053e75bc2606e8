//! The result cache: each file's analysis, keyed by a hash of its content,
//! in one file per combination of tool build, rule packs, target and enabled
//! rules (`.npu-mem-cache/<key>.json`). Content hashes decide, so a cache
//! restored into a fresh checkout still hits. A file whose [`Stamp`] (what
//! the file system says of it) is the one stored with its entry is not even
//! read: the stamp changes with every write to the file.
//!
//! A cache file that does not parse is ignored and replaced; an entry is
//! only trusted when its checksum holds and path, content hash and length all
//! match. Saving merges this run's entries into those already stored and
//! drops old ones (see [`MAX_AGE_SECS`], [`MAX_ENTRIES`]). Writes go to a
//! temporary file renamed into place, so concurrent runs never see half a
//! file; when two runs save at once the last rename wins, and what the other
//! added is only analysed again next time.

use crate::rules::engine::{Engine, FileFacts};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bumped whenever the stored layout or the analysis changes incompatibly.
const FORMAT: u32 = 4;

/// Entries no run has used for this long (30 days) are dropped on save: a
/// file renamed or deleted leaves its entry behind, and CI caches restored for
/// months would otherwise only grow.
pub const MAX_AGE_SECS: u64 = 30 * 24 * 60 * 60;

/// At most this many entries are kept, the most recently used first: ten
/// times a large monorepo's Python files, yet a cache file of tens of MB at most.
pub const MAX_ENTRIES: usize = 100_000;

/// A run that analyses nothing new rewrites the cache only to record its use
/// of entries last used longer ago than this (a day): far below
/// [`MAX_AGE_SECS`], and a warm scan of an unchanged tree writes nothing.
const SEEN_REFRESH_SECS: u64 = 24 * 60 * 60;

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

/// What the file system says of a file, taken just before it is read: a
/// hash of its length, its modification and change times and its inode.
/// Any write to the file sets its change time to the system's clock, which
/// no tool can set back (restoring a modification time, as `cp -p`, `tar`
/// or `touch -d` do, changes the change time too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp(std::num::NonZeroU64);

/// A file changed less than this long (seconds) before its stamp is taken
/// gets none: a second write within the same tick of a coarse clock could
/// leave both times as they were.
const SETTLED_SECS: i64 = 2;

impl Stamp {
    /// The stamp of the file at `path`, unless it cannot be read or the
    /// file changed within [`SETTLED_SECS`] (or in the future, by a clock
    /// that disagrees with this one). Only Unix systems have a change time;
    /// elsewhere there is none, and every file is read and hashed.
    pub fn of(path: &Path) -> Option<Stamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::metadata(path).ok()?;
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
            let changed = m.mtime().max(m.ctime());
            if changed.saturating_add(SETTLED_SECS) >= i64::try_from(now).ok()? {
                return None;
            }
            let fields =
                [m.len(), m.mtime() as u64, m.mtime_nsec() as u64, m.ctime() as u64, m.ctime_nsec() as u64, m.ino()];
            // The hash of the fields' bytes one after another, without collecting them.
            let hash =
                fields.iter().fold(crate::hash::fnv1a(&[]), |h, f| crate::hash::fnv1a_extend(h, &f.to_le_bytes()));
            std::num::NonZeroU64::new(hash).map(Stamp)
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            None
        }
    }
}

/// One file's analysis as stored: the facts of exactly this content, and
/// the file's stamp when it was read, if it had one. What a run saves
/// borrows its facts from the run's outcomes (a large scan would otherwise
/// hold them twice while it saves); what the cache holds owns them.
#[derive(Serialize, Deserialize)]
pub struct StoredOutcome<'a> {
    content: ContentId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stamp: Option<Stamp>,
    facts: Cow<'a, FileFacts>,
}

impl<'a> StoredOutcome<'a> {
    /// Captures the analysis `facts` of content `content`, read from a file
    /// stamped `stamp`.
    pub fn new(content: ContentId, stamp: Option<Stamp>, facts: Cow<'a, FileFacts>) -> Self {
        StoredOutcome { content, stamp, facts }
    }

    /// The same entry, owning its facts.
    pub fn into_owned(self) -> StoredOutcome<'static> {
        StoredOutcome { content: self.content, stamp: self.stamp, facts: Cow::Owned(self.facts.into_owned()) }
    }

    /// The stored analysis.
    pub fn facts(&self) -> &FileFacts {
        &self.facts
    }

    /// The content it was made from.
    pub fn content(&self) -> ContentId {
        self.content
    }
}

/// One stored entry: the analysis as JSON, sealed with a checksum.
///
/// The checksum catches accidental or careless damage (a truncated write, a
/// hand edit, a merge tool): an entry that fails it is ignored and rebuilt.
/// It is no defence against someone who can write the cache and recompute
/// the checksum; whoever can write the cache can also change the sources.
#[derive(Serialize, Deserialize)]
struct Sealed {
    /// [`checksum`] of the path and `outcome`.
    check: u64,
    /// When a run last used the entry (seconds since 1970), for eviction;
    /// outside the checksum since it only decides how long the entry is kept.
    seen: u64,
    /// The [`StoredOutcome`], as the JSON text stored (decoded only when
    /// the checksum holds, and never re-encoded to be checked or kept).
    outcome: Box<RawValue>,
}

impl Sealed {
    /// Whether the checksum holds for the entry stored under `path`.
    fn holds(&self, path: &str) -> bool {
        checksum(path, self.outcome.get()) == self.check
    }
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    entries: BTreeMap<String, Sealed>,
}

/// The checksum sealing the entry of `path` whose analysis is the JSON text
/// `outcome`, as stored: FNV-1a over the path, a NUL and that text.
pub fn checksum(path: &str, outcome: &str) -> u64 {
    let h = crate::hash::fnv1a_extend(crate::hash::fnv1a(path.as_bytes()), b"\0");
    crate::hash::fnv1a_extend(h, outcome.as_bytes())
}

/// Why this run's analyses could not be saved (the scan itself is not affected).
#[derive(Debug)]
pub enum CacheError {
    /// The cache directory, its `.gitignore` or the cache file cannot be written.
    Unwritable {
        /// The cache directory.
        dir: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// `--cache-dir` names a directory that exists and that npu-mem did not
    /// create: writing its files there could hide or clutter the user's own.
    NotOurs {
        /// The directory named.
        dir: PathBuf,
    },
    /// `--cache-dir` names a directory that holds (or is) a path being
    /// scanned: the cache's `.gitignore` would hide the files scanned there.
    HoldsScanned {
        /// The directory named.
        dir: PathBuf,
        /// The scanned path inside it.
        scanned: PathBuf,
    },
    /// An analysis could not be turned into JSON.
    Encode {
        /// The cache directory.
        dir: PathBuf,
        /// What the JSON writer said.
        source: serde_json::Error,
    },
}

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheError::Unwritable { dir, source } => write!(
                f,
                "cannot write the cache in {}: {source}; run with --no-cache, or name a writable directory with \
                 --cache-dir DIR",
                dir.display()
            ),
            CacheError::NotOurs { dir } => write!(
                f,
                "not using {} as the cache: the directory exists and npu-mem did not create it (it holds no \
                 CACHEDIR.TAG of npu-mem), and the cache writes a `.gitignore` that hides everything in it; name a \
                 directory that does not exist yet with --cache-dir DIR (npu-mem creates it), or run with --no-cache",
                dir.display()
            ),
            CacheError::HoldsScanned { dir, scanned } => write!(
                f,
                "not using {} as the cache: it holds {}, which is being scanned, and the cache's `.gitignore` would \
                 hide it from later scans; name a directory outside the scanned paths with --cache-dir DIR",
                dir.display(),
                scanned.display()
            ),
            CacheError::Encode { dir, source } => write!(
                f,
                "cannot save the cache in {}: {source}; run with --no-cache (and report this, it is a bug)",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for CacheError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CacheError::Unwritable { source, .. } => Some(source),
            CacheError::Encode { source, .. } => Some(source),
            CacheError::NotOurs { .. } | CacheError::HoldsScanned { .. } => None,
        }
    }
}

/// The first line of a cache directory tag (the Cache Directory Tagging
/// convention, <https://bford.info/cachedir/>, which backup tools honour).
const TAG_SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55";

/// The tag's second line: npu-mem's own tag, not another tool's (cargo's
/// `target/` carries one too).
const TAG_OWNER: &str = "# This file is a cache directory tag created by npu-mem.";

/// How earlier versions started the cache directory's `.gitignore`: a
/// directory holding that file was made by npu-mem too.
const LEGACY_IGNORE_START: &str = "# Written by npu-mem";

/// An open cache.
pub struct Cache {
    file: PathBuf,
    entries: BTreeMap<String, StoredOutcome<'static>>,
    /// When a run last used each entry, and the oldest use of any entry
    /// stored: what decides whether [`Cache::save`] has anything to write.
    seen: BTreeMap<String, u64>,
    oldest_seen: Option<u64>,
    /// Why the cache file on disk, or some of its entries, were not used.
    pub note: Option<String>,
}

impl Cache {
    /// Opens the cache for `engine` under `dir` (nothing is created yet).
    /// `dir` must not exist yet, or be one npu-mem created, and must hold
    /// none of the `scanned` paths: the cache writes a `.gitignore` that hides
    /// everything in its directory.
    pub fn open(dir: &Path, engine: &Engine, target: &str, scanned: &[PathBuf]) -> Result<Cache, CacheError> {
        check_dir(dir, scanned)?;
        let file = dir.join(format!("{:016x}.json", key(engine, target)));
        let (stored, mut note) = load(&file);
        let total = stored.len();
        let oldest_seen = stored.values().map(|s| s.seen).min();
        let mut seen = BTreeMap::new();
        let mut entries = BTreeMap::new();
        for (path, sealed) in stored.into_iter().filter(|(path, s)| s.holds(path)) {
            if let Ok(outcome) = serde_json::from_str::<StoredOutcome<'static>>(sealed.outcome.get()) {
                seen.insert(path.clone(), sealed.seen);
                entries.insert(path, outcome);
            }
        }
        if entries.len() < total {
            // A sealed entry that does not load was written by another layout of the analysis.
            note = Some(format!(
                "{}: ignored {} of {total} cache entries that failed their checksum or could not be read; they are \
                 rebuilt",
                file.display(),
                total - entries.len()
            ));
        }
        Ok(Cache { file, entries, seen, oldest_seen, note })
    }

    /// A cache that lives in memory only, holding `entries` (what
    /// [`crate::scan::cache_entries`] gave): the language server's, which
    /// re-analyses only the files that changed since its last pass, and
    /// writes nothing into the user's tree ([`Cache::save`] writes nothing for it).
    pub fn in_memory(entries: BTreeMap<String, StoredOutcome<'static>>) -> Cache {
        Cache { file: PathBuf::new(), entries, seen: BTreeMap::new(), oldest_seen: None, note: None }
    }

    /// The stored analysis of `path` if it was made from exactly `content`.
    pub fn get(&self, path: &str, content: ContentId) -> Option<&StoredOutcome<'static>> {
        self.entries.get(path).filter(|e| e.content == content)
    }

    /// The stored analysis of `path` if the file was stamped `stamp` when
    /// it was read: it has not been written since.
    pub fn unchanged(&self, path: &str, stamp: Stamp) -> Option<&StoredOutcome<'static>> {
        self.entries.get(path).filter(|e| e.stamp == Some(stamp))
    }

    /// Merges `entries` (path -> analysis of this run) into the cache file,
    /// replacing what it held for those paths and dropping entries past
    /// [`MAX_AGE_SECS`] or [`MAX_ENTRIES`]; writes atomically, and creates the
    /// directory with its tag and a `.gitignore` that ignores it. The cache
    /// file replaces whatever is at its path, a symbolic link included:
    /// nothing is written through a link. A run that changes nothing stored
    /// (see [`Cache::has_news`]) writes nothing, and an in-memory cache
    /// nothing ever.
    pub fn save(&self, entries: BTreeMap<String, StoredOutcome<'_>>) -> Result<(), CacheError> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if self.file.as_os_str().is_empty() || !self.has_news(&entries, now) {
            return Ok(());
        }
        let dir = self.file.parent().unwrap_or(Path::new("."));
        let fail = |source| CacheError::Unwritable { dir: dir.to_path_buf(), source };
        let encode = |source| CacheError::Encode { dir: dir.to_path_buf(), source };
        std::fs::create_dir_all(dir).map_err(fail)?;
        let tag = format!("{TAG_SIGNATURE}\n{TAG_OWNER}\n# For information about cache directory tags see https://bford.info/cachedir/\n");
        create_new(&dir.join("CACHEDIR.TAG"), &tag).map_err(fail)?;
        let ignore = format!("{LEGACY_IGNORE_START}: the whole cache directory stays out of git.\n*\n");
        create_new(&dir.join(".gitignore"), &ignore).map_err(fail)?;
        // Read again rather than reuse what `open` read: a run that saved since then keeps its entries.
        let (mut merged, _) = load(&self.file);
        merged.retain(|path, s| s.holds(path));
        for (path, outcome) in entries {
            let outcome = serde_json::value::to_raw_value(&outcome).map_err(encode)?;
            merged.insert(path.clone(), Sealed { check: checksum(&path, outcome.get()), seen: now, outcome });
        }
        evict(&mut merged, now, MAX_ENTRIES);
        // Written as it is encoded: the cache of a large tree is tens of megabytes.
        let stored = CacheFile { format: FORMAT, entries: merged };
        let write = |out: &mut dyn std::io::Write| serde_json::to_writer(out, &stored).map_err(std::io::Error::other);
        crate::atomic::replace_own(&self.file, &write).map_err(fail)
    }

    /// Whether saving `entries` at `now` changes what is stored: an analysis
    /// the cache did not hold, a stamp for an entry that had none, an entry
    /// last used more than a day ago, or one due to expire. Otherwise the
    /// file stays as it is: rewriting it on every warm run cost more than the
    /// analyses it saved.
    fn has_news(&self, entries: &BTreeMap<String, StoredOutcome<'_>>, now: u64) -> bool {
        let expiring = self.oldest_seen.is_some_and(|s| s.saturating_add(MAX_AGE_SECS) < now);
        let stale = |path: &str| self.seen.get(path).is_none_or(|&s| s.saturating_add(SEEN_REFRESH_SECS) < now);
        // A first stamp is news too: the file's next read can be saved. A
        // stamp that only differs is not: in a fresh checkout every file has
        // a new one, and the cache would be rewritten on every CI run.
        let new = |path: &str, o: &StoredOutcome<'_>| {
            self.get(path, o.content).is_none_or(|stored| o.stamp.is_some() && stored.stamp.is_none())
        };
        expiring || entries.iter().any(|(path, o)| new(path, o) || stale(path))
    }
}

/// Whether the cache may live in `dir` (see [`Cache::open`]).
fn check_dir(dir: &Path, scanned: &[PathBuf]) -> Result<(), CacheError> {
    // A directory that does not exist holds nothing yet, and npu-mem creates it.
    let Ok(real_dir) = std::fs::canonicalize(dir) else { return Ok(()) };
    let inside = scanned.iter().find(|p| std::fs::canonicalize(p).is_ok_and(|p| p.starts_with(&real_dir)));
    if let Some(p) = inside {
        return Err(CacheError::HoldsScanned { dir: dir.to_path_buf(), scanned: p.clone() });
    }
    let regular = |name: &str| {
        let path = dir.join(name);
        let is_file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
        is_file.then(|| std::fs::read_to_string(path).ok()).flatten()
    };
    let tagged = regular("CACHEDIR.TAG").is_some_and(|t| {
        let mut lines = t.lines();
        lines.next() == Some(TAG_SIGNATURE) && lines.next() == Some(TAG_OWNER)
    });
    let legacy = regular(".gitignore").is_some_and(|t| t.starts_with(LEGACY_IGNORE_START));
    if tagged || legacy {
        Ok(())
    } else {
        Err(CacheError::NotOurs { dir: dir.to_path_buf() })
    }
}

/// Creates `path` holding `text` unless something (a file, a link, even a
/// broken one) is already there: that is left as it is.
fn create_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => file.write_all(text.as_bytes()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// The entries of the cache file `file` as stored (unchecked), and why the
/// file was not used if it exists but is unusable.
fn load(file: &Path) -> (BTreeMap<String, Sealed>, Option<String>) {
    // A link is not read through (nor written through: `save` replaces it).
    if std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink()) {
        let note = format!("{}: ignored a cache file that is a symbolic link; it is replaced", file.display());
        return (BTreeMap::new(), Some(note));
    }
    let Ok(bytes) = std::fs::read(file) else { return (BTreeMap::new(), None) };
    match serde_json::from_slice::<CacheFile>(&bytes) {
        Ok(c) if c.format == FORMAT => (c.entries, None),
        Ok(_) => (BTreeMap::new(), None),
        Err(e) => {
            (BTreeMap::new(), Some(format!("{}: ignored a damaged cache file ({e}); it is rebuilt", file.display())))
        }
    }
}

/// Drops entries unused for [`MAX_AGE_SECS`] before `now`, then all but the
/// `max` most recently used.
fn evict(entries: &mut BTreeMap<String, Sealed>, now: u64, max: usize) {
    entries.retain(|_, s| s.seen.saturating_add(MAX_AGE_SECS) >= now);
    if entries.len() > max {
        let mut order: Vec<(u64, String)> = entries.iter().map(|(path, s)| (s.seen, path.clone())).collect();
        order.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (_, path) in order.into_iter().skip(max) {
            entries.remove(&path);
        }
    }
}

/// What the analysis of a file depends on besides its content and path.
fn key(engine: &Engine, target: &str) -> u64 {
    let mut parts = vec![FORMAT.to_string(), env!("CARGO_PKG_VERSION").to_string(), target.to_string()];
    parts.push(format!("{:x}", engine.set.fingerprint));
    parts.extend(engine.active.iter().map(|&i| engine.set.rules[i].code.to_string()));
    parts.push(build_id());
    crate::hash::fnv1a(parts.join("\0").as_bytes())
}

/// The identity of this build of the tool: the running executable's size and
/// modification time, so a rebuilt binary (release or not, version bumped or
/// not) never reuses results of another build.
///
/// Why not a hash of the executable's bytes: for the 48 MB release binary
/// (with debug info) reading and hashing it took about 120 ms (60 ms to read,
/// 60 ms of FNV-1a), more than a whole scan of a small project (about 50 ms
/// for `fixtures/demo`), while its metadata takes about 20 µs. A build rewrites
/// the file, so its modification time changes; copying it without keeping the
/// time only costs one cold scan. An executable that cannot be found makes
/// the identity `None`, which still differs from every real build's.
fn build_id() -> String {
    let exe = std::env::current_exe().and_then(std::fs::metadata);
    format!("{:?}", exe.map(|m| (m.len(), m.modified().ok())).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(seen: u64) -> Sealed {
        Sealed { check: 0, seen, outcome: RawValue::from_string("null".to_string()).expect("valid JSON") }
    }

    #[test]
    fn eviction_drops_old_entries_then_the_least_recently_used() {
        let now = 10 * MAX_AGE_SECS;
        let mut entries: BTreeMap<String, Sealed> = [
            ("a", now - MAX_AGE_SECS - 1),
            ("b", now - MAX_AGE_SECS),
            ("c", now - 5),
            ("d", now - 5),
            ("e", now),
            ("f", now - 7),
        ]
        .into_iter()
        .map(|(p, seen)| (p.to_string(), sealed(seen)))
        .collect();
        evict(&mut entries, now, 10);
        assert_eq!(entries.keys().collect::<Vec<_>>(), ["b", "c", "d", "e", "f"], "only `a` is too old");
        evict(&mut entries, now, 2);
        assert_eq!(entries.keys().collect::<Vec<_>>(), ["c", "e"], "the newest, ties broken by path");
        evict(&mut entries, now, 0);
        assert!(entries.is_empty());
    }

    #[test]
    fn a_file_just_written_has_no_stamp_yet() {
        let path = std::env::temp_dir().join(format!("npu-mem-stamp-{}.py", std::process::id()));
        std::fs::write(&path, "x = 1\n").unwrap();
        assert_eq!(Stamp::of(&path), None, "changed within the last {SETTLED_SECS} s");
        assert_eq!(Stamp::of(&path.with_extension("missing")), None);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn the_checksum_covers_path_and_content() {
        let outcome = r#"{"findings":[1,2]}"#;
        let sum = checksum("a.py", outcome);
        assert_eq!(sum, checksum("a.py", r#"{"findings":[1,2]}"#));
        assert_ne!(sum, checksum("b.py", outcome));
        assert_ne!(sum, checksum("a.py", r#"{"findings":[]}"#));
    }
}
