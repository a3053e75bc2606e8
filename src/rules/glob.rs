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

/// A set of globs, plus the literal last segments usable as an index key.
#[derive(Debug, Clone)]
pub struct NameGlobs {
    regex: LazyRegex,
    /// Literal last dotted segments of every glob, or `None` when some glob's
    /// last segment is a wildcard (then it must be tried on every name).
    pub last_segments: Option<Vec<String>>,
    /// Literal first dotted segments of every glob (`torch` for
    /// `torch.cuda.*`), or `None` when some glob's first segment is a wildcard.
    pub first_segments: Option<Vec<String>>,
    /// The globs as written, for messages.
    pub source: Vec<String>,
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
        let literal = |segment: fn(&String) -> &str| -> Option<Vec<String>> {
            let mut words = Vec::new();
            for glob in globs {
                let expanded = expand_braces(segment(glob)).filter(|ws| !ws.iter().any(|w| w.contains(['*', '?'])))?;
                words.extend(expanded);
            }
            Some(words)
        };
        let last_segments = literal(|g| g.rsplit('.').next().unwrap_or(g));
        let first_segments = literal(|g| g.split('.').next().unwrap_or(g));
        let pattern = format!("^(?:{})$", alternatives.join("|"));
        let regex = regex(&pattern)?;
        Ok(NameGlobs { regex, last_segments, first_segments, source: globs.to_vec() })
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
        assert_eq!(g.last_segments, None);
        let g = NameGlobs::new(&["torch.{zeros,ones}".into(), "a.b".into()], LazyRegex::compiled).unwrap();
        assert_eq!(g.last_segments, Some(vec!["zeros".into(), "ones".into(), "b".into()]));
    }

    #[test]
    fn first_segments_are_the_literal_roots() {
        let g = NameGlobs::new(&["torch.cuda.*".into(), "{apex,amp}.x.*".into()], LazyRegex::compiled).unwrap();
        assert_eq!(g.first_segments, Some(vec!["torch".into(), "apex".into(), "amp".into()]));
        // A root a wildcard can reach, or braces across a dot: no literal root.
        let g = NameGlobs::new(&["torch.cuda.*".into(), "*.cuda".into()], LazyRegex::compiled).unwrap();
        assert_eq!(g.first_segments, None);
        let g = NameGlobs::new(&["{torch.cuda,torch.npu}.*".into()], LazyRegex::compiled).unwrap();
        assert_eq!(g.first_segments, None);
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
