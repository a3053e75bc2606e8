//! A mistake inside one rule or summary entry of a pack: the path of the
//! field at fault (`match.any[0].args[1]`) and what is wrong with it. The
//! compiler builds the path on the way out, one `within` a level.

use super::glob::GlobError;
use super::lazy_regex::RegexError;
use std::fmt;

/// A version requirement or version that does not parse (`target`, `--target`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionError {
    /// No digit at all.
    NoVersion {
        /// The text as written.
        text: String,
    },
    /// An operator other than `<`, `<=`, `>`, `>=`, `==`.
    Operator {
        /// The operator as written.
        op: String,
    },
    /// The version is not two numbers with a dot between.
    NotMajorMinor {
        /// The version as written.
        text: String,
    },
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionError::NoVersion { text } => write!(f, "`{text}` has no version; write one such as `>=2.6`"),
            VersionError::Operator { op } => write!(f, "unknown operator `{op}`; use <, <=, >, >= or =="),
            VersionError::NotMajorMinor { text } => {
                write!(f, "`{text}` is not MAJOR.MINOR; write a version such as `2.6`")
            }
        }
    }
}

impl std::error::Error for VersionError {}

/// A mistake inside one rule or summary entry: the field at fault and what
/// is wrong with it.
#[derive(Debug)]
pub struct SpecError {
    /// The field, from the entry down (`match.any[0].args[1]`); empty for the entry itself.
    path: String,
    /// The alternative of a top-level `any` whose shared and own predicates
    /// together are at fault, when that is where it showed.
    alternative: Option<usize>,
    /// What is wrong (boxed: errors are rare, and a small `Result` is cheap to pass up).
    problem: Box<Problem>,
}

impl SpecError {
    /// The error as seen from the field `key` that holds the failing part.
    pub fn within(mut self, key: &str) -> Self {
        self.path = if self.path.is_empty() { key.to_string() } else { format!("{key}.{}", self.path) };
        self
    }

    /// The error as found in alternative `any[index]` of a top-level matcher.
    pub fn in_alternative(mut self, index: usize) -> Self {
        self.alternative = Some(index);
        self
    }

    /// An error at `path` inside the entry.
    pub fn at(path: &str, problem: Problem) -> Self {
        SpecError { path: path.to_string(), alternative: None, problem: Box::new(problem) }
    }
}

/// Turns an error of the part under the field `key` into the error of the
/// part that holds it: `.map_err(within("receiver"))`.
pub fn within<E: Into<SpecError>>(key: &str) -> impl FnOnce(E) -> SpecError + '_ {
    move |e| e.into().within(key)
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}", self.path)?;
            if let Some(i) = self.alternative {
                write!(f, " (alternative any[{i}])")?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}", self.problem)
    }
}

impl std::error::Error for SpecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.problem.as_ref() {
            Problem::Regex(e) => Some(e),
            Problem::Glob(e) => Some(e),
            Problem::Version(e) => Some(e),
            Problem::Query(e) => Some(e),
            Problem::Toml(e) => Some(e),
            _ => None,
        }
    }
}

impl<T: Into<Problem>> From<T> for SpecError {
    fn from(problem: T) -> Self {
        SpecError { path: String::new(), alternative: None, problem: Box::new(problem.into()) }
    }
}

/// What is wrong with a field of a rule or summary entry.
#[derive(Debug)]
pub enum Problem {
    /// A rule code that is not letters and digits.
    BadCode,
    /// A rule with neither `match` nor `emitted_by`.
    NoMatcher,
    /// A rule of a user's pack without `[rule.docs]`.
    NoDocs,
    /// Fields of which exactly one must be given.
    OneOf {
        /// The fields, as a list to show.
        fields: &'static str,
    },
    /// A value the field does not take.
    Unknown {
        /// The value as written.
        value: String,
        /// The values it takes, as a list to show.
        expected: &'static str,
    },
    /// A version requirement that does not parse.
    Version(VersionError),
    /// A message placeholder nothing provides.
    UnknownPlaceholder {
        /// The placeholder's name.
        name: String,
        /// The names every rule may use.
        known: &'static [&'static str],
    },
    /// A `{` with no `}` in a message.
    UnclosedPlaceholder,
    /// A `shell_command` rule without `triggers`.
    ShellWithoutTriggers,
    /// A `capture` named like a placeholder an anchor sets.
    CaptureSetByAnchor {
        /// The name.
        name: String,
    },
    /// An edit `on = "comparisons"` that is not a `sub`.
    ComparisonsNeedSub,
    /// A `lookup`, `nearest` or `options.unknown_in` naming an undeclared table.
    NoTable {
        /// The name used.
        name: String,
        /// The tables declared so far.
        known: Vec<String>,
    },
    /// An invalid regex.
    Regex(RegexError),
    /// An invalid list of globs.
    Glob(GlobError),
    /// An alternative of a top-level `any` without an anchor.
    AlternativeWithoutAnchor,
    /// `subclasses` in a matcher without a `call` anchor.
    SubclassesWithoutCall,
    /// `lookup.matches` without the `column` whose cells it tests.
    MatchesWithoutColumn,
    /// `use` names no `[matchers.NAME]` of the pack.
    UnknownMatcher {
        /// The name used.
        name: String,
        /// The names the pack defines.
        known: Vec<String>,
    },
    /// A named matcher that uses itself, directly or through others.
    MatcherUsesItself {
        /// The name.
        name: String,
    },
    /// `use` and `any` in one matcher.
    UseWithAny,
    /// A top-level matcher without an anchor.
    NoAnchor,
    /// A matcher with more than one anchor.
    SeveralAnchors,
    /// A `flows_into` without slots.
    NoSlot,
    /// A slot that is not exactly one kind.
    SlotKind,
    /// A `file` glob that does not end in `*.EXT`.
    FileGlobWithoutExtension {
        /// The glob as written.
        glob: String,
    },
    /// `built_only_with_cuda` beside an anchor other than `file`.
    BuiltOnlyWithCudaWithoutFile,
    /// A tree-sitter query that does not compile.
    Query(tree_sitter::QueryError),
    /// A tree-sitter query without a capture.
    QueryWithoutCapture,
    /// An argument check without `name`, `position` or `star`.
    ArgumentUnnamed,
    /// An argument check without alternatives in `is`.
    ArgumentWithoutTest,
    /// A `${placeholder}` in an argument's `regex` test.
    TemplateInRegex,
    /// A value that cannot be an argument test.
    NotATest {
        /// What kind of value it is (`an array`).
        kind: &'static str,
    },
    /// A nested table that is not in the schema.
    Toml(toml::de::Error),
    /// `name_regex` reading `qualname` where no anchor captures it.
    ResolvedNameOnly,
    /// A placeholder read that nothing captures.
    NeverCaptured {
        /// The placeholder.
        name: String,
    },
    /// Captures that wait for each other: the field at fault reads `name`,
    /// which `by` captures, and so on through `others` (`(name, read at, captured by)`).
    CaptureCycle {
        /// What the field at fault reads.
        name: String,
        /// Where that is captured.
        by: String,
        /// The rest of the cycle.
        others: Vec<(String, String, String)>,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::BadCode => write!(f, "use letters and digits only, e.g. `ORG001`"),
            Problem::NoMatcher => {
                write!(f, "missing; every rule needs a matcher (`[rule.match]`), or `emitted_by = \"suppressions\"`")
            }
            Problem::NoDocs => {
                write!(f, "missing; every rule needs `[rule.docs]` with `what`, `why`, `example` and `instead`")
            }
            Problem::OneOf { fields } => write!(f, "give exactly one of {fields}"),
            Problem::Unknown { value, expected } => write!(f, "unknown `{value}`; use {expected}"),
            Problem::Version(e) => e.fmt(f),
            Problem::UnknownPlaceholder { name, known } => write!(
                f,
                "unknown placeholder `{{{name}}}`; known: {}, arg.NAME, captures and `set` keys",
                known.join(", ")
            ),
            Problem::UnclosedPlaceholder => write!(f, "unclosed `{{`; end the placeholder with `}}`"),
            Problem::ShellWithoutTriggers => write!(
                f,
                "a `shell_command` rule needs `triggers`: the words a script must contain for the rule to be tried"
            ),
            Problem::CaptureSetByAnchor { name } => write!(
                f,
                "`capture = \"{name}\"` takes a name an anchor sets (`{{{name}}}`): an anchor matched later in the \
                 rule would overwrite it; choose another name"
            ),
            Problem::ComparisonsNeedSub => write!(f, "`on = \"comparisons\"` takes `sub`; write the edit as a `sub`"),
            Problem::NoTable { name, known } => {
                write!(f, "no data table `{name}`; declare it with [[data]] (known: {})", known.join(", "))
            }
            Problem::Regex(e) => e.fmt(f),
            Problem::Glob(e) => e.fmt(f),
            Problem::SubclassesWithoutCall => {
                write!(f, "`subclasses` widens a `call` anchor; add `call = [...]` beside it or remove it")
            }
            Problem::MatchesWithoutColumn => {
                write!(f, "`matches` tests a cell of the row; name its `column` (a header, `@target` or `@any`)")
            }
            Problem::AlternativeWithoutAnchor => {
                write!(f, "each alternative needs an anchor (call, method, string, ...)")
            }
            Problem::UnknownMatcher { name, known } => {
                let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                write!(f, "`use = \"{name}\"`: the pack defines no [matchers.{name}] (it defines: {known})")
            }
            Problem::MatcherUsesItself { name } => write!(
                f,
                "matcher `{name}` uses itself (directly or through other named matchers); a named matcher cannot \
                 be recursive"
            ),
            Problem::UseWithAny => write!(
                f,
                "`use` and `any` cannot stand in one matcher; put one of them in an `any` alternative of its own"
            ),
            Problem::NoAnchor => write!(
                f,
                "needs an anchor: one of call, method, attribute, string, compare, import, env_var, shell_command, \
                 file, condition, kind, query"
            ),
            Problem::SeveralAnchors => {
                write!(f, "give at most one anchor per matcher; use `any = [...]` for alternatives")
            }
            Problem::NoSlot => write!(f, "give at least one slot"),
            Problem::SlotKind => {
                write!(
                    f,
                    "each slot is one of: an argument (call/method with position or keyword), a receiver (call/method \
                     with `receiver = true`), assigned_to, or param"
                )
            }
            Problem::FileGlobWithoutExtension { glob } => {
                write!(f, "`{glob}` must end in `*.EXT` so the walker knows what to collect")
            }
            Problem::BuiltOnlyWithCudaWithoutFile => {
                write!(f, "`built_only_with_cuda` asks how a build names a file: use it beside `file = \"*.EXT\"`")
            }
            Problem::Query(e) => write!(
                f,
                "line {} column {}: {}; check the query against tree-sitter-python's node kinds",
                e.row + 1,
                e.column + 1,
                e.message
            ),
            Problem::QueryWithoutCapture => write!(f, "needs a capture, e.g. `@match`, naming the reported node"),
            Problem::ArgumentUnnamed => write!(f, "each argument needs `name`, `position` or `star = true`"),
            Problem::ArgumentWithoutTest => write!(f, "`is` needs at least one alternative"),
            Problem::TemplateInRegex => write!(
                f,
                "`regex` tests a string's value and takes no `${{placeholder}}`: use `text` (the argument's source) \
                 for a template"
            ),
            Problem::NotATest { kind } => write!(
                f,
                "cannot use {kind} as an argument test; use a state (`present`, ...), a literal value, or a \
                 table such as {{ eq = \"cuda\" }}"
            ),
            Problem::Toml(e) => write!(f, "{}", e.message().trim_end()),
            Problem::ResolvedNameOnly => write!(
                f,
                "`name_regex` tests the resolved name (`qualname`), which only an anchor captures (`call`, \
                 `attribute`, `method`, ...); add the anchor to this matcher or to one around it, or test the \
                 node's `text` instead"
            ),
            Problem::NeverCaptured { name } => write!(
                f,
                "placeholder `{name}` is read but never captured; capture it in this matcher or one around it \
                 (`capture = \"{name}\"`, an argument's `capture`, a `name_regex` group, a `lookup` capture, ...). \
                 `file_has`, `project_has` and `downgrade.when` start without the match's captures"
            ),
            Problem::CaptureCycle { name, by, others } => {
                let described: Vec<String> = others
                    .iter()
                    .map(|(name, at, by)| format!("`{at}` reads `{name}`, which `{by}` captures"))
                    .collect();
                write!(
                    f,
                    "reads `{name}`, which `{by}` captures, and {}: these captures wait for each other, so no \
                     order fills them; capture one of them without reading the other",
                    described.join(", and ")
                )
            }
        }
    }
}

wraps_errors!(Problem { Regex(RegexError), Glob(GlobError), Version(VersionError) });
