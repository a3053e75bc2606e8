//! `scan --stdin-filename PATH -`: the text of a file read from standard
//! input, for editors and formatters that pipe a buffer, reported as if it
//! were the file at PATH (which need not exist yet).

use crate::source::{decode, ReadError};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The path that stands for standard input among the paths to scan.
pub const DASH: &str = "-";

/// A buffer read from standard input and the file it stands for.
pub struct Buffer {
    /// The file it is reported as.
    pub path: PathBuf,
    /// Its text.
    pub text: Arc<str>,
}

/// Why standard input cannot be scanned.
#[derive(Debug)]
pub enum StdinError {
    /// `--stdin-filename` without `-` as the only path to scan.
    NoDash,
    /// `-` among the paths without `--stdin-filename`.
    Unnamed,
    /// Standard input could not be read.
    Read(std::io::Error),
    /// What was read is not source text.
    NotText {
        /// The path it stands for.
        path: PathBuf,
        /// Why not.
        reason: ReadError,
    },
}

impl std::fmt::Display for StdinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StdinError::NoDash => {
                write!(f, "--stdin-filename reads the file from standard input: give `-` as the only path to scan")
            }
            StdinError::Unnamed => write!(
                f,
                "`-` reads a file from standard input: name the file it stands for with --stdin-filename PATH"
            ),
            StdinError::Read(e) => write!(f, "cannot read standard input: {e}"),
            StdinError::NotText { path, reason } => write!(f, "{} (standard input): {reason}", path.display()),
        }
    }
}

impl std::error::Error for StdinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StdinError::Read(e) => Some(e),
            StdinError::NotText { reason, .. } => Some(reason),
            StdinError::NoDash | StdinError::Unnamed => None,
        }
    }
}

/// The buffer on standard input when `name` (`--stdin-filename`) is given,
/// checked against `paths`, the paths to scan; its bytes are read as the
/// file's would be (a byte-order mark, a PEP 263 encoding declaration).
pub fn buffer(name: Option<&Path>, paths: &[PathBuf]) -> Result<Option<Buffer>, StdinError> {
    let dash = paths.iter().any(|p| p.as_os_str() == DASH);
    let Some(path) = name else {
        return if dash { Err(StdinError::Unnamed) } else { Ok(None) };
    };
    if !dash || paths.len() != 1 {
        return Err(StdinError::NoDash);
    }
    let mut bytes = Vec::new();
    std::io::stdin().lock().read_to_end(&mut bytes).map_err(StdinError::Read)?;
    let kind = crate::walk::classify(path, &[]).unwrap_or(crate::walk::FileKind::Python);
    let source = decode(bytes, kind).map_err(|reason| StdinError::NotText { path: path.to_path_buf(), reason })?;
    Ok(Some(Buffer { path: path.to_path_buf(), text: source.text.into() }))
}
