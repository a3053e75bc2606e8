//! `--statistics`: one line per rule code that has findings, with how many,
//! how many of them `--fix` (or `--fix --unsafe-fixes`) can fix, the
//! severity and the rule's name; most frequent first.

use super::Report;
use crate::finding::{Applicability, Severity};
use std::fmt::Write;

/// Findings of one code.
struct CodeStatistics<'a> {
    code: &'a str,
    name: &'a str,
    severity: Severity,
    count: usize,
    safe: usize,
    unsafe_: usize,
}

/// Renders the table (every finding counts, whatever `--min-severity` hides).
pub fn render(report: &Report) -> String {
    let mut rows: Vec<CodeStatistics> = Vec::new();
    for f in &report.outcome.findings {
        let i = match rows.iter().position(|r| f.code == r.code) {
            Some(i) => i,
            None => {
                let row = CodeStatistics {
                    code: &f.code,
                    name: &f.name,
                    severity: f.severity,
                    count: 0,
                    safe: 0,
                    unsafe_: 0,
                };
                rows.push(row);
                rows.len() - 1
            }
        };
        let row = &mut rows[i];
        row.count += 1;
        match f.fix.as_ref().map(|x| x.applicability) {
            Some(Applicability::Safe) => row.safe += 1,
            Some(Applicability::Unsafe) => row.unsafe_ += 1,
            None => {}
        }
    }
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(b.code)));
    let fixable = |r: &CodeStatistics| match (r.safe, r.unsafe_) {
        (0, 0) => String::new(),
        (s, 0) => format!("{s} safe"),
        (0, u) => format!("{u} unsafe"),
        (s, u) => format!("{s} safe, {u} unsafe"),
    };
    let table: Vec<[String; 5]> =
        std::iter::once(["count", "code", "fixable", "severity", "name"].map(String::from))
            .chain(rows.iter().map(|r| {
                [r.count.to_string(), r.code.to_string(), fixable(r), r.severity.to_string(), r.name.to_string()]
            }))
            .collect();
    let width = |c: usize| table.iter().map(|row| row[c].chars().count()).max().unwrap_or(0);
    let widths = [width(0), width(1), width(2), width(3)];
    let mut out = String::new();
    for row in &table {
        let _ = writeln!(
            out,
            "{:>w0$}  {:<w1$}  {:<w2$}  {:<w3$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
    }
    let total = report.outcome.findings.len();
    let (safe, unsafe_) = (report.fixable(Applicability::Safe), report.fixable(Applicability::Unsafe));
    let _ = writeln!(
        out,
        "{total} finding{} in {} code{}; {safe} with a safe fix (--fix), {unsafe_} more with an unsafe fix (--unsafe-fixes)",
        if total == 1 { "" } else { "s" },
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
    );
    out
}
