//! Reporters: the same scan rendered as text, one line per finding, JSON,
//! SARIF, GitHub annotations, a GitLab Code Quality report, Markdown or CSV.

pub mod concise;
pub mod csv;
pub mod github;
pub mod gitlab;
pub mod json;
pub mod markdown;
pub mod next_steps;
pub mod rule_docs;
pub mod rules;
pub mod sarif;
pub mod statistics;
pub mod style;
pub mod summary;
pub mod text;

use crate::finding::{Finding, Severity};
use crate::outcome::ScanOutcome;
use crate::rules::engine::Engine;

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
    /// The text and concise reports leave out findings below this severity
    /// (`--min-severity`); the other formats show every finding.
    pub min_severity: Severity,
    /// The text report also says which named run reaches each module that holds findings (`--verbose`).
    pub verbose: bool,
}

impl Report<'_> {
    /// Number of findings with severity `s`.
    pub fn count(&self, s: Severity) -> usize {
        self.outcome.findings.iter().filter(|f| f.severity == s).count()
    }

    /// Whether the text and concise reports show `f` (see `min_severity`).
    pub fn shown(&self, f: &Finding) -> bool {
        f.severity >= self.min_severity
    }

    /// Number of findings with a fix of this applicability.
    pub fn fixable(&self, a: crate::finding::Applicability) -> usize {
        self.fixable_where(a, |_| true)
    }

    /// How many of the findings that `keep` accepts have a fix of applicability `a`.
    pub fn fixable_where(&self, a: crate::finding::Applicability, keep: impl Fn(&Finding) -> bool) -> usize {
        self.outcome.findings.iter().filter(|f| f.fix.as_ref().is_some_and(|x| x.applicability == a) && keep(f)).count()
    }

    /// Findings of one section, in report order.
    pub fn section_findings(&self, section: crate::finding::Section) -> impl Iterator<Item = &Finding> {
        self.outcome.findings.iter().filter(move |f| f.section == section)
    }
}

/// A report format that writes to `out` as it renders: JSON and SARIF, which
/// grow with the repository, are never held whole in memory.
pub type WriteReport = fn(&Report, &mut dyn std::io::Write) -> std::io::Result<()>;

/// `text` safe to print to a terminal: control characters (ESC, BEL, CR, a
/// line break inside a name, C1 controls, ...) and the bidirectional
/// overrides that reorder what is shown are written as Rust-style escapes
/// (`\x1b`, `\u{202e}`): a display aid, not a reversible encoding (a
/// backslash already in the text is left as it is). Other text is returned as
/// it is.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.contains(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !hidden(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `3 findings`, or `3 findings (2 reported, and 1 that those fixes create: API005)`
/// when fixes create findings of their own, so that the count matches the
/// report's "N have a safe fix".
pub fn describe_fixed(fixed: usize, follow_ups: &[String]) -> String {
    let total = format!("{fixed} finding{}", if fixed == 1 { "" } else { "s" });
    if follow_ups.is_empty() {
        return total;
    }
    let mut codes: Vec<&str> = follow_ups.iter().map(String::as_str).collect();
    codes.sort_unstable();
    codes.dedup();
    let n = follow_ups.len();
    format!("{total} ({} reported, and {n} that those fixes create: {})", fixed.saturating_sub(n), codes.join(", "))
}
