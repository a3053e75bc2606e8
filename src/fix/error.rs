//! Why a file's fixes were not applied. The file is then left as it was,
//! and the message says so and what the user can do.

use crate::notebook::NotebookError;
use crate::source::ReadError;
use crate::write::WriteError;
use std::fmt;

/// Why a file that has fixes was left alone.
#[derive(Debug)]
pub enum FixError {
    /// The file could not be read again.
    Unreadable(std::io::Error),
    /// Its bytes are not source text any more.
    Undecodable(ReadError),
    /// Its encoding would not write its text back as the bytes it was read
    /// from, or has no form for a character a fix writes.
    NotReversible {
        /// The encoding's name.
        encoding: &'static str,
    },
    /// A notebook that could not be read or edited.
    Notebook(NotebookError),
    /// Parsing it is too slow to do once per pass.
    SlowParse {
        /// Seconds one parse took.
        seconds: f64,
        /// How many parses fixing may take.
        parses: usize,
    },
    /// The fixes chosen left the text as it was.
    NoChange {
        /// The codes whose fixes were applied.
        codes: Vec<String>,
    },
    /// The fixes would make the file fail to parse.
    BreaksSyntax {
        /// `CODE at line N` of each fix applied.
        fixes: Vec<String>,
    },
    /// Each pass produced new fixes, up to the limit.
    Unsettled {
        /// The passes made.
        passes: usize,
    },
    /// The fixed text could not be written.
    Write(WriteError),
}

impl fmt::Display for FixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixError::Unreadable(e) => write!(f, "cannot read the file to fix it: {e}"),
            FixError::Undecodable(e) => e.fmt(f),
            FixError::NotReversible { encoding } => write!(
                f,
                "the file is in {encoding}, and writing its text back in {encoding} would not give the same bytes; \
                 the file was left alone: re-save it as UTF-8 to have it fixed, or apply its fixes by hand"
            ),
            FixError::Notebook(e) => e.fmt(f),
            FixError::SlowParse { seconds, parses } => write!(
                f,
                "the file took {seconds:.1} s to parse (tree-sitter's error recovery is slow on some broken code), \
                 and fixing parses it up to {parses} times; the file was left alone: apply its fixes by hand"
            ),
            FixError::NoChange { codes } => {
                write!(
                    f,
                    "the fixes for {} change nothing; the file was left alone (the rule's fix is at fault: report it)",
                    codes.join(", ")
                )
            }
            FixError::BreaksSyntax { fixes } => write!(
                f,
                "the fixes ({}) would introduce a syntax error; the file was left alone: apply them by hand \
                 (`npu-mem rule CODE` shows how)",
                fixes.join(", ")
            ),
            FixError::Unsettled { passes } => {
                write!(
                    f,
                    "fixes did not settle after {passes} passes; the file was left alone: apply its fixes by hand"
                )
            }
            FixError::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FixError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FixError::Unreadable(e) => Some(e),
            FixError::Undecodable(e) => Some(e),
            FixError::Notebook(e) => Some(e),
            FixError::Write(e) => Some(e),
            FixError::SlowParse { .. }
            | FixError::NotReversible { .. }
            | FixError::NoChange { .. }
            | FixError::BreaksSyntax { .. }
            | FixError::Unsettled { .. } => None,
        }
    }
}

wraps_errors!(FixError { Notebook(NotebookError), Write(WriteError) });
