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
//! Temporary files are named `.NAME.npu-mem-PID.tmp`; one left by a run that
//! was killed is removed by the next run that writes NAME.
//!
//! Files npu-mem itself owns (a baseline) need less: [`write_whole`].

use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Replaces `path`'s contents with `new`, if the file still holds `expected`.
pub fn replace_file(path: &Path, expected: &[u8], new: &[u8]) -> Result<(), String> {
    replace_file_observed(path, expected, new, &mut |_| {})
}

/// Writes `bytes` to `path`, a file npu-mem owns (such as a baseline), so
/// that it holds the old contents or the new, never a part: a temporary file
/// beside it, flushed, then renamed over it.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (dir, name) = dir_and_name(path);
    let tmp = temporary_path(dir, &name);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
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
) -> Result<(), String> {
    let shown = path.display();
    let target = std::fs::canonicalize(path).map_err(|e| format!("cannot find {shown}: {e}; it was not written"))?;
    // Kept open to the end: an edit written through a handle opened before the
    // rename lands in this file, not in the new one, and is seen here.
    let mut original = File::open(&target).map_err(|e| format!("cannot read {shown}: {e}; it was not written"))?;
    let meta = original.metadata().map_err(|e| format!("cannot stat {shown}: {e}; it was not written"))?;
    let mut current = Vec::with_capacity(expected.len());
    original.read_to_end(&mut current).map_err(|e| format!("cannot read {shown}: {e}; it was not written"))?;
    if current != expected {
        return Err(format!("{shown} changed on disk while npu-mem was working; it was not written"));
    }
    if meta.permissions().readonly() {
        return Err(format!("{shown} is read-only; it was not written"));
    }
    refuse_hard_links(&meta, path)?;
    let (dir, name) = dir_and_name(&target);
    remove_stale_temporaries(dir, &name);
    let tmp = temporary_path(dir, &name);
    let result = write_temporary(&tmp, new, &meta).and_then(|()| {
        observe(Stage::TemporaryWritten);
        unchanged_since(&target, &meta, expected).map_err(Failure::Refused)?;
        std::fs::rename(&tmp, &target).map_err(Failure::Io)
    });
    if let Err(failure) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(match failure {
            Failure::Io(e) => format!("cannot write {shown}: {e}; it was left as it was"),
            Failure::Refused(why) => format!("{shown} {why}; it was not written"),
        });
    }
    observe(Stage::Renamed);
    if !original.metadata().is_ok_and(|now| same_size_and_time(&meta, &now)) {
        return Err(put_back(&mut original, &tmp, &target, &meta, &shown.to_string()));
    }
    // Make the rename itself durable; a failure here loses nothing.
    let _ = File::open(dir).and_then(|d| d.sync_all());
    Ok(())
}

/// Whether `a` and `b` give a file the same size and modification time.
fn same_size_and_time(a: &Metadata, b: &Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// Someone wrote to the replaced file while it was being replaced: puts its
/// text, with their edit, back in place of the fixed text. The message to report.
fn put_back(original: &mut File, tmp: &Path, target: &Path, like: &Metadata, shown: &str) -> String {
    let mut theirs = Vec::new();
    let restored = original
        .seek(std::io::SeekFrom::Start(0))
        .and_then(|_| original.read_to_end(&mut theirs))
        .map_err(Failure::Io)
        .and_then(|_| write_temporary(tmp, &theirs, like))
        .and_then(|()| std::fs::rename(tmp, target).map_err(Failure::Io));
    match restored {
        Ok(()) => {
            format!("{shown} was edited while npu-mem wrote it; the edit was kept and the fixes were not applied")
        }
        Err(_) => {
            let _ = std::fs::remove_file(tmp);
            format!(
                "{shown} was edited while npu-mem wrote it, and the edited text could not be put back; \
                 compare the file with your editor's copy"
            )
        }
    }
}

/// Why a write did not happen.
enum Failure {
    /// The operating system refused an operation.
    Io(std::io::Error),
    /// A check said no (the reason completes "FILE ...").
    Refused(String),
}

/// Writes `new` to a fresh temporary file `tmp` with the owner and mode of
/// `like`, flushed to disk.
fn write_temporary(tmp: &Path, new: &[u8], like: &Metadata) -> Result<(), Failure> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(tmp).map_err(Failure::Io)?;
    keep_owner(&file, like)?;
    file.set_permissions(like.permissions()).map_err(Failure::Io)?;
    file.write_all(new).map_err(Failure::Io)?;
    file.sync_all().map_err(Failure::Io)
}

/// Gives `file` the owner and group of `like`; refuses when that is not
/// allowed and would leave the file with another owner.
#[cfg(unix)]
fn keep_owner(file: &File, like: &Metadata) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let mine = file.metadata().map_err(Failure::Io)?;
    if (mine.uid(), mine.gid()) == (like.uid(), like.gid()) {
        return Ok(());
    }
    std::os::unix::fs::fchown(file, Some(like.uid()), Some(like.gid())).map_err(|e| {
        Failure::Refused(format!(
            "is owned by {}:{} and npu-mem may not give a new file that owner ({e}); fix it as that user",
            like.uid(),
            like.gid()
        ))
    })
}

#[cfg(not(unix))]
fn keep_owner(_: &File, _: &Metadata) -> Result<(), Failure> {
    Ok(())
}

/// Refuses a file with more than one hard link: replacing it would leave the
/// other names with the old text.
#[cfg(unix)]
fn refuse_hard_links(meta: &Metadata, path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    if meta.nlink() > 1 {
        return Err(format!(
            "{} has {} hard links, and replacing it would split them; it was not written (see the change with \
             --diff and apply it by hand)",
            path.display(),
            meta.nlink()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn refuse_hard_links(_: &Metadata, _: &Path) -> Result<(), String> {
    Ok(())
}

/// Checks that `target` is still the file described by `before` and still
/// holds `expected`; the reason otherwise.
fn unchanged_since(target: &Path, before: &Metadata, expected: &[u8]) -> Result<(), String> {
    let now = match std::fs::metadata(target) {
        Ok(now) => now,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("was removed while npu-mem worked".into()),
        Err(e) => return Err(format!("cannot be checked before writing ({e})")),
    };
    let changed = "changed on disk while npu-mem was working";
    if !same_size_and_time(&now, before) || !same_inode(&now, before) {
        return Err(changed.into());
    }
    // Equal size and time can hide an edit within the clock's resolution.
    match std::fs::read(target) {
        Ok(current) if current == expected => {}
        Ok(_) => return Err(changed.into()),
        Err(e) => return Err(format!("cannot be read again before writing ({e})")),
    }
    // Reading a large file takes a while: one more cheap look, so the window
    // left before the rename is a few system calls, not a file read.
    match std::fs::metadata(target) {
        Ok(last) if same_size_and_time(&last, &now) => Ok(()),
        Ok(_) => Err(changed.into()),
        Err(_) => Err("was removed while npu-mem worked".into()),
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

/// The start of the temporary file names for `name`; the process id follows.
fn temporary_prefix(name: &str) -> String {
    format!(".{name}.npu-mem-")
}

/// This process's temporary file for the file `name` in `dir`.
fn temporary_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{}{}.tmp", temporary_prefix(name), std::process::id()))
}

/// `path`'s directory (`.` for a bare name) and file name.
fn dir_and_name(path: &Path) -> (&Path, String) {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    (dir, path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
}

/// Removes temporary files for `name` in `dir` left by npu-mem runs that
/// are no longer running (killed before they could rename or clean up).
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let prefix = temporary_prefix(name);
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)?.strip_suffix(".tmp")) else {
            continue;
        };
        if pid.parse::<u32>().is_ok_and(|pid| !still_running(pid, &entry.path())) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether the process `pid` that made the temporary file `tmp` may still be
/// working on it: by `/proc` where there is one, else by the file's age.
fn still_running(pid: u32, tmp: &Path) -> bool {
    if Path::new("/proc/self").exists() {
        return PathBuf::from(format!("/proc/{pid}")).exists();
    }
    let age = std::fs::metadata(tmp).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
    age.is_none_or(|age| age < std::time::Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::{replace_file, replace_file_observed, Stage};
    use std::path::{Path, PathBuf};

    /// A fresh directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("npu-mem-write-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    /// Fixes `y = m.cuda()` in a fresh `a.py` while `edit` acts on the file at
    /// each stage; the error, what the file then holds (if it exists), and
    /// the directory's entries.
    fn edited_while_fixing(name: &str, edit: &mut dyn FnMut(Stage, &Path)) -> (String, Option<String>, Vec<String>) {
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
        assert!(err.contains("changed on disk"), "{err}");
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
        assert!(err.contains("changed on disk"), "{err}");
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
        assert!(err.contains("changed on disk"), "{err}");
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
        assert!(err.contains("the edit was kept"), "{err}");
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
        assert!(err.contains("was removed"), "{err}");
        assert_eq!(text, None);
        assert!(names.is_empty(), "no temporary file is left: {names:?}");
    }

    #[test]
    fn write_whole_replaces_a_file_and_leaves_no_temporary_file() {
        let dir = scratch("whole");
        let path = dir.join("baseline.json");
        super::write_whole(&path, b"old").unwrap();
        super::write_whole(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(entries(&dir), ["baseline.json"]);
        let err = super::write_whole(&dir.join("missing/baseline.json"), b"x").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn temporary_files_of_dead_runs_are_removed_and_those_of_live_ones_kept() {
        let dir = scratch("stale");
        let path = dir.join("a.py");
        std::fs::write(&path, "x\n").unwrap();
        // No process has a pid this large (Linux caps pids at 2^22).
        let dead = dir.join(".a.py.npu-mem-999999999.tmp");
        let other_file = dir.join(".b.py.npu-mem-999999999.tmp");
        // A live process other than this one (whose own name is the one it writes next).
        let live = dir.join(format!(".a.py.npu-mem-{}.tmp", std::os::unix::process::parent_id()));
        for p in [&dead, &other_file, &live] {
            std::fs::write(p, "half").unwrap();
        }
        replace_file(&path, b"x\n", b"y\n").unwrap();
        assert!(!dead.exists(), "the dead run's temporary file is removed");
        assert!(live.exists(), "a running process's temporary file is kept");
        assert!(other_file.exists(), "another file's temporary files are not touched");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
