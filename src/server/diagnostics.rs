//! Findings as the protocol's diagnostics: the range in the document (in a
//! notebook opened as JSON text, the place of the code in the file's JSON,
//! as SARIF gives it), the severity, the rule code with a link to its
//! documentation, the `[blocker]` mark and why a finding is only advice in
//! the message, and the other places a finding involves as related
//! information.

use super::analysis::{FileProblem, Finding, ProblemKind, Severity};
use super::documents::Document;
use super::positions::Units;
use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, Url,
};
use std::collections::HashMap;

/// Diagnostics' `source`.
pub(super) const SOURCE: &str = "npu-mem";

/// What a diagnostic needs besides its finding.
pub(super) struct Context<'a> {
    /// The document the finding is in.
    pub doc: &'a Document,
    /// Its URI.
    pub uri: &'a Url,
    /// The units of the positions.
    pub units: Units,
    /// Rule code -> its documentation's address.
    pub docs: &'a HashMap<String, Url>,
    /// Where the project imports `transfer_to_npu` (for advice that it handles the finding).
    pub migration_site: Option<Location>,
}

/// The range of `f` in its document.
pub(super) fn range(f: &Finding, doc: &Document, units: Units) -> Range {
    let (line, column, end_line, end_column) = f.region_in_file();
    Range {
        start: doc.lines.at_column(&doc.text, line, column, units),
        end: doc.lines.at_column(&doc.text, end_line, end_column, units),
    }
}

/// The diagnostic of finding `f`.
pub(super) fn of_finding(f: &Finding, cx: &Context) -> Diagnostic {
    let severity = match f.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    };
    let mut message = f.message.clone();
    if f.blocker {
        message.push_str(" [blocker]");
    }
    if f.unlaunched {
        message.push_str(" (advice: in code that nothing runs on the NPU)");
    } else if f.advisory {
        message.push_str(" (advice: handled by transfer_to_npu at run time)");
    }
    let mut related = Vec::new();
    if let Some(site) = cx.migration_site.clone().filter(|_| f.advisory && !f.unlaunched) {
        related.push(DiagnosticRelatedInformation {
            location: site,
            message: "the project imports transfer_to_npu here, which handles this at run time".into(),
        });
    }
    let own = range(f, cx.doc, cx.units);
    // The places a fix changes besides the finding itself (the import a new call needs);
    // a notebook's fix edits a cell, whose positions are not the JSON text's.
    for edit in f.fix.iter().filter(|_| f.cell.is_none()).flat_map(|fix| &fix.edits) {
        let start = cx.doc.lines.at_column(&cx.doc.text, edit.start.line, edit.start.column, cx.units);
        let end = cx.doc.lines.at_column(&cx.doc.text, edit.end.line, edit.end.column, cx.units);
        if end < own.start || own.end < start {
            let what = if edit.content.is_empty() { "removes this" } else { "changes this place" };
            related.push(DiagnosticRelatedInformation {
                location: Location { uri: cx.uri.clone(), range: Range { start, end } },
                message: format!("its fix also {what}"),
            });
        }
    }
    Diagnostic {
        range: own,
        severity: Some(severity),
        code: Some(NumberOrString::String(f.code.to_string())),
        code_description: cx.docs.get(f.code.as_str()).map(|href| CodeDescription { href: href.clone() }),
        source: Some(SOURCE.into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        // Which finding this is, for the code actions asked for it.
        data: Some(serde_json::json!({ "code": f.code.as_str(), "start": f.byte_range.0 })),
    }
}

/// The diagnostic of a file the analysis skipped (binary, too large, not a
/// notebook), at its start; `None` for one analysed in part (a syntax error,
/// which the editor's own tools show while it is typed).
pub(super) fn of_problem(p: &FileProblem) -> Option<Diagnostic> {
    (p.kind == ProblemKind::Skipped).then(|| Diagnostic {
        range: Range::default(),
        severity: Some(DiagnosticSeverity::WARNING),
        source: Some(SOURCE.into()),
        message: format!("not analysed: {}", p.message),
        ..Diagnostic::default()
    })
}

/// The diagnostic of a configuration problem, on the 1-based `line` of the file at fault.
pub(super) fn of_config(message: &str, line: Option<usize>) -> Diagnostic {
    let line = u32::try_from(line.unwrap_or(1).saturating_sub(1)).unwrap_or(0);
    let at = lsp_types::Position { line, character: 0 };
    Diagnostic {
        range: Range { start: at, end: lsp_types::Position { line, character: u32::MAX } },
        severity: Some(DiagnosticSeverity::ERROR),
        source: Some(SOURCE.into()),
        message: format!("{message} (npu-mem uses its defaults until this is fixed)"),
        ..Diagnostic::default()
    }
}

/// Whether `data`, a diagnostic's `data`, is finding `f`'s.
pub(super) fn is_of(data: Option<&serde_json::Value>, f: &Finding) -> bool {
    data.is_some_and(|d| d["code"] == f.code.as_str() && d["start"] == f.byte_range.0)
}
