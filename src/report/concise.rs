//! `--format concise`: one line per finding, for editors and grep.

use super::Report;
use std::fmt::Write;

/// Renders one `path:line:col: CODE [severity] message` line per finding.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.outcome.findings {
        let _ = writeln!(out, "{}: {} [{}] {}", f.location(), f.code, f.severity, f.message);
    }
    out
}
