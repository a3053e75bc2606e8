//! The documents the client has open: their text as the client sent it,
//! kept in step with each change, and for Python the syntax tree of the
//! last analysis with every change since recorded on it (`Tree::edit`), so
//! that the next parse reuses what the change did not touch.

use super::positions::{Lines, Units};
use lsp_types::TextDocumentContentChangeEvent;
use std::path::PathBuf;
use std::sync::Arc;
use tree_sitter::{InputEdit, Point, Tree};

/// One open document.
pub(super) struct Document {
    /// The file it is (it need not exist on disk).
    pub path: PathBuf,
    /// The version the client gave its content.
    pub version: i32,
    /// The content.
    pub text: Arc<str>,
    /// Where its lines start.
    pub lines: Lines,
    /// The syntax tree of the last analysis, with the changes since then
    /// recorded on it; `None` when there is none to reuse.
    pub tree: Option<Tree>,
    /// The version its project's analysis has (`None`: not analysed yet).
    pub analysed: Option<i32>,
    /// The version its project's reports are of: its diagnostics are
    /// published only when that is its version, never at the places of an
    /// older text.
    pub reported: Option<i32>,
}

impl Document {
    /// A document opened with `text`.
    pub(super) fn new(path: PathBuf, version: i32, text: String) -> Document {
        let lines = Lines::new(&text);
        Document { path, version, text: text.into(), lines, tree: None, analysed: None, reported: None }
    }

    /// Applies the client's changes (in order) and takes the new version.
    pub(super) fn change(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>, units: Units) {
        let mut text = self.text.to_string();
        for change in changes {
            match change.range {
                Some(range) => {
                    let start = self.lines.offset(&text, range.start, units);
                    let end = self.lines.offset(&text, range.end, units).max(start);
                    self.record(&text, start, end, &change.text);
                    text.replace_range(start..end, &change.text);
                }
                None => {
                    self.tree = None;
                    text = change.text;
                }
            }
            self.lines = Lines::new(&text);
        }
        self.text = text.into();
        self.version = version;
    }

    /// Records on the tree that bytes `start..end` of `text` become `new`.
    /// Rows count lines as Python does, so an edit that could join or split
    /// a `\r\n` (a carriage return at either side) drops the tree instead:
    /// the next parse starts afresh.
    fn record(&mut self, text: &str, start: usize, end: usize, new: &str) {
        let Some(tree) = &mut self.tree else { return };
        if new.contains('\r') || text[..start].ends_with('\r') {
            self.tree = None;
            return;
        }
        let start_position = self.lines.point(start);
        let new_lines = Lines::new(new);
        let last = new_lines.count() - 1;
        let tail = new_lines.point(new.len());
        let new_end_position = match last {
            0 => Point { row: start_position.row, column: start_position.column + new.len() },
            rows => Point { row: start_position.row + rows, column: tail.column },
        };
        tree.edit(&InputEdit {
            start_byte: start,
            old_end_byte: end,
            new_end_byte: start + new.len(),
            start_position,
            old_end_position: self.lines.point(end),
            new_end_position,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn change(line: u32, from: u32, to: u32, text: &str) -> TextDocumentContentChangeEvent {
        let range = Range { start: Position { line, character: from }, end: Position { line, character: to } };
        TextDocumentContentChangeEvent { range: Some(range), range_length: None, text: text.into() }
    }

    #[test]
    fn changes_apply_in_order_and_the_tree_reparses_to_a_fresh_parse() {
        let text = "import torch\nx = 'é'\ny = torch.zeros(2).cuda()\n";
        let mut doc = Document::new(PathBuf::from("t.py"), 1, text.into());
        doc.tree = crate::parse::parse_python(text);
        let edits = vec![change(2, 19, 23, "npu"), change(1, 5, 6, "ü𝕏"), change(0, 12, 12, "\nimport torch_npu")];
        doc.change(2, edits, Units::Utf16);
        let want = "import torch\nimport torch_npu\nx = 'ü𝕏'\ny = torch.zeros(2).npu()\n";
        assert_eq!(&*doc.text, want);
        assert_eq!(doc.version, 2);
        let edited = doc.tree.as_ref().expect("no carriage return was touched: the tree is kept");
        let reparsed = crate::parse::parse_python_edited(&doc.text, Some(edited)).unwrap();
        let fresh = crate::parse::parse_python(want).unwrap();
        assert_eq!(reparsed.root_node().to_sexp(), fresh.root_node().to_sexp());
        // A whole new text leaves no tree to reuse.
        let whole = TextDocumentContentChangeEvent { range: None, range_length: None, text: "y = 1\n".into() };
        doc.change(3, vec![whole], Units::Utf16);
        assert!(doc.tree.is_none());
    }

    #[test]
    fn an_edit_next_to_a_carriage_return_drops_the_tree() {
        let text = "a = 1\r\nb = 2\r\n";
        let mut doc = Document::new(PathBuf::from("t.py"), 1, text.into());
        doc.tree = crate::parse::parse_python(text);
        doc.change(2, vec![change(0, 5, 5, "\r")], Units::Utf16);
        assert!(doc.tree.is_none());
        assert_eq!(&*doc.text, "a = 1\r\r\nb = 2\r\n");
    }
}
