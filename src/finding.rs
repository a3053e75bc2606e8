//! The result types every stage shares: severities, sections, findings and fixes.

use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// Text that many findings hold alike (a rule's code and name, a file's
/// path): one allocation, shared by reference count. A large repository
/// keeps thousands of findings until the report, and these three texts were
/// a fifth of each.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct SharedText(Arc<str>);

impl SharedText {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<std::path::Path> for SharedText {
    fn as_ref(&self) -> &std::path::Path {
        self.0.as_ref().as_ref()
    }
}

impl std::ops::Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for SharedText {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        SharedText(text.into())
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        SharedText(text.into())
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedText {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How much a finding matters, as the catalog defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// An opportunity or a piece of advice.
    Info,
    /// A real memory or speed cost.
    Warning,
    /// Breaks, or silently gives wrong results, on an NPU.
    Error,
}

impl Severity {
    /// The lowercase name used in reports and packs.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The five report sections, in the order of the Ascend memory-analysis checklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// DataLoader workers, pinning, prefetching.
    DataLoading,
    /// Copies between host and device, device strings, automatic migration.
    Transfer,
    /// Autocast, GradScaler, half precision.
    MixedPrecision,
    /// Caches, graphs kept alive, allocator settings, checkpointing.
    Memory,
    /// `torch.cuda` APIs and their NPU counterparts.
    NpuApi,
    /// Findings about npu-mem's own suppression comments.
    Meta,
}

impl Section {
    /// The five checklist sections in report order ([`Section::Meta`] comes after them when it has findings).
    pub const ALL: [Section; 5] =
        [Section::DataLoading, Section::Transfer, Section::MixedPrecision, Section::Memory, Section::NpuApi];

    /// The identifier used in packs and JSON.
    pub fn id(self) -> &'static str {
        match self {
            Section::DataLoading => "data-loading",
            Section::Transfer => "transfer",
            Section::MixedPrecision => "mixed-precision",
            Section::Memory => "memory",
            Section::NpuApi => "npu-api",
            Section::Meta => "meta",
        }
    }

    /// The heading shown in the text report.
    pub fn title(self) -> &'static str {
        match self {
            Section::DataLoading => "Data Loading",
            Section::Transfer => "Host-Device Transfer",
            Section::MixedPrecision => "Mixed Precision",
            Section::Memory => "Memory Efficiency",
            Section::NpuApi => "torch_npu APIs",
            Section::Meta => "Suppression comments",
        }
    }
}

/// A 1-based line and column; columns count Unicode characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
pub struct Position {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column in characters.
    pub column: usize,
}

/// Whether a fix may change behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Keeps the program's meaning on the NPU; applied by `--fix`.
    Safe,
    /// May change behaviour; applied only with `--unsafe-fixes`.
    Unsafe,
}

impl Applicability {
    /// `safe` or `unsafe`.
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

/// One text replacement: the range `start..end` becomes `content`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Edit {
    /// Where the replaced text starts.
    pub start: Position,
    /// Where the replaced text ends (exclusive).
    pub end: Position,
    /// The new text.
    pub content: String,
    /// Byte offsets of the replaced range, for the fixer.
    #[serde(skip)]
    pub byte_range: (usize, usize),
}

/// A fix: a set of non-overlapping edits and how safe they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Fix {
    /// Safe or unsafe.
    pub applicability: Applicability,
    /// What the fix does, in words.
    #[serde(skip)]
    pub description: String,
    /// The edits, in source order.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// Marks a safe fix unsafe and appends the reason to its description;
    /// an unsafe fix keeps its first reason.
    pub fn make_unsafe(&mut self, why: &str) {
        if self.applicability == Applicability::Safe {
            self.applicability = Applicability::Unsafe;
            self.description.push_str("; unsafe: ");
            self.description.push_str(why);
        }
    }
}

/// Why a finding is advice rather than work to do: where it was decided
/// (the project layer) is where the reason is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Advice {
    /// Its project is on automatic migration, and `transfer_to_npu` handles
    /// the pattern at run time.
    TransferToNpu,
    /// No started process runs its file: an entry script the launch scripts
    /// never start, or a module only such scripts import.
    UnlaunchedFile,
    /// It lies in the `__main__` block of a script nothing starts.
    UnlaunchedMain,
    /// It lies in a function nothing in the project calls.
    UncalledFunction,
    /// It lies in a branch whose test fails with the options of every run
    /// the launch scripts start.
    UntakenBranch,
    /// It lies in a test that an NPU host skips for want of CUDA.
    CudaOnlyTest,
    /// No run the user names (`--entry`) reaches its file.
    Unreached,
    /// It lies in a registered class that no configuration of the named runs selects.
    UnselectedClass,
    /// Its file is the source another file says it was generated from: what
    /// runs is the generated copy, which carries the same finding.
    GeneratorSource,
    /// Its file lies in a directory for another platform (`runtime/gpu/`,
    /// `tensorrt/`) that no started run imports.
    OtherPlatform,
    /// Its file is a CUDA backend (`cuda_accelerator.py`) with an NPU twin
    /// (`npu_accelerator.py`) that an Ascend host uses instead.
    CudaBackendFile,
}

impl Advice {
    /// The identifier used in JSON and SARIF (`uncalled-function`).
    pub fn id(self) -> &'static str {
        match self {
            Advice::TransferToNpu => "transfer-to-npu",
            Advice::UnlaunchedFile => "unlaunched-file",
            Advice::UnlaunchedMain => "unlaunched-main",
            Advice::UncalledFunction => "uncalled-function",
            Advice::UntakenBranch => "untaken-branch",
            Advice::CudaOnlyTest => "cuda-only-test",
            Advice::Unreached => "unreached",
            Advice::UnselectedClass => "unselected-class",
            Advice::GeneratorSource => "generator-source",
            Advice::OtherPlatform => "other-platform",
            Advice::CudaBackendFile => "cuda-backend-file",
        }
    }

    /// Why, in words that finish "advice: ...".
    pub fn describe(self) -> &'static str {
        match self {
            Advice::TransferToNpu => "handled by transfer_to_npu at run time",
            Advice::UnlaunchedFile => "in a file that no launch script starts or imports",
            Advice::UnlaunchedMain => "in the `__main__` block of a script nothing starts",
            Advice::UncalledFunction => "in a function nothing in the project calls",
            Advice::UntakenBranch => "in a branch that no run of the launch scripts takes",
            Advice::CudaOnlyTest => "in a test that an NPU host skips for want of CUDA",
            Advice::Unreached => "in a file that no named run reaches",
            Advice::UnselectedClass => "in a registered class that no configuration of the named runs selects",
            Advice::GeneratorSource => "in the source of a generated file: the generated copy is what runs",
            Advice::OtherPlatform => "in a directory for another platform that no launch script starts or imports",
            Advice::CudaBackendFile => "in a CUDA backend file whose NPU twin an Ascend host uses instead",
        }
    }
}

/// One reported problem at one place in one file.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Finding {
    /// The rule code, e.g. `TX001`.
    pub code: SharedText,
    /// The rule's kebab-case name.
    pub name: SharedText,
    /// Severity after any per-site downgrade.
    pub severity: Severity,
    /// Report section.
    pub section: Section,
    /// Display path, `/`-separated, relative to the working directory when inside it.
    pub path: SharedText,
    /// In a notebook: the cell (1-based, counting every cell as Jupyter does);
    /// `line` and `end_line` then count from the cell's first line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<usize>,
    /// Start line (1-based).
    pub line: usize,
    /// Start column (1-based, characters).
    pub column: usize,
    /// End line (1-based).
    pub end_line: usize,
    /// End column (1-based, characters, exclusive).
    pub end_column: usize,
    /// Message naming the concrete thing found.
    pub message: String,
    /// Whether `transfer_to_npu` already handles the pattern.
    pub auto_migrated: bool,
    /// Whether the pattern blocks automatic migration.
    pub blocker: bool,
    /// Whether the pattern breaks only under automatic migration (the rule's
    /// `only_under_automatic`): elsewhere the finding is info.
    #[serde(skip)]
    pub only_under_automatic: bool,
    /// Whether the finding is advice only: its project is on automatic
    /// migration, which handles it at run time (its severity is then `info`).
    #[serde(default)]
    pub advisory: bool,
    /// Whether the finding is advice because no process of its project runs
    /// the code: it lies in entry scripts that the project's launch scripts
    /// never start, in modules only they import, or in a function nothing
    /// in the project calls (see [`crate::project::launches`], [`crate::project::uncalled`]);
    /// its severity is then `info`, and it blocks nothing (`blocker` is false).
    #[serde(default)]
    pub unlaunched: bool,
    /// Why the finding is advice (`None` when it is not): the one reason
    /// behind `advisory` or `unlaunched`, for reports that say why.
    #[serde(default)]
    pub advice: Option<Advice>,
    /// With runs the user names (`--entry`), whether one of them reaches
    /// the file; `None` without named runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<bool>,
    /// A machine-applicable fix, if the rule has one and it applies here.
    pub fix: Option<Fix>,
    /// Why the rule's fix, which applies here, is not offered: it would have
    /// to migrate with code that cannot (see [`crate::rules::guards`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_withheld: Option<String>,
    /// Byte range of the reported node, for overrides and fixes.
    #[serde(skip)]
    pub byte_range: (usize, usize),
    /// The text of the start line, for source excerpts.
    #[serde(skip)]
    pub source_line: String,
    /// In a notebook: `(line, column, end_line, end_column)` in the notebook
    /// file itself, for viewers that show the JSON (SARIF, annotations).
    #[serde(skip)]
    pub file_region: Option<Box<(usize, usize, usize, usize)>>,
    /// The project of its file: an index into the scan's projects.
    #[serde(skip)]
    pub project: usize,
    /// It lies outside every `def` and `class` of a Python file, so it runs
    /// when the module is imported or the script starts (set by the project
    /// layer; a run meets it before code in functions).
    #[serde(skip)]
    pub at_module_level: bool,
}

impl Finding {
    /// Whether the finding is advice, whatever its rule's severity: handled
    /// by automatic migration, or in code no launch script runs.
    pub fn is_advice(&self) -> bool {
        self.advisory || self.unlaunched
    }

    /// The deterministic order of findings: path, cell, line, column, code.
    pub fn sort_key(&self) -> (&str, usize, usize, usize, &str) {
        (&self.path, self.cell.unwrap_or(0), self.line, self.column, &self.code)
    }

    /// The message followed by why the finding is advice, if it is, in the
    /// words every report uses (`... (advice: handled by transfer_to_npu at run time)`).
    pub fn message_with_advice(&self) -> String {
        match self.advice {
            Some(a) => format!("{} (advice: {})", self.message, a.describe()),
            None => self.message.clone(),
        }
    }

    /// `path:line:column`, or `path:cell N:line:column` in a notebook.
    pub fn location(&self) -> String {
        match self.cell {
            Some(cell) => format!("{}:cell {cell}:{}:{}", self.path, self.line, self.column),
            None => format!("{}:{}:{}", self.path, self.line, self.column),
        }
    }

    /// `(line, column, end_line, end_column)` in the file's own text.
    pub fn region_in_file(&self) -> (usize, usize, usize, usize) {
        self.file_region.as_deref().copied().unwrap_or((self.line, self.column, self.end_line, self.end_column))
    }
}

/// A file the scan could not analyse fully, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FileProblem {
    /// Display path.
    pub path: String,
    /// `skipped` (not analysed) or `partial` (analysed where the syntax tree is sound).
    pub kind: ProblemKind,
    /// What went wrong, for a person.
    pub message: String,
}

/// How much of a file the scan lost, or what `--fix` could not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The file was not analysed at all.
    Skipped,
    /// The file has syntax errors; the sound parts were analysed.
    Partial,
    /// `--fix` had fixes for the file but left it unchanged (they would break
    /// its syntax, did not settle, or the file could not be written).
    NotFixed,
}
