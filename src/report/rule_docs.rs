//! A rule's documentation as titled sections, in the one order every reader
//! shows them (`npu-mem rule CODE`, `npu-mem rules --format markdown`, SARIF),
//! and its plain-text and Markdown forms.

use crate::finding::Applicability;
use crate::rules::model::Rule;
use std::fmt::Write;

/// What a section holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// Paragraphs (may hold `- ` lists written in the pack).
    Prose(String),
    /// One bullet per entry.
    Bullets(Vec<String>),
    /// Source code (the example, and what to write instead).
    Code(String),
}

/// One titled part of a rule's documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocSection {
    /// The heading, e.g. `What it finds`.
    pub title: &'static str,
    /// Its content.
    pub body: Body,
}

/// The sections of `rule`'s documentation, in order: What it finds, Not
/// reported when, Why it matters on an Ascend NPU, Example, Use instead, Fix,
/// Sources. Empty lists (a user pack without exceptions or sources) are left out.
pub fn sections(rule: &Rule) -> Vec<DocSection> {
    let d = rule.docs();
    let mut out = vec![DocSection { title: "What it finds", body: Body::Prose(d.what.trim().to_string()) }];
    if !d.not_reported.is_empty() {
        out.push(DocSection { title: "Not reported when", body: Body::Bullets(d.not_reported.clone()) });
    }
    out.push(DocSection { title: "Why it matters on an Ascend NPU", body: Body::Prose(d.why.trim().to_string()) });
    out.push(DocSection { title: "Example", body: Body::Code(d.example.trim_end().to_string()) });
    out.push(DocSection { title: "Use instead", body: Body::Code(d.instead.trim_end().to_string()) });
    out.push(DocSection { title: "Fix", body: Body::Prose(fix_text(rule)) });
    if !d.sources.is_empty() {
        out.push(DocSection { title: "Sources", body: Body::Bullets(d.sources.clone()) });
    }
    out
}

/// The fix in words: its safety, what it does, which command applies it,
/// the fixes it brings along (`then`), and the pack's note on it.
pub fn fix_text(rule: &Rule) -> String {
    let mut text = match &rule.fix {
        Some(f) => {
            let how = match f.applicability {
                Applicability::Safe => "`npu-mem scan --fix` applies it.",
                Applicability::Unsafe => {
                    "`npu-mem scan --fix --unsafe-fixes` applies it; review it first with `--diff --unsafe-fixes`."
                }
            };
            let mut t = format!("{} fix: {}. {how}", capitalised(f.applicability.as_str()), f.description);
            if !f.then.is_empty() {
                let _ = write!(t, " Findings of {} that it causes are fixed with it.", f.then.join(", "));
            }
            t
        }
        None => "No automatic fix.".to_string(),
    };
    if let Some(note) = &rule.docs().fix_note {
        text.push(' ');
        text.push_str(note.trim());
    }
    text
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The sections as indented plain text, each under its title.
pub fn to_text(sections: &[DocSection]) -> String {
    let mut out = String::new();
    for (i, s) in sections.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{}", s.title);
        let body = match &s.body {
            Body::Prose(p) | Body::Code(p) => indent(p),
            Body::Bullets(items) => items.iter().map(|b| format!("  - {}", b.trim())).collect::<Vec<_>>().join("\n"),
        };
        let _ = writeln!(out, "{body}");
    }
    out
}

/// The sections as Markdown, each under a heading of `level` (`###`).
pub fn to_markdown(sections: &[DocSection], level: &str) -> String {
    let mut out = String::new();
    for s in sections {
        let _ = writeln!(out, "{level} {}\n", s.title);
        match &s.body {
            Body::Prose(p) => {
                let _ = writeln!(out, "{p}\n");
            }
            Body::Bullets(items) => {
                for b in items {
                    let _ = writeln!(out, "- {}", b.trim());
                }
                out.push('\n');
            }
            Body::Code(c) => {
                let _ = writeln!(out, "```{}\n{c}\n```\n", language(c));
            }
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// The language of an example: a shell script (as `tests/rule_docs.rs` runs
/// it) or Python.
fn language(code: &str) -> &'static str {
    if code.trim_start().starts_with("export ") || code.starts_with("#!") {
        "sh"
    } else {
        "python"
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| if l.is_empty() { String::new() } else { format!("  {l}") }).collect::<Vec<_>>().join("\n")
}
