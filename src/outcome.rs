//! What a whole scan found: the findings and summaries the reports render,
//! and per project what the project layer decided.

use crate::finding::{FileProblem, Finding};
pub use crate::project::ProjectOutcome;
use crate::rules::engine::TableRow;

/// What a whole scan found.
pub struct ScanOutcome {
    /// Files looked at (read and analysed, wholly or partly).
    pub files_scanned: usize,
    /// Findings in (path, line, column, code) order.
    pub findings: Vec<Finding>,
    /// Files skipped or only partly analysed.
    pub problems: Vec<FileProblem>,
    /// Summary table rows as `(path, row)`, in path and line order.
    pub rows: Vec<(String, TableRow)>,
    /// Summary counts by count index.
    pub counts: Vec<usize>,
    /// Summary sites as `(sites index, path, line, detail)`, in path and line order.
    pub sites: Vec<(usize, String, usize, String)>,
    /// Summary groups as `(group index, key, value, count)`, sorted by group and key.
    pub groups: Vec<(usize, String, String, usize)>,
    /// Findings silenced by suppression comments, with the reason given.
    pub suppressed: Vec<(Finding, Option<String>)>,
    /// Findings recorded in the `--baseline` (not counted by the gate).
    pub baselined: Vec<Finding>,
    /// Baseline entries that match no finding any more.
    pub stale_baseline: Vec<crate::baseline::Entry>,
    /// Findings whose fixes `--fix` applied (positions before the fix).
    pub fixed: Vec<Finding>,
    /// Codes of the fixed findings that the fixes themselves created (see
    /// [`crate::fix::FixedFile::follow_ups`]), one entry per finding.
    pub fixed_follow_ups: Vec<String>,
    /// The projects, in the order of their first file; findings name theirs by index.
    pub projects: Vec<ProjectOutcome>,
    /// With runs the user names (`--entry`), what they start and reach.
    pub run: Option<crate::project::named_runs::RunSummary>,
}
