//! `--format concise`: one line per finding, for editors and grep.

use super::{visible, Report};
use std::fmt::Write;

/// Renders one `path:line:col: CODE [severity] message` line per shown
/// finding, control characters escaped (see [`super::visible`]).
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in report.outcome.findings.iter().filter(|f| report.shown(f)) {
        let _ = writeln!(out, "{}: {} [{}] {}", visible(&f.location()), f.code, f.severity, visible(&f.message));
    }
    out
}
