//! Writing to stdout and stderr without ever panicking: a failed write to
//! stdout is an error the caller turns into exit 2; a failed write to stderr
//! is remembered, so the run still ends with 2; a closed pipe (`| head`) ends
//! the output quietly, as other command-line tools do.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when a line could not be written to stderr (other than to a closed pipe).
static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// Why stdout took less than it was given.
#[derive(Debug)]
pub enum StdoutError {
    /// The reader went away (`| head`): not worth a message.
    ClosedPipe,
    /// Anything else (a full disk, a closed descriptor).
    Failed(std::io::Error),
}

/// Writes `text` to stdout and flushes it.
pub fn print(text: &str) -> Result<(), StdoutError> {
    print_with(&|out| out.write_all(text.as_bytes()))
}

/// Writes to stdout what `write` produces, through a buffer, and flushes it.
pub fn print_with(write: &dyn Fn(&mut dyn Write) -> std::io::Result<()>) -> Result<(), StdoutError> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out).and_then(|()| out.flush()).map_err(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => StdoutError::ClosedPipe,
        _ => StdoutError::Failed(e),
    })
}

/// Writes `npu-mem: LINE` to stderr.
pub fn status(line: &str) {
    let mut err = std::io::stderr().lock();
    if let Err(e) = writeln!(err, "npu-mem: {line}") {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            STDERR_FAILED.store(true, Ordering::Relaxed);
        }
    }
}

/// Writes `npu-mem: warning: MESSAGE` to stderr.
pub fn warn(message: &str) {
    status(&format!("warning: {message}"));
}

/// Whether a line meant for stderr was lost; the run must then not end with success.
pub fn stderr_failed() -> bool {
    STDERR_FAILED.load(Ordering::Relaxed)
}

/// Why a report file could not be opened or written.
#[derive(Debug)]
pub struct ReportFileError {
    /// The report file.
    pub path: std::path::PathBuf,
    /// Whether opening it failed (before the scan), rather than writing it.
    pub opening: bool,
    /// What the system said.
    pub source: std::io::Error,
}

impl std::fmt::Display for ReportFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let path = self.path.display();
        match self.opening {
            true => write!(f, "cannot write {path}: {}; name a writable file", self.source),
            false => write!(f, "cannot write {path}: {}; the report is incomplete, write it again", self.source),
        }
    }
}

impl std::error::Error for ReportFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A report file named by `-o` or `--output-*`, opened (not yet emptied)
/// before the scan writes anything, so that an unwritable one stops the run
/// before `--fix` has changed a file.
pub struct ReportFile {
    path: std::path::PathBuf,
    file: std::fs::File,
}

impl ReportFile {
    /// Opens `path` for writing, creating it if it is missing.
    pub fn open(path: &std::path::Path) -> Result<Self, ReportFileError> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|source| ReportFileError { path: path.to_path_buf(), opening: true, source })?;
        Ok(ReportFile { path: path.to_path_buf(), file })
    }

    /// Replaces the file's contents with `text`: in one step (see
    /// [`crate::atomic`]) for a regular file, so that a reader never sees a
    /// half-written report; in place for anything else (a pipe, a device such
    /// as `/dev/stdout`), or when its directory does not let npu-mem create
    /// the temporary file that takes.
    pub fn replace(self, text: &str) -> Result<(), ReportFileError> {
        self.replace_with(&|out| out.write_all(text.as_bytes()))
    }

    /// Like [`ReportFile::replace`], with the contents written by `write` as
    /// they are produced, so that a large report is never held whole.
    pub fn replace_with(
        mut self,
        write: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), ReportFileError> {
        let regular = self.file.metadata().is_ok_and(|m| m.is_file());
        if regular && crate::atomic::write_whole_with(&self.path, write).is_ok() {
            return Ok(());
        }
        // Nothing was renamed when the write in one step failed: the open
        // file is still the report file. A pipe cannot be emptied or flushed.
        let file = &mut self.file;
        let emptied = if regular { file.set_len(0) } else { Ok(()) };
        emptied
            .and_then(|()| {
                let mut out = std::io::BufWriter::new(&mut *file);
                write(&mut out).and_then(|()| out.flush())
            })
            .and_then(|()| if regular { file.sync_all() } else { file.flush() })
            .map_err(|source| ReportFileError { path: self.path.clone(), opening: false, source })
    }
}

#[cfg(test)]
mod tests {
    use super::ReportFile;

    #[test]
    fn a_report_file_is_replaced_in_one_step() {
        let dir = crate::atomic::tests::scratch("report-file");
        let path = dir.join("report.json");
        std::fs::write(&path, "old report").unwrap();
        // A reader that opened the old report keeps reading it whole.
        let reader = dir.join("reader.json");
        std::fs::hard_link(&path, &reader).unwrap();
        ReportFile::open(&path).unwrap().replace("new report").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new report");
        assert_eq!(std::fs::read_to_string(&reader).unwrap(), "old report", "not truncated in place");
        assert_eq!(crate::atomic::tests::entries(&dir), ["reader.json", "report.json"], "no temporary file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
