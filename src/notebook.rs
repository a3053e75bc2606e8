//! Jupyter notebooks (`.ipynb`, nbformat 4): the code cells joined into one
//! Python text for analysis, positions mapped back to cells, and edited cell
//! sources spliced back into the notebook's JSON without touching anything else.
//!
//! IPython syntax (`%magic`, `%%cell magic`, `!shell`, `x = !cmd`, `obj?`) is
//! blanked to comments or `0` of the same byte length, so every offset in the
//! joined text is also an offset in the cell's real source.

use crate::source::LineIndex;

/// Cell magics whose body is still Python.
const PYTHON_CELL_MAGICS: &[&str] = &["time", "timeit", "capture", "prun", "debug", "python", "python3"];

/// A notebook that could not be read, or not edited as the fixes asked.
#[derive(Debug)]
pub enum NotebookError {
    /// The file is not JSON.
    BadJson(serde_json::Error),
    /// It is an nbformat 3 notebook, which keeps its cells elsewhere.
    Nbformat3,
    /// It has no `cells` list.
    NoCells,
    /// The cells' sources could not be found in the JSON text.
    Unlocatable,
    /// A cell has no `source`.
    NoSource {
        /// The cell's number, from 1.
        cell: usize,
    },
    /// A fix falls outside every code cell.
    FixOutsideCells,
    /// A fix reaches past the end of its cell.
    FixAcrossCells {
        /// The cell's number, from 1.
        cell: usize,
    },
    /// An edited cell's source could not be found in the file.
    SourceNotFound {
        /// The cell's number, from 1.
        cell: usize,
    },
}

impl std::fmt::Display for NotebookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotebookError::BadJson(e) => write!(f, "not a valid notebook (bad JSON: {e})"),
            NotebookError::Nbformat3 => write!(
                f,
                "nbformat 3 notebook; convert it with `jupyter nbconvert --to notebook --nbformat 4` to have it scanned"
            ),
            NotebookError::NoCells => write!(f, "not a valid notebook (no `cells` list)"),
            NotebookError::Unlocatable => write!(f, "not a valid notebook (cannot locate the cell sources)"),
            NotebookError::NoSource { cell } => write!(f, "not a valid notebook (cell {cell} has no source)"),
            NotebookError::FixOutsideCells => {
                write!(f, "a fix falls outside every code cell; the notebook was left alone (apply it by hand)")
            }
            NotebookError::FixAcrossCells { cell } => {
                write!(f, "a fix spans more than cell {cell}; the notebook was left alone (apply it by hand)")
            }
            NotebookError::SourceNotFound { cell } => write!(
                f,
                "cannot locate the source of cell {cell} in the file; the notebook was left alone (apply the fix by \
                 hand)"
            ),
        }
    }
}

impl std::error::Error for NotebookError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NotebookError::BadJson(e) => Some(e),
            _ => None,
        }
    }
}

/// One code cell.
#[derive(Debug, Clone)]
pub struct CodeCell {
    /// 1-based position among all cells (markdown included), as Jupyter shows it.
    pub number: usize,
    /// The cell's source.
    pub source: String,
    /// Byte range of the `"source"` value in the notebook's JSON.
    value_span: (usize, usize),
    /// Byte ranges of the JSON strings making up the source (one per line as nbformat writes it).
    pieces: Vec<(usize, usize)>,
    /// Where the cell starts in [`Notebook::python`].
    python_start: usize,
}

/// A parsed notebook.
#[derive(Debug, Clone)]
pub struct Notebook {
    raw: String,
    /// The code cells, in order.
    pub cells: Vec<CodeCell>,
    /// The code cells joined, IPython syntax blanked, each ending in a newline.
    pub python: String,
}

/// Maps cell positions to positions in the notebook file. What that needs
/// (the file's line starts, the escaped width of long source lines) is
/// computed once per notebook, not per finding: a fuzzed notebook with one
/// 950 KB line and thousands of findings took 74 s when it was.
pub struct Locator<'n> {
    nb: &'n Notebook,
    raw_lines: LineIndex,
    /// Per (cell, source piece): the escaped width of each
    /// character prefix, or `None` for a piece without a backslash.
    escaped: std::collections::HashMap<(usize, usize), Option<Vec<u32>>>,
}

impl Locator<'_> {
    /// The line and column in the notebook file of a position in a cell
    /// (1-based line of the cell, 1-based character column).
    pub fn file_position(&mut self, cell_number: usize, line: usize, column: usize) -> Option<(usize, usize)> {
        let (index, cell) = self.nb.cells.iter().enumerate().find(|(_, c)| c.number == cell_number)?;
        let piece_index = (line.max(1) - 1).min(cell.pieces.len().checked_sub(1)?);
        let piece = cell.pieces[piece_index];
        let start = self.raw_lines.position(&self.nb.raw, piece.0);
        let contents = &self.nb.raw[piece.0 + 1..piece.1];
        let before = column.max(1) - 1;
        // Characters before the column, counted in the JSON string's escaped form.
        // Worked out once per piece: a minified notebook holds a cell in one huge piece.
        let prefix = self.escaped.entry((index, piece_index)).or_insert_with(|| {
            contents.contains('\\').then(|| {
                let mut sum = 0u32;
                std::iter::once(0)
                    .chain(json_spans::escaped_widths(contents).map(|w| {
                        sum += w as u32;
                        sum
                    }))
                    .collect()
            })
        });
        let escaped = match prefix {
            Some(prefix) => prefix.get(before).or(prefix.last()).map_or(0, |w| *w as usize),
            None => before.min(contents.len()),
        };
        Some((start.line, start.column + 1 + escaped))
    }
}

impl Notebook {
    /// Parses notebook JSON.
    pub fn parse(raw: &str) -> Result<Notebook, NotebookError> {
        let value: serde_json::Value = serde_json::from_str(raw).map_err(NotebookError::BadJson)?;
        let major = value.get("nbformat").and_then(|v| v.as_u64());
        if value.get("worksheets").is_some() || major.is_some_and(|m| m < 4) {
            return Err(NotebookError::Nbformat3);
        }
        let cells = value.get("cells").and_then(|c| c.as_array()).ok_or(NotebookError::NoCells)?;
        let spans = json_spans::source_spans(raw).ok_or(NotebookError::Unlocatable)?;
        let mut out = Notebook { raw: raw.to_string(), cells: Vec::new(), python: String::new() };
        for (i, cell) in cells.iter().enumerate() {
            if cell.get("cell_type").and_then(|t| t.as_str()) != Some("code") {
                continue;
            }
            let source = match cell.get("source") {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Array(parts)) => parts.iter().filter_map(|p| p.as_str()).collect(),
                _ => return Err(NotebookError::NoSource { cell: i + 1 }),
            };
            let (value_span, pieces) = spans.get(i).cloned().flatten().unwrap_or(((0, 0), Vec::new()));
            let python_start = out.python.len();
            out.python.push_str(&blank_ipython(&source));
            if !out.python.ends_with('\n') {
                out.python.push('\n');
            }
            out.cells.push(CodeCell { number: i + 1, source, value_span, pieces, python_start });
        }
        Ok(out)
    }

    /// The cell holding byte `offset` of [`Notebook::python`].
    pub fn cell_at(&self, offset: usize) -> Option<&CodeCell> {
        let i = self.cells.partition_point(|c| c.python_start <= offset);
        self.cells.get(i.checked_sub(1)?)
    }

    /// `(cell number, line in the cell)` of 1-based `line` of [`Notebook::python`].
    pub fn cell_line(&self, python_lines: &LineIndex, line: usize) -> Option<(usize, usize)> {
        let offset = python_lines.line_start(line)?;
        let cell = self.cell_at(offset)?;
        let first = python_lines.line_of(cell.python_start) + 1;
        Some((cell.number, line + 1 - first))
    }

    /// A locator of positions in the notebook file, for many findings.
    pub fn locator(&self) -> Locator<'_> {
        Locator { nb: self, raw_lines: LineIndex::new(&self.raw), escaped: std::collections::HashMap::new() }
    }

    /// The notebook with `edits` (byte ranges of [`Notebook::python`] with new
    /// text) applied to its cells; every byte outside the edited cells' sources
    /// stays as it was.
    pub fn with_edits(&self, edits: &[(usize, usize, String)]) -> Result<String, NotebookError> {
        let mut sources: Vec<Option<String>> = vec![None; self.cells.len()];
        let mut sorted: Vec<&(usize, usize, String)> = edits.iter().collect();
        sorted.sort_by_key(|e| std::cmp::Reverse((e.0, e.1)));
        for (start, end, content) in sorted {
            let i = self.cells.partition_point(|c| c.python_start <= *start).saturating_sub(1);
            let cell = self.cells.get(i).ok_or(NotebookError::FixOutsideCells)?;
            let (s, e) = (start - cell.python_start, end.saturating_sub(cell.python_start));
            let text = sources[i].get_or_insert_with(|| cell.source.clone());
            if e > cell.source.len() || text.get(s..e).is_none() {
                return Err(NotebookError::FixAcrossCells { cell: cell.number });
            }
            text.replace_range(s..e, content);
        }
        let mut out = String::with_capacity(self.raw.len() + 64);
        let mut at = 0;
        for (cell, source) in self.cells.iter().zip(&sources) {
            let Some(source) = source else { continue };
            if cell.value_span == (0, 0) {
                return Err(NotebookError::SourceNotFound { cell: cell.number });
            }
            out.push_str(&self.raw[at..cell.value_span.0]);
            out.push_str(&json_spans::source_value(&self.raw, cell.value_span, &cell.pieces, source));
            at = cell.value_span.1;
        }
        out.push_str(&self.raw[at..]);
        Ok(out)
    }
}

/// `source` with IPython-only syntax replaced by Python of the same byte length.
fn blank_ipython(source: &str) -> String {
    let first = source.trim_start();
    let python_body = first
        .strip_prefix("%%")
        .map(|m| m.split(|c: char| c.is_whitespace()).next().unwrap_or(""))
        .map(|name| PYTHON_CELL_MAGICS.contains(&name));
    let mut out = String::with_capacity(source.len());
    for (i, line) in source.split_inclusive('\n').enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if python_body == Some(false) || (i == 0 && python_body.is_some()) || body.starts_with(['%', '!', '?']) {
            out.push_str(&line[..indent]);
            out.push_str(&as_comment(&line[indent..]));
        } else if let Some(at) = shell_assignment(line) {
            out.push_str(&line[..at]);
            out.push('0');
            out.extend(line[at..].trim_end_matches(['\n', '\r']).chars().skip(1).map(|c| " ".repeat(c.len_utf8())));
            out.push_str(&line[line.trim_end_matches(['\n', '\r']).len()..]);
        } else if let Some(stripped) = help_suffix(line) {
            out.push_str(&stripped);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// `text` turned into a comment of the same byte length.
fn as_comment(text: &str) -> String {
    match text.chars().next() {
        Some(c) if c != '\n' && c != '\r' => format!("#{}{}", " ".repeat(c.len_utf8() - 1), &text[c.len_utf8()..]),
        _ => text.to_string(),
    }
}

/// The byte offset of `!` or `%` in `name = !cmd` / `name = %magic`.
fn shell_assignment(line: &str) -> Option<usize> {
    let eq = line.find('=')?;
    let (target, rest) = (&line[..eq], &line[eq + 1..]);
    let target_ok = !target.trim().is_empty()
        && target.trim().chars().all(|c| c.is_alphanumeric() || c == '_' || c == ',' || c == ' ' || c == '.');
    let value = rest.trim_start();
    (target_ok && value.starts_with(['!', '%']) && !rest.starts_with('=')).then(|| line.len() - value.len())
}

/// `obj?` / `obj??` with the question marks blanked.
fn help_suffix(line: &str) -> Option<String> {
    let body = line.trim_end_matches(['\n', '\r']);
    let trimmed = body.trim_end();
    let name = trimmed.trim_end_matches('?');
    let marks = trimmed.len() - name.len();
    let is_name = !name.trim().is_empty() && name.trim().chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    (marks > 0 && marks <= 2 && is_name).then(|| format!("{name}{}{}", " ".repeat(marks), &line[trimmed.len()..]))
}

mod json_spans;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipython_syntax_is_blanked_in_place() {
        let src = "%matplotlib inline\n!pip install x\nfiles = !ls\nmodel?\nx = 1  # 100%\n";
        let out = blank_ipython(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out, "#matplotlib inline\n#pip install x\nfiles = 0  \nmodel \nx = 1  # 100%\n");
        let cell = "%%bash\necho $CUDA_VISIBLE_DEVICES\n";
        assert_eq!(blank_ipython(cell), "#%bash\n#cho $CUDA_VISIBLE_DEVICES\n");
        let timed = "%%time\nx = y.cuda()\n";
        assert_eq!(blank_ipython(timed), "#%time\nx = y.cuda()\n");
    }
}
