//! The cache file on disk: `{"format":N,"entries":{PATH:{"check":C,"seen":S,"outcome":{...}}}}`.
//!
//! A run does not hold the file: [`StoredFile::open`] reads it once to
//! learn where each entry's analysis lies, keeps the file open, and
//! [`StoredFile::read`] reads one entry's text when the scan asks for it.
//! [`Writer`] streams a new file entry by entry, so neither side ever holds
//! the analyses of a large tree twice.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

/// One stored entry, as indexed: when a run last used it, its checksum, and
/// where its analysis (the JSON text of a `StoredOutcome`) lies in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Sealed {
    /// When a run last used the entry (seconds since 1970), for eviction;
    /// outside the checksum since it only decides how long the entry is kept.
    pub(super) seen: u64,
    /// [`checksum`] of the path and the analysis's text.
    pub(super) check: u64,
    /// The text's byte offset in the file, and its length.
    start: u64,
    len: usize,
}

/// The checksum sealing the entry of `path` whose analysis is the JSON text
/// `outcome`, as stored: FNV-1a over the path, a NUL and that text.
///
/// The checksum catches accidental or careless damage (a truncated write, a
/// hand edit, a merge tool): an entry that fails it is ignored and rebuilt.
/// It is no defence against someone who can write the cache and recompute
/// the checksum; whoever can write the cache can also change the sources.
pub fn checksum(path: &str, outcome: &str) -> u64 {
    let h = crate::hash::fnv1a_extend(crate::hash::fnv1a(path.as_bytes()), b"\0");
    crate::hash::fnv1a_extend(h, outcome.as_bytes())
}

/// The layout as read to index it: the analyses are only located.
#[derive(Deserialize)]
struct Layout<'a> {
    format: u32,
    #[serde(borrow)]
    entries: BTreeMap<String, SealedText<'a>>,
}

#[derive(Deserialize)]
struct SealedText<'a> {
    check: u64,
    seen: u64,
    #[serde(borrow)]
    outcome: &'a RawValue,
}

/// A cache file, open, with where each of its entries lies.
pub(super) struct StoredFile {
    file: Mutex<std::fs::File>,
    /// The file's length and modification time when it was opened: a save
    /// that finds others at the path knows another run saved meanwhile.
    identity: Option<(u64, SystemTime)>,
}

/// What [`StoredFile::open`] found at a path.
pub(super) enum Opened {
    /// The file and its entries in path order (unchecked: checksums are
    /// verified as entries are read).
    Indexed(StoredFile, Vec<(String, Sealed)>),
    /// No file, or one of another format version: nothing to use, nothing to say.
    Nothing,
    /// A file that cannot be used, and why (a link, a damaged file).
    Unusable(String),
}

impl StoredFile {
    /// Opens and indexes the cache file at `path`, of format `format`. A
    /// link is not read through (nor written through: the save replaces it).
    /// The file's text is held only while it is indexed.
    pub(super) fn open(path: &Path, format: u32) -> Opened {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Opened::Unusable(format!(
                "{}: ignored a cache file that is a symbolic link; it is replaced",
                path.display()
            ));
        }
        let Ok(mut file) = std::fs::File::open(path) else { return Opened::Nothing };
        let mut bytes = Vec::new();
        if file.read_to_end(&mut bytes).is_err() {
            return Opened::Nothing;
        }
        let damaged = |why: &dyn std::fmt::Display| {
            Opened::Unusable(format!("{}: ignored a damaged cache file ({why}); it is rebuilt", path.display()))
        };
        let layout = match serde_json::from_slice::<Layout<'_>>(&bytes) {
            Ok(layout) if layout.format == format => layout,
            Ok(_) => return Opened::Nothing,
            Err(e) => return damaged(&e),
        };
        let base = bytes.as_ptr() as usize;
        let mut entries = Vec::with_capacity(layout.entries.len());
        for (entry_path, s) in layout.entries {
            // A borrowed raw value is a slice of the bytes read.
            let text = s.outcome.get();
            let Some(start) = (text.as_ptr() as usize).checked_sub(base).filter(|&at| at + text.len() <= bytes.len())
            else {
                return damaged(&"an entry outside the file");
            };
            entries.push((entry_path, Sealed { seen: s.seen, check: s.check, start: start as u64, len: text.len() }));
        }
        let identity = identity(&file.metadata());
        Opened::Indexed(StoredFile { file: Mutex::new(file), identity }, entries)
    }

    /// Whether the file at `path` is still the one this opened.
    pub(super) fn is_at(&self, path: &Path) -> bool {
        self.identity.is_some() && identity(&std::fs::metadata(path)) == self.identity
    }

    /// The analysis of the entry of `path` sealed `sealed`, if its text can
    /// be read and its checksum holds.
    pub(super) fn read(&self, path: &str, sealed: &Sealed) -> Result<String, Unread> {
        let mut text = vec![0; sealed.len];
        {
            // A poisoned lock cannot happen: the release build aborts on panic.
            let mut file = self.file.lock().map_err(|_| Unread::Text)?;
            file.seek(SeekFrom::Start(sealed.start))
                .and_then(|_| file.read_exact(&mut text))
                .map_err(|_| Unread::Text)?;
        }
        let text = String::from_utf8(text).map_err(|_| Unread::Text)?;
        if checksum(path, &text) == sealed.check {
            Ok(text)
        } else {
            Err(Unread::Checksum)
        }
    }
}

/// Why an entry's analysis was not read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unread {
    /// The file no longer holds it where the index says (changed in place).
    Text,
    /// Its text is not the one sealed.
    Checksum,
}

/// A file's length and modification time, if known.
fn identity(meta: &std::io::Result<std::fs::Metadata>) -> Option<(u64, SystemTime)> {
    let meta = meta.as_ref().ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Writes a cache file to a stream, entry by entry, in path order.
pub(super) struct Writer<'w> {
    out: &'w mut dyn Write,
    first: bool,
}

impl<'w> Writer<'w> {
    /// Starts a cache file of format `format` on `out`.
    pub(super) fn begin(out: &'w mut dyn Write, format: u32) -> std::io::Result<Self> {
        write!(out, "{{\"format\":{format},\"entries\":{{")?;
        Ok(Writer { out, first: true })
    }

    /// Writes the entry of `path`, last used at `seen`, whose analysis is the JSON text `outcome`.
    pub(super) fn entry(&mut self, path: &str, seen: u64, outcome: &str) -> std::io::Result<()> {
        if !std::mem::take(&mut self.first) {
            self.out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *self.out, path)?;
        write!(self.out, ":{{\"check\":{},\"seen\":{seen},\"outcome\":{outcome}}}", checksum(path, outcome))
    }

    /// Ends the file.
    pub(super) fn end(self) -> std::io::Result<()> {
        self.out.write_all(b"}}")
    }
}

/// Which entries a save keeps, given when each was last used: none unused
/// for `max_age` seconds before `now`, and of the others the `max` most
/// recently used, ties going to the first.
pub(super) fn kept(seen: &[u64], now: u64, max_age: u64, max: usize) -> Vec<bool> {
    let fresh = |s: u64| s.saturating_add(max_age) >= now;
    let used_from = |t: u64| seen.iter().filter(|&&s| fresh(s) && s >= t).count();
    if used_from(0) <= max {
        return seen.iter().map(|&s| fresh(s)).collect();
    }
    // The latest time `t` from which on `max` entries or more were used, by
    // bisection (no sort: this runs on up to `MAX_ENTRIES` entries, rarely).
    let (mut t, mut high) = (0, u64::MAX);
    while t < high {
        let mid = t + (high - t).div_ceil(2);
        if used_from(mid) >= max {
            t = mid;
        } else {
            high = mid - 1;
        }
    }
    let mut ties = max.saturating_sub(t.checked_add(1).map_or(0, used_from));
    seen.iter()
        .map(|&s| {
            fresh(s)
                && (s > t
                    || (s == t && ties > 0 && {
                        ties -= 1;
                        true
                    }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eviction_drops_old_entries_then_the_least_recently_used() {
        let (age, now) = (100, 1000);
        let seen = [now - age - 1, now - age, now - 5, now - 5, now, now - 7];
        let kept_names = |max| {
            let kept = kept(&seen, now, age, max);
            ["a", "b", "c", "d", "e", "f"].into_iter().zip(kept).filter(|(_, k)| *k).map(|(n, _)| n).collect::<Vec<_>>()
        };
        assert_eq!(kept_names(10), ["b", "c", "d", "e", "f"], "only `a` is too old");
        assert_eq!(kept_names(5), ["b", "c", "d", "e", "f"]);
        assert_eq!(kept_names(3), ["c", "d", "e"]);
        assert_eq!(kept_names(2), ["c", "e"], "the newest, ties going to the first");
        assert_eq!(kept_names(0), Vec::<&str>::new());
        assert_eq!(kept(&[u64::MAX, u64::MAX, 7], 10, 5, 1), [true, false, false]);
    }

    #[test]
    fn the_checksum_covers_path_and_content() {
        let outcome = r#"{"findings":[1,2]}"#;
        let sum = checksum("a.py", outcome);
        assert_eq!(sum, checksum("a.py", r#"{"findings":[1,2]}"#));
        assert_ne!(sum, checksum("b.py", outcome));
        assert_ne!(sum, checksum("a.py", r#"{"findings":[]}"#));
    }

    #[test]
    fn what_is_written_is_indexed_and_read_back_and_damage_is_caught() {
        let dir = std::env::temp_dir().join(format!("npu-mem-stored-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.json");
        let mut out = Vec::new();
        let mut writer = Writer::begin(&mut out, 3).unwrap();
        writer.entry("a \"q\".py", 5, r#"{"x":[1,"é"]}"#).unwrap();
        writer.entry("b.py", 7, "null").unwrap();
        writer.end().unwrap();
        std::fs::write(&path, &out).unwrap();

        let Opened::Indexed(file, entries) = StoredFile::open(&path, 3) else { panic!("indexed") };
        let [(a, a_sealed), (b, b_sealed)] = &entries[..] else { panic!("two entries: {entries:?}") };
        assert_eq!((a.as_str(), b.as_str(), b_sealed.seen), ("a \"q\".py", "b.py", 7));
        assert_eq!(file.read(a, a_sealed).as_deref(), Ok(r#"{"x":[1,"é"]}"#));
        assert_eq!(file.read(b, a_sealed), Err(Unread::Checksum), "sealed under another path");
        assert!(file.is_at(&path));
        assert!(matches!(StoredFile::open(&path, 4), Opened::Nothing), "another format version");

        std::fs::write(&path, &out[..out.len() - 1]).unwrap();
        assert!(matches!(StoredFile::open(&path, 3), Opened::Unusable(note) if note.contains("damaged")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
