//! Positions in a document: LSP's (line, character), with characters
//! counted in the units client and server agreed on (UTF-16 code units
//! unless both take UTF-8), and the byte offsets and 1-based character
//! columns the analysis gives. Lines end at `\n`, `\r\n` or a lone `\r`, in
//! LSP as in Python.

use super::analysis::line_ends;
use lsp_types::{Position, PositionEncodingKind};

/// How LSP counts the characters of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Units {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units: the protocol's default, which every client takes.
    Utf16,
}

impl Units {
    /// The units to use, of those the client offers (`general.positionEncodings`):
    /// UTF-8 when offered (no conversion at all), else UTF-16, which every client supports.
    pub(super) fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Units {
        let offers = |kind: &PositionEncodingKind| offered.is_some_and(|o| o.contains(kind));
        if offers(&PositionEncodingKind::UTF8) {
            Units::Utf8
        } else {
            Units::Utf16
        }
    }

    /// The name the protocol gives these units.
    pub(super) fn kind(self) -> PositionEncodingKind {
        match self {
            Units::Utf8 => PositionEncodingKind::UTF8,
            Units::Utf16 => PositionEncodingKind::UTF16,
        }
    }

    /// How many units `c` takes.
    fn width(self, c: char) -> usize {
        match self {
            Units::Utf8 => c.len_utf8(),
            Units::Utf16 => c.len_utf16(),
        }
    }
}

/// Where the lines of one text start.
#[derive(Debug, Clone)]
pub(super) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    /// Indexes the lines of `text`.
    pub(super) fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(line_ends(text.as_bytes()).map(|i| i + 1));
        Lines { starts }
    }

    /// How many lines the text has (a text ending in a line break has an empty last one).
    pub(super) fn count(&self) -> usize {
        self.starts.len()
    }

    /// The byte range of 0-based line `line`, without its line break
    /// (an empty range at the end of the text past the last line).
    fn content(&self, text: &str, line: usize) -> (usize, usize) {
        let Some(&start) = self.starts.get(line) else { return (text.len(), text.len()) };
        let end = self.starts.get(line + 1).copied().unwrap_or(text.len());
        let body = text.get(start..end).unwrap_or("").trim_end_matches(['\n', '\r']);
        (start, start + body.len())
    }

    /// The byte offset of `position`; a character past the end of its line
    /// is the line's end, and a line past the last is the end of the text
    /// (the protocol asks servers to clamp so).
    pub(super) fn offset(&self, text: &str, position: Position, units: Units) -> usize {
        let (start, end) = self.content(text, position.line as usize);
        let mut counted = 0;
        let wanted = position.character as usize;
        for (i, c) in text[start..end].char_indices() {
            if counted >= wanted {
                return start + i;
            }
            counted += units.width(c);
            // A position inside a character (half of a surrogate pair) is taken as the character's end.
        }
        end
    }

    /// The LSP position of byte `offset` (moved back to a character boundary).
    pub(super) fn position(&self, text: &str, offset: usize, units: Units) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let (start, end) = self.content(text, line);
        let character: usize = text[start..offset.clamp(start, end)].chars().map(|c| units.width(c)).sum();
        Position { line: to_u32(line), character: to_u32(character) }
    }

    /// The LSP position of 1-based `line`, 1-based character `column` (the
    /// analysis's positions); a column past the line's end is its end.
    pub(super) fn at_column(&self, text: &str, line: usize, column: usize, units: Units) -> Position {
        let (start, end) = self.content(text, line.saturating_sub(1));
        let within = text[start..end].char_indices().nth(column.saturating_sub(1)).map_or(end, |(i, _)| start + i);
        self.position(text, within, units)
    }

    /// The tree-sitter point of byte `offset`: 0-based row, byte column.
    pub(super) fn point(&self, offset: usize) -> tree_sitter::Point {
        let row = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        tree_sitter::Point { row, column: offset - self.starts[row] }
    }
}

/// `n` as the protocol's unsigned integer (no real text has 4 billion lines).
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn characters_count_in_the_agreed_units() {
        // é is 2 bytes, 1 UTF-16 unit; 𝕏 is 4 bytes, 2 UTF-16 units.
        let text = "a = 'é𝕏'.cuda()\r\nb\rc\n";
        let lines = Lines::new(text);
        assert_eq!(lines.count(), 4);
        let dot = text.find(".cuda").unwrap();
        // `a = '` is 5 bytes, then é, 𝕏 and `'`.
        assert_eq!(lines.position(text, dot, Units::Utf8), pos(0, 5 + 2 + 4 + 1));
        assert_eq!(lines.position(text, dot, Units::Utf16), pos(0, 5 + 1 + 2 + 1));
        for units in [Units::Utf8, Units::Utf16] {
            assert_eq!(lines.offset(text, lines.position(text, dot, units), units), dot, "{units:?}");
        }
        // The analysis counts characters from 1: `.cuda` is the 9th character, at column 9.
        assert_eq!(lines.at_column(text, 1, 9, Units::Utf16), pos(0, 9));
        // A lone CR ends a line: `c` is on line 2.
        assert_eq!(lines.position(text, text.rfind('c').unwrap(), Units::Utf16), pos(2, 0));
    }

    #[test]
    fn positions_outside_the_text_are_clamped() {
        let text = "ab\ncd";
        let lines = Lines::new(text);
        assert_eq!(lines.offset(text, pos(0, 99), Units::Utf16), 2, "past the line's end: its end");
        assert_eq!(lines.offset(text, pos(9, 0), Units::Utf16), text.len(), "past the last line: the end");
        assert_eq!(lines.at_column(text, 2, 99, Units::Utf16), pos(1, 2));
        // Half of a surrogate pair is the character's end.
        let text = "𝕏x";
        assert_eq!(Lines::new(text).offset(text, pos(0, 1), Units::Utf16), 4);
        assert_eq!(Lines::new(text).position(text, 2, Units::Utf16), pos(0, 0), "inside a character: its start");
    }

    #[test]
    fn utf8_is_chosen_only_when_offered() {
        assert_eq!(Units::negotiate(None), Units::Utf16);
        assert_eq!(Units::negotiate(Some(&[PositionEncodingKind::UTF32])), Units::Utf16);
        assert_eq!(Units::negotiate(Some(&[PositionEncodingKind::UTF16, PositionEncodingKind::UTF8])), Units::Utf8);
    }
}
