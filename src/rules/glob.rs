//! Globs over dotted names and file names, matched wildcard by wildcard
//! once their braces are expanded.
//!
//! `*` matches any run of characters (dots included), `?` one character and
//! `{a,b}` either alternative: `torch.cuda.*`, `torch.{zeros,ones}`. Neither
//! wildcard matches a line break. Globs are matched directly rather than as
//! a regex: compiling `.*` costs the regex crate about 0.3 ms per pattern,
//! which was most of a one-file scan (45 globs, 15 ms).

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
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlobError::Empty => write!(f, "needs at least one name; write a name or a glob such as `torch.cuda.*`"),
            GlobError::Unbalanced { glob } => {
                write!(f, "unbalanced braces in glob `{glob}`; braces hold alternatives and do not nest: `a.{{b,c}}`")
            }
            GlobError::Unclosed { glob } => write!(f, "unclosed `{{` in glob `{glob}`; close it: `a.{{b,c}}`"),
        }
    }
}

impl std::error::Error for GlobError {}

/// A set of globs, plus the literal segments usable as index keys.
#[derive(Debug, Clone)]
pub struct NameGlobs {
    /// The globs with their braces expanded: only `*` and `?` are special.
    pub expanded: Vec<Box<str>>,
    /// Where a name one of the globs matches can be looked up.
    pub keys: IndexKeys,
    /// The globs as written, for messages.
    pub source: Vec<String>,
}

/// The index keys of a set of globs, glob by glob: the literal last dotted
/// segment of a glob that has one (`zeros` for `torch.zeros`), else its
/// literal first segment (`torch` for `torch.cuda.*`); a glob with neither
/// (`*.cuda.*`) can match any name. Each key is listed once.
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
    /// The keys of brace-free globs.
    fn of(expanded: &[Box<str>]) -> Self {
        let literal = |segment: &str| !segment.contains(['*', '?']);
        let add = |keys: &mut Vec<String>, key: &str| {
            if !keys.iter().any(|k| k == key) {
                keys.push(key.to_string());
            }
        };
        let mut keys = IndexKeys::default();
        for glob in expanded {
            let last = glob.rsplit('.').next().unwrap_or(glob);
            let first = glob.split('.').next().unwrap_or(glob);
            if literal(last) {
                add(&mut keys.last, last);
            } else if literal(first) {
                add(&mut keys.first, first);
            } else {
                keys.any = true;
            }
        }
        keys
    }
}

impl NameGlobs {
    /// Reads `globs`; an error names the glob at fault.
    pub fn new(globs: &[String]) -> Result<Self, GlobError> {
        if globs.is_empty() {
            return Err(GlobError::Empty);
        }
        let mut expanded = Vec::new();
        for glob in globs {
            expanded.extend(expand_braces(glob)?.into_iter().map(String::into_boxed_str));
        }
        Ok(NameGlobs { keys: IndexKeys::of(&expanded), expanded, source: globs.to_vec() })
    }

    /// Whether `name` matches one of the globs.
    pub fn is_match(&self, name: &str) -> bool {
        self.expanded.iter().any(|g| matches(g, name))
    }
}

/// `glob` with every brace group expanded: `{a,b}.{c,d*}` -> `a.c`, `a.d*`,
/// `b.c`, `b.d*`; braces do not nest.
fn expand_braces(glob: &str) -> Result<Vec<String>, GlobError> {
    let mut out = vec![String::new()];
    let mut rest = glob;
    while let Some(open) = rest.find(['{', '}']) {
        let after = &rest[open + 1..];
        let close = after.find(['{', '}']);
        let close = match close {
            _ if rest.as_bytes()[open] == b'}' => None,
            Some(j) if after.as_bytes()[j] == b'}' => Some(j),
            Some(_) => None,
            None => return Err(GlobError::Unclosed { glob: glob.to_string() }),
        };
        let Some(close) = close else { return Err(GlobError::Unbalanced { glob: glob.to_string() }) };
        let head = &rest[..open];
        out = out
            .iter()
            .flat_map(|sofar| after[..close].split(',').map(move |choice| format!("{sofar}{head}{choice}")))
            .collect();
        rest = &after[close + 1..];
    }
    out.iter_mut().for_each(|g| g.push_str(rest));
    Ok(out)
}

/// Whether `name` matches the whole of `glob`, a glob without braces.
fn matches(glob: &str, name: &str) -> bool {
    let Some(i) = glob.find(['*', '?']) else { return glob == name };
    let Some(name) = name.strip_prefix(&glob[..i]) else { return false };
    let rest = &glob[i + 1..];
    if glob.as_bytes()[i] == b'?' {
        return name.chars().next().is_some_and(|c| c != '\n' && matches(rest, &name[c.len_utf8()..]));
    }
    let run = name.find('\n').unwrap_or(name.len());
    name[..run].char_indices().map(|(i, _)| i).chain([run]).any(|i| matches(rest, &name[i..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_crosses_dots_and_braces_expand() {
        let g = NameGlobs::new(&["torch.cuda.*".into(), "torch.{zeros,ones}".into()]).unwrap();
        assert!(g.is_match("torch.cuda.memory.empty_cache"));
        assert!(g.is_match("torch.ones"));
        assert!(!g.is_match("torch.cuda"));
        assert!(!g.is_match("torch.empty"));
        let g = NameGlobs::new(&["torch.{zeros,ones}".into(), "a.b".into()]).unwrap();
        assert_eq!(g.keys, IndexKeys { last: vec!["zeros".into(), "ones".into(), "b".into()], ..IndexKeys::default() });
    }

    #[test]
    fn each_glob_is_indexed_by_its_last_literal_segment_else_its_first() {
        let keys =
            |globs: &[&str]| NameGlobs::new(&globs.iter().map(|g| g.to_string()).collect::<Vec<_>>()).unwrap().keys;
        let words = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            keys(&["torch.cuda.*", "{apex,amp}.x.*", "torch.autocast"]),
            IndexKeys { last: words(&["autocast"]), first: words(&["torch", "apex", "amp"]), any: false }
        );
        assert_eq!(
            keys(&["*.cuda", "torch.cuda.*"]),
            IndexKeys { last: words(&["cuda"]), first: words(&["torch"]), any: false }
        );
        // Keys are read after the braces expand, even across a dot, and each is listed once.
        assert_eq!(keys(&["a.{b.c,d}", "x.d"]), IndexKeys { last: words(&["c", "d"]), ..IndexKeys::default() });
        assert_eq!(keys(&["{torch.cuda,torch.npu}.*"]), IndexKeys { first: words(&["torch"]), ..IndexKeys::default() });
        assert!(keys(&["*.cuda.*"]).any);
        // A segment with two brace groups is literal too.
        assert_eq!(
            keys(&["torch.{a,b}_{c,d}"]),
            IndexKeys { last: words(&["a_c", "a_d", "b_c", "b_d"]), ..IndexKeys::default() }
        );
    }

    #[test]
    fn every_brace_group_expands() {
        let strings = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(expand_braces("a.{b,c*}").unwrap(), strings(&["a.b", "a.c*"]));
        assert_eq!(expand_braces("{a,b}.{c,d}x").unwrap(), strings(&["a.cx", "a.dx", "b.cx", "b.dx"]));
        assert_eq!(expand_braces("plain").unwrap(), strings(&["plain"]));
        assert!(matches!(expand_braces("a}{b}"), Err(GlobError::Unbalanced { .. })));
        assert!(matches!(expand_braces("{a{b}}"), Err(GlobError::Unbalanced { .. })));
        assert!(matches!(expand_braces("{a}{b"), Err(GlobError::Unclosed { .. })));
    }

    #[test]
    fn regex_characters_in_a_glob_are_literal() {
        let g = NameGlobs::new(&["a+b.c{x,(y)}".into(), "[q]".into()]).unwrap();
        for name in ["a+b.cx", "a+b.c(y)", "[q]"] {
            assert!(g.is_match(name), "{name}");
        }
        for name in ["aab.cx", "a+bxcx", "a+b.cy", "q"] {
            assert!(!g.is_match(name), "{name}");
        }
    }

    #[test]
    fn wildcards_inside_braces_several_groups_and_non_ascii_names() {
        let g = NameGlobs::new(&["{a*,b}.{x,y?}".into(), "t?.*_cuda".into()]).unwrap();
        for name in ["a.x", "abc.d.x", "b.yz", "t1.k_cuda", "té.mod.x_cuda"] {
            assert!(g.is_match(name), "{name}");
        }
        for name in ["b.y", "c.x", "a.xy", "t.k_cuda", "t1.k_cuda2", "a\nb.x", "t1.a\nb_cuda"] {
            assert!(!g.is_match(name), "{name}");
        }
    }

    #[test]
    fn unbalanced_braces_are_errors() {
        assert!(NameGlobs::new(&["torch.{a".into()]).is_err());
        assert!(NameGlobs::new(&["torch.a}".into()]).is_err());
        assert!(matches!(NameGlobs::new(&["a{b{c}}".into()]), Err(GlobError::Unbalanced { .. })));
        assert!(matches!(NameGlobs::new(&["a{b".into()]), Err(GlobError::Unclosed { .. })));
        assert!(matches!(NameGlobs::new(&[]), Err(GlobError::Empty)));
    }
}
