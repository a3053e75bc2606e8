//! Code actions: a finding's fix, safe (preferred) or unsafe (marked as
//! such), "Fix all safe fixes in this file", and "Ignore this finding". The
//! fixes come from the `--fix` engine run on the buffer in memory, and the
//! suppression comment from `--add-ignore`'s, so the text is what the CLI
//! would write; the server only proposes it, as one edit of the document.

use super::analysis::{self, Applicability, FileKind, Finding, Project};
use super::diagnostics::{self, range};
use super::documents::Document;
use super::positions::Units;
use lsp_types::{
    CodeAction, CodeActionDisabled, CodeActionKind, CodeActionOrCommand, Diagnostic, OneOf,
    OptionalVersionedTextDocumentIdentifier, Range, TextDocumentEdit, TextEdit, Url, WorkspaceEdit,
};
use std::collections::HashMap;

/// The kind of "Fix all safe fixes in this file" when the client asks for source actions.
pub(super) const FIX_ALL: &str = "source.fixAll.npu-mem";

/// What the actions are for.
pub(super) struct Request<'a> {
    /// The document.
    pub uri: &'a Url,
    /// Its content and version.
    pub doc: &'a Document,
    /// Its kind.
    pub kind: Option<FileKind>,
    /// The range the client asks about.
    pub range: Range,
    /// The diagnostics the client sends along (those in the range).
    pub diagnostics: &'a [Diagnostic],
    /// The kinds of action asked for (all when `None`).
    pub only: Option<&'a [CodeActionKind]>,
    /// Units of the positions.
    pub units: Units,
    /// Whether the client takes `documentChanges` (edits bound to the document's version).
    pub versioned: bool,
    /// The reason a suppression comment gives.
    pub ignore_reason: &'a str,
}

impl Request<'_> {
    /// Whether the client asks for actions of `kind`.
    fn wants(&self, kind: &CodeActionKind) -> bool {
        self.only.is_none_or(|only| only.iter().any(|o| kind.as_str().starts_with(o.as_str())))
    }

    /// An action that replaces the document's text with `new` (as one edit
    /// of the part that differs), or a disabled one that says why not.
    fn action(
        &self,
        title: String,
        kind: CodeActionKind,
        result: Result<Option<String>, String>,
    ) -> Option<CodeActionOrCommand> {
        let (edit, disabled) = match result {
            Ok(Some(new)) => (Some(self.edit(&new)), None),
            Ok(None) => return None,
            Err(reason) => (None, Some(CodeActionDisabled { reason })),
        };
        Some(CodeActionOrCommand::CodeAction(CodeAction {
            title,
            kind: Some(kind),
            edit,
            disabled,
            ..CodeAction::default()
        }))
    }

    /// The edit that turns the document's text into `new`.
    fn edit(&self, new: &str) -> WorkspaceEdit {
        let old: &str = &self.doc.text;
        let prefix = common_prefix(old, new);
        let suffix = common_suffix(&old[prefix..], &new[prefix..]);
        let range = Range {
            start: self.doc.lines.position(old, prefix, self.units),
            end: self.doc.lines.position(old, old.len() - suffix, self.units),
        };
        let text_edit = TextEdit { range, new_text: new[prefix..new.len() - suffix].to_string() };
        if self.versioned {
            let text_document =
                OptionalVersionedTextDocumentIdentifier { uri: self.uri.clone(), version: Some(self.doc.version) };
            let edits = vec![OneOf::Left(text_edit)];
            let changes = lsp_types::DocumentChanges::Edits(vec![TextDocumentEdit { text_document, edits }]);
            WorkspaceEdit { document_changes: Some(changes), ..WorkspaceEdit::default() }
        } else {
            WorkspaceEdit {
                changes: Some(HashMap::from([(self.uri.clone(), vec![text_edit])])),
                ..WorkspaceEdit::default()
            }
        }
    }
}

/// The bytes at the start of `old` and `new` that are the same, cut at a character boundary.
fn common_prefix(old: &str, new: &str) -> usize {
    let mut same = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(same) || !new.is_char_boundary(same) {
        same -= 1;
    }
    same
}

/// The bytes at the end of `old` and `new` that are the same, cut at a character boundary.
fn common_suffix(old: &str, new: &str) -> usize {
    let mut same = old.bytes().rev().zip(new.bytes().rev()).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(old.len() - same) || !new.is_char_boundary(new.len() - same) {
        same -= 1;
    }
    same
}

/// The actions for the findings of `findings` in the request's range.
pub(super) fn actions(req: &Request, project: &Project, findings: &[Finding]) -> Vec<CodeActionOrCommand> {
    let quickfix = CodeActionKind::QUICKFIX;
    let mut out = Vec::new();
    let overlaps = |f: &Finding| {
        let r = range(f, req.doc, req.units);
        req.diagnostics.iter().any(|d| diagnostics::is_of(d.data.as_ref(), f))
            || (r.start <= req.range.end && req.range.start <= r.end)
    };
    let in_range: Vec<&Finding> = findings.iter().filter(|f| overlaps(f)).collect();
    let path = &req.doc.path;
    if req.wants(&quickfix) {
        for f in &in_range {
            if let Some(fix) = &f.fix {
                let (title, preferred) = match fix.applicability {
                    Applicability::Safe => (format!("Fix {}: {}", f.code, fix.description), true),
                    Applicability::Unsafe => (
                        format!("Fix {} (unsafe fix: it may change behaviour, review it): {}", f.code, fix.description),
                        false,
                    ),
                };
                let result = project.fix(path, fix.applicability, Some(f));
                if let Some(CodeActionOrCommand::CodeAction(mut action)) = req.action(title, quickfix.clone(), result) {
                    action.is_preferred = Some(preferred);
                    action.diagnostics = diagnostic_of(req, f);
                    out.push(CodeActionOrCommand::CodeAction(action));
                }
            }
            // --add-ignore writes comments in Python and shell files only.
            if matches!(req.kind, Some(FileKind::Python | FileKind::Shell)) && !f.code.starts_with("NPM") {
                let result = analysis::with_suppression(path, &req.doc.text, f.line, &f.code, req.ignore_reason);
                out.extend(req.action(format!("Ignore {} on this line", f.code), quickfix.clone(), result.map(Some)));
            }
        }
    }
    let fix_all = CodeActionKind::new(FIX_ALL);
    let any_safe = findings.iter().any(|f| f.fix.as_ref().is_some_and(|x| x.applicability == Applicability::Safe));
    // In the light bulb when a finding in the range has a fix; asked for as a source action, always.
    let kind = match req.only {
        Some(_) if req.wants(&fix_all) => Some(fix_all),
        _ if req.wants(&quickfix) && in_range.iter().any(|f| f.fix.is_some()) => Some(quickfix),
        _ => None,
    };
    if let (Some(kind), true) = (kind, any_safe) {
        let result = project.fix(path, Applicability::Safe, None);
        out.extend(req.action("Fix all safe fixes in this file (as --fix)".into(), kind, result));
    }
    out
}

/// The diagnostic the client sent for finding `f`, to tie the action to it.
fn diagnostic_of(req: &Request, f: &Finding) -> Option<Vec<Diagnostic>> {
    let d: Vec<Diagnostic> =
        req.diagnostics.iter().filter(|d| diagnostics::is_of(d.data.as_ref(), f)).cloned().collect();
    (!d.is_empty()).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edit_covers_only_what_differs_and_cuts_at_characters() {
        let cases = [
            ("x.cuda()\n", "x.npu()\n", 2, 6),
            ("a = 'é'\n", "a = 'ê'\n", 5, 7),
            ("import torch\n", "import torch\nimport torch_npu\n", 13, 13),
            ("same", "same", 4, 4),
        ];
        for (old, new, start, end) in cases {
            let prefix = common_prefix(old, new);
            let suffix = common_suffix(&old[prefix..], &new[prefix..]);
            assert_eq!((prefix, old.len() - suffix), (start, end), "{old:?} -> {new:?}");
            let rebuilt =
                format!("{}{}{}", &old[..prefix], &new[prefix..new.len() - suffix], &old[old.len() - suffix..]);
            assert_eq!(rebuilt, new);
        }
    }
}
