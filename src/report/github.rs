//! `--format github`: GitHub Actions workflow commands, one annotation per finding.

use super::Report;
use crate::finding::Severity;
use std::fmt::Write;

/// Escapes a workflow-command message (control characters other than line
/// breaks are shown escaped, as in the text report, so the log stays readable).
fn escape_data(s: &str) -> String {
    let s = s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
    super::visible(&s).into_owned()
}

/// Escapes a workflow-command property value (also `:` and `,`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Renders `::error file=…,line=…,col=…,endLine=…,endColumn=…,title=CODE::message` lines.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.outcome.findings {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        // In a notebook, the annotation points into the notebook's JSON.
        let (line, column, end_line, end_column) = f.region_in_file();
        let _ = writeln!(
            out,
            "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            escape_property(&f.path),
            line,
            column,
            end_line,
            end_column,
            escape_property(&format!("{} {}", f.code, f.name)),
            escape_data(&f.message)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_workflow_command_rules() {
        assert_eq!(escape_data("50% a\nb"), "50%25 a%0Ab");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
