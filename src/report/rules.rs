//! `npu-mem rules` and `npu-mem rule CODE`: rule documentation from the packs.

use crate::rules::engine::RuleSet;
use std::fmt::Write;

/// One line per rule: code, section, severity, name.
pub fn list(set: &RuleSet) -> String {
    let mut out = String::new();
    for r in &set.rules {
        let flags = if r.blocker { " [blocker]" } else { "" };
        let _ = writeln!(out, "{:<8} {:<16} {:<8} {}{}", r.code, r.section.id(), r.severity.as_str(), r.name, flags);
    }
    out
}

/// `safe fix: ...`, `unsafe fix: ...` or `no automatic fix`.
pub fn fix_summary(rule: &crate::rules::model::Rule) -> String {
    match &rule.fix {
        Some(f) => format!("{} fix: {}", f.applicability.as_str(), f.description),
        None => "no automatic fix".to_string(),
    }
}

/// Every rule with its documentation as JSON (an array, in pack order).
pub fn list_json(set: &RuleSet) -> String {
    let rules: Vec<serde_json::Value> = set
        .rules
        .iter()
        .map(|r| {
            serde_json::json!({
                "code": r.code,
                "name": r.name,
                "section": r.section,
                "severity": r.severity,
                "auto_migrated": r.auto_migrated,
                "blocker": r.blocker,
                "target": r.target.as_ref().map(|t| format!("{}{}.{}", t.op, t.version.0, t.version.1)),
                "fix": r.fix.as_ref().map(|f| serde_json::json!({ "applicability": f.applicability, "description": f.description })),
                "docs": { "what": r.docs.what, "why": r.docs.why, "example": r.docs.example, "instead": r.docs.instead },
                "pack": r.origin,
            })
        })
        .collect();
    serde_json::to_string_pretty(&rules).unwrap_or_default() + "\n"
}

/// `npu-mem rule CODE` named a code no pack defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRule {
    /// The code as given.
    pub code: String,
}

impl std::fmt::Display for UnknownRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no rule {}; `npu-mem rules` lists them all", self.code)
    }
}

impl std::error::Error for UnknownRule {}

/// The full documentation of one rule, or an error naming the code.
pub fn explain(set: &RuleSet, code: &str) -> Result<String, UnknownRule> {
    let r = set
        .rules
        .iter()
        .find(|r| r.code.eq_ignore_ascii_case(code))
        .ok_or_else(|| UnknownRule { code: code.to_string() })?;
    let mut out = String::new();
    let _ = writeln!(out, "{} ({}): {} [{}]", r.code, r.name, r.section.title(), r.severity);
    let _ = writeln!(out, "\nWhat it finds\n  {}", r.docs.what);
    let _ = writeln!(out, "\nWhy it matters on an Ascend NPU\n  {}", r.docs.why);
    let _ = writeln!(out, "\nExample\n{}", indent(&r.docs.example));
    let _ = writeln!(out, "\nUse instead\n{}", indent(&r.docs.instead));
    let _ = writeln!(out, "\nFix\n  {}", fix_summary(r));
    let _ = writeln!(
        out,
        "\nHandled by automatic migration (transfer_to_npu): {}",
        if r.auto_migrated { "yes" } else { "no" }
    );
    let _ = writeln!(out, "Blocks automatic migration: {}", if r.blocker { "yes" } else { "no" });
    Ok(out)
}

fn indent(s: &str) -> String {
    s.trim_end().lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}
