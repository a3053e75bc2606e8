//! Replacing a whole file in one step, so that a reader (or a run killed
//! half-way) sees the old contents or the new, never a part of either.
//!
//! Every such write goes through a [`Temporary`] file created beside the
//! target: its name is new to the directory (the process id and a counter,
//! created exclusively, with another name tried if one is taken), its
//! contents are flushed to disk before the rename, the rename replaces the
//! target, and the directory is flushed after it where the system allows.
//! A temporary file that is not renamed into place is removed, whatever
//! went wrong.
//!
//! Temporary files are named `.NAME.npu-mem-PID-N.tmp` (older runs used
//! `.NAME.npu-mem-PID.tmp`). An interrupt (Ctrl-C, SIGTERM, SIGHUP) while
//! one exists removes it before the process exits; one left by a run that
//! was killed outright is removed by the next run that writes NAME.
//!
//! [`write_whole`] is the whole job for files npu-mem owns (the cache, a
//! baseline, a report); fixing a user's source file (`crate::write`) adds
//! its own checks between writing the temporary file and renaming it.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// The counter that sets apart the temporary files of one process (threads
/// that write the same file at once each get their own name).
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The temporary files of this process that are neither renamed nor
/// removed yet: what an interrupt must remove.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs the interrupt handler, once, with the first temporary file.
static HANDLER: Once = Once::new();

/// The exit status after an interrupt (128 + SIGINT, as shells report it).
const INTERRUPTED: i32 = 130;

/// How many taken names [`Temporary::beside`] steps over before it reports
/// the directory as unusable (each one is a file left there by someone else).
const NAME_ATTEMPTS: u32 = 100;

/// Writes `bytes` to `path` in one step (see the module documentation).
///
/// Through a symbolic link, the file it points at is replaced and the link
/// kept. An existing file keeps its permissions; a new one gets the default
/// ones. Errors name the step that failed and the directory involved.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_whole_with(path, &|out| out.write_all(bytes))
}

/// Like [`write_whole`], with the contents written by `write` as they are
/// produced (through a buffer), so that a large report is never held whole.
pub(crate) fn write_whole_with(path: &Path, write: &dyn Fn(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    replace(&resolve_link(path)?, write)
}

/// Writes what `write` writes to `path` in one step (a large file is not
/// held in memory whole), replacing `path` itself even where it is a
/// symbolic link: for files only npu-mem writes (the cache), where a link
/// is no choice of the user's and must not lead the write elsewhere.
pub(crate) fn replace_own(path: &Path, write: &dyn Fn(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    replace(path, write)
}

/// Replaces the file `target` (not a link) with what `write` writes.
fn replace(target: &Path, write: &dyn Fn(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let existing = std::fs::symlink_metadata(target).ok().filter(|m| m.file_type().is_file());
    let mut tmp = Temporary::beside(target, existing.is_some())?;
    if let Some(meta) = &existing {
        tmp.file.set_permissions(meta.permissions()).map_err(|e| tmp.failed("set the permissions of", e))?;
    }
    let written = {
        let mut out = io::BufWriter::new(&mut tmp.file);
        write(&mut out).and_then(|()| out.flush())
    };
    written.map_err(|e| tmp.failed("write", e))?;
    tmp.commit(target)
}

/// The file that writing to `path` should replace: `path` itself, or what
/// it links to when it is a symbolic link.
fn resolve_link(path: &Path) -> io::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "{} is a symbolic link whose target cannot be found ({e}); fix or remove the link",
                    path.display()
                ),
            )
        }),
        _ => Ok(path.to_path_buf()),
    }
}

/// A freshly created temporary file beside the file it will replace; it is
/// removed when dropped, unless [`Temporary::commit`] renamed it into place.
pub(crate) struct Temporary {
    /// Where the temporary file is.
    path: PathBuf,
    /// The file, open for writing.
    file: File,
    /// Whether everything written so far is flushed to disk.
    synced: bool,
    /// Set once the file has been renamed (nothing is left to remove).
    renamed: bool,
}

impl Temporary {
    /// Creates a new, empty temporary file in the directory of `target`.
    /// With `private`, only the owner may open it (for a copy of a file whose
    /// own permissions are set afterwards: nobody can open the copy before).
    pub(crate) fn beside(target: &Path, private: bool) -> io::Result<Temporary> {
        let (dir, name) = dir_and_name(target);
        remove_stale_temporaries(dir, &name);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if private {
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        }
        #[cfg(not(unix))]
        let _ = private;
        install_interrupt_handler();
        for _ in 0..NAME_ATTEMPTS {
            let path = dir.join(temporary_name(&name, std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
            // Created and recorded under the lock: an interrupt sees it or finds it not made.
            let mut live = live();
            match options.open(&path) {
                Ok(file) => {
                    live.push(path.clone());
                    return Ok(Temporary { path, file, synced: false, renamed: false });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot create a temporary file in {}: {e}", dir.display()),
                    ))
                }
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "cannot create a temporary file in {}: {NAME_ATTEMPTS} names in a row were taken; remove the files \
                 named .{name}.npu-mem-*.tmp there",
                dir.display()
            ),
        ))
    }

    /// An error about `doing` the temporary file, keeping the kind of `e`.
    pub(crate) fn failed(&self, doing: &str, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("cannot {doing} the temporary file {}: {e}", self.path.display()))
    }

    /// The open file (to set its owner or permissions before writing).
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// Appends `bytes` to the file.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.synced = false;
        self.file.write_all(bytes).map_err(|e| self.failed("write", e))
    }

    /// Flushes what was written to disk now (rather than in [`Temporary::commit`]).
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all().map_err(|e| self.failed("flush", e))?;
        self.synced = true;
        Ok(())
    }

    /// Flushes the contents to disk (unless [`Temporary::sync`] just did),
    /// renames the file over `target`, then flushes the directory so the
    /// rename itself survives a crash (where the system cannot, nothing is
    /// lost but that guarantee).
    pub(crate) fn commit(mut self, target: &Path) -> io::Result<()> {
        if !self.synced {
            self.sync()?;
        }
        std::fs::rename(&self.path, target).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot rename the temporary file over {}: {e}", target.display()))
        })?;
        self.renamed = true;
        untrack(&self.path);
        let (dir, _) = dir_and_name(target);
        let _ = File::open(dir).and_then(|d| d.sync_all());
        Ok(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
            untrack(&self.path);
        }
    }
}

/// The list of live temporary files, usable even if a thread panicked while holding it.
fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Installs, once, the handler that removes live temporary files on an interrupt.
fn install_interrupt_handler() {
    // Where another handler is installed already (a host program's), that one stays.
    HANDLER.call_once(|| {
        let _ = ctrlc::set_handler(remove_live_and_exit);
    });
}

/// Forgets a temporary file that was renamed or removed.
fn untrack(path: &Path) {
    live().retain(|p| p != path);
}

/// On an interrupt: removes every live temporary file and exits. The lock is
/// held to the end, so no new temporary file is made meanwhile, and a rename
/// still to come finds its file gone and replaces nothing.
fn remove_live_and_exit() {
    let live = live();
    for path in live.iter() {
        let _ = std::fs::remove_file(path);
    }
    std::process::exit(INTERRUPTED);
}

/// The start of the temporary file names for `name`; the process id follows.
fn temporary_prefix(name: &str) -> String {
    format!(".{name}.npu-mem-")
}

/// The temporary file name for `name` of process `pid`, with its counter `n`.
fn temporary_name(name: &str, pid: u32, n: u64) -> String {
    format!("{}{pid}-{n}.tmp", temporary_prefix(name))
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
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)?.strip_suffix(".tmp")) else {
            continue;
        };
        // `PID-N`, or `PID` alone as older runs named them.
        let pid = rest.split_once('-').map_or(rest, |(pid, _)| pid);
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
pub(crate) mod tests {
    use super::*;

    /// A fresh, empty directory for the test `name` (unique across the crate's tests).
    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("npu-mem-scratch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The names in `dir`, sorted.
    pub(crate) fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_replaced_and_no_temporary_file_is_left() {
        let dir = scratch("whole");
        let path = dir.join("baseline.json");
        write_whole(&path, b"old").unwrap();
        write_whole(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(entries(&dir), ["baseline.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_report_that_fails_half_way_leaves_the_old_file_whole() {
        let dir = scratch("streamed");
        let path = dir.join("report.json");
        write_whole(&path, b"old report").unwrap();
        // A large report is written in pieces; the second piece fails.
        let err = write_whole_with(&path, &|out| {
            out.write_all(&[b'x'; 100_000])?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("cannot write the temporary file") && err.to_string().contains("disk full"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old report");
        assert_eq!(entries(&dir), ["report.json"], "the temporary file is removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_directory_is_a_clear_error_and_leaves_nothing() {
        let dir = scratch("missing");
        let err = write_whole(&dir.join("missing/baseline.json"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let message = err.to_string();
        assert!(message.contains("cannot create a temporary file in") && message.contains("missing"), "{message}");
        assert!(entries(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rename_that_fails_removes_the_temporary_file() {
        let dir = scratch("rename");
        // A directory cannot be replaced by a file.
        let target = dir.join("report.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "x").unwrap();
        let err = write_whole(&target, b"report").unwrap_err();
        assert!(err.to_string().contains("cannot rename the temporary file over"), "{err}");
        assert_eq!(entries(&dir), ["report.json"], "the temporary file is removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_unwritable_directory_is_a_clear_error_and_leaves_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("read-only");
        let path = dir.join("b.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let result = write_whole(&path, b"new");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Root may write anyway; then the write must simply have worked.
        match result {
            Err(e) => {
                assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
                assert!(e.to_string().contains("cannot create a temporary file in"), "{e}");
                assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
            }
            Ok(()) => assert_eq!(std::fs::read_to_string(&path).unwrap(), "new"),
        }
        assert_eq!(entries(&dir), ["b.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn taken_temporary_names_are_stepped_over() {
        let dir = scratch("taken");
        let path = dir.join("a.json");
        let pid = std::process::id();
        // The name older runs of this very process would have used (kept:
        // this process is alive), and the next names of the counter.
        let old_style = dir.join(format!(".a.json.npu-mem-{pid}.tmp"));
        std::fs::write(&old_style, "half").unwrap();
        let next = NEXT.load(Ordering::Relaxed);
        let taken: Vec<PathBuf> = (next..next + 5).map(|n| dir.join(temporary_name("a.json", pid, n))).collect();
        for t in &taken {
            std::fs::write(t, "half").unwrap();
        }
        write_whole(&path, b"whole").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "whole");
        assert!(old_style.exists() && taken.iter().all(|t| t.exists()), "files of a live process are kept");
        assert_eq!(entries(&dir).len(), 7, "{:?}", entries(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn threads_writing_one_file_at_once_all_succeed_and_one_whole_text_wins() {
        let dir = scratch("threads");
        let path = dir.join("cache.json");
        let texts: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 64 * 1024]).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = texts
                .iter()
                .map(|t| {
                    let path = &path;
                    s.spawn(move || (0..5).try_for_each(|_| write_whole(path, t)))
                })
                .collect();
            for h in handles {
                h.join().unwrap().unwrap();
            }
        });
        let last = std::fs::read(&path).unwrap();
        assert!(texts.contains(&last), "the file holds one writer's text, whole");
        assert_eq!(entries(&dir), ["cache.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn through_a_link_the_target_is_replaced_and_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("link");
        let real = dir.join("real.json");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_whole(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is kept");
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
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
        let dead_counted = dir.join(".a.py.npu-mem-999999999-3.tmp");
        let other_file = dir.join(".b.py.npu-mem-999999999.tmp");
        // A live process other than this one.
        let live = dir.join(format!(".a.py.npu-mem-{}-0.tmp", std::os::unix::process::parent_id()));
        for p in [&dead, &dead_counted, &other_file, &live] {
            std::fs::write(p, "half").unwrap();
        }
        write_whole(&path, b"y\n").unwrap();
        assert!(!dead.exists() && !dead_counted.exists(), "the dead run's temporary files are removed");
        assert!(live.exists(), "a running process's temporary file is kept");
        assert!(other_file.exists(), "another file's temporary files are not touched");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
