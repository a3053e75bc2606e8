//! Section summaries shared by the text and JSON reports: configuration
//! tables, pattern counts and the automatic-migration verdict.

use super::Report;
use crate::finding::{Finding, Section};
use crate::rules::model::CountSource;
use serde::Serialize;

/// One table of a section summary.
#[derive(Debug, Serialize)]
pub struct TableSummary {
    /// Heading.
    pub title: String,
    /// Column headings (after `location`).
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<RowSummary>,
}

/// One table row.
#[derive(Debug, Serialize)]
pub struct RowSummary {
    /// Display path.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// Cells, one per column.
    pub values: Vec<String>,
}

/// One labelled count.
#[derive(Debug, Serialize)]
pub struct CountSummary {
    /// What is counted.
    pub label: String,
    /// How many.
    pub count: usize,
}

/// Whether `transfer_to_npu` alone can migrate the code.
#[derive(Debug, Serialize)]
pub struct Verdict {
    /// `compatible` or `blocked`.
    pub status: &'static str,
    /// Number of blocker findings.
    pub blockers: usize,
    /// Blocker findings per rule code.
    pub by_code: Vec<CodeCount>,
}

/// How many findings one rule made.
#[derive(Debug, Serialize)]
pub struct CodeCount {
    /// Rule code.
    pub code: String,
    /// Findings.
    pub count: usize,
}

/// One section's summary.
#[derive(Debug, Serialize)]
pub struct SectionSummary {
    /// Section id.
    pub section: Section,
    /// Tables.
    pub tables: Vec<TableSummary>,
    /// Counts.
    pub counts: Vec<CountSummary>,
    /// The verdict (transfer section only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// Builds the summary of `section`.
pub fn section_summary(report: &Report, section: Section) -> SectionSummary {
    let set = report.engine.set;
    let tables = set
        .tables
        .iter()
        .enumerate()
        .filter(|(_, t)| t.section == section)
        .map(|(i, t)| TableSummary {
            title: t.title.clone(),
            columns: t.columns.iter().map(|c| c.0.clone()).collect(),
            rows: report
                .outcome
                .rows
                .iter()
                .filter(|(_, r)| r.table == i)
                .map(|(path, r)| RowSummary { path: path.clone(), line: r.line, values: r.cells.clone() })
                .collect(),
        })
        .collect();
    let counts = set
        .counts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.section == section)
        .map(|(i, c)| CountSummary {
            label: c.label.clone(),
            count: match &c.source {
                CountSource::Matches(_) => report.outcome.counts[i],
                CountSource::Rule(code) => report.outcome.findings.iter().filter(|f| &f.code == code).count(),
            },
        })
        .collect();
    let verdict = (section == Section::Transfer).then(|| verdict(&report.outcome.findings));
    SectionSummary { section, tables, counts, verdict }
}

/// The automatic-migration verdict from the blocker findings.
pub fn verdict(findings: &[Finding]) -> Verdict {
    let mut by_code: Vec<CodeCount> = Vec::new();
    for f in findings.iter().filter(|f| f.blocker) {
        match by_code.iter_mut().find(|c| c.code == f.code) {
            Some(c) => c.count += 1,
            None => by_code.push(CodeCount { code: f.code.clone(), count: 1 }),
        }
    }
    by_code.sort_by(|a, b| a.code.cmp(&b.code));
    let blockers = by_code.iter().map(|c| c.count).sum();
    Verdict { status: if blockers == 0 { "compatible" } else { "blocked" }, blockers, by_code }
}
