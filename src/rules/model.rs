//! Compiled rules: the checked, ready-to-run form of a pack. `compile.rs`
//! builds these from the TOML schema; `matcher.rs` evaluates them.

use super::glob::NameGlobs;
use super::lazy_regex::LazyRegex;
use crate::finding::{Applicability, Finding, Position, Section, Severity, SharedText};
use crate::rules::docs::RuleDocs;
use crate::rules::schema::{BreaksAt, DocsSpec, Trigger};
pub use crate::semantic::values::Literal;

/// A torch_npu version, `(major, minor)`.
pub type Version = (u32, u32);

/// The torch_npu versions advice can target.
pub const TARGETS: [(&str, Version); 3] = [("2.1", (2, 1)), ("2.6", (2, 6)), ("2.14", (2, 14))];

/// A version constraint such as `<=2.6`.
#[derive(Debug, Clone)]
pub struct VersionReq {
    /// `<`, `<=`, `>`, `>=` or `==`.
    pub op: String,
    /// The version compared with.
    pub version: Version,
}

impl VersionReq {
    /// Whether `target` satisfies the constraint.
    pub fn allows(&self, target: Version) -> bool {
        match self.op.as_str() {
            "<" => target < self.version,
            "<=" => target <= self.version,
            ">" => target > self.version,
            ">=" => target >= self.version,
            _ => target == self.version,
        }
    }
}

/// The kind of node a matcher starts from, with its identity test.
#[derive(Debug, Clone)]
pub enum Anchor {
    /// A call (or bare decorator) whose callee resolves to a matching name,
    /// or, when `subclasses` says so, names a class of the file derived from one.
    Call(NameGlobs, Option<super::schema::Subclasses>),
    /// A method call with one of these names.
    Method(Vec<String>),
    /// A maximal dotted name resolving to a matching name.
    Attribute(NameGlobs),
    /// A string-like value whose normalised text matches.
    Str(LazyRegex),
    /// A comparison with a matching string literal.
    Compare(CompareTest),
    /// An import statement importing a matching name.
    Import(NameGlobs),
    /// An environment variable (Python string literal or shell word).
    EnvVar(LazyRegex),
    /// A command in a shell script, from its command word on, that the script
    /// does not guard (see `shell::ShellCommand::guarded`).
    ShellCommand(LazyRegex),
    /// A file whose name matches (`extensions` tells the walker what to collect).
    File { globs: NameGlobs, extensions: Vec<String> },
    /// A conditional expression or `if` chain whose test calls a matching name.
    Condition(ConditionTest),
    /// The node captured by a raw tree-sitter query (index into the rule set's queries).
    Query(usize),
    /// A node of one of these tree-sitter kinds.
    Kind(Vec<String>),
}

/// Whether a fact is decided per file or for the whole scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Scope {
    /// Decided when the file has been walked.
    File,
    /// Decided when every file has been walked.
    Project,
    /// Decided when every file has been walked, over the file and the
    /// project's modules it imports, directly or through each other: what the
    /// process that runs the file has loaded.
    Process,
    /// Decided when every file has been walked, over the project's modules
    /// loaded with the file: those that import it, directly or through each
    /// other, and those some file of the project imports (a library's
    /// modules, loaded by whatever loads the library). A module that nothing
    /// imports and that does not import the file runs in other processes.
    LoadedWith,
    /// Decided when every file has been walked: whether a file of the
    /// project names the file of the finding (the fact index is one of
    /// [`NAMED_ANYWHERE`] and [`NAMED_UNCONDITIONALLY`]).
    NamedFile,
    /// Decided when every file has been walked, on the project's import
    /// graph: whether the modules that load the file all import it inside a
    /// `try` that catches `ImportError` (fact index 0), so that its failing
    /// to load is handled.
    Importers,
}

/// The [`Scope::NamedFile`] fact: some file of the project names the file.
pub const NAMED_ANYWHERE: usize = 0;
/// The [`Scope::NamedFile`] fact: some file names it other than a build that
/// compiles CUDA code only when it finds CUDA ([`crate::named_files`]).
pub const NAMED_UNCONDITIONALLY: usize = 1;

/// A fact about a file, computed while it is analysed.
#[derive(Debug)]
pub enum Fact {
    /// The file imports a matching name.
    Imports(NameGlobs),
    /// Some node of the file matches one of these alternatives.
    Has(Vec<Matcher>),
}

/// A compiled `lookup`.
#[derive(Debug, Clone)]
pub struct Lookup {
    /// Table index.
    pub table: usize,
    /// Key template.
    pub key: String,
    /// Row must exist (or must not).
    pub found: bool,
    /// Column to test.
    pub column: Option<String>,
    /// Accepted cells.
    pub is: Option<Vec<String>>,
    /// A text regex (a template reading `${x}`) the cell must match.
    pub matches: Option<String>,
    /// `(placeholder, column)` captures.
    pub capture: Vec<(String, String)>,
}

/// A compiled `options`.
#[derive(Debug, Clone)]
pub struct Options {
    /// Placeholder with the option string.
    pub of: String,
    /// Separator between options.
    pub separator: String,
    /// Separator between key and value.
    pub assign: String,
    /// Required entries.
    pub all: Vec<String>,
    /// Entries of which one is required.
    pub any: Vec<String>,
    /// `(table, column)` for unknown keys.
    pub unknown_in: Option<(usize, String)>,
    /// Placeholder for unknown options.
    pub capture: Option<String>,
}

/// Comparison anchor details.
#[derive(Debug, Clone)]
pub struct CompareTest {
    /// The string operand.
    pub literal: LazyRegex,
    /// Operators that count.
    pub ops: Vec<String>,
    /// For collection operands: at least half the strings must match this.
    pub majority: Option<LazyRegex>,
}

/// Condition anchor details (also used by `in_branch_of`).
#[derive(Debug, Clone)]
pub struct ConditionTest {
    /// A call the test must contain.
    pub test_calls: NameGlobs,
    /// A branch value must match this.
    pub branch_value: Option<LazyRegex>,
    /// Where the chain has an `else`, a branch value must match this too.
    pub else_value: Option<LazyRegex>,
}

/// One alternative accepted for an argument.
#[derive(Debug, Clone)]
pub enum ArgAlt {
    /// Not passed (and no `*args`/`**kwargs` could pass it).
    Absent,
    /// Passed, whatever the value.
    Present,
    /// Passed, and not the literal `None`.
    NotNone,
    /// Passed as a literal.
    Literal,
    /// Passed as an expression that is not a literal.
    NonLiteral,
    /// Possibly passed through `*args`/`**kwargs`.
    Unknown,
    /// A literal equal to this value.
    Eq(Literal),
    /// A numeric literal compared with a number: `(op, number)`.
    Cmp(&'static str, f64),
    /// A string value matching a regex.
    Regex(LazyRegex),
    /// The argument's source text matches a regex.
    Text(LazyRegex),
    /// The argument's node matches a matcher.
    Match(Box<Matcher>),
}

/// A check of one argument.
#[derive(Debug, Clone)]
pub struct ArgCheck {
    /// Keyword name.
    pub name: Option<String>,
    /// Positional index.
    pub position: Option<usize>,
    /// Any of these must hold.
    pub alternatives: Vec<ArgAlt>,
    /// Placeholder to capture the argument text under.
    pub capture: Option<String>,
    /// Check the `*args` value instead.
    pub star: bool,
}

/// A place a value may sit.
#[derive(Debug, Clone, Default)]
pub struct Slot {
    /// Argument of a call resolving to these globs.
    pub call: Option<NameGlobs>,
    /// Argument of a method call with these names.
    pub method: Option<Vec<String>>,
    /// Positional index.
    pub position: Option<usize>,
    /// The value is the call's receiver, not an argument.
    pub receiver: bool,
    /// Keyword names.
    pub keyword: Option<Vec<String>>,
    /// The call's first positional argument is a string matching.
    pub first_arg: Option<NameGlobs>,
    /// Assigned to a name whose last part matches.
    pub assigned_to: Option<NameGlobs>,
    /// Default of a parameter whose name matches.
    pub param: Option<NameGlobs>,
}

/// `flows_into`: where a stored value is read again.
#[derive(Debug, Clone)]
pub struct FlowsInto {
    /// The slots a read of the name must sit in.
    pub slots: Vec<Slot>,
    /// Placeholder that receives a description of the first such read.
    pub capture: Option<String>,
}

/// A predicate; all of a matcher's predicates must hold.
#[derive(Debug, Clone)]
pub enum Pred {
    /// Argument checks.
    Args(Vec<ArgCheck>),
    /// The receiver matches.
    Receiver(Box<Matcher>),
    /// The node or a descendant matches.
    Contains(Box<Matcher>),
    /// The value sits in one of these slots.
    Slot(Vec<Slot>),
    /// The value is stored under a name that the file reads in one of these slots.
    FlowsInto(FlowsInto),
    /// The node's text matches.
    Text(LazyRegex),
    /// The node is a branch value of a matching condition.
    InBranchOf(ConditionTest),
    /// The tests of the condition chain match.
    ConditionText(LazyRegex),
    /// The node is (or is not) an assignment target.
    AssignTarget(bool),
    /// Inside (or not inside) a loop body.
    InsideLoop(bool),
    /// Inside (or not inside) a training loop body.
    InsideTrainingLoop(bool),
    /// Runs (or does not run) on every step: in a training loop, or in a
    /// function that runs per step ([`crate::semantic::steps`]).
    RunsPerStep(bool),
    /// Inside a with-block or decorated function with a matching call.
    InsideWith(NameGlobs),
    /// Under an `if` whose test matches.
    UnderIf(LazyRegex),
    /// In an `if` chain or conditional expression with a matching test.
    InChainTesting(LazyRegex),
    /// The call's arguments fit these parameter names.
    Signature(Vec<String>),
    /// The receiver is (or is not) loop-invariant.
    ReceiverLoopInvariant(bool),
    /// The receiver is (or is not) assigned in the innermost training loop.
    ReceiverAssignedInTrainingLoop(bool),
    /// An enclosing loop iterates over a match; optionally the receiver is its variable.
    LoopOver { over: Option<Box<Matcher>>, receiver_variable: bool, innermost: bool },
    /// The file imports a matching name.
    FileImports(NameGlobs),
    /// A fact must hold: `(scope, fact index)`.
    Fact(Scope, usize),
    /// Named children match.
    Fields(Vec<(String, Matcher)>),
    /// Capture the node under a placeholder.
    Capture(String),
    /// The name's bound value matches.
    Binding(Box<Matcher>),
    /// The call's function, defined in the same file, matches.
    CalleeDefinition(Box<Matcher>),
    /// The call builds a class defined at the file's module level, whose definition matches.
    ClassDefinition(Box<Matcher>),
    /// The `else` of an `if` chain or conditional expression matches.
    ElseBranch(Box<Matcher>),
    /// The name is a parameter of its function, and every value the file's calls pass for it matches.
    FromCallers(Box<Matcher>),
    /// An enclosing node matches.
    Ancestor(Box<Matcher>),
    /// With a `file` anchor: a Python string or shell line of the project
    /// names the file (or not; [`crate::named_files`]).
    NamedInProject(bool),
    /// With a `file` anchor: every file of the project that names the file
    /// is a build that compiles CUDA code only when it finds CUDA (or not).
    BuiltOnlyWithCuda(bool),
    /// Every module of the project that loads the file does so inside a
    /// `try` that catches `ImportError` (or not; [`Scope::Importers`]).
    LoadedOnlyGuarded(bool),
    /// In shell scripts, only assignments match (no effect in Python).
    ShellAssignmentsOnly,
    /// A node of the enclosing function (or module) matches.
    FunctionHas(Box<Matcher>),
    /// A node earlier in the enclosing function (or module) matches.
    Preceded(Box<Matcher>),
    /// A node later in the enclosing function (or module) matches.
    Followed(Box<Matcher>),
    /// The node is (is not) a training loop.
    TrainingLoop(bool),
    /// At an import statement: some name it binds is (is not) read in the file.
    ImportUsed(bool),
    /// At a parameter's default: every call of the function in the file passes it (or not).
    CallersPass(bool),
    /// Regex on `qualname`; named groups become placeholders.
    NameRegex(LazyRegex),
    /// A text regex with `${placeholder}` back-references, compiled when evaluated.
    TextTemplate(String),
    /// A data table lookup.
    Lookup(Lookup),
    /// Closest key of a table: `(table, key template, placeholder)`.
    Nearest(usize, String, String),
    /// An option-string check.
    Options(Options),
    /// The match is dropped when this holds.
    Unless(Box<Matcher>),
    /// One of these holds.
    Any(Vec<Matcher>),
}

impl Pred {
    /// The one nested matcher of a predicate that has one, with its key.
    pub fn single_nested(&self) -> Option<(&'static str, &Matcher)> {
        Some(match self {
            Pred::Receiver(m) => ("receiver", m),
            Pred::Contains(m) => ("contains", m),
            Pred::Binding(m) => ("binding", m),
            Pred::CalleeDefinition(m) => ("callee_definition", m),
            Pred::ClassDefinition(m) => ("class_definition", m),
            Pred::ElseBranch(m) => ("else_branch", m),
            Pred::FromCallers(m) => ("from_callers", m),
            Pred::Ancestor(m) => ("ancestor", m),
            Pred::FunctionHas(m) => ("function_has", m),
            Pred::Preceded(m) => ("preceded_in_function", m),
            Pred::Followed(m) => ("followed_in_function", m),
            Pred::LoopOver { over: Some(m), .. } => ("loop_over", m),
            Pred::Unless(m) => ("unless", m),
            _ => return None,
        })
    }

    /// The pattern of a `name_regex`.
    pub fn name_regex(&self) -> Option<&LazyRegex> {
        match self {
            Pred::NameRegex(re) => Some(re),
            _ => None,
        }
    }

    /// The matchers nested in this predicate, negated ones (`unless`) included.
    pub fn nested(&self) -> Vec<&Matcher> {
        if let Some((_, m)) = self.single_nested() {
            return vec![m];
        }
        match self {
            Pred::Fields(fields) => fields.iter().map(|(_, m)| m).collect(),
            Pred::Any(ms) => ms.iter().collect(),
            Pred::Args(checks) => checks
                .iter()
                .flat_map(|c| &c.alternatives)
                .filter_map(|alt| match alt {
                    ArgAlt::Match(m) => Some(&**m),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// For a predicate decided by the project's file names, the literal it
    /// adds to a finding's conditions.
    pub fn named_file_literal(&self) -> Option<(Scope, usize, bool)> {
        match self {
            Pred::NamedInProject(want) => Some((Scope::NamedFile, NAMED_ANYWHERE, *want)),
            Pred::BuiltOnlyWithCuda(want) => Some((Scope::NamedFile, NAMED_UNCONDITIONALLY, !*want)),
            _ => None,
        }
    }

    /// For a predicate decided once every file has been walked without a
    /// fact of the rules (file names, the import graph), the literal it adds
    /// to a finding's conditions.
    pub fn project_literal(&self) -> Option<(Scope, usize, bool)> {
        match self {
            Pred::LoadedOnlyGuarded(want) => Some((Scope::Importers, 0, *want)),
            _ => self.named_file_literal(),
        }
    }
}

/// An anchor, predicates and extra placeholders.
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    /// What node this matches; `None` for predicate-only matchers.
    pub anchor: Option<Anchor>,
    /// Further conditions.
    pub preds: Vec<Pred>,
    /// Extra placeholders set when this matches.
    pub set: Vec<(String, String)>,
    /// The placeholders it reads that it does not capture itself (they must
    /// come from a matcher around it), each with the path of its first
    /// reader; the compiler orders and checks predicates with it.
    pub reads: Places,
}

impl Matcher {
    /// Whether `test` holds for one of its predicates or of the predicates of
    /// a matcher nested in it, negated ones included.
    pub fn any_pred(&self, mut test: impl FnMut(&Pred) -> bool) -> bool {
        let mut todo = vec![self];
        while let Some(m) = todo.pop() {
            for p in &m.preds {
                if test(p) {
                    return true;
                }
                todo.extend(p.nested());
            }
        }
        false
    }

    /// Whether it or a matcher nested in it tests a fact (`file_has`,
    /// `project_imports`, ...).
    pub fn tests_a_fact(&self) -> bool {
        self.any_pred(|p| matches!(p, Pred::Fact(..)))
    }
}

/// Placeholders by name, each with the path in its matcher
/// (`fields.left.capture`) of the first part that captures or reads it.
pub type Places = std::collections::BTreeMap<String, String>;

/// Which node a finding points at.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportAt {
    /// The anchor's natural report node.
    Node,
    /// A keyword argument of the call.
    Keyword(String),
    /// The value of a keyword argument.
    KeywordValue(String),
    /// The first line of the node (a loop's header).
    Header,
    /// Line 1 of the file.
    FileStart,
    /// The header of the innermost loop around the node.
    EnclosingLoop,
    /// A node captured under this placeholder.
    Capture(String),
}

/// The node an edit applies to.
#[derive(Debug, Clone, PartialEq)]
pub enum EditTarget {
    /// The reported node.
    Report,
    /// The anchor node.
    Node,
    /// The callee expression of the call.
    Callee,
    /// The method name of a method call.
    MethodName,
    /// The receiver of a method call.
    Receiver,
    /// From the end of the receiver to the end of the call (`.cuda()`).
    CallTail,
    /// A keyword argument.
    Keyword(String),
    /// A keyword argument's value.
    KeywordValue(String),
    /// A node captured under this placeholder.
    Capture(String),
    /// The string literals that the reported value is compared with, once
    /// stored under a name (every such comparison in the file; may be none).
    Comparisons,
}

/// What an edit does.
#[derive(Debug)]
pub enum EditAction {
    /// Replace the node with a template.
    Replace(String),
    /// Apply the first matching substitution once.
    Sub(Vec<(LazyRegex, String)>),
    /// Apply every substitution everywhere.
    SubAll(Vec<(LazyRegex, String)>),
    /// Insert `name=value`, or replace the argument's value (by keyword or at `position`).
    SetKeyword { name: String, position: Option<usize>, value: String },
    /// Insert a first positional argument.
    PrependArg(String),
    /// Remove the argument with its separating comma.
    RemoveArg,
    /// Pass the call's positional arguments by these keywords, in order.
    NameArgs(Vec<String>),
}

/// One edit template.
#[derive(Debug)]
pub struct EditTemplate {
    /// Where.
    pub on: EditTarget,
    /// What.
    pub action: EditAction,
}

/// A compiled fix.
#[derive(Debug)]
pub struct FixTemplate {
    /// Safe or unsafe.
    pub applicability: Applicability,
    /// In words.
    pub description: String,
    /// Edits.
    pub edits: Vec<EditTemplate>,
    /// Offer the fix only where this holds.
    pub when: Option<Matcher>,
    /// Codes whose findings, once this fix is applied, are fixed with it.
    pub then: Vec<String>,
    /// Rules whose findings in the same file migrate with this one's, or not at all.
    pub together: Option<super::schema::TogetherSpec>,
    /// Where the fix is withheld, and why (`withheld` in `[rule.fix]`).
    pub withheld: Option<(Matcher, String)>,
    /// Where the fix is unsafe, and why (`unsafe_when` in `[rule.fix]`).
    pub unsafe_when: Option<(Matcher, String)>,
}

/// A compiled rule.
#[derive(Debug)]
pub struct Rule {
    /// Code.
    pub code: SharedText,
    /// Name.
    pub name: SharedText,
    /// Section.
    pub section: Section,
    /// Default severity.
    pub severity: Severity,
    /// Message template.
    pub message: String,
    /// Handled by automatic migration.
    pub auto_migrated: bool,
    /// Blocks automatic migration.
    pub blocker: bool,
    /// Breaks only under automatic migration (info elsewhere).
    pub only_under_automatic: bool,
    /// Codes this rule's findings replace on the same node.
    pub overrides: Vec<String>,
    /// Versions it applies to.
    pub target: Option<VersionReq>,
    /// Words a file must contain for the rule to match (prefilter).
    pub triggers: Option<Vec<Trigger>>,
    /// Documentation: read it with [`Rule::docs`].
    pub docs: RuleDocs,
    /// Alternatives, each with an anchor.
    pub alternatives: Vec<Matcher>,
    /// Where findings point.
    pub report: ReportAt,
    /// Severity lowering.
    pub downgrade: Option<(Severity, Matcher)>,
    /// Where automatic migration handles a finding of a rule that is not `auto_migrated`.
    pub auto_migrated_when: Option<Matcher>,
    /// Fix.
    pub fix: Option<FixTemplate>,
    /// A condition (`downgrade.when`, `auto_migrated_when`, or the fix's
    /// `when`, `withheld` or `unsafe_when`) tests a fact (`file_has`): its
    /// findings are built once the file has been walked.
    pub conditions_read_file: bool,
    /// The pack it came from (file name or `builtin:NAME`).
    pub origin: String,
    /// Keep only the first finding per file.
    pub once_per_file: bool,
    /// Keep only the first finding per line.
    pub once_per_line: bool,
    /// SARIF precision: `very-high`, `high`, `medium` or `low`.
    pub precision: String,
    /// Where in a run its findings stop it first.
    pub breaks_at: BreaksAt,
}

impl Rule {
    /// Its documentation (the built-in rules' is inflated on first use).
    pub fn docs(&self) -> &DocsSpec {
        self.docs.of(&self.code)
    }

    /// A finding of this rule from `start` to `end` in `path`, carrying the
    /// rule's own metadata; callers add the fix, byte range and source line.
    pub fn finding(&self, path: &SharedText, start: Position, end: Position, message: String) -> Finding {
        Finding {
            code: self.code.clone(),
            name: self.name.clone(),
            severity: self.severity,
            section: self.section,
            path: path.clone(),
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
            message,
            auto_migrated: self.auto_migrated,
            blocker: self.blocker,
            only_under_automatic: self.only_under_automatic,
            advisory: false,
            unlaunched: false,
            advice: None,
            reached: None,
            fix: None,
            fix_withheld: None,
            cell: None,
            byte_range: (0, 0),
            source_line: String::new(),
            file_region: None,
            project: 0,
            at_module_level: false,
        }
    }
}

/// A summary list of sites.
#[derive(Debug)]
pub struct Sites {
    /// Section.
    pub section: Section,
    /// Label.
    pub label: String,
    /// Alternatives.
    pub alternatives: Vec<Matcher>,
    /// Detail template.
    pub detail: Option<String>,
    /// What the report's "Next steps" uses the list for.
    pub role: Option<super::schema::SitesRole>,
}

/// A summary table of distinct values.
#[derive(Debug)]
pub struct Group {
    /// Section.
    pub section: Section,
    /// Heading.
    pub title: String,
    /// Alternatives.
    pub alternatives: Vec<Matcher>,
    /// Key template.
    pub key: String,
    /// Value template.
    pub value: String,
    /// Column headings.
    pub columns: [String; 3],
    /// Words a file must contain for the group to be tried (prefilter).
    pub triggers: Option<Vec<Trigger>>,
}

/// Fixed summary text.
#[derive(Debug)]
pub struct Note {
    /// Section.
    pub section: Section,
    /// Heading.
    pub title: String,
    /// Text.
    pub text: String,
    /// Only when this rule fired.
    pub when_rule: Option<String>,
}

/// A summary table: one row per match.
#[derive(Debug)]
pub struct Table {
    /// Section.
    pub section: Section,
    /// Heading.
    pub title: String,
    /// Alternatives.
    pub alternatives: Vec<Matcher>,
    /// `(keyword, position, default)` per column.
    pub columns: Vec<(String, Option<usize>, String)>,
}

/// What a summary count counts.
#[derive(Debug)]
pub enum CountSource {
    /// Matches of a matcher (alternatives).
    Matches(Vec<Matcher>),
    /// Findings of a rule code.
    Rule(String),
}

/// A summary count.
#[derive(Debug)]
pub struct Count {
    /// Section.
    pub section: Section,
    /// Label.
    pub label: String,
    /// What it counts.
    pub source: CountSource,
}
