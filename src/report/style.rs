//! Terminal styling shared by the text report and its next steps: colours
//! that can be switched off, and counted words.

use crate::finding::Severity;
use owo_colors::OwoColorize;

/// Colours on or off.
#[derive(Clone, Copy)]
pub struct Paint(pub bool);

impl Paint {
    pub(super) fn severity(self, s: Severity, text: &str) -> String {
        match (self.0, s) {
            (false, _) => text.to_string(),
            (true, Severity::Error) => text.red().bold().to_string(),
            (true, Severity::Warning) => text.yellow().bold().to_string(),
            (true, Severity::Info) => text.cyan().to_string(),
        }
    }
    pub(super) fn bold(self, text: &str) -> String {
        if self.0 {
            text.bold().to_string()
        } else {
            text.to_string()
        }
    }
    pub(super) fn dim(self, text: &str) -> String {
        if self.0 {
            text.dimmed().to_string()
        } else {
            text.to_string()
        }
    }
}

/// `3 errors`, `1 warning`, `13 info`.
pub(super) fn plural(n: usize, word: &str) -> String {
    match (n, word) {
        (_, "info") => format!("{n} info"),
        (1, _) => format!("1 {word}"),
        (_, w) if w.ends_with('x') => format!("{n} {word}es"),
        _ => format!("{n} {word}s"),
    }
}
