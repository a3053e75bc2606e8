//! Reading a file from disk into text the parser can use, and turning byte
//! offsets back into the 1-based, character-counted positions users see.

use crate::finding::Position;
use std::path::Path;

/// Files larger than this are skipped: no real Python module is this big, and
/// the scan must stay within a bounded amount of memory per file.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The text of one source file, without a leading UTF-8 byte-order mark.
pub struct SourceText {
    /// The file's text.
    pub text: String,
}

/// Why a file could not be read as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The operating system refused (permission, vanished file, ...).
    Io(String),
    /// The file contains NUL bytes: it is binary, not source code.
    Binary,
    /// The bytes are not valid UTF-8; `offset` is the first bad byte.
    NotUtf8 { offset: usize },
    /// The file exceeds [`MAX_FILE_BYTES`].
    TooLarge { bytes: u64 },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read the file: {e}"),
            ReadError::Binary => write!(f, "binary file (contains NUL bytes); skipped"),
            ReadError::NotUtf8 { offset } => write!(
                f,
                "not valid UTF-8 (first bad byte at offset {offset}); skipped: re-save the file as UTF-8 to have it scanned"
            ),
            ReadError::TooLarge { bytes } => write!(
                f,
                "file is {bytes} bytes, over the {} MiB limit; skipped",
                MAX_FILE_BYTES / (1024 * 1024)
            ),
        }
    }
}

/// Reads `path` as UTF-8 source text.
pub fn read_source(path: &Path) -> Result<SourceText, ReadError> {
    let meta = std::fs::metadata(path).map_err(|e| ReadError::Io(e.to_string()))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge { bytes: meta.len() });
    }
    let bytes = std::fs::read(path).map_err(|e| ReadError::Io(e.to_string()))?;
    decode(bytes)
}

/// Checks raw bytes and turns them into [`SourceText`].
pub fn decode(mut bytes: Vec<u8>) -> Result<SourceText, ReadError> {
    if bytes.contains(&0) {
        return Err(ReadError::Binary);
    }
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(SourceText { text }),
        Err(e) => Err(ReadError::NotUtf8 { offset: e.utf8_error().valid_up_to() }),
    }
}

/// Lines longer than this (minified or generated code) get no source excerpt:
/// every finding on such a line would otherwise carry a copy of it.
pub const MAX_EXCERPT_BYTES: usize = 1000;

/// Maps byte offsets of one text to 1-based line and character columns.
pub struct LineIndex {
    starts: Vec<usize>,
    /// Whether each line is pure ASCII (its columns are byte offsets).
    ascii: Vec<bool>,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        let ascii = (0..starts.len())
            .map(|i| {
                let end = starts.get(i + 1).copied().unwrap_or(text.len());
                text.as_bytes()[starts[i]..end].is_ascii()
            })
            .collect();
        LineIndex { starts, ascii }
    }

    /// The byte offset where 1-based line `line` starts.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).copied()
    }

    /// The 0-based line containing `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// The position of byte `offset` in `text`.
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let line = self.line_of(offset);
        let start = self.starts[line];
        // Counting characters is linear in the column: skip it where bytes are characters.
        let column = match self.ascii.get(line) {
            Some(true) => offset - start,
            _ => text.get(start..offset).map_or(offset - start, |s| s.chars().count()),
        };
        Position { line: line + 1, column: column + 1 }
    }

    /// The excerpt stored with a finding on 1-based line `line`: the line's
    /// text, or nothing when it is longer than [`MAX_EXCERPT_BYTES`].
    pub fn excerpt(&self, text: &str, line: usize) -> String {
        let full = self.line_text(text, line);
        if full.len() > MAX_EXCERPT_BYTES {
            String::new()
        } else {
            full.to_string()
        }
    }

    /// The text of 1-based line `line`, without its line break.
    pub fn line_text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let Some(&start) = self.starts.get(line.wrapping_sub(1)) else { return "" };
        let end = self.starts.get(line).map_or(text.len(), |e| *e);
        text.get(start..end).unwrap_or("").trim_end_matches(['\n', '\r'])
    }
}
