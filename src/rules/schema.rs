//! The on-disk form of a rule pack: what `rules/*.toml` and user packs contain.
//! `docs/rule-packs.md` documents every field; `compile.rs` checks them.

use crate::finding::{Applicability, Section, Severity};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A string or a list of strings (`call = "a"` or `call = ["a", "b"]`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single value.
    One(String),
    /// Several values, any of which may match.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The values as a list.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// A word a file must contain for a rule to be tried: anywhere in its text
/// as written (`"cuda"`), or as a whole name (`{ name = "npu" }`, which
/// `input` and `torch_npu` do not hold).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged, expecting = "a trigger is a word (\"cuda\") or a whole name ({ name = \"npu\" })")]
pub enum Trigger {
    /// Anywhere in the text, as written.
    Text(String),
    /// As a whole name: not part of a longer identifier.
    Name(WholeName),
}

/// `{ name = "npu" }` in `triggers`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WholeName {
    /// The name.
    pub name: String,
}

/// A whole pack file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackSpec {
    /// Name and description of the pack.
    pub pack: PackHeader,
    /// The rules.
    #[serde(default)]
    pub rule: Vec<RuleSpec>,
    /// Tables and counts shown in the section summaries.
    #[serde(default)]
    pub summary: SummarySpec,
    /// Data tables (TSV files next to the pack) that `lookup` and `nearest` read.
    #[serde(default)]
    pub data: Vec<DataSpec>,
    /// Named matchers (`[matchers.NAME]`) that the pack's matchers use with `use = "NAME"`.
    #[serde(default)]
    pub matchers: BTreeMap<String, MatcherSpec>,
}

/// `[[data]]`: a tab-separated table; `#` lines are comments, the first other line is the header.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSpec {
    /// Name used by `lookup.table`.
    pub name: String,
    /// Path relative to the pack file.
    pub file: String,
}

/// `[pack]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackHeader {
    /// Short identifier of the pack.
    pub name: String,
    /// One sentence on what the pack checks.
    #[serde(default)]
    pub description: String,
}

/// One `[[rule]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Stable code, e.g. `TX001`.
    pub code: String,
    /// kebab-case name.
    pub name: String,
    /// Report section.
    pub section: Section,
    /// Default severity.
    pub severity: Severity,
    /// Message template; `{placeholder}`s are filled from the match.
    pub message: String,
    /// Handled at run time by `transfer_to_npu`.
    #[serde(default)]
    pub auto_migrated: bool,
    /// Blocks automatic migration.
    #[serde(default)]
    pub blocker: bool,
    /// The pattern is right as written and only `transfer_to_npu` breaks it:
    /// where a project does not use automatic migration, the finding is
    /// info, and it still blocks automatic migration in the report's verdict.
    #[serde(default)]
    pub only_under_automatic: bool,
    /// Where this predicate-only matcher holds, `transfer_to_npu` handles
    /// the finding after all: it is `auto_migrated` and not a blocker.
    #[serde(default)]
    pub auto_migrated_when: Option<Box<MatcherSpec>>,
    /// Codes whose finding on the same node this rule replaces.
    #[serde(default)]
    pub overrides: Vec<String>,
    /// torch_npu versions the rule applies to, e.g. `"<=2.6"`.
    #[serde(default)]
    pub target: Option<String>,
    /// Words a file must contain for the rule to match (prefilter).
    #[serde(default)]
    pub triggers: Option<Vec<Trigger>>,
    /// Which node the finding points at (default: the matched node).
    #[serde(default)]
    pub report: Option<String>,
    /// Keep only the first finding of this rule in each file.
    #[serde(default)]
    pub once_per_file: bool,
    /// Keep only the first finding of this rule on each line.
    #[serde(default)]
    pub once_per_line: bool,
    /// How often a finding is right: `very-high`, `high` (default), `medium` or `low` (SARIF `precision`).
    #[serde(default)]
    pub precision: Option<String>,
    /// Where in a run its findings stop it first: `import`, `device`,
    /// `process_group` or `step` (default); ranks "Fix first".
    #[serde(default)]
    pub breaks_at: BreaksAt,
    /// Lower the severity where a condition holds.
    #[serde(default)]
    pub downgrade: Option<Box<DowngradeSpec>>,
    /// The documentation shown by the CLI, the report and SARIF. Required;
    /// absent only from the built-in packs as embedded (build.rs keeps their
    /// docs apart, see [`crate::rules::docs`]).
    #[serde(default)]
    pub docs: Option<DocsSpec>,
    /// What the rule matches (absent for rules npu-mem emits itself, see `emitted_by`).
    #[serde(rename = "match", default)]
    pub matcher: Option<Box<MatcherSpec>>,
    /// For rules without a matcher: the part of npu-mem that reports them (`suppressions`).
    #[serde(default)]
    pub emitted_by: Option<String>,
    /// An optional fix.
    #[serde(default)]
    pub fix: Option<Box<FixSpec>>,
}

/// `[rule.docs]`: what `npu-mem rule CODE`, `npu-mem rules --format json`
/// and SARIF show. Built-in rules must give `not_reported` (where the rule has
/// exceptions) and `sources`; `tests/rule_docs.rs` checks that, not the loader,
/// so user packs may leave them out.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocsSpec {
    /// What the rule finds: the positive case only.
    pub what: String,
    /// The code it stays silent on, one short bullet per exception.
    #[serde(default)]
    pub not_reported: Vec<String>,
    /// Why it matters on an Ascend NPU.
    pub why: String,
    /// Code that triggers it.
    pub example: String,
    /// What to write instead.
    pub instead: String,
    /// When the fix is offered, or why there is none, beyond its one-line description.
    #[serde(default)]
    pub fix_note: Option<String>,
    /// Public sources of the facts the other fields state.
    #[serde(default)]
    pub sources: Vec<String>,
}

/// `[rule.downgrade]`: `to` severity `when` the matcher holds at the node.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DowngradeSpec {
    /// The lower severity.
    pub to: Severity,
    /// The condition, a predicate-only matcher.
    pub when: MatcherSpec,
}

/// Which classes of a file that derive from a `call` anchor's class a call
/// of counts as a call of the class itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Subclasses {
    /// Those whose constructor hands its arguments to the class unchanged (no
    /// `__init__`, or one passing `*args, **kwargs` on): the class's argument
    /// tests hold for their calls.
    PassingArguments,
    /// Every one: what the class is matters, not the arguments.
    All,
}

/// `[rule.match]`: one anchor (what kind of node) plus predicates (all must hold).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatcherSpec {
    // ---- anchors
    /// A call whose callee resolves (through imports) to a qualified name matching a glob.
    pub call: Option<OneOrMany>,
    /// With `call`: also a call of a class of the same file that derives from
    /// a matching class (see [`Subclasses`]).
    pub subclasses: Option<Subclasses>,
    /// A method call `.name(...)` on any receiver.
    pub method: Option<OneOrMany>,
    /// A dotted name (attribute chain) resolving to a qualified name matching a glob.
    pub attribute: Option<OneOrMany>,
    /// A string (literal, f-string, `%` or `.format`) whose text matches a regex.
    pub string: Option<String>,
    /// A comparison with a string literal.
    pub compare: Option<Box<CompareSpec>>,
    /// An import of a module or name matching a glob.
    pub import: Option<OneOrMany>,
    /// An environment variable named in Python (whole string literal) or a shell script.
    pub env_var: Option<String>,
    /// A simple command in a shell script whose text matches a regex.
    pub shell_command: Option<String>,
    /// A file whose name matches a glob (reported at line 1).
    pub file: Option<OneOrMany>,
    /// A conditional expression or `if`/`elif` chain whose test calls something.
    pub condition: Option<Box<ConditionSpec>>,
    /// A raw tree-sitter query; the capture `@match` (or the first capture) is the node.
    pub query: Option<String>,
    /// A node of one of these tree-sitter kinds (`for_statement`, `assignment`, `module`, ...).
    pub kind: Option<OneOrMany>,
    /// Alternatives: the first that matches wins.
    pub any: Option<Vec<MatcherSpec>>,

    // ---- predicates on the node
    /// Argument checks for calls.
    #[serde(default)]
    pub args: Vec<ArgSpec>,
    /// The receiver of a method call must match.
    pub receiver: Option<Box<MatcherSpec>>,
    /// The node or one of its descendants must match.
    pub contains: Option<Box<MatcherSpec>>,
    /// Where a value sits (argument, keyword, assignment, parameter default).
    #[serde(default)]
    pub slot: Vec<SlotSpec>,
    /// The value is stored under a name (variable, attribute, dictionary key,
    /// command-line option) that the file reads in one of these slots.
    pub flows_into: Option<Box<FlowsIntoSpec>>,
    /// Source text of the node matches this regex.
    pub text: Option<String>,
    /// The node is the value (or inside the value) of a branch of a matching condition.
    pub in_branch_of: Option<Box<ConditionSpec>>,
    /// Text of the tests of the matched condition (or its `if`/`elif` chain) matches.
    pub condition_text: Option<String>,
    /// The node is being assigned to.
    pub assign_target: Option<bool>,
    /// Named children of the node (tree-sitter field names) must match.
    #[serde(default)]
    pub fields: BTreeMap<String, MatcherSpec>,
    /// Capture the node's text (and place) under this placeholder name.
    pub capture: Option<String>,
    /// The node is a name whose last bound value matches.
    pub binding: Option<Box<MatcherSpec>>,
    /// The node calls a function the file defines, and its definition matches.
    pub callee_definition: Option<Box<MatcherSpec>>,
    /// The node builds a class the file defines at module level, and its definition matches.
    pub class_definition: Option<Box<MatcherSpec>>,
    /// The `else` of the node's `if` chain (its block) or conditional expression (its last value) matches.
    pub else_branch: Option<Box<MatcherSpec>>,
    /// The node is a parameter of its function, and what every call in the file passes for it matches.
    pub from_callers: Option<Box<MatcherSpec>>,
    /// The nearest enclosing node that matches (searching up to the module).
    pub ancestor: Option<Box<MatcherSpec>>,
    /// In shell scripts, whether reads (`$X`) match as well as assignments (default true).
    pub shell_reads: Option<bool>,
    /// With a `file` anchor: a file of the project names the file (or not).
    pub named_in_project: Option<bool>,
    /// With a `file` anchor: every file that names the file is a build that
    /// compiles CUDA code only when it finds CUDA (or not).
    pub built_only_with_cuda: Option<bool>,
    /// Every project module that loads the file imports it inside a `try`
    /// catching `ImportError` (or not; decided after all files).
    pub loaded_only_guarded: Option<bool>,
    /// Some node of the enclosing function (or module) body matches.
    pub function_has: Option<Box<MatcherSpec>>,
    /// Some node earlier in the enclosing function (or module) body matches.
    pub preceded_in_function: Option<Box<MatcherSpec>>,
    /// Some node later in the enclosing function (or module) body matches.
    pub followed_in_function: Option<Box<MatcherSpec>>,
    /// Some node of the file matches (decided after the file is walked).
    pub file_has: Option<Box<MatcherSpec>>,
    /// Some node of some scanned file matches (decided after all files).
    pub project_has: Option<Box<MatcherSpec>>,
    /// Some node of a project module loaded with the file matches: one that
    /// imports the file (directly or not), or one some project file imports
    /// (decided after all files).
    pub loaded_with: Option<Box<MatcherSpec>>,
    /// The node is a loop whose own body trains (see `inside_training_loop`).
    pub training_loop: Option<bool>,
    /// At an import statement: some name it binds is (is not) read in the file.
    pub import_used: Option<bool>,
    /// At a parameter's default value: the file calls the function, and every
    /// call passes that parameter (the default is not used in the file).
    pub callers_pass: Option<bool>,
    /// Regex on the resolved name (`qualname`); named groups become placeholders.
    pub name_regex: Option<String>,
    /// A row of a data table, found by key, must (or must not) exist.
    pub lookup: Option<Box<LookupSpec>>,
    /// Capture the closest key of a data table.
    pub nearest: Option<Box<NearestSpec>>,
    /// Checks a `key:value,key:value` option string held by a placeholder.
    pub options: Option<Box<OptionsSpec>>,

    // ---- predicates on the context
    /// Inside the body of a `for`/`while` loop.
    pub inside_loop: Option<bool>,
    /// Inside the body of a training loop.
    pub inside_training_loop: Option<bool>,
    /// Runs on every step: in a training loop, or in a function that runs per step.
    pub runs_per_step: Option<bool>,
    /// Inside a `with` block (or a function decorated) with a call matching a glob.
    pub inside_with: Option<OneOrMany>,
    /// Under an `if`/`elif` (within the function) whose test text matches a regex.
    pub under_if: Option<String>,
    /// The call's arguments fit these parameters (positional-or-keyword, in order).
    pub signature: Option<Vec<String>>,
    /// Inside (a test or a branch of) an `if` chain or conditional expression,
    /// within the function, one of whose tests matches a regex.
    pub in_chain_testing: Option<String>,
    /// The receiver is a name or `self.attr` neither bound by nor assigned in the innermost loop.
    pub receiver_loop_invariant: Option<bool>,
    /// The receiver is a name or `self.attr` that the innermost training loop assigns.
    pub receiver_assigned_in_training_loop: Option<bool>,
    /// An enclosing `for` loop iterates over something matching (through enumerate/zip/tqdm and bindings).
    pub loop_over: Option<Box<MatcherSpec>>,
    /// The receiver is a variable of that loop (or of a comprehension inside it).
    pub receiver_loop_variable: Option<bool>,
    /// With `loop_over`: only the innermost enclosing loop counts.
    pub loop_innermost: Option<bool>,
    /// The file imports a module or name matching a glob.
    pub file_imports: Option<OneOrMany>,
    /// Some scanned file imports a module or name matching a glob.
    pub project_imports: Option<OneOrMany>,
    /// The file, or a module of its project that it imports (directly or
    /// through other such modules), imports a module or name matching a glob.
    pub process_imports: Option<OneOrMany>,

    // ---- combinators
    /// A named matcher of the pack (`[matchers.NAME]`) that must also hold at
    /// the node, as if written here inside `any = [...]`.
    #[serde(rename = "use")]
    pub uses: Option<String>,
    /// The match is dropped when this matcher also holds at the node.
    pub unless: Option<Box<MatcherSpec>>,
    /// Extra placeholders for the message when this alternative matches.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
}

/// `lookup = { table, key, column, is, found, capture }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupSpec {
    /// Table name (`[[data]]`).
    pub table: String,
    /// Key template, matched against the table's first column.
    pub key: String,
    /// Whether the row must exist (default `true`).
    #[serde(default = "yes")]
    pub found: bool,
    /// Column to test: a header name, `@target` (the column for `--target`), or `@any`.
    #[serde(default)]
    pub column: Option<String>,
    /// With `column`: the cell must be one of these (`@any`: in some version column).
    #[serde(default)]
    pub is: Option<Vec<String>>,
    /// With `column`: the cell must match this text regex, which may read
    /// placeholders as `${x}` (`'\\b${dtype_word}\\b'`).
    #[serde(default)]
    pub matches: Option<String>,
    /// `placeholder = "column header"` pairs to capture from the row.
    #[serde(default)]
    pub capture: BTreeMap<String, String>,
}

fn yes() -> bool {
    true
}

/// `nearest = { table, key, capture }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NearestSpec {
    /// Table name.
    pub table: String,
    /// Key template.
    pub key: String,
    /// Placeholder for the closest first-column value.
    pub capture: String,
}

/// `options = { of, separator, assign, all, any, unknown_in, capture }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionsSpec {
    /// The placeholder holding the option string.
    pub of: String,
    /// Between options (default `,`).
    #[serde(default)]
    pub separator: Option<String>,
    /// Between key and value (default `:`).
    #[serde(default)]
    pub assign: Option<String>,
    /// Every entry present: `key` or `key=value` (values compared case-insensitively).
    #[serde(default)]
    pub all: Vec<String>,
    /// At least one entry present.
    #[serde(default)]
    pub any: Vec<String>,
    /// Some key is missing from this table column (`{ table, column }`).
    #[serde(default)]
    pub unknown_in: Option<UnknownInSpec>,
    /// Placeholder for the unknown options, comma-separated.
    #[serde(default)]
    pub capture: Option<String>,
}

/// Where option keys are looked up.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnknownInSpec {
    /// Table name.
    pub table: String,
    /// Column (`@target`, `@any` or a header); a key is known when its cell is not `-` or `no`.
    pub column: String,
}

/// `compare = { ... }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSpec {
    /// Regex the string operand must match.
    pub literal: String,
    /// Operators that count (default `==`, `!=`, `in`, `not in`).
    #[serde(default)]
    pub ops: Option<Vec<String>>,
    /// For a collection operand: at least half its strings must match this regex.
    #[serde(default)]
    pub collection_majority: Option<String>,
}

/// `condition = { ... }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionSpec {
    /// Glob of a call the test must contain.
    pub test_calls: OneOrMany,
    /// Regex a branch value (a string, or the first argument of a call) must match.
    #[serde(default)]
    pub branch_value: Option<String>,
    /// Regex a branch value must also match where the chain has an `else`
    /// (or is a conditional expression): what is picked when the test fails.
    #[serde(default)]
    pub else_value: Option<String>,
}

/// One argument check: `{ name = "num_workers", position = 5, is = ["absent", 0] }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    /// Keyword name.
    #[serde(default)]
    pub name: Option<String>,
    /// 0-based positional index.
    #[serde(default)]
    pub position: Option<usize>,
    /// Alternatives; any may hold.
    pub is: Vec<toml::Value>,
    /// Placeholder name under which the argument's text is captured.
    #[serde(default)]
    pub capture: Option<String>,
    /// The `*args` value instead of a named or positional argument.
    #[serde(default)]
    pub star: bool,
}

/// `flows_into = { slot = [...], capture = "use" }`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowsIntoSpec {
    /// Where a read of the name must sit.
    pub slot: Vec<SlotSpec>,
    /// Placeholder for a description of that read (`` `torch.device(…)` on line 7 ``).
    pub capture: Option<String>,
}

/// One place a value may sit; see `docs/rule-packs.md`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotSpec {
    /// The value is an argument of a call resolving to this glob.
    pub call: Option<OneOrMany>,
    /// The value is an argument of a method call with this name.
    pub method: Option<OneOrMany>,
    /// Positional index; with neither `position` nor `keyword`, any positional argument.
    pub position: Option<usize>,
    /// `true`: the value is the receiver of the call (`x` in `x.save(path)`)
    /// rather than an argument.
    pub receiver: Option<bool>,
    /// Keyword names.
    pub keyword: Option<OneOrMany>,
    /// The call's first positional argument is a string matching this glob.
    pub first_arg: Option<String>,
    /// The value is assigned to a name or attribute whose last part matches this glob.
    pub assigned_to: Option<OneOrMany>,
    /// The value is the default of a parameter whose name matches this glob.
    pub param: Option<OneOrMany>,
}

/// `[rule.fix]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixSpec {
    /// Safe or unsafe.
    pub applicability: Applicability,
    /// What the fix does, in words (shown in reports).
    pub description: String,
    /// The edits.
    pub edits: Vec<EditSpec>,
    /// Offer the fix only where this predicate-only matcher holds.
    #[serde(default)]
    pub when: Option<Box<MatcherSpec>>,
    /// Rules whose fixes this fix makes necessary: their new findings in the
    /// same file are fixed with it, at this fix's safety.
    #[serde(default)]
    pub then: Vec<String>,
    /// Rules whose findings in the same file migrate with this one or not at
    /// all: their fixes become one, and none is offered while one of them has none.
    #[serde(default)]
    pub together: Option<TogetherSpec>,
    /// Where the fix would break code that already handles the NPU: it is
    /// then not offered, and the finding says why.
    #[serde(default)]
    pub withheld: Option<Box<FixConditionSpec>>,
    /// Where a safe fix may still change what the program does: it is then
    /// unsafe, and its description says why.
    #[serde(default)]
    pub unsafe_when: Option<Box<FixConditionSpec>>,
}

/// `withheld = { when = MATCHER, why = "..." }` and `unsafe_when = {...}`
/// in `[rule.fix]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixConditionSpec {
    /// A predicate-only matcher: where it holds, the condition applies.
    pub when: MatcherSpec,
    /// Why, shown as the finding's `fix_withheld` or after the fix's description.
    pub why: String,
}

/// `together = { codes = [...], why = "..." }` in `[rule.fix]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TogetherSpec {
    /// The codes of the rules whose findings migrate with this rule's.
    pub codes: Vec<String>,
    /// Why, in words that finish "one fix with ...: ", shown with the fix or with the reason there is none.
    pub why: String,
}

/// One edit of a fix.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditSpec {
    /// Which node: `report` (default), `node`, `callee`, `method_name`, `receiver`,
    /// `call_tail`, `keyword:NAME`, `keyword_value:NAME`, `capture:NAME`, or
    /// `comparisons` (the literals the stored value is compared with; `sub` only).
    #[serde(default)]
    pub on: Option<String>,
    /// Replace the node's text with this template.
    pub replace: Option<String>,
    /// Regex substitutions `[pattern, replacement]`; the first pattern that matches is applied once.
    pub sub: Option<Vec<(String, String)>>,
    /// Like `sub`, but every occurrence of every pattern is replaced.
    pub sub_all: Option<Vec<(String, String)>>,
    /// Set a keyword argument of the call: insert it, or replace its value.
    pub set_keyword: Option<SetKeywordSpec>,
    /// Insert this as the call's first positional argument.
    pub prepend_arg: Option<String>,
    /// Remove the argument `on` names, with the comma that separates it.
    #[serde(default)]
    pub remove_arg: bool,
    /// Pass the call's positional arguments by these keywords, in order
    /// (`autocast(flag)` -> `autocast(enabled=flag)`).
    pub name_args: Option<Vec<String>>,
}

/// `set_keyword = { name = "pin_memory", value = "True" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetKeywordSpec {
    /// Keyword name.
    pub name: String,
    /// Positional index the argument may also be passed at.
    #[serde(default)]
    pub position: Option<usize>,
    /// Value template.
    pub value: String,
}

/// `[summary]`: tables and counts for the section summaries.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummarySpec {
    /// Per-site configuration tables.
    #[serde(default)]
    pub table: Vec<TableSpec>,
    /// Pattern counts.
    #[serde(default)]
    pub count: Vec<CountSpec>,
    /// Lists of places where something is used.
    #[serde(default)]
    pub sites: Vec<SitesSpec>,
    /// Tables of distinct values with their counts.
    #[serde(default)]
    pub group: Vec<GroupSpec>,
    /// Fixed advice.
    #[serde(default)]
    pub note: Vec<NoteSpec>,
}

/// `[[summary.sites]]`: every place a matcher matches, as `path:line` (and `detail`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SitesSpec {
    /// Section.
    pub section: Section,
    /// What the sites are.
    pub label: String,
    /// The matcher.
    #[serde(rename = "match")]
    pub matcher: MatcherSpec,
    /// Optional template shown after each site.
    #[serde(default)]
    pub detail: Option<String>,
    /// What the report's opening "Next steps" uses the list for, if anything.
    #[serde(default)]
    pub role: Option<SitesRole>,
}

/// Uses of a site list in the report's opening "Next steps".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SitesRole {
    /// Scripts a user runs: where `transfer_to_npu` is imported to turn on automatic migration.
    EntryScripts,
    /// Module-level imports of `transfer_to_npu`: automatic migration is already on.
    AutomaticMigration,
    /// Imports of `transfer_to_npu` inside a function: automatic migration
    /// is on once the function runs, not for the code that runs at import time.
    LateAutomaticMigration,
    /// Scripts without a `__main__` guard that parse options at module
    /// level: entry scripts too, where nothing imports them.
    UnguardedScripts,
}

/// `[[summary.group]]`: distinct `key` values of the matches, with `value` and a count.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Section.
    pub section: Section,
    /// Heading.
    pub title: String,
    /// The matcher.
    #[serde(rename = "match")]
    pub matcher: MatcherSpec,
    /// Template of the grouping key.
    pub key: String,
    /// Template of the value shown next to the key.
    pub value: String,
    /// Column headings: key, value, count.
    pub columns: [String; 3],
    /// Words a file must contain for the group to be tried, as a rule's `triggers`.
    pub triggers: Option<Vec<Trigger>>,
}

/// `[[summary.note]]`: text shown in a section, always or when a rule fired.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteSpec {
    /// Section.
    pub section: Section,
    /// Heading.
    pub title: String,
    /// The text.
    pub text: String,
    /// Show only when this rule has findings.
    #[serde(default)]
    pub when_rule: Option<String>,
}

/// `[[summary.table]]`: one row per matching call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Section the table belongs to.
    pub section: Section,
    /// Heading.
    pub title: String,
    /// The calls that make rows.
    #[serde(rename = "match")]
    pub matcher: MatcherSpec,
    /// One column per argument.
    pub columns: Vec<ColumnSpec>,
}

/// A column: an argument shown as written, or its default when absent.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    /// Keyword name (also the column heading).
    pub arg: String,
    /// Positional index.
    #[serde(default)]
    pub position: Option<usize>,
    /// PyTorch's default, shown in parentheses when the argument is absent.
    pub default: String,
}

/// `[[summary.count]]`: how many nodes match, or how many findings a rule made.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountSpec {
    /// Section the count belongs to.
    pub section: Section,
    /// Label.
    pub label: String,
    /// Count matches of this matcher...
    #[serde(rename = "match")]
    pub matcher: Option<Box<MatcherSpec>>,
    /// ...or findings of this rule.
    pub rule: Option<String>,
}

/// Where in a run a rule's finding stops it first, for ranking what to fix
/// first: a run imports its modules, picks its device, sets up its process
/// group and parallelism, then steps. In that order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreaksAt {
    /// When the module is imported (an import that fails).
    Import,
    /// When the run picks and sets up its device (device strings, default
    /// tensor types, environment and allocator settings).
    Device,
    /// When it sets up its process group or parallel wrapper.
    ProcessGroup,
    /// Later: building its data and model, or a training step.
    #[default]
    Step,
}
