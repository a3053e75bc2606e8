//! Hover: on a finding's range, the full documentation of its rule (what it
//! finds, why it matters on an Ascend NPU, an example, what to write
//! instead, its fix), as `npu-mem rule CODE` prints it, in Markdown.

use super::analysis::{Config, Finding};
use super::diagnostics::range;
use super::documents::Document;
use super::positions::Units;
use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

/// The hover at `at` in `doc`, whose findings are `findings`: the docs of
/// every rule with a finding there (each once), over the first one's range.
pub(super) fn hover(
    doc: &Document,
    findings: &[Finding],
    at: Position,
    units: Units,
    config: &Config,
) -> Option<Hover> {
    let here: Vec<&Finding> = findings
        .iter()
        .filter(|f| {
            let r = range(f, doc, units);
            r.start <= at && at <= r.end
        })
        .collect();
    let mut codes: Vec<&str> = here.iter().map(|f| f.code.as_str()).collect();
    codes.dedup();
    let docs: Vec<String> = codes.iter().filter_map(|c| config.rule_doc(c)).collect();
    let first = here.first()?;
    (!docs.is_empty()).then(|| Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: docs.join("\n---\n\n") }),
        range: Some(range(first, doc, units)),
    })
}
