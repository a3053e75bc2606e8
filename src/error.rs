//! Why a command stopped before it could finish: every error that ends a
//! run with exit code 2, gathered so that the stages of a run can use `?`.

use crate::baseline::BaselineError;
use crate::config::ConfigError;
use crate::diff::DiffError;
use crate::output::ReportFileError;
use crate::project::named_runs::EntryError;
use crate::report::rules::UnknownRule;
use crate::rules::error::PackError;
use crate::rules::spec_error::VersionError;
use crate::server::ServerError;
use crate::stdin::StdinError;
use crate::walk::WalkError;
use std::fmt;

/// An error that ends a run; the message says what to do about it.
#[derive(Debug)]
pub enum RunError {
    /// The configuration file cannot be read, or names what does not exist.
    Config(ConfigError),
    /// A rule pack cannot be loaded.
    Pack(PackError),
    /// `npu-mem rule CODE` names no rule.
    UnknownRule(UnknownRule),
    /// The target version does not parse.
    Target(VersionError),
    /// `--statistics` with a machine-readable `--format`.
    StatisticsFormat,
    /// `--unsafe-fixes` without `--fix` or `--diff`.
    UnsafeFixesAlone,
    /// `--fix` of standard input, which prints the fixed text, with a flag that shapes a report.
    StdinFixReport,
    /// Standard input cannot be scanned.
    Stdin(StdinError),
    /// The language server cannot start.
    Server(ServerError),
    /// The worker threads could not be started.
    Threads(rayon::ThreadPoolBuildError),
    /// A path to scan, or an `exclude` glob, cannot be used.
    Walk(WalkError),
    /// A run named with `--entry` or `entry` starts nothing the scan holds.
    Entry(EntryError),
    /// `--entry` with a file among the paths to scan.
    EntryWithFiles(std::path::PathBuf),
    /// The baseline cannot be read or written.
    Baseline(BaselineError),
    /// A report file cannot be opened or written.
    ReportFile(ReportFileError),
    /// `--diff-base` cannot tell what changed.
    Diff(DiffError),
    /// stdout took less than it was given (other than a closed pipe).
    Stdout(std::io::Error),
    /// A failure after `--fix` had already changed files, which the message lists.
    AfterFix {
        /// What failed.
        error: Box<RunError>,
        /// The files changed, as shown.
        written: Vec<String>,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Config(e) => e.fmt(f),
            RunError::Pack(e) => write!(f, "invalid rule pack: {e}"),
            RunError::UnknownRule(e) => e.fmt(f),
            RunError::Target(e) => write!(f, "target: {e}"),
            RunError::StatisticsFormat => write!(
                f,
                "--statistics prints a table in place of the report; leave out --format, or use --output-json FILE \
                 (and the like) for the machine-readable reports"
            ),
            RunError::UnsafeFixesAlone => {
                write!(f, "--unsafe-fixes chooses which fixes --fix and --diff apply; add one of them")
            }
            RunError::StdinFixReport => write!(
                f,
                "--fix with --stdin-filename prints the fixed text on stdout in place of the report; leave out \
                 --format and the --output flags, or use --diff"
            ),
            RunError::Stdin(e) => e.fmt(f),
            RunError::Server(e) => e.fmt(f),
            RunError::Threads(e) => {
                write!(f, "cannot start worker threads: {e}; pass a smaller --threads, or leave it out")
            }
            RunError::Walk(e) => e.fmt(f),
            RunError::Entry(e) => e.fmt(f),
            RunError::EntryWithFiles(path) => write!(
                f,
                "--entry needs the scan of whole directories, and {} is a file: a named run's imports are followed \
                 only among the scanned files; scan the project's directory, or leave out --entry",
                path.display()
            ),
            RunError::Baseline(e) => e.fmt(f),
            RunError::ReportFile(e) => e.fmt(f),
            RunError::Diff(e) => e.fmt(f),
            RunError::Stdout(e) => write!(f, "cannot write to stdout: {e}; check where the output goes"),
            RunError::AfterFix { error, written } => {
                let n = written.len();
                let files = if n == 1 { "file" } else { "files" };
                write!(f, "{error}\n(--fix had already changed {n} {files}: {})", written.join(", "))
            }
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Config(e) => Some(e),
            RunError::Pack(e) => Some(e),
            RunError::UnknownRule(e) => Some(e),
            RunError::Target(e) => Some(e),
            RunError::Threads(e) => Some(e),
            RunError::Baseline(e) => Some(e),
            RunError::ReportFile(e) => Some(e),
            RunError::Diff(e) => Some(e),
            RunError::Stdout(e) => Some(e),
            RunError::Walk(e) => Some(e),
            RunError::Entry(e) => Some(e),
            RunError::Stdin(e) => Some(e),
            RunError::Server(e) => Some(e),
            RunError::AfterFix { error, .. } => Some(error.as_ref()),
            RunError::StatisticsFormat
            | RunError::UnsafeFixesAlone
            | RunError::StdinFixReport
            | RunError::EntryWithFiles(_) => None,
        }
    }
}

wraps_errors!(RunError {
    Config(ConfigError),
    Pack(PackError),
    UnknownRule(UnknownRule),
    Target(VersionError),
    Threads(rayon::ThreadPoolBuildError),
    Walk(WalkError),
    Entry(EntryError),
    Stdin(StdinError),
    Server(ServerError),
    Baseline(BaselineError),
    ReportFile(ReportFileError),
    Diff(DiffError),
});
