//! Reporters: the same scan rendered as text, one line per finding, or JSON.

pub mod concise;
pub mod github;
pub mod json;
pub mod markdown;
pub mod rules;
pub mod sarif;
pub mod summary;
pub mod text;

use crate::finding::{Finding, Severity};
use crate::rules::engine::Engine;
use crate::scan::ScanOutcome;

/// Everything a reporter needs.
pub struct Report<'a> {
    /// The scan's results.
    pub outcome: &'a ScanOutcome,
    /// The engine (rules, tables, counts, target).
    pub engine: &'a Engine<'a>,
    /// The target as the user wrote it (`2.1`).
    pub target: &'a str,
    /// Wall time of the scan, in milliseconds.
    pub elapsed_ms: u128,
    /// Problems met while walking (path, message).
    pub walk_problems: &'a [(String, String)],
}

impl Report<'_> {
    /// Number of findings with severity `s`.
    pub fn count(&self, s: Severity) -> usize {
        self.outcome.findings.iter().filter(|f| f.severity == s).count()
    }

    /// Findings of one section, in report order.
    pub fn section_findings(&self, section: crate::finding::Section) -> impl Iterator<Item = &Finding> {
        self.outcome.findings.iter().filter(move |f| f.section == section)
    }
}
