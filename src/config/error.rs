//! Why a configuration cannot be used. Every message names the file and
//! line, or the flag, that is at fault, and what to write instead.

use std::fmt;
use std::path::PathBuf;

/// A line of a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// A configuration file that cannot be read, or settings that name
/// something that does not exist.
#[derive(Debug)]
pub enum ConfigError {
    /// The file cannot be read.
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not TOML, or sets a key npu-mem does not know.
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What the TOML reader said (boxed: it is large, and errors are rare).
        source: Box<toml::de::Error>,
    },
    /// `--config` names a `pyproject.toml` without `[tool.npu-mem]`.
    NoTable {
        /// The file.
        path: PathBuf,
    },
    /// `select`, `ignore`, `severity` or `per-file-ignores` names an empty code.
    EmptyCode {
        /// Where it is written; `None` for a flag.
        at: Option<Place>,
        /// The key (`select`) or flag (`--select`).
        key: String,
    },
    /// A code or prefix that no rule has.
    UnknownCode {
        /// Where it is written; `None` for a flag.
        at: Option<Place>,
        /// The key (`select`) or flag (`--select`).
        key: String,
        /// The code as written.
        code: String,
    },
    /// An empty `per-file-ignores` glob.
    EmptyGlob {
        /// Where it is written.
        at: Option<Place>,
    },
    /// A `per-file-ignores` glob that does not compile.
    BadGlob {
        /// Where it is written.
        at: Option<Place>,
        /// The glob.
        glob: String,
        /// What the glob compiler said.
        source: globset::Error,
    },
    /// A target version npu-mem has no advice for.
    Target {
        /// The version as given.
        value: String,
    },
}

/// `FILE:LINE: ` before a message, or nothing.
struct Prefix<'a>(&'a Option<Place>);

impl fmt::Display for Prefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(place) => write!(f, "{place}: "),
            None => Ok(()),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Unreadable { path, source } => {
                write!(f, "{}: cannot read: {source}; name a readable file with --config", path.display())
            }
            ConfigError::Syntax { path, line, source } => {
                write!(f, "{}", path.display())?;
                if let Some(line) = line {
                    write!(f, ":{line}")?;
                }
                write!(
                    f,
                    ": {}; fix the file (docs/configuration.md lists the keys)",
                    source.message().trim().trim_end_matches('.')
                )
            }
            ConfigError::NoTable { path } => write!(
                f,
                "{}: has no [tool.npu-mem] table; add one, or name another file with --config",
                path.display()
            ),
            ConfigError::EmptyCode { at, key } => write!(
                f,
                "{}`{key}` names an empty code, which would match every rule; name rule codes or prefixes \
                 (`npu-mem rules` lists them)",
                Prefix(at)
            ),
            ConfigError::UnknownCode { at, key, code } => write!(
                f,
                "{}`{key}` names `{code}`, which is not a rule code or prefix; `npu-mem rules` lists them",
                Prefix(at)
            ),
            ConfigError::EmptyGlob { at } => {
                write!(f, "{}`per-file-ignores` has an empty glob, which matches no file; write one", Prefix(at))
            }
            ConfigError::BadGlob { at, glob, source } => write!(
                f,
                "{}`per-file-ignores` glob `{glob}`: {}; fix the glob (`*` and `?` stay within a directory, `**` \
                 crosses them, `{{a,b}}` is either)",
                Prefix(at),
                source.kind()
            ),
            ConfigError::Target { value } => {
                write!(f, "target `{value}` is not one of 2.1, 2.6, 2.14; set `target` or `--target` to one of them")
            }
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::Unreadable { source, .. } => Some(source),
            ConfigError::Syntax { source, .. } => Some(source.as_ref()),
            ConfigError::BadGlob { source, .. } => Some(source),
            _ => None,
        }
    }
}
