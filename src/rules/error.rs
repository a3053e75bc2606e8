//! What can be wrong with a rule pack. A [`PackError`] names the pack and,
//! where it can, the line; inside it a [`SpecError`] names the rule or
//! summary entry and the field at fault (`rule ORG001: match.args[0]: ...`),
//! and every message says what to write instead.

use super::spec_error::SpecError;
use std::fmt;
use std::path::PathBuf;

/// A pack that cannot be used, and where it went wrong.
#[derive(Debug)]
pub struct PackError {
    /// The pack's path (or `builtin:NAME`), or `rule packs` for a problem between packs.
    pub origin: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong (boxed: errors are rare, and a small `Result` is cheap to pass up).
    pub problem: Box<PackProblem>,
}

/// What is wrong with a pack, or with the packs together.
#[derive(Debug)]
pub enum PackProblem {
    /// The path given with `--rules` (or `rules` in the configuration) cannot be opened.
    NoPath(std::io::Error),
    /// The directory given cannot be listed.
    Unlisted(std::io::Error),
    /// The directory given holds no `*.toml` file.
    NoPacks,
    /// The pack file cannot be read.
    Unreadable(std::io::Error),
    /// The pack is not valid TOML.
    Syntax(toml::de::Error),
    /// The pack is valid TOML but not in the pack schema (the deserializer's message).
    Schema(String),
    /// A built-in pack, embedded as JSON, is not in the pack schema (a bug
    /// that the test suite, which loads every built-in pack, catches).
    Embedded(serde_json::Error),
    /// A `[[data]]` table cannot be used.
    Data {
        /// The table's name.
        name: String,
        /// The file as the pack names it.
        file: String,
        /// Why.
        error: DataError,
    },
    /// A `[[rule]]` is wrong.
    Rule {
        /// The rule's code.
        code: String,
        /// Where in the rule, and what.
        error: SpecError,
    },
    /// A summary entry (`[[summary.table]]`, `count`, `sites`, `group`) is wrong.
    Summary {
        /// `table`, `count`, `sites` or `group`.
        kind: &'static str,
        /// The entry's title or label.
        name: String,
        /// Where in the entry, and what.
        error: SpecError,
    },
    /// A named matcher (`[matchers.NAME]`) is wrong.
    Matcher {
        /// Its name.
        name: String,
        /// Where in it, and what.
        error: SpecError,
    },
    /// Two rules, in this pack or an earlier one, share a code.
    DuplicateCode {
        /// The code.
        code: String,
    },
    /// A fix's `then` names a rule that has no fix.
    ThenNotFixable {
        /// The rule whose fix names it.
        rule: String,
        /// The code named.
        code: String,
    },
    /// A fix's `together` names a rule no pack defines.
    UnknownTogether {
        /// The rule whose fix names it.
        rule: String,
        /// The code named.
        code: String,
    },
    /// A summary count names a rule no pack defines.
    UnknownCountRule {
        /// The count's label.
        label: String,
        /// The code named.
        code: String,
    },
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}", self.problem)
    }
}

impl fmt::Display for PackProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackProblem::NoPath(e) => {
                write!(f, "cannot open the rule pack path: {e}; name a pack file or a directory of *.toml packs")
            }
            PackProblem::Unlisted(e) => write!(f, "cannot list the directory: {e}; check its permissions"),
            PackProblem::NoPacks => {
                write!(f, "the directory holds no *.toml rule pack; name a pack file or a directory of them")
            }
            PackProblem::Unreadable(e) => write!(f, "cannot read the rule pack: {e}; check its permissions"),
            PackProblem::Syntax(e) => write!(
                f,
                "{}; fix the pack there (docs/rule-packs.md describes every field)",
                e.message().trim_end_matches(['\n', '.'])
            ),
            PackProblem::Schema(message) => {
                write!(f, "{message}; fix the pack there (docs/rule-packs.md describes every field)")
            }
            PackProblem::Embedded(e) => {
                write!(f, "the built-in pack does not load: {e}; this is a bug in npu-mem, please report it")
            }
            PackProblem::Data { name, file, error } => write!(f, "data `{name}` ({file}): {error}"),
            PackProblem::Rule { code, error } => write!(f, "rule {code}: {error}"),
            PackProblem::Summary { kind, name, error } => write!(f, "{kind} `{name}`: {error}"),
            PackProblem::Matcher { name, error } => write!(f, "matcher `{name}`: {error}"),
            PackProblem::DuplicateCode { code } => write!(
                f,
                "rule code {code} is already defined by another pack; codes must be unique, so give this rule \
                 another code"
            ),
            PackProblem::ThenNotFixable { rule, code } => write!(
                f,
                "the fix of {rule} names {code} in `then`, which is not a rule with a fix; name a rule that has \
                 a `fix`, or remove it from `then`"
            ),
            PackProblem::UnknownTogether { rule, code } => write!(
                f,
                "the fix of {rule} names {code} in `together`, which no pack defines; name a defined rule, or \
                 remove it from `together`"
            ),
            PackProblem::UnknownCountRule { label, code } => write!(
                f,
                "summary count `{label}` names rule {code}, which no pack defines; name a defined rule or \
                 count with `match`"
            ),
        }
    }
}

impl std::error::Error for PackError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.problem.as_ref() {
            PackProblem::NoPath(e) | PackProblem::Unlisted(e) | PackProblem::Unreadable(e) => Some(e),
            PackProblem::Syntax(e) => Some(e),
            PackProblem::Embedded(e) => Some(e),
            PackProblem::Data { error, .. } => Some(error),
            PackProblem::Rule { error, .. }
            | PackProblem::Summary { error, .. }
            | PackProblem::Matcher { error, .. } => Some(error),
            PackProblem::NoPacks
            | PackProblem::Schema(_)
            | PackProblem::DuplicateCode { .. }
            | PackProblem::ThenNotFixable { .. }
            | PackProblem::UnknownTogether { .. }
            | PackProblem::UnknownCountRule { .. } => None,
        }
    }
}

/// Why a `[[data]]` table cannot be used.
#[derive(Debug)]
pub enum DataError {
    /// The file cannot be read.
    Unreadable {
        /// The file, as found beside the pack.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A built-in pack names a file that is not embedded in the binary.
    NotEmbedded {
        /// The embedded name looked for.
        name: String,
    },
    /// A row's cell count differs from the header's.
    Cells {
        /// 1-based line in the file.
        line: usize,
        /// Cells in the row.
        cells: usize,
        /// Cells in the header.
        header: usize,
    },
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataError::Unreadable { path, source } => write!(
                f,
                "cannot read {}: {source}; data files are found relative to the pack's directory",
                path.display()
            ),
            DataError::NotEmbedded { name } => {
                write!(f, "{name} is not embedded; add it to BUILTIN_DATA in src/rules/packs.rs")
            }
            DataError::Cells { line, cells, header } => write!(
                f,
                "line {line}: {cells} cells, the header has {header}; separate the cells with tabs, one per column"
            ),
        }
    }
}

impl std::error::Error for DataError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DataError::Unreadable { source, .. } => Some(source),
            _ => None,
        }
    }
}
