//! The modules a Python file imports, read from its lines without parsing
//! it. A project's import graph (see [`crate::project::processes`]) needs every
//! file's imports, and parsing a whole file for them cost as much as the
//! scan's own analysis of it; import statements are simple enough to read
//! from the text: `import a.b as c, d`, `from .m import (x, y)`, with their
//! continuation lines, at any indentation. Lines inside triple-quoted
//! strings (docstrings with usage examples) are skipped.
//!
//! The names are those [`crate::semantic::imports::import_bindings`]
//! gives: each imported module, and for `from M import n`, `M.n` too (`n`
//! may be a submodule); relative names keep their dots.

/// Whether a line of Python (or its part from where it starts) holds an
/// import statement: it begins, after its indentation, with `import` or `from`.
pub(crate) fn is_import_line(line: &str) -> bool {
    let code = line.trim_start();
    code.starts_with("import ") || code.starts_with("from ")
}

/// Whether `line` holds an odd number of `"""` (or `'''` for `quote = b'\''`),
/// counted left to right without overlaps. Every line is asked, so most
/// are passed over by one search for the quote character.
fn odd_triple_quotes(line: &str, quote: u8) -> bool {
    let bytes = line.as_bytes();
    let (mut i, mut odd) = (0, false);
    while let Some(at) = bytes[i..].iter().position(|&b| b == quote) {
        i += at;
        if bytes[i..].starts_with(&[quote; 3]) {
            odd = !odd;
            i += 3;
        } else {
            i += 1;
        }
    }
    odd
}

/// Every qualified name that the import statements of `text` import.
pub(crate) fn imported_names(text: &str) -> Vec<String> {
    names_of_statements(text, |_| true)
}

/// What the import statements of `text` import outside the body of a `try`
/// that catches `ImportError` ([`super::try_guards`]): the imports whose
/// failure is not handled.
pub(crate) fn unguarded_names(text: &str) -> Vec<String> {
    let mut names = names_of_statements(text, |start| !super::try_guards::guarded(text, start));
    names.sort_unstable();
    names.dedup();
    names
}

/// What the import statements of `text` import, of those whose first line
/// starts at a byte offset that `keep` accepts.
fn names_of_statements(text: &str, keep: impl Fn(usize) -> bool) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_string: Option<u8> = None;
    let mut lines = CandidateLines { text, next: 0 };
    // Outside a string only lines that start an import or hold a triple
    // quote matter; inside one, only lines that hold its quote.
    while let Some(line) = lines.next_holding(if in_string.is_some() { Holds::Quotes } else { Holds::Any }) {
        let code = line.trim_start();
        if let Some(quote) = in_string {
            if odd_triple_quotes(code, quote) {
                in_string = None;
            }
            continue;
        }
        if is_import_line(code) {
            let start = line.as_ptr() as usize - text.as_ptr() as usize;
            let mut statement = strip_comment(code).to_string();
            // Continuation lines: an open parenthesis, or a trailing backslash.
            // The depth is kept as lines are added (counting the whole
            // statement again each time is quadratic on a broken file).
            let depth = |s: &str| s.matches('(').count() as isize - s.matches(')').count() as isize;
            let mut open = depth(&statement);
            while open > 0 || statement.ends_with('\\') {
                let Some(next) = lines.next_line() else { break };
                let next = strip_comment(next.trim());
                if statement.ends_with('\\') {
                    statement.pop();
                }
                statement.push(' ');
                statement.push_str(next);
                open += depth(next);
            }
            if keep(start) {
                for part in statement.split(';') {
                    read_statement(part.trim(), &mut names);
                }
            }
            continue;
        }
        // A line that opens a triple-quoted string and does not close it.
        in_string = [b'"', b'\''].into_iter().find(|&quote| odd_triple_quotes(code, quote));
    }
    names
}

/// Which lines [`CandidateLines::next_holding`] looks for.
#[derive(Clone, Copy)]
enum Holds {
    /// Lines with `import`, `from` or a triple quote.
    Any,
    /// Lines with a triple quote.
    Quotes,
}

/// The lines of a text (as Python ends them, without their ends), where
/// [`imported_names`] can jump to the next line that may matter: one search
/// of the text for the few words it looks at, instead of reading every line.
struct CandidateLines<'a> {
    text: &'a str,
    /// Where the next line starts.
    next: usize,
}

impl<'a> CandidateLines<'a> {
    /// The next line, whatever it holds.
    fn next_line(&mut self) -> Option<&'a str> {
        if self.next >= self.text.len() {
            return None;
        }
        let start = self.next;
        let end = crate::source::line_end_at(self.text, start);
        self.next = end + 1;
        let line = &self.text[start..end];
        Some(line.strip_suffix('\r').unwrap_or(line))
    }

    /// The next line that holds what `holds` asks for; the lines before it
    /// are passed over.
    fn next_holding(&mut self, holds: Holds) -> Option<&'a str> {
        // Leftmost-first: what lets the search use its SIMD prefilter.
        let build = |words: &[&str]| {
            aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                .build(words)
                .expect("literal words")
        };
        static ANY: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
        static QUOTES: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
        let search = match holds {
            Holds::Any => ANY.get_or_init(|| build(&["import", "from", "\"\"\"", "'''"])),
            Holds::Quotes => QUOTES.get_or_init(|| build(&["\"\"\"", "'''"])),
        };
        let rest = self.text.get(self.next..)?;
        let found = self.next + search.find(rest)?.start();
        self.next = crate::source::line_start_at(self.text, found).max(self.next);
        self.next_line()
    }
}

/// Every qualified name that `text` loads: what its import statements
/// import, and the literal names it gives `importlib.import_module` or
/// `__import__` (`import_module("models.resnet")`); a computed name
/// (`import_module(f"models.{name}")`) is not read. Sorted, each once: a
/// name imported in several places is resolved once.
pub(crate) fn loaded_names(text: &str) -> Vec<String> {
    let mut names = imported_names(text);
    if text.contains("import_module(") || text.contains("__import__(") {
        static LITERAL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(r#"\b(?:import_module|__import__)\(\s*["']([A-Za-z_][\w.]*)["']\s*[,)]"#)
                .expect("a valid pattern")
        });
        names.extend(LITERAL.captures_iter(text).map(|c| c[1].to_string()));
    }
    names.sort_unstable();
    names.dedup();
    names
}

/// A module `text` loads by a name it computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ComputedLoad {
    /// A module of this package (`import_module("models." + name)`, `f"models.{name}"`).
    InPackage(String),
    /// Any module (`import_module(name)`).
    Any,
}

/// The modules `text` loads with `importlib.import_module` or `__import__`
/// by a computed name, and the package it names, where it gives one.
pub(crate) fn computed_loads(text: &str) -> Vec<ComputedLoad> {
    if !text.contains("import_module(") && !text.contains("__import__(") {
        return Vec::new();
    }
    static CALL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b(?:import_module|__import__)\(\s*([^,)]*)").expect("a valid pattern")
    });
    CALL.captures_iter(text).filter_map(|c| computed_load(c[1].trim())).collect()
}

/// What a first argument of `import_module` loads, when it is not a literal name.
fn computed_load(argument: &str) -> Option<ComputedLoad> {
    let (formatted, rest) = match argument.strip_prefix('f') {
        Some(rest) if rest.starts_with(['"', '\'']) => (true, rest),
        _ => (false, argument),
    };
    let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
        return Some(ComputedLoad::Any);
    };
    let body = &rest[1..];
    let (literal, after) = body.split_once(quote).unwrap_or((body, ""));
    let prefix = match formatted {
        true => literal.split('{').next().unwrap_or(""),
        false if after.trim_start().starts_with('+') => literal,
        // A literal name: read as an import (`loaded_names`).
        false => return None,
    };
    let package = prefix.strip_suffix('.').filter(|p| {
        !p.is_empty()
            && p.split('.').all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
    });
    Some(package.map_or(ComputedLoad::Any, |p| ComputedLoad::InPackage(p.to_string())))
}

/// The line up to a `#` comment (import statements hold no strings).
fn strip_comment(line: &str) -> &str {
    line.split('#').next().unwrap_or(line).trim_end()
}

/// Adds what one `import ...` or `from ... import ...` statement imports.
fn read_statement(statement: &str, names: &mut Vec<String>) {
    if let Some(rest) = statement.strip_prefix("import ") {
        names.extend(rest.split(',').filter_map(dotted_before_alias).map(str::to_string));
    } else if let Some(rest) = statement.strip_prefix("from ") {
        let Some((module, imported)) = rest.split_once(" import") else { return };
        let module: String = module.chars().filter(|c| !c.is_whitespace()).collect();
        if module.is_empty() || !module.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            return;
        }
        let imported = imported.trim().trim_start_matches('(').trim_end_matches(')');
        let under = |name: &str| match module.ends_with('.') {
            true => format!("{module}{name}"),
            false => format!("{module}.{name}"),
        };
        let members: Vec<String> =
            imported.split(',').filter_map(dotted_before_alias).filter(|n| *n != "*").map(under).collect();
        names.push(module);
        names.extend(members);
    }
}

/// `a.b` in `a.b as c`, if it is a dotted name.
fn dotted_before_alias(item: &str) -> Option<&str> {
    let name = item.split_whitespace().next()?;
    let dotted = !name.is_empty()
        && name.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'));
    (dotted || name == "*").then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triple_quotes_are_counted_as_str_matches_counts_them() {
        let lines =
            ["", "x", "\"\"\"", r#""""""#, r#""""""""#, r#"a = """doc"#, "'''x''' '''", r#""''''""""#, r#"é"""é"#];
        for line in lines {
            for (quote, triple) in [(b'"', "\"\"\""), (b'\'', "'''")] {
                assert_eq!(odd_triple_quotes(line, quote), line.matches(triple).count() % 2 == 1, "{line:?}");
            }
        }
    }

    /// What the parser-based reading gives, for comparison.
    fn parsed(src: &str) -> Vec<String> {
        use crate::parse::KindOf;
        let tree = crate::parse::parse_python(src).unwrap();
        let mut names = Vec::new();
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            if matches!(node.kind_name(), "import_statement" | "import_from_statement") {
                names.extend(crate::semantic::imports::import_bindings(node, src).1);
            }
            let mut cursor = node.walk();
            let children: Vec<_> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        names
    }

    #[test]
    fn statements_read_as_the_parser_reads_them() {
        let src = "import os\n\
                   import torch.nn as nn, numpy as np  # comment\n\
                   from . import layers\n\
                   from .. import utils as u\n\
                   from .models.head import (Head,\n    Neck as N,  # why\n    Tail)\n\
                   from pkg import *\n\
                   from a.b import \\\n    c\n\
                   def f():\n    from torch_npu.contrib import transfer_to_npu\n\
                   import json; import yaml\n";
        assert_eq!(imported_names(src), parsed(src));
    }

    #[test]
    fn literal_names_given_to_import_module_are_loaded_and_computed_ones_are_not() {
        let src = "import os\nm = importlib.import_module('models.resnet')\n\
                   n = import_module(f\"models.{name}\")\nt = __import__(\"tools.export\", fromlist=['x'])\n";
        assert_eq!(loaded_names(src), ["models.resnet", "os", "tools.export"]);
    }

    #[test]
    fn a_name_loaded_in_several_places_is_given_once() {
        let src = "import os
def f():
    import os, sys
    importlib.import_module('os')
";
        assert_eq!(loaded_names(src), ["os", "sys"]);
    }

    #[test]
    fn computed_names_give_their_package_or_any_module() {
        let src = "a = import_module('models.' + name)\nb = importlib.import_module(f\"data.{kind}\")\n\
                   c = import_module(name)\nd = import_module(f\"{pkg}.x\")\ne = import_module('fixed.name')\n";
        let package = |p: &str| ComputedLoad::InPackage(p.to_string());
        assert_eq!(computed_loads(src), [package("models"), package("data"), ComputedLoad::Any, ComputedLoad::Any]);
    }

    #[test]
    fn an_unclosed_parenthesis_reads_to_the_end_in_linear_time() {
        let src = format!("from a import (b,\n{}", "    c,\n".repeat(200_000));
        let names = imported_names(&src);
        assert_eq!(names.len(), 2 + 200_000);
    }

    #[test]
    fn docstrings_and_other_lines_import_nothing() {
        let src = "\"\"\"Usage:\n\nimport fake_module\nfrom fake import thing\n\"\"\"\n\
                   x = 'import not_this'\n\
                   '''one-line''' ; y = 1\n\
                   important = 1\n\
                   fromage = 2\n\
                   import real\n";
        assert_eq!(imported_names(src), ["real"]);
    }

    #[test]
    fn lines_between_the_words_searched_for_are_passed_over_as_python_ends_lines() {
        // A `from` continued on a line without the word, Windows and lone `\r`
        // line ends, and a string whose quote sits mid-line after other text.
        let src = "x = 1\r\nfrom a.b \\\r\n    import c\rdoc = \"\"\"\nimport no\n\"\"\"\nimport d\n";
        assert_eq!(imported_names(src), ["a.b", "a.b.c", "d"]);
        assert_eq!(imported_names(src), parsed(src));
    }
}
