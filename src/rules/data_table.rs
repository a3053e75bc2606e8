//! Data tables: the TSV files a pack declares with `[[data]]`, which
//! `lookup`, `nearest` and `options` read (see `data.rs`).

use super::error::DataError;
use super::model::Version;
use std::borrow::Cow;
use std::ops::Range;

/// A data table read from a pack's TSV file. Its cells are ranges into the
/// text, which a built-in pack borrows from the binary: loading allocates
/// nothing per cell, which matters for a one-file scan's start-up.
#[derive(Debug, Default)]
pub struct DataTable {
    text: Cow<'static, str>,
    /// Column headings.
    pub header: Vec<String>,
    /// The cells of every row, `header.len()` per row, in file order.
    cells: Vec<Range<usize>>,
    /// Row numbers ordered by their first cell, for lookups by key.
    by_key: Vec<usize>,
}

impl DataTable {
    /// Parses tab-separated text: `#` lines are comments, the first other line is the header.
    pub fn parse(text: Cow<'static, str>) -> Result<Self, DataError> {
        let mut header = Vec::new();
        let mut cells = Vec::new();
        let mut offset = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            let start = offset;
            offset += line.len();
            let line = line.strip_suffix('\n').map_or(line, |l| l.strip_suffix('\r').unwrap_or(l));
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let before = cells.len();
            let mut at = start;
            for cell in line.split('\t') {
                let trimmed = cell.trim_start();
                let from = at + cell.len() - trimmed.len();
                cells.push(from..from + trimmed.trim_end().len());
                at += cell.len() + 1;
            }
            if header.is_empty() {
                header = cells.drain(before..).map(|r| text[r].to_string()).collect();
                continue;
            }
            if cells.len() - before != header.len() {
                return Err(DataError::Cells { line: i + 1, cells: cells.len() - before, header: header.len() });
            }
        }
        let mut table = DataTable { text, header, cells, by_key: Vec::new() };
        let mut by_key: Vec<usize> = (0..table.len()).collect();
        // Stable, so that of two rows with one key the later stays last (and is found).
        by_key.sort_by(|a, b| table.cell(*a, 0).cmp(table.cell(*b, 0)));
        table.by_key = by_key;
        Ok(table)
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.header.len()).unwrap_or(0)
    }

    /// Whether the table has no row.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The cell of row `row` in column `column`.
    pub fn cell(&self, row: usize, column: usize) -> &str {
        &self.text[self.cells[row * self.header.len() + column].clone()]
    }

    /// The row whose first cell is `key` (the last such row).
    pub fn row(&self, key: &str) -> Option<usize> {
        let after = self.by_key.partition_point(|r| self.cell(*r, 0) <= key);
        after.checked_sub(1).map(|i| self.by_key[i]).filter(|r| self.cell(*r, 0) == key)
    }

    /// Every row's first cell, in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|r| self.cell(r, 0))
    }

    /// Index of the column for `spec`: a header name, or `@target` (the header
    /// starting with the target version followed by a dot).
    pub fn column(&self, spec: &str, target: Version) -> Option<usize> {
        if spec == "@target" {
            let prefix = format!("{}.{}", target.0, target.1);
            return self.header.iter().position(|h| h == &prefix || h.starts_with(&format!("{prefix}.")));
        }
        self.header.iter().position(|h| h == spec)
    }

    /// Columns whose header is a version (starts with a digit).
    pub fn version_columns(&self) -> Vec<usize> {
        (1..self.header.len()).filter(|i| self.header[*i].starts_with(|c: char| c.is_ascii_digit())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::DataTable;
    use crate::rules::error::DataError;

    #[test]
    fn a_table_reads_header_rows_and_cells_trimmed() {
        let text = "# a comment\r\nname\t2.1\t2.6\r\n\n zeros \tyes\t-\nones\tno\tyes\n";
        let table = DataTable::parse(text.into()).expect("a valid table");
        assert_eq!(table.header, ["name", "2.1", "2.6"]);
        assert_eq!(table.len(), 2);
        assert_eq!(table.keys().collect::<Vec<_>>(), ["zeros", "ones"], "file order");
        let zeros = table.row("zeros").expect("found by its trimmed key");
        assert_eq!((table.cell(zeros, 1), table.cell(zeros, 2)), ("yes", "-"));
        assert_eq!(table.cell(table.row("ones").expect("found"), 2), "yes");
        assert_eq!(table.row("twos"), None);
        assert_eq!(table.row(""), None);
    }

    #[test]
    fn of_two_rows_with_one_key_the_later_is_found() {
        let table = DataTable::parse("k\tv\na\t1\nb\t2\na\t3\n".into()).expect("a valid table");
        assert_eq!(table.cell(table.row("a").expect("found"), 1), "3");
        assert_eq!(table.keys().collect::<Vec<_>>(), ["a", "b", "a"]);
    }

    #[test]
    fn a_row_with_the_wrong_number_of_cells_is_refused_with_its_line() {
        let error = DataTable::parse("# c\nk\tv\na\t1\nb\n".into()).expect_err("row b has one cell");
        assert!(matches!(error, DataError::Cells { line: 4, cells: 1, header: 2 }), "{error:?}");
        assert!(DataTable::parse("".into()).expect("empty is a table").is_empty());
    }
}
