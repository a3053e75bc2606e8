//! Regular expressions compiled when first used.
//!
//! Compiling every pattern of the built-in packs takes about 40 ms, most of a
//! one-file scan, while a file reaches only a few of them. So the built-in
//! packs' patterns are compiled on first use; a test compiles every one of
//! them (`packs::tests`), so that compile cannot fail in a release. Patterns
//! of user packs are compiled when the pack loads, so that a mistake is
//! reported with its pack, rule and field instead of silently never matching.

use super::ascii_classes::ascii_classes;
use regex::Regex;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// How long a pattern an error quotes: enough to recognise it, short enough
/// that a generated megabyte pattern does not flood the terminal.
const QUOTED_PATTERN_CHARS: usize = 200;

/// A regular expression, compiled now or on its first match. Clones share
/// the compiled expression.
#[derive(Debug, Clone)]
pub struct LazyRegex(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    pattern: Box<str>,
    /// An error inside: the pattern did not compile (only possible for a
    /// built-in pattern, which the tests rule out); it then matches nothing.
    compiled: OnceLock<Result<Regex, regex::Error>>,
}

/// A pattern that is not a valid regular expression.
#[derive(Debug, Clone)]
pub struct RegexError {
    /// The pattern as written.
    pub pattern: Box<str>,
    /// What the regex crate said.
    pub source: regex::Error,
}

impl fmt::Display for RegexError {
    /// Quotes the pattern, cut short when it is long, and says what is wrong.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pattern = &*self.pattern;
        let hint = "fix the pattern (Rust regex syntax: no look-around or back-references)";
        let Some((cut, _)) = pattern.char_indices().nth(QUOTED_PATTERN_CHARS) else {
            return write!(f, "invalid regex `{pattern}`: {}; {hint}", self.source);
        };
        // The regex crate's message quotes the whole pattern again; its last line says what is wrong.
        let what = match &self.source {
            regex::Error::Syntax(s) => s.lines().last().unwrap_or(s).trim_start_matches("error: ").to_string(),
            other => other.to_string(),
        };
        write!(f, "invalid regex `{}…` ({} bytes): {what}; {hint}", &pattern[..cut], pattern.len())
    }
}

impl std::error::Error for RegexError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl LazyRegex {
    /// A pattern compiled on first use; its syntax is not checked here.
    pub fn deferred(pattern: &str) -> Self {
        LazyRegex(Arc::new(Shared { pattern: pattern.into(), compiled: OnceLock::new() }))
    }

    /// A pattern compiled now; the error names the pattern.
    pub fn compiled(pattern: &str) -> Result<Self, RegexError> {
        let regex = build(pattern).map_err(|source| RegexError { pattern: pattern.into(), source })?;
        Ok(LazyRegex(Arc::new(Shared { pattern: pattern.into(), compiled: OnceLock::from(Ok(regex)) })))
    }

    /// Compiles the pattern if that has not happened yet; the error is the
    /// one [`LazyRegex::compiled`] would give.
    pub fn force(&self) -> Result<&Regex, RegexError> {
        self.compile().as_ref().map_err(|e| RegexError { pattern: self.0.pattern.clone(), source: e.clone() })
    }

    /// The compiled expression, or `None` if the pattern is invalid.
    pub fn get(&self) -> Option<&Regex> {
        self.compile().as_ref().ok()
    }

    /// The outcome of compiling the pattern, compiled on the first call.
    fn compile(&self) -> &Result<Regex, regex::Error> {
        self.0.compiled.get_or_init(|| build(&self.0.pattern))
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.0.pattern
    }

    /// Whether the expression matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.get().is_some_and(|re| re.is_match(text))
    }

    /// The names of the pattern's capture groups, read from its text
    /// (`(?P<name>` or `(?<name>`) so that asking compiles nothing.
    pub fn group_names(&self) -> Vec<String> {
        let pattern = &*self.0.pattern;
        let mut names = Vec::new();
        for open in ["(?P<", "(?<"] {
            for (i, _) in pattern.match_indices(open) {
                let rest = &pattern[i + open.len()..];
                let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
                if end > 0 && rest[end..].starts_with('>') {
                    names.push(rest[..end].to_string());
                }
            }
        }
        names
    }
}

/// Compiles `pattern` with ASCII Perl classes ([`ascii_classes`]). An
/// error is the pattern's own, which quotes the user's text, not the
/// rewrite's (that one can fail alone only through a bug, which then shows).
fn build(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&ascii_classes(pattern)).map_err(|rewritten| Regex::new(pattern).err().unwrap_or(rewritten))
}

/// Hands out one [`LazyRegex`] per distinct pattern, so that a pattern that
/// many rules share (`torch.cuda.*`) is compiled once.
#[derive(Default)]
pub struct Interner {
    seen: HashMap<Box<str>, LazyRegex>,
}

impl Interner {
    /// The shared regex for `pattern`: deferred when `defer`, otherwise
    /// compiled now (an error names the pattern).
    pub fn get(&mut self, pattern: &str, defer: bool) -> Result<LazyRegex, RegexError> {
        if let Some(known) = self.seen.get(pattern) {
            if !defer {
                known.force()?;
            }
            return Ok(known.clone());
        }
        let new = if defer { LazyRegex::deferred(pattern) } else { LazyRegex::compiled(pattern)? };
        self.seen.insert(pattern.into(), new.clone());
        Ok(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferred_compiles_on_first_match_and_an_invalid_pattern_matches_nothing() {
        let ok = LazyRegex::deferred("^cuda(:\\d+)?$");
        assert!(ok.0.compiled.get().is_none());
        assert!(ok.is_match("cuda:1"));
        assert!(ok.0.compiled.get().is_some());
        assert!(ok.group_names().is_empty());
        assert_eq!(LazyRegex::deferred(r"(?P<op>x)|(?<b>y)|(?<=z)w|(?<!v)u").group_names(), ["op", "b"]);
        let bad = LazyRegex::deferred("(unclosed");
        assert!(!bad.is_match("(unclosed"));
        assert!(bad.force().unwrap_err().to_string().contains("unclosed group"));
    }

    #[test]
    fn the_interner_shares_one_compiled_regex_per_pattern() {
        let mut interner = Interner::default();
        let a = interner.get("^torch\\.cuda\\..*$", true).unwrap();
        let b = interner.get("^torch\\.cuda\\..*$", true).unwrap();
        assert!(a.is_match("torch.cuda.synchronize"));
        assert!(b.0.compiled.get().is_some(), "b is a's compiled regex");
        assert!(interner.get("(", true).is_ok(), "deferred: not checked");
        assert!(interner.get("(", false).is_err(), "now checked, though seen before");
    }

    #[test]
    fn compiled_reports_the_error_with_a_shortened_pattern() {
        assert!(LazyRegex::compiled("a(").unwrap_err().to_string().starts_with("invalid regex `a(`"));
        let long = format!("{}(", "x".repeat(5000));
        let message = LazyRegex::compiled(&long).unwrap_err().to_string();
        assert!(message.len() < 400 && message.contains("5001 bytes"), "{message}");
    }
}
