//! Reading a file from disk into text the parser can use, and turning byte
//! offsets back into the 1-based, character-counted positions users see.

use crate::encoding::{DecodeError, Encoding};
use crate::finding::Position;
use crate::walk::{FileKind, ScanFile};
use std::path::Path;

/// Files larger than this are skipped: no real Python module is this big, and
/// the scan must stay within a bounded amount of memory per file.
pub(crate) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The text of one source file, without a leading UTF-8 byte-order mark.
pub(crate) struct SourceText {
    /// The file's text.
    pub text: String,
    /// How its bytes became the text (a fix writes them back the same way).
    pub encoding: Encoding,
}

/// Why a file could not be read as text.
#[derive(Debug)]
pub enum ReadError {
    /// The operating system refused (permission, vanished file, ...).
    Io(std::io::Error),
    /// The file contains NUL bytes: it is binary, not source code.
    Binary,
    /// The bytes are not text in any encoding the file may be in.
    Undecodable(DecodeError),
    /// The file exceeds [`MAX_FILE_BYTES`].
    TooLarge { bytes: u64 },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read the file: {e}"),
            ReadError::Binary => write!(f, "binary file (contains NUL bytes); skipped"),
            ReadError::Undecodable(e) => e.fmt(f),
            ReadError::TooLarge { bytes } => {
                write!(f, "file is {bytes} bytes, over the {} MiB limit; skipped", MAX_FILE_BYTES / (1024 * 1024))
            }
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            ReadError::Binary | ReadError::Undecodable(_) | ReadError::TooLarge { .. } => None,
        }
    }
}

/// Reads `path`, a file of `kind`, as source text (see [`crate::encoding`]
/// for the encodings each kind may be in).
pub(crate) fn read_source(path: &Path, kind: FileKind) -> Result<SourceText, ReadError> {
    let meta = std::fs::metadata(path).map_err(ReadError::Io)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge { bytes: meta.len() });
    }
    let bytes = std::fs::read(path).map_err(ReadError::Io)?;
    decode(bytes, kind)
}

/// Reads `file` as source text: the text that stands for it (an editor's
/// buffer, standard input) if it has one, else the file on disk.
pub(crate) fn read_file(file: &ScanFile) -> Result<SourceText, ReadError> {
    match file.text() {
        Some(text) => from_text(text),
        None => read_source(&file.path(), file.kind),
    }
}

/// Reads `file` as [`read_file`] does, with the bytes its text was read
/// from (what a fix must find unchanged, and writes back in the same encoding).
pub(crate) fn read_file_bytes(file: &ScanFile) -> Result<(Vec<u8>, SourceText), ReadError> {
    match file.text() {
        Some(text) => Ok((text.as_bytes().to_vec(), from_text(text)?)),
        None => {
            let bytes = std::fs::read(file.path()).map_err(ReadError::Io)?;
            Ok((bytes.clone(), decode(bytes, file.kind)?))
        }
    }
}

/// Text that is already text (an editor decoded it) checked as a file's
/// bytes are: within the size limit, and not binary.
fn from_text(text: &str) -> Result<SourceText, ReadError> {
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge { bytes: text.len() as u64 });
    }
    if text.contains('\0') {
        return Err(ReadError::Binary);
    }
    Ok(SourceText { text: text.to_string(), encoding: Encoding::Utf8 { bom: false } })
}

impl SourceText {
    /// Whether writing the text back in its encoding gives exactly
    /// `original`, the bytes it was read from: only then may an edit of the
    /// text be written without touching the rest of the file (GB18030 reads
    /// a lone `0x80` as `€` but writes `€` as two bytes).
    pub(crate) fn gives_back(&self, original: &[u8]) -> bool {
        self.encoding.encode(&self.text).as_deref() == Some(original)
    }
}

/// Checks the raw bytes of a file of `kind` and turns them into [`SourceText`].
pub(crate) fn decode(bytes: Vec<u8>, kind: FileKind) -> Result<SourceText, ReadError> {
    if bytes.contains(&0) {
        return Err(ReadError::Binary);
    }
    let (text, encoding) = crate::encoding::decode(bytes, kind).map_err(ReadError::Undecodable)?;
    Ok(SourceText { text, encoding })
}

/// Lines longer than this (minified or generated code) get no source excerpt:
/// every finding on such a line would otherwise carry a copy of it.
pub(crate) const MAX_EXCERPT_BYTES: usize = 1000;

/// Bytes per block of [`LineIndex`]'s character counts.
const CHAR_BLOCK: usize = 256;

/// Maps byte offsets of one text to 1-based line and character columns.
pub struct LineIndex {
    starts: Vec<usize>,
    /// Whether each line is pure ASCII (its columns are byte offsets).
    ascii: Vec<bool>,
    /// When some line is not ASCII: the characters before each
    /// [`CHAR_BLOCK`]-byte block, so a column costs at most two blocks of
    /// counting, not the length of its line for every finding on it.
    chars_before_block: Vec<usize>,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(line_ends(text.as_bytes()).map(|i| i + 1));
        let ascii: Vec<bool> = (0..starts.len())
            .map(|i| {
                let end = starts.get(i + 1).copied().unwrap_or(text.len());
                text.as_bytes()[starts[i]..end].is_ascii()
            })
            .collect();
        let chars_before_block = if ascii.iter().all(|a| *a) {
            Vec::new()
        } else {
            // One count per block, and the total: the end of the text is a position too.
            let mut counts = Vec::with_capacity(text.len() / CHAR_BLOCK + 2);
            let mut total = 0;
            for block in text.as_bytes().chunks(CHAR_BLOCK) {
                counts.push(total);
                total += char_starts(block);
            }
            counts.push(total);
            counts
        };
        LineIndex { starts, ascii, chars_before_block }
    }

    /// The byte ranges whose characters are counted for the characters from
    /// `start` to `offset`: the blocks' counts do the rest, so each range is
    /// shorter than a block however far apart the two are.
    fn counted(&self, start: usize, offset: usize) -> [std::ops::Range<usize>; 2] {
        let block_start = |at: usize| at - at % CHAR_BLOCK;
        [block_start(offset)..offset, block_start(start)..start]
    }

    /// Characters from byte `start` to byte `offset` of `text` (bytes where a
    /// character is cut), `None` when the index does not cover them.
    fn chars_between(&self, text: &str, start: usize, offset: usize) -> Option<usize> {
        let [to_offset, to_start] = self.counted(start, offset);
        let count = |r: std::ops::Range<usize>| {
            let block = *self.chars_before_block.get(r.start / CHAR_BLOCK)?;
            Some(block + char_starts(text.as_bytes().get(r)?))
        };
        Some(count(to_offset)?.saturating_sub(count(to_start)?))
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
        // Where bytes are characters there is nothing to count.
        let column = match self.ascii.get(line) {
            Some(true) => offset - start,
            _ => self.chars_between(text, start, offset).unwrap_or(offset - start),
        };
        Position { line: line + 1, column: column + 1 }
    }

    /// The byte offset of `position` in `text`, `None` past the end of its line.
    pub fn offset(&self, text: &str, position: Position) -> Option<usize> {
        let start = self.line_start(position.line)?;
        let line = self.line_text(text, position.line);
        let column = position.column.checked_sub(1)?;
        let within = match self.ascii.get(position.line - 1) {
            Some(true) => Some(column).filter(|c| *c <= line.len()),
            _ => line.char_indices().map(|(i, _)| i).chain([line.len()]).nth(column),
        };
        Some(start + within?)
    }

    /// The excerpt stored with a finding on 1-based line `line`: the line's
    /// text, or nothing when it is longer than [`MAX_EXCERPT_BYTES`].
    pub fn excerpt(&self, text: &str, line: usize) -> String {
        excerpt_of(self.line_text(text, line))
    }

    /// The text of 1-based line `line`, without its line break.
    pub fn line_text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let Some(&start) = self.starts.get(line.wrapping_sub(1)) else { return "" };
        let end = self.starts.get(line).map_or(text.len(), |e| *e);
        text.get(start..end).unwrap_or("").trim_end_matches(['\n', '\r'])
    }
}

/// A set of 1-based line numbers (a file's findings), asked whether any
/// lies within a range of lines. Sorted once, so that asking for each node
/// of a large file costs a binary search, not a pass over every finding.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineSet(Vec<usize>);

impl LineSet {
    /// The set of `lines`, in any order.
    pub(crate) fn new(lines: impl IntoIterator<Item = usize>) -> Self {
        let mut lines: Vec<usize> = lines.into_iter().collect();
        lines.sort_unstable();
        lines.dedup();
        LineSet(lines)
    }

    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether some line of the set lies in `first..=last`.
    pub(crate) fn any_within(&self, first: usize, last: usize) -> bool {
        let at = self.0.partition_point(|&l| l < first);
        self.0.get(at).is_some_and(|&l| l <= last)
    }
}

/// The excerpt stored with a finding on `line` (its text): the text, or
/// nothing when it is longer than [`MAX_EXCERPT_BYTES`]. Findings are kept
/// until the report, so a long line must not be copied into each of them.
pub(crate) fn excerpt_of(line: &str) -> String {
    if line.len() > MAX_EXCERPT_BYTES {
        String::new()
    } else {
        line.to_string()
    }
}

/// The offsets of the bytes that end lines as Python reads them: `\n`, and
/// a `\r` that no `\n` follows (files saved with classic Mac OS line ends,
/// which Python reads as line breaks: Ascend ModelZoo holds hundreds).
pub(crate) fn line_ends(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let ends = |(i, b): (usize, &u8)| *b == b'\n' || (*b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
    bytes.iter().enumerate().filter(move |&(i, b)| ends((i, b))).map(|(i, _)| i)
}

/// Whether `text` has a line end that only Python sees: a lone `\r`.
pub(crate) fn has_lone_cr(text: &str) -> bool {
    let bytes = text.as_bytes();
    // `contains` on bytes is a memchr: the common case costs one fast pass.
    bytes.contains(&b'\r') && line_ends(bytes).any(|i| bytes[i] == b'\r')
}

/// `text` with each lone `\r` read as `\n`, as Python reads it: the same
/// length, so byte offsets into it are offsets into `text`. Borrowed when
/// there is none (almost always).
pub(crate) fn python_line_ends(text: &str) -> std::borrow::Cow<'_, str> {
    if !has_lone_cr(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    for i in line_ends(text.as_bytes()) {
        bytes[i] = b'\n';
    }
    // Only ASCII bytes changed, so the text is still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| text.to_string()))
}

/// The lines of `text` as Python reads them, each with its line end (`\n`,
/// `\r\n` or a lone `\r`), as `str::split_inclusive('\n')` gives them for
/// files without lone CRs.
pub(crate) fn python_lines_with_ends(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut ends = line_ends(text.as_bytes());
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = ends.next().map_or(text.len(), |e| e + 1);
        let line = &text[start..end];
        start = end;
        Some(line)
    })
}

/// Where the line holding byte `at` of `text` starts, lines ended as
/// Python ends them (a lone `\r` too).
pub(crate) fn line_start_at(text: &str, at: usize) -> usize {
    text[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1)
}

/// Where the line holding byte `at` of `text` ends: its `\n` or lone `\r`
/// (the `\r` of a `\r\n` stays in the line), or the end of the text.
pub(crate) fn line_end_at(text: &str, at: usize) -> usize {
    line_ends(&text.as_bytes()[at..]).next().map_or(text.len(), |i| at + i)
}

/// The lines of `text` as Python reads them, without their line ends; like
/// `str::lines`, no empty line after a final line end.
pub(crate) fn python_lines(text: &str) -> impl Iterator<Item = &str> {
    python_lines_with_ends(text).map(|line| {
        let line = line.strip_suffix('\n').unwrap_or(line);
        line.strip_suffix('\r').unwrap_or(line)
    })
}

/// How many characters start in `bytes` (UTF-8 continuation bytes do not).
fn char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| (**b as i8) >= -0x40).count()
}

#[cfg(test)]
mod tests {
    use super::{LineIndex, LineSet, CHAR_BLOCK};

    #[test]
    fn a_lone_carriage_return_ends_a_line_as_in_python() {
        let text = "a\rb\r\nc\nd\r";
        let lines: Vec<&str> = super::python_lines(text).collect();
        assert_eq!(lines, ["a", "b", "c", "d"]);
        assert_eq!(super::python_lines("a\n\nb").collect::<Vec<_>>(), "a\n\nb".lines().collect::<Vec<_>>());
        assert_eq!(super::python_line_ends(text), "a\nb\r\nc\nd\n");
        assert!(super::has_lone_cr(text));
        assert!(!super::has_lone_cr("a\r\nb\n"));
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 2).line, 2, "b is on line 2");
        assert_eq!(index.position(text, 5).line, 3, "c is on line 3");
        assert_eq!(index.line_text(text, 2), "b");
        let with_ends: Vec<&str> = super::python_lines_with_ends(text).collect();
        assert_eq!(with_ends, ["a\r", "b\r\n", "c\n", "d\r"]);
        assert_eq!(
            super::python_lines_with_ends("x\ny").collect::<Vec<_>>(),
            "x\ny".split_inclusive('\n').collect::<Vec<_>>()
        );
        assert_eq!((super::line_start_at(text, 2), super::line_end_at(text, 2)), (2, 4), "b's line holds its CR");
        assert_eq!((super::line_start_at(text, 0), super::line_end_at(text, 0)), (0, 1));
    }

    #[test]
    fn offset_inverts_position() {
        let text = "import torch\nx = 'é' + 'cuda'\n\ny\n";
        let index = LineIndex::new(text);
        for offset in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
            assert_eq!(index.offset(text, index.position(text, offset)), Some(offset), "byte {offset}");
        }
        let past = super::Position { line: 1, column: 14 };
        assert_eq!(index.offset(text, past), None, "past the end of its line");
    }

    #[test]
    fn columns_count_characters_on_long_non_ascii_lines() {
        // Ends on a block boundary: the end of the text has a position too.
        let text = format!("é\n{}{}", "ü".repeat(3 * CHAR_BLOCK), "a".repeat(CHAR_BLOCK - 3));
        assert_eq!(text.len() % CHAR_BLOCK, 0);
        let lines = LineIndex::new(&text);
        for offset in text.char_indices().map(|(i, _)| i).chain([text.len()]) {
            let line_start = if offset < 3 { 0 } else { 3 };
            let want = text[line_start..offset].chars().count() + 1;
            assert_eq!(lines.position(&text, offset).column, want, "at byte {offset}");
        }
    }

    #[test]
    fn a_column_counts_at_most_two_blocks_whatever_the_line_length() {
        let lines = LineIndex::new("é");
        for (start, offset) in [(0, 10_000_000), (3, 5 * CHAR_BLOCK - 1), (CHAR_BLOCK + 1, 1 << 40)] {
            let counted: usize = lines.counted(start, offset).iter().map(|r| r.len()).sum();
            assert!(counted < 2 * CHAR_BLOCK, "{start}..{offset}: {counted} bytes counted");
        }
    }

    #[test]
    fn a_line_set_answers_for_ranges() {
        let set = LineSet::new([9, 3, 3, 20]);
        assert!(set.any_within(3, 3) && set.any_within(4, 9) && set.any_within(10, 25));
        assert!(!set.any_within(4, 8) && !set.any_within(21, 30) && !set.any_within(1, 2));
        assert!(LineSet::new([]).is_empty() && !LineSet::new([]).any_within(1, 100));
    }
}
