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

/// Places where something is used.
#[derive(Debug, Serialize)]
pub struct SiteList {
    /// What is used.
    pub label: String,
    /// Where.
    pub sites: Vec<Site>,
    /// What the report's opening uses the list for (not in the JSON).
    #[serde(skip)]
    pub role: Option<crate::rules::schema::SitesRole>,
}

/// One place.
#[derive(Debug, Serialize)]
pub struct Site {
    /// Display path.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// What is there.
    pub detail: String,
}

/// A table of distinct values with counts.
#[derive(Debug, Serialize)]
pub struct GroupSummary {
    /// Heading.
    pub title: String,
    /// Column headings: key, value, count.
    pub columns: [String; 3],
    /// Rows.
    pub rows: Vec<GroupRow>,
}

/// One distinct value.
#[derive(Debug, Serialize)]
pub struct GroupRow {
    /// The value grouped on.
    pub key: String,
    /// What goes with it.
    pub value: String,
    /// How many times it occurs.
    pub count: usize,
}

/// Fixed advice.
#[derive(Debug, Serialize)]
pub struct NoteSummary {
    /// Heading.
    pub title: String,
    /// Text.
    pub text: String,
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
    /// Where techniques or APIs are used.
    pub sites: Vec<SiteList>,
    /// Distinct values with counts.
    pub groups: Vec<GroupSummary>,
    /// Advice.
    pub notes: Vec<NoteSummary>,
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
    let o = report.outcome;
    let sites = set
        .sites
        .iter()
        .enumerate()
        .filter(|(_, x)| x.section == section)
        .map(|(i, x)| SiteList {
            label: x.label.clone(),
            role: x.role,
            sites: o
                .sites
                .iter()
                .filter(|s| s.0 == i)
                .map(|(_, path, line, detail)| Site { path: path.clone(), line: *line, detail: detail.clone() })
                .collect(),
        })
        .collect();
    let groups = set
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.section == section)
        .map(|(i, g)| GroupSummary {
            title: g.title.clone(),
            columns: g.columns.clone(),
            rows: o
                .groups
                .iter()
                .filter(|r| r.0 == i)
                .map(|(_, key, value, count)| GroupRow { key: key.clone(), value: value.clone(), count: *count })
                .collect(),
        })
        .collect();
    let notes = set
        .notes
        .iter()
        .filter(|n| n.section == section)
        .filter(|n| n.when_rule.as_ref().is_none_or(|code| o.findings.iter().any(|f| &f.code == code)))
        .map(|n| NoteSummary { title: n.title.clone(), text: n.text.trim_end().to_string() })
        .collect();
    let verdict = (section == Section::Transfer).then(|| verdict(&o.findings));
    SectionSummary { section, tables, counts, sites, groups, notes, verdict }
}

/// The automatic-migration verdict from the blocker findings.
pub fn verdict<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Verdict {
    let mut by_code: Vec<CodeCount> = Vec::new();
    for f in findings.into_iter().filter(|f| f.blocker) {
        match by_code.iter_mut().find(|c| f.code == c.code) {
            Some(c) => c.count += 1,
            None => by_code.push(CodeCount { code: f.code.to_string(), count: 1 }),
        }
    }
    by_code.sort_by(|a, b| a.code.cmp(&b.code));
    let blockers = by_code.iter().map(|c| c.count).sum();
    Verdict { status: if blockers == 0 { "compatible" } else { "blocked" }, blockers, by_code }
}
