//! Writing a source file back safely. The guarantees, in the order they are
//! checked:
//!
//! - through a symbolic link, the link's target is written and the link kept;
//! - a file with more than one hard link is refused (replacing it would split
//!   the links), as is a read-only one;
//! - the new text goes to a temporary file beside the target, created fresh
//!   (never through an existing name), with the target's owner and mode, and
//!   is flushed to disk before anything else happens;
//! - immediately before the rename, the target is checked again (size,
//!   modification time, inode, then content, then size and time once more):
//!   if it changed or vanished since it was read, the temporary file is
//!   removed and nothing is written;
//! - the rename replaces the file in one step, so a reader sees the old or the
//!   new text, never half of either;
//! - after the rename, the old file (kept open) is checked once more: an edit
//!   written through a handle opened before the rename lands there, and that
//!   text is put back in place of the fixed one.
//!
//! What remains is an edit written after that last look through a handle
//! opened before the rename: it goes to the replaced file. Nothing short of a
//! lock that every editor honours closes that, and no such lock exists.
//!
//! The temporary file itself (its unique name, its removal on failure, the
//! flush of the directory after the rename) is [`crate::atomic::Temporary`],
//! shared with the files npu-mem owns (a baseline, the cache, reports), which
//! need no more than [`crate::atomic::write_whole`].

use crate::atomic::Temporary;
use std::fmt;
use std::fs::{File, Metadata};
use std::io::{Read, Seek};
use std::path::Path;

/// Why a file was not replaced. Every message says what became of the file
/// and, where the user can act, what to do.
#[derive(Debug)]
pub enum WriteError {
    /// The file could not be found, opened, read or examined before writing.
    Unreadable { path: String, action: &'static str, source: std::io::Error },
    /// It no longer holds the text the fixes were computed from.
    Changed { path: String },
    /// It was removed while npu-mem worked.
    Removed { path: String },
    /// It is read-only.
    ReadOnly { path: String },
    /// It has other hard links, which replacing it would split.
    HardLinks { path: String, links: u64 },
    /// Its owner cannot be given to the new file.
    Owner { path: String, uid: u32, gid: u32, source: std::io::Error },
    /// It could not be read or examined again just before the rename.
    Unverifiable { path: String, action: &'static str, source: std::io::Error },
    /// The system refused writing the new text.
    Io { path: String, source: std::io::Error },
    /// Someone wrote to it during the rename; `restored` tells whether their
    /// text was put back in place of the fixed one.
    EditedDuringWrite { path: String, restored: bool },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            WriteError::Unreadable { path, action, source } => {
                write!(f, "cannot {action} {path}: {source}; it was not written")
            }
            WriteError::Changed { path } => {
                write!(f, "{path} changed on disk while npu-mem was working; it was not written (run the fix again)")
            }
            WriteError::Removed { path } => write!(f, "{path} was removed while npu-mem worked; it was not written"),
            WriteError::ReadOnly { path } => write!(f, "{path} is read-only; it was not written"),
            WriteError::HardLinks { path, links } => write!(
                f,
                "{path} has {links} hard links, and replacing it would split them; it was not written (see the \
                 change with --diff and apply it by hand)"
            ),
            WriteError::Owner { path, uid, gid, source } => write!(
                f,
                "{path} is owned by {uid}:{gid} and npu-mem may not give a new file that owner ({source}); it was \
                 not written (fix it as that user)"
            ),
            WriteError::Unverifiable { path, action, source } => {
                write!(f, "{path} cannot be {action} before writing ({source}); it was not written")
            }
            WriteError::Io { path, source } => write!(f, "cannot write {path}: {source}; it was left as it was"),
            WriteError::EditedDuringWrite { path, restored: true } => {
                write!(f, "{path} was edited while npu-mem wrote it; the edit was kept and the fixes were not applied")
            }
            WriteError::EditedDuringWrite { path, restored: false } => write!(
                f,
                "{path} was edited while npu-mem wrote it, and the edited text could not be put back; compare the \
                 file with your editor's copy"
            ),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Unreadable { source, .. }
            | WriteError::Owner { source, .. }
            | WriteError::Unverifiable { source, .. }
            | WriteError::Io { source, .. } => Some(source),
            WriteError::Changed { .. }
            | WriteError::Removed { .. }
            | WriteError::ReadOnly { .. }
            | WriteError::HardLinks { .. }
            | WriteError::EditedDuringWrite { .. } => None,
        }
    }
}

/// Replaces `path`'s contents with `new`, if the file still holds `expected`.
pub(crate) fn replace_file(path: &Path, expected: &[u8], new: &[u8]) -> Result<(), WriteError> {
    replace_file_observed(path, expected, new, &mut |_| {})
}

/// The moments of a replacement that tests act at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The temporary file is on disk; the last look at the target comes next.
    TemporaryWritten,
    /// The rename is done; the look at the replaced file comes next.
    Renamed,
}

/// [`replace_file`], calling `observe` at each [`Stage`] (tests edit the file there).
fn replace_file_observed(
    path: &Path,
    expected: &[u8],
    new: &[u8],
    observe: &mut dyn FnMut(Stage),
) -> Result<(), WriteError> {
    let shown = path.display().to_string();
    let unreadable = |action: &'static str| {
        let path = shown.clone();
        move |source| WriteError::Unreadable { path, action, source }
    };
    let target = std::fs::canonicalize(path).map_err(unreadable("find"))?;
    // Kept open to the end: an edit written through a handle opened before the
    // rename lands in this file, not in the new one, and is seen here.
    let mut original = File::open(&target).map_err(unreadable("read"))?;
    let meta = original.metadata().map_err(unreadable("stat"))?;
    let mut current = Vec::with_capacity(expected.len());
    original.read_to_end(&mut current).map_err(unreadable("read"))?;
    if current != expected {
        return Err(WriteError::Changed { path: shown });
    }
    if meta.permissions().readonly() {
        return Err(WriteError::ReadOnly { path: shown });
    }
    refuse_hard_links(&meta, &shown)?;
    write_temporary(&target, new, &meta, &shown).and_then(|tmp| {
        observe(Stage::TemporaryWritten);
        unchanged_since(&target, &meta, expected, &shown)?;
        tmp.commit(&target).map_err(|source| WriteError::Io { path: shown.clone(), source })
    })?;
    observe(Stage::Renamed);
    if !original.metadata().is_ok_and(|now| same_size_and_time(&meta, &now)) {
        let restored = put_back(&mut original, &target, &meta, &shown).is_ok();
        return Err(WriteError::EditedDuringWrite { path: shown, restored });
    }
    Ok(())
}

/// Whether `a` and `b` give a file the same size and modification time.
fn same_size_and_time(a: &Metadata, b: &Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// Someone wrote to the replaced file while it was being replaced: puts its
/// text, with their edit, back in place of the fixed text.
fn put_back(original: &mut File, target: &Path, like: &Metadata, shown: &str) -> Result<(), WriteError> {
    let io = |source| WriteError::Io { path: shown.to_string(), source };
    let mut theirs = Vec::new();
    original.seek(std::io::SeekFrom::Start(0)).and_then(|_| original.read_to_end(&mut theirs)).map_err(io)?;
    write_temporary(target, &theirs, like, shown)?.commit(target).map_err(io)
}

/// Writes `new` to a fresh temporary file beside `target` with the owner and
/// mode of `like`, flushed to disk (so that little time passes between the
/// last look at the target and the rename); it is removed again if anything
/// fails, here or later.
fn write_temporary(target: &Path, new: &[u8], like: &Metadata, shown: &str) -> Result<Temporary, WriteError> {
    let io = |source| WriteError::Io { path: shown.to_string(), source };
    let mut tmp = Temporary::beside(target, true).map_err(io)?;
    keep_owner(tmp.file(), like, shown)?;
    tmp.file().set_permissions(like.permissions()).map_err(|e| io(tmp.failed("set the permissions of", e)))?;
    tmp.write_all(new).and_then(|()| tmp.sync()).map_err(io)?;
    Ok(tmp)
}

/// Gives `file` the owner and group of `like`; refuses when that is not
/// allowed and would leave the file with another owner.
#[cfg(unix)]
fn keep_owner(file: &File, like: &Metadata, shown: &str) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt;
    let mine = file.metadata().map_err(|source| WriteError::Io { path: shown.to_string(), source })?;
    if (mine.uid(), mine.gid()) == (like.uid(), like.gid()) {
        return Ok(());
    }
    std::os::unix::fs::fchown(file, Some(like.uid()), Some(like.gid())).map_err(|source| WriteError::Owner {
        path: shown.to_string(),
        uid: like.uid(),
        gid: like.gid(),
        source,
    })
}

#[cfg(not(unix))]
fn keep_owner(_: &File, _: &Metadata, _: &str) -> Result<(), WriteError> {
    Ok(())
}

/// Refuses a file with more than one hard link: replacing it would leave the
/// other names with the old text.
#[cfg(unix)]
fn refuse_hard_links(meta: &Metadata, shown: &str) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt;
    if meta.nlink() > 1 {
        return Err(WriteError::HardLinks { path: shown.to_string(), links: meta.nlink() });
    }
    Ok(())
}

#[cfg(not(unix))]
fn refuse_hard_links(_: &Metadata, _: &str) -> Result<(), WriteError> {
    Ok(())
}

/// Checks that `target` (shown as `shown`) is still the file described by
/// `before` and still holds `expected`.
fn unchanged_since(target: &Path, before: &Metadata, expected: &[u8], shown: &str) -> Result<(), WriteError> {
    let path = || shown.to_string();
    let now = match std::fs::metadata(target) {
        Ok(now) => now,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(WriteError::Removed { path: path() }),
        Err(source) => return Err(WriteError::Unverifiable { path: path(), action: "checked", source }),
    };
    if !same_size_and_time(&now, before) || !same_inode(&now, before) {
        return Err(WriteError::Changed { path: path() });
    }
    // Equal size and time can hide an edit within the clock's resolution.
    match std::fs::read(target) {
        Ok(current) if current == expected => {}
        Ok(_) => return Err(WriteError::Changed { path: path() }),
        Err(source) => return Err(WriteError::Unverifiable { path: path(), action: "read again", source }),
    }
    // Reading a large file takes a while: one more cheap look, so the window
    // left before the rename is a few system calls, not a file read.
    match std::fs::metadata(target) {
        Ok(last) if same_size_and_time(&last, &now) => Ok(()),
        Ok(_) => Err(WriteError::Changed { path: path() }),
        Err(_) => Err(WriteError::Removed { path: path() }),
    }
}

#[cfg(unix)]
fn same_inode(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_inode(_: &Metadata, _: &Metadata) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::{replace_file, replace_file_observed, Stage, WriteError};
    use crate::atomic::tests::{entries, scratch};
    use std::path::Path;

    /// Fixes `y = m.cuda()` in a fresh `a.py` while `edit` acts on the file at
    /// each stage; the error, what the file then holds (if it exists), and
    /// the directory's entries.
    fn edited_while_fixing(
        name: &str,
        edit: &mut dyn FnMut(Stage, &Path),
    ) -> (WriteError, Option<String>, Vec<String>) {
        let dir = scratch(name);
        let path = dir.join("a.py");
        std::fs::write(&path, "y = m.cuda()\n").unwrap();
        let err = replace_file_observed(&path, b"y = m.cuda()\n", b"y = m.npu()\n", &mut |stage| edit(stage, &path))
            .expect_err("the write is refused");
        let result = (err, std::fs::read_to_string(&path).ok(), entries(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        result
    }

    fn append(path: &Path, text: &str) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_not_overwritten() {
        let dir = scratch("changed");
        let path = dir.join("a.py");
        std::fs::write(&path, "edited by someone else\n").unwrap();
        let err = replace_file(&path, b"what npu-mem read\n", b"fixed\n").unwrap_err();
        assert!(matches!(err, WriteError::Changed { .. }), "{err}");
        assert!(err.to_string().contains("changed on disk"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "edited by someone else\n");
        replace_file(&path, b"edited by someone else\n", b"fixed\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "fixed\n");
        assert_eq!(entries(&dir), ["a.py"], "no temporary file is left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_edit_saved_while_the_temporary_file_is_written_is_kept() {
        let (err, text, names) = edited_while_fixing("race", &mut |stage, path| {
            if stage == Stage::TemporaryWritten {
                append(path, "z = 1\n");
            }
        });
        assert!(matches!(err, WriteError::Changed { .. }), "{err}");
        assert_eq!(text.as_deref(), Some("y = m.cuda()\nz = 1\n"));
        assert_eq!(names, ["a.py"], "the temporary file is removed");
    }

    #[test]
    fn a_same_size_edit_within_the_clock_resolution_is_kept() {
        let (err, text, _) = edited_while_fixing("same-size", &mut |stage, path| {
            if stage == Stage::TemporaryWritten {
                let before = std::fs::metadata(path).unwrap().modified().unwrap();
                std::fs::write(path, "y = q.cuda()\n").unwrap();
                // Put the old time back: only the content tells the edit apart.
                std::fs::File::options().write(true).open(path).unwrap().set_modified(before).unwrap();
            }
        });
        assert!(matches!(err, WriteError::Changed { .. }), "{err}");
        assert_eq!(text.as_deref(), Some("y = q.cuda()\n"));
    }

    #[test]
    fn an_edit_written_through_a_handle_opened_before_the_rename_is_put_back() {
        // An editor opens the file before the rename and writes after it.
        let mut editor: Option<std::fs::File> = None;
        let (err, text, names) = edited_while_fixing("old-handle", &mut |stage, path| match stage {
            Stage::TemporaryWritten => editor = Some(std::fs::OpenOptions::new().append(true).open(path).unwrap()),
            Stage::Renamed => std::io::Write::write_all(editor.as_mut().unwrap(), b"z = 1\n").unwrap(),
        });
        assert!(matches!(err, WriteError::EditedDuringWrite { restored: true, .. }), "{err}");
        assert!(err.to_string().contains("the edit was kept"), "{err}");
        assert_eq!(text.as_deref(), Some("y = m.cuda()\nz = 1\n"));
        assert_eq!(names, ["a.py"], "no temporary file is left behind");
    }

    #[test]
    fn a_file_removed_while_the_temporary_file_is_written_stays_removed() {
        let (err, text, names) = edited_while_fixing("vanished", &mut |stage, path| {
            if stage == Stage::TemporaryWritten {
                std::fs::remove_file(path).unwrap();
            }
        });
        assert!(matches!(err, WriteError::Removed { .. }), "{err}");
        assert_eq!(text, None);
        assert!(names.is_empty(), "no temporary file is left: {names:?}");
    }
}
