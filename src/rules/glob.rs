//! Globs over dotted names and file names, compiled to one anchored regex.
//!
//! `*` matches any run of characters (dots included), `?` one character and
//! `{a,b}` either alternative: `torch.cuda.*`, `torch.{zeros,ones}`.

use super::lazy_regex::{LazyRegex, RegexError};
use std::fmt;

/// Why a list of globs cannot be used.
#[derive(Debug, Clone)]
pub enum GlobError {
    /// The list is empty.
    Empty,
    /// A `}` without its `{`, or a `{` inside braces.
    Unbalanced {
        /// The glob as written.
        glob: String,
    },
    /// A `{` never closed.
    Unclosed {
        /// The glob as written.
        glob: String,
    },
    /// The regex the globs translate to did not compile.
    Regex(RegexError),
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlobError::Empty => write!(f, "needs at least one name; write a name or a glob such as `torch.cuda.*`"),
            GlobError::Unbalanced { glob } => {
                write!(f, "unbalanced braces in glob `{glob}`; braces hold alternatives and do not nest: `a.{{b,c}}`")
            }
            GlobError::Unclosed { glob } => write!(f, "unclosed `{{` in glob `{glob}`; close it: `a.{{b,c}}`"),
            GlobError::Regex(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GlobError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GlobError::Regex(e) => Some(e),
            _ => None,
        }
    }
}

wraps_errors!(GlobError { Regex(RegexError) });

/// A set of globs, plus the literal segments usable as index keys.
#[derive(Debug, Clone)]
pub struct NameGlobs {
    regex: LazyRegex,
    /// Where a name one of the globs matches can be looked up.
    pub keys: IndexKeys,
    /// The globs as written, for messages.
    pub source: Vec<String>,
}

/// The index keys of a set of globs, glob by glob: the literal last dotted
/// segment of a glob that has one (`zeros` for `torch.zeros`), else its
/// literal first segment (`torch` for `torch.cuda.*`); a glob with neither
/// (`*.cuda.*`) can match any name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexKeys {
    /// Last segments, for globs that have a literal one.
    pub last: Vec<String>,
    /// First segments, for the other globs that have a literal one.
    pub first: Vec<String>,
    /// Whether some glob has neither: every name must be tried.
    pub any: bool,
}

impl IndexKeys {
    fn of(globs: &[String]) -> Self {
        // A segment's words, if it is literal (braces within it expanded).
        let literal = |segment: &str| {
            let balanced = segment.contains('{') == segment.contains('}');
            expand_braces(segment).filter(|ws| balanced && !ws.iter().any(|w| w.contains(['*', '?'])))
        };
        let mut keys = IndexKeys::default();
        for glob in globs {
            if let Some(words) = literal(glob.rsplit('.').next().unwrap_or(glob)) {
                keys.last.extend(words);
            } else if let Some(words) = literal(glob.split('.').next().unwrap_or(glob)) {
                keys.first.extend(words);
            } else {
                keys.any = true;
            }
        }
        keys
    }
}

impl NameGlobs {
    /// Translates `globs`; an error names the glob at fault. `regex` makes
    /// the regex of the translation (now, or deferred: see [`LazyRegex`]).
    pub fn new(globs: &[String], regex: impl FnOnce(&str) -> Result<LazyRegex, RegexError>) -> Result<Self, GlobError> {
        if globs.is_empty() {
            return Err(GlobError::Empty);
        }
        let mut alternatives = Vec::new();
        for glob in globs {
            alternatives.push(glob_to_regex(glob)?);
        }
        let pattern = format!("^(?:{})$", alternatives.join("|"));
        let regex = regex(&pattern)?;
        Ok(NameGlobs { regex, keys: IndexKeys::of(globs), source: globs.to_vec() })
    }

    /// Whether `name` matches one of the globs.
    pub fn is_match(&self, name: &str) -> bool {
        self.regex.is_match(name)
    }
}

/// Translates one glob to an unanchored regex fragment.
fn glob_to_regex(glob: &str) -> Result<String, GlobError> {
    let mut out = String::from("(?:");
    let mut in_braces = false;
    // Literal runs are escaped whole: one allocation per run, not per character.
    let mut literal_from = None;
    for (i, c) in glob.char_indices() {
        let literal = !(matches!(c, '*' | '?' | '{' | '}') || c == ',' && in_braces);
        match (literal, literal_from) {
            (true, None) => literal_from = Some(i),
            (false, Some(from)) => {
                out.push_str(&regex::escape(&glob[from..i]));
                literal_from = None;
            }
            _ => {}
        }
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '{' if !in_braces => {
                in_braces = true;
                out.push_str("(?:");
            }
            '}' if in_braces => {
                in_braces = false;
                out.push(')');
            }
            ',' if in_braces => out.push('|'),
            '{' | '}' => return Err(GlobError::Unbalanced { glob: glob.to_string() }),
            _ => {}
        }
    }
    if let Some(from) = literal_from {
        out.push_str(&regex::escape(&glob[from..]));
    }
    if in_braces {
        return Err(GlobError::Unclosed { glob: glob.to_string() });
    }
    out.push(')');
    Ok(out)
}

/// `a{b,c}d` -> `[abd, acd]`; `None` for nested or unbalanced braces.
pub(super) fn expand_braces(s: &str) -> Option<Vec<String>> {
    let Some(open) = s.find('{') else { return Some(vec![s.to_string()]) };
    let close = open + s[open..].find('}')?;
    let (head, tail) = (&s[..open], &s[close + 1..]);
    if tail.contains(['{', '}']) {
        return None;
    }
    Some(s[open + 1..close].split(',').map(|alt| format!("{head}{alt}{tail}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_crosses_dots_and_braces_expand() {
        let g = NameGlobs::new(&["torch.cuda.*".into(), "torch.{zeros,ones}".into()], LazyRegex::compiled).unwrap();
        assert!(g.is_match("torch.cuda.memory.empty_cache"));
        assert!(g.is_match("torch.ones"));
        assert!(!g.is_match("torch.cuda"));
        assert!(!g.is_match("torch.empty"));
        let g = NameGlobs::new(&["torch.{zeros,ones}".into(), "a.b".into()], LazyRegex::compiled).unwrap();
        assert_eq!(g.keys, IndexKeys { last: vec!["zeros".into(), "ones".into(), "b".into()], ..IndexKeys::default() });
    }

    #[test]
    fn each_glob_is_indexed_by_its_last_literal_segment_else_its_first() {
        let keys = |globs: &[&str]| IndexKeys::of(&globs.iter().map(|g| g.to_string()).collect::<Vec<_>>());
        let words = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            keys(&["torch.cuda.*", "{apex,amp}.x.*", "torch.autocast"]),
            IndexKeys { last: words(&["autocast"]), first: words(&["torch", "apex", "amp"]), any: false }
        );
        assert_eq!(
            keys(&["*.cuda", "torch.cuda.*"]),
            IndexKeys { last: words(&["cuda"]), first: words(&["torch"]), any: false }
        );
        // Braces across a dot make no literal segment of either part.
        assert_eq!(keys(&["a.{b.c,d}"]), IndexKeys { first: words(&["a"]), ..IndexKeys::default() });
        assert!(keys(&["{torch.cuda,torch.npu}.*"]).any);
        assert!(keys(&["*.cuda.*"]).any);
    }

    #[test]
    fn regex_characters_in_a_glob_are_literal() {
        let g = NameGlobs::new(&["a+b.c{x,(y)}".into(), "[q]".into()], LazyRegex::compiled).unwrap();
        for name in ["a+b.cx", "a+b.c(y)", "[q]"] {
            assert!(g.is_match(name), "{name}");
        }
        for name in ["aab.cx", "a+bxcx", "a+b.cy", "q"] {
            assert!(!g.is_match(name), "{name}");
        }
    }

    #[test]
    fn unbalanced_braces_are_errors() {
        assert!(NameGlobs::new(&["torch.{a".into()], LazyRegex::compiled).is_err());
        assert!(NameGlobs::new(&["torch.a}".into()], LazyRegex::compiled).is_err());
    }
}
