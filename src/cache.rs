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

mod stored;

pub use stored::checksum;

use crate::rules::engine::{Engine, FileFacts, ProjectAdds};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use stored::{Opened, Sealed, StoredFile};

/// Bumped whenever the stored layout or the analysis changes incompatibly.
const FORMAT: u32 = 5;

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
/// hold them twice while it saves); what the cache hands out owns them.
#[derive(Serialize, Deserialize)]
pub struct StoredOutcome<'a> {
    content: ContentId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stamp: Option<Stamp>,
    facts: StoredFacts<'a>,
}

/// The facts of a [`StoredOutcome`], a pointer either way: a save lists an
/// entry for every file of the run, and facts held inline (hundreds of
/// bytes, mostly empty lists) made that list tens of MB on a large tree.
enum StoredFacts<'a> {
    Borrowed(&'a FileFacts),
    /// A file with nothing to report: only what it adds to its project,
    /// stored as facts with every other field empty.
    Adds(&'a ProjectAdds),
    Owned(Box<FileFacts>),
}

impl Serialize for StoredFacts<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// [`FileFacts`] with only its `adds` (the others read as empty).
        #[derive(Serialize)]
        struct OnlyAdds<'a> {
            adds: &'a ProjectAdds,
        }
        match self {
            StoredFacts::Borrowed(facts) => facts.serialize(s),
            StoredFacts::Adds(adds) => OnlyAdds { adds }.serialize(s),
            StoredFacts::Owned(facts) => facts.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for StoredFacts<'_> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FileFacts::deserialize(d).map(|facts| StoredFacts::Owned(Box::new(facts)))
    }
}

impl<'a> StoredOutcome<'a> {
    /// Captures the analysis `facts` of content `content`, read from a file
    /// stamped `stamp`, borrowing the facts.
    pub fn new(content: ContentId, stamp: Option<Stamp>, facts: &'a FileFacts) -> Self {
        StoredOutcome { content, stamp, facts: StoredFacts::Borrowed(facts) }
    }

    /// As [`StoredOutcome::new`], for a file with nothing to report, of
    /// which only what it adds to its project is kept.
    pub fn of_adds(content: ContentId, stamp: Option<Stamp>, adds: &'a ProjectAdds) -> Self {
        StoredOutcome { content, stamp, facts: StoredFacts::Adds(adds) }
    }

    /// As [`StoredOutcome::new`], owning the facts.
    pub fn owning(content: ContentId, stamp: Option<Stamp>, facts: FileFacts) -> StoredOutcome<'static> {
        StoredOutcome { content, stamp, facts: StoredFacts::Owned(Box::new(facts)) }
    }

    /// The same entry, owning its facts.
    pub fn into_owned(self) -> StoredOutcome<'static> {
        StoredOutcome::owning(self.content, self.stamp, self.into_facts())
    }

    /// The stored analysis, owned (moved out, or cloned if borrowed).
    pub fn into_facts(self) -> FileFacts {
        match self.facts {
            StoredFacts::Borrowed(facts) => facts.clone(),
            StoredFacts::Adds(adds) => FileFacts { adds: adds.clone(), ..FileFacts::default() },
            StoredFacts::Owned(facts) => *facts,
        }
    }

    /// The content it was made from.
    pub fn content(&self) -> ContentId {
        self.content
    }

    /// The stamp of the file it was read from, if it had one.
    pub fn stamp(&self) -> Option<Stamp> {
        self.stamp
    }

    /// What it was made from.
    fn head(&self) -> StoredHead {
        StoredHead { content: self.content, stamp: self.stamp }
    }
}

/// What a stored entry was made from.
#[derive(Clone, Copy)]
struct StoredHead {
    content: ContentId,
    stamp: Option<Stamp>,
}

/// What an open cache holds of one entry besides its seal.
enum Held {
    /// Still in the cache file, unread: read and decoded only when a run
    /// takes it, on the thread that scans the file.
    Stored,
    /// Decoded already (the language server's cache in memory).
    Decoded(StoredOutcome<'static>),
    /// Handed to the run; what it was made from stays, for [`Cache::save`].
    Taken(StoredHead),
    /// Not readable: changed in the file, or sealed but of another layout
    /// of the analysis.
    Unreadable,
}

impl Held {
    /// What the entry was made from, if a run took it (or it is in memory).
    fn head(&self) -> Option<StoredHead> {
        match self {
            Held::Decoded(o) => Some(o.head()),
            Held::Taken(head) => Some(*head),
            Held::Stored | Held::Unreadable => None,
        }
    }
}

/// One entry of an open cache.
struct Entry {
    /// Where it lies in the cache file, and when a run last used it; none
    /// for an entry of the language server's cache in memory.
    sealed: Option<Sealed>,
    /// What the run has done with it; behind a lock of its own, since the
    /// scan's threads take entries.
    held: Mutex<Held>,
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
    /// The cache file as it was when the cache opened, read entry by entry.
    stored_file: Option<StoredFile>,
    entries: BTreeMap<String, Entry>,
    /// How many entries taken failed their checksum or could not be read.
    ignored: AtomicUsize,
    /// Why the cache file on disk was not used, if it was not.
    unused_file: Option<String>,
}

impl Cache {
    /// Opens the cache for `engine` under `dir` (nothing is created yet).
    /// `dir` must not exist yet, or be one npu-mem created, and must hold
    /// none of the `scanned` paths: the cache writes a `.gitignore` that hides
    /// everything in its directory.
    ///
    /// Entries are only located here, and read, checked and decoded when a
    /// run takes them ([`Cache::take`]): a warm scan of a large tree would
    /// otherwise hold every stored analysis twice, once here and once in the run.
    pub fn open(dir: &Path, engine: &Engine, target: &str, scanned: &[PathBuf]) -> Result<Cache, CacheError> {
        check_dir(dir, scanned)?;
        let file = dir.join(format!("{:016x}.json", key(engine, target)));
        let (stored_file, sealed, unused_file) = match StoredFile::open(&file, FORMAT) {
            Opened::Indexed(stored_file, sealed) => (Some(stored_file), sealed, None),
            Opened::Nothing => (None, Vec::new(), None),
            Opened::Unusable(why) => (None, Vec::new(), Some(why)),
        };
        let mut entries = BTreeMap::new();
        for (path, s) in sealed {
            entries.insert(path, Entry { sealed: Some(s), held: Mutex::new(Held::Stored) });
        }
        Ok(Cache { file, stored_file, entries, ignored: AtomicUsize::new(0), unused_file })
    }

    /// A cache that lives in memory only, holding `entries` (what
    /// [`crate::scan::cache_entries`] gave): the language server's, which
    /// re-analyses only the files that changed since its last pass, and
    /// writes nothing into the user's tree ([`Cache::save`] writes nothing for it).
    pub fn in_memory(entries: BTreeMap<String, StoredOutcome<'static>>) -> Cache {
        let mut decoded = BTreeMap::new();
        for (path, o) in entries {
            decoded.insert(path, Entry { sealed: None, held: Mutex::new(Held::Decoded(o)) });
        }
        Cache {
            file: PathBuf::new(),
            stored_file: None,
            entries: decoded,
            ignored: AtomicUsize::new(0),
            unused_file: None,
        }
    }

    /// Takes the stored analysis of `path` out of the cache, decoded; the
    /// caller decides whether it still applies ([`StoredOutcome::stamp`],
    /// [`StoredOutcome::content`]). Each entry is handed out once: a second
    /// call for the same path finds none, and the file is analysed again.
    pub fn take(&self, path: &str) -> Option<StoredOutcome<'static>> {
        let entry = self.entries.get(path)?;
        // A poisoned lock cannot happen: the release build aborts on panic.
        let mut held = entry.held.lock().ok()?;
        let outcome = match std::mem::replace(&mut *held, Held::Unreadable) {
            Held::Stored => self.read(path, entry.sealed.as_ref()?)?,
            Held::Decoded(outcome) => outcome,
            other => {
                *held = other;
                return None;
            }
        };
        *held = Held::Taken(outcome.head());
        Some(outcome)
    }

    /// The analysis of the stored entry of `path`, read and decoded, or
    /// none if it cannot be (counted for [`Cache::note`]).
    fn read(&self, path: &str, sealed: &Sealed) -> Option<StoredOutcome<'static>> {
        let text = self.stored_file.as_ref()?.read(path, sealed).ok();
        let decoded = text.and_then(|text| serde_json::from_str(&text).ok());
        if decoded.is_none() {
            self.ignored.fetch_add(1, Ordering::Relaxed);
        }
        decoded
    }

    /// Why the cache file, or some of its entries, were not used; complete
    /// once the run has taken its entries.
    pub fn note(&self) -> Option<String> {
        if self.unused_file.is_some() {
            return self.unused_file.clone();
        }
        let ignored = self.ignored.load(Ordering::Relaxed);
        let stored = self.entries.values().filter(|e| e.sealed.is_some()).count();
        (ignored > 0).then(|| {
            format!(
                "{}: ignored {ignored} of {stored} cache entries that failed their checksum or could not be read; \
                 they are rebuilt",
                self.file.display(),
            )
        })
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
        std::fs::create_dir_all(dir).map_err(fail)?;
        let tag = format!("{TAG_SIGNATURE}\n{TAG_OWNER}\n# For information about cache directory tags see https://bford.info/cachedir/\n");
        create_new(&dir.join("CACHEDIR.TAG"), &tag).map_err(fail)?;
        let ignore = format!("{LEGACY_IGNORE_START}: the whole cache directory stays out of git.\n*\n");
        create_new(&dir.join(".gitignore"), &ignore).map_err(fail)?;
        // The entries stored: those this cache opened, unless another run
        // saved since then (its file is read, so its entries are kept).
        let reopened;
        let (stored_file, sealed): (Option<&StoredFile>, Vec<(&str, Sealed)>) =
            match self.stored_file.as_ref().filter(|f| f.is_at(&self.file)) {
                Some(f) => (Some(f), self.entries.iter().filter_map(|(p, e)| Some((p.as_str(), e.sealed?))).collect()),
                None => {
                    reopened = StoredFile::open(&self.file, FORMAT);
                    match &reopened {
                        Opened::Indexed(f, sealed) => (Some(f), sealed.iter().map(|(p, s)| (p.as_str(), *s)).collect()),
                        Opened::Nothing | Opened::Unusable(_) => (None, Vec::new()),
                    }
                }
            };
        let rows = rows(sealed, &entries, now);
        let seen: Vec<u64> = rows.iter().map(|r| r.seen).collect();
        let kept = stored::kept(&seen, now, MAX_AGE_SECS, MAX_ENTRIES);
        // Each entry's analysis as it is written: this run's encoded, the
        // others copied from the stored file (those failing their checksum dropped).
        let encoding_failed = std::cell::Cell::new(None);
        let write = |out: &mut dyn std::io::Write| {
            let mut writer = stored::Writer::begin(out, FORMAT)?;
            for (row, _) in rows.iter().zip(&kept).filter(|(_, &kept)| kept) {
                let text = match row.analysis {
                    Analysis::Run(outcome) => serde_json::to_string(outcome).map_err(|e| {
                        let io = std::io::Error::other(e.to_string());
                        encoding_failed.set(Some(e));
                        io
                    })?,
                    Analysis::Stored(sealed) => match stored_file.map(|f| f.read(row.path, &sealed)) {
                        Some(Ok(text)) => text,
                        _ => continue,
                    },
                };
                writer.entry(row.path, row.seen, &text)?;
            }
            writer.end()
        };
        crate::atomic::replace_own(&self.file, &write).map_err(|e| match encoding_failed.take() {
            Some(source) => CacheError::Encode { dir: dir.to_path_buf(), source },
            None => fail(e),
        })
    }

    /// Whether saving `entries` at `now` changes what is stored: an analysis
    /// the cache did not hold, a stamp for an entry that had none, an entry
    /// last used more than a day ago, or one due to expire. Otherwise the
    /// file stays as it is: rewriting it on every warm run cost more than the
    /// analyses it saved.
    fn has_news(&self, entries: &BTreeMap<String, StoredOutcome<'_>>, now: u64) -> bool {
        let oldest_seen = self.entries.values().filter_map(|e| e.sealed.map(|s| s.seen)).min();
        let expiring = oldest_seen.is_some_and(|s| s.saturating_add(MAX_AGE_SECS) < now);
        let stale = |entry: &Entry| entry.sealed.is_none_or(|s| s.seen.saturating_add(SEEN_REFRESH_SECS) < now);
        // A first stamp is news too: the file's next read can be saved. A
        // stamp that only differs is not: in a fresh checkout every file has
        // a new one, and the cache would be rewritten on every CI run. An
        // entry the run did not take is news as well (a run takes every
        // entry it saves, so this only makes sure).
        let new = |path: &str, o: &StoredOutcome<'_>| {
            let Some(entry) = self.entries.get(path) else { return true };
            let head = entry.held.lock().ok().and_then(|held| held.head());
            stale(entry)
                || head
                    .is_none_or(|stored| stored.content != o.content || (o.stamp.is_some() && stored.stamp.is_none()))
        };
        expiring || entries.iter().any(|(path, o)| new(path, o))
    }
}

/// An entry of the cache file a save writes.
struct Row<'a, 'o> {
    path: &'a str,
    /// When a run last used it.
    seen: u64,
    analysis: Analysis<'a, 'o>,
}

/// Where a [`Row`]'s analysis comes from.
enum Analysis<'a, 'o> {
    /// This run.
    Run(&'a StoredOutcome<'o>),
    /// The stored file.
    Stored(Sealed),
}

/// The entries `sealed` (stored, in path order) with this run's `entries`
/// (used `now`) in their place or beside them, in path order.
fn rows<'a, 'o>(
    sealed: Vec<(&'a str, Sealed)>,
    entries: &'a BTreeMap<String, StoredOutcome<'o>>,
    now: u64,
) -> Vec<Row<'a, 'o>> {
    let stored = |(path, s): (&'a str, Sealed)| Row { path, seen: s.seen, analysis: Analysis::Stored(s) };
    let mut rows = Vec::with_capacity(sealed.len() + entries.len());
    let mut sealed = sealed.into_iter().peekable();
    for (path, outcome) in entries {
        while let Some(before) = sealed.next_if(|(p, _)| *p < path.as_str()) {
            rows.push(stored(before));
        }
        sealed.next_if(|(p, _)| *p == path.as_str());
        rows.push(Row { path, seen: now, analysis: Analysis::Run(outcome) });
    }
    rows.extend(sealed.map(stored));
    rows
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

    #[test]
    fn an_entry_is_handed_out_once_and_its_origin_stays_for_the_save() {
        let content = ContentId::of("x = 1\n");
        let stored = StoredOutcome::owning(content, None, FileFacts::default());
        let cache = Cache::in_memory(BTreeMap::from([("a.py".to_string(), stored)]));
        assert!(cache.take("b.py").is_none());
        assert_eq!(cache.take("a.py").map(|o| o.content()), Some(content));
        assert!(cache.take("a.py").is_none(), "taken already: the file is analysed again");
        let head = cache.entries["a.py"].held.lock().unwrap().head().map(|h| h.content);
        assert_eq!(head, Some(content), "what it was made from stays");
        assert_eq!(cache.note(), None);
    }

    #[test]
    fn a_file_just_written_has_no_stamp_yet() {
        let path = std::env::temp_dir().join(format!("npu-mem-stamp-{}.py", std::process::id()));
        std::fs::write(&path, "x = 1\n").unwrap();
        assert_eq!(Stamp::of(&path), None, "changed within the last {SETTLED_SECS} s");
        assert_eq!(Stamp::of(&path.with_extension("missing")), None);
        std::fs::remove_file(&path).unwrap();
    }
}
