//! Safe fixes that rename a CUDA test are only safe when the code it guards
//! can run on the NPU too.
//!
//! `if torch.cuda.is_available(): torch.set_default_tensor_type('torch.cuda.FloatTensor')`:
//! renaming the test to `torch.npu.is_available()` is right line by line, but
//! on an NPU host the renamed test now runs the branch, and the CUDA type
//! fails there. So a safe fix with an edit in the test of an `if` or `elif`
//! becomes unsafe, with the reason, when that test or its branch holds a
//! finding that breaks on an NPU (a rule of severity `error` in the transfer
//! or torch_npu API sections), has no safe fix of its own and is not edited
//! away by the fix itself.

use super::model::Rule;
use super::state::Clause;
use crate::finding::{Applicability, Finding, Section, Severity};
use crate::parse::{Field, FieldOf, KindOf};
use crate::source::LineIndex;
use tree_sitter::Node;

/// Makes unsafe each safe fix of `findings` that edits the test of an `if`
/// or `elif` guarding a finding that breaks on an NPU and has no safe fix.
pub fn withhold_guard_renames(
    findings: &mut [(Finding, Vec<Clause>)],
    rules: &[Rule],
    root: Node,
    src: &str,
    lines: &LineIndex,
) {
    let breaking: Vec<((usize, usize), usize, &str)> = findings
        .iter()
        .filter(|(f, _)| rules.iter().find(|r| r.code == f.code).is_some_and(breaks_on_npu))
        .filter(|(f, _)| f.fix.as_ref().is_none_or(|x| x.applicability != Applicability::Safe))
        .map(|(f, _)| (f.byte_range, f.line, f.code.as_str()))
        .collect();
    if breaking.is_empty() {
        return;
    }
    let mut withheld = Vec::new();
    for (i, (f, _)) in findings.iter().enumerate() {
        let Some(fix) = f.fix.as_ref().filter(|x| x.applicability == Applicability::Safe) else { continue };
        let edited: Vec<(usize, usize)> =
            fix.edits.iter().filter_map(|e| Some((lines.offset(src, e.start)?, lines.offset(src, e.end)?))).collect();
        // A breaking finding that this fix edits away (a comparison that a
        // device-string fix migrates with its value) is no reason.
        let untouched = |(from, to): (usize, usize)| !edited.iter().any(|&(start, end)| start < to && from < end);
        let guarded = edited.iter().filter_map(|&(start, _)| guarded_by(root, start)).find_map(|(from, to)| {
            breaking.iter().find(|(range, ..)| (from..to).contains(&range.0) && untouched(*range))
        });
        if let Some(&(_, line, code)) = guarded {
            withheld.push((i, format!("{code} on line {line}")));
        }
    }
    for (i, what) in withheld {
        if let Some(fix) = findings[i].0.fix.as_mut() {
            fix.applicability = Applicability::Unsafe;
            fix.description.push_str(&format!(
                " (unsafe: the test guards {what}, which has no safe fix; once the test finds the NPU that code runs there)"
            ));
        }
    }
}

/// Whether findings of `rule` break on an NPU: severity `error` as the rule
/// is written (a finding downgraded because a CUDA test guards it is the case
/// in point), about transfers or CUDA APIs. These rules run even when not
/// selected, so that `--select API001 --fix` knows what a test guards.
pub fn breaks_on_npu(rule: &Rule) -> bool {
    rule.severity == Severity::Error && matches!(rule.section, Section::Transfer | Section::NpuApi)
}

/// The bytes that run when the test holding byte `offset` holds: from that
/// test (of an `if` or an `elif`) to the end of its branch. Earlier tests
/// and branches, and later ones, run no more often when it is renamed.
fn guarded_by(root: Node, offset: usize) -> Option<(usize, usize)> {
    let mut child = root.descendant_for_byte_range(offset, offset)?;
    while let Some(parent) = child.parent() {
        match parent.kind_name() {
            "if_statement" | "elif_clause" if parent.field(Field::Condition) == Some(child) => {
                let end = parent.field(Field::Consequence).map_or(child.end_byte(), |b| b.end_byte());
                return Some((child.start_byte(), end));
            }
            "block" | "module" | "function_definition" | "class_definition" | "lambda" => return None,
            _ => child = parent,
        }
    }
    None
}
