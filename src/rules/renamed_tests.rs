//! A safe fix that renames `torch.cuda.is_available()` in a CUDA test stays
//! safe only while the code that test guards works on the NPU as written.
//!
//! Renamed, the test holds on an NPU host, so the code it guards (the `if`
//! branch, the chain's `else` after `if not torch.cuda.is_available():`, the
//! value of a conditional expression) starts running there. Every device it
//! names must then be migrated by the same fix (the code under the test
//! migrates with it, see [`super::guards`]), or the renamed test sends the
//! NPU host into CUDA code: ultralytics' exporter sets `device = "0"` under
//! such a test, which its `select_device` then rejects on an NPU.
//!
//! Whether code "holds CUDA-specific code" is not decided in general; the
//! check is conservative and looks for code that names a device outside the
//! fix's own edits and the findings that share the fix: a name holding
//! `cuda` or `gpu`, a string that names CUDA (`"cuda:0"`, `"nccl"`) or is a
//! bare device index (`"0"`, `"0,1"`), a name holding `device` passed to a
//! call (`model.to(device)`), or a whole number passed to a call whose name
//! holds `device` and that the fix does not migrate (`select_device(0)`, not
//! `torch.npu.set_device(0)`). Any of them makes the fix unsafe, with the
//! line in its description.

use super::state::Clause;
use crate::finding::{Applicability, Edit, Finding};
use crate::parse::{Field, FieldOf, KindOf};
use crate::semantic::cuda_tests::{guarded_by, is_available_call, names_cuda};
use crate::semantic::values::text;
use tree_sitter::Node;

/// Makes unsafe, with the reason, each safe fix that renames
/// `torch.cuda.is_available()` in a CUDA test whose guarded code names a
/// device that the fix does not migrate (see the module documentation).
pub(super) fn check(findings: &mut [(Finding, Vec<Clause>)], root: Node, src: &str) {
    // By fix (its edits, which the findings sharing one fix hold alike): why it is unsafe.
    let mut unsafe_: Vec<(Vec<Edit>, String)> = Vec::new();
    for (f, _) in findings.iter() {
        let Some(fix) = f.fix.as_ref().filter(|x| x.applicability == Applicability::Safe) else { continue };
        if unsafe_.iter().any(|(edits, _)| *edits == fix.edits) {
            continue;
        }
        let Some(guarded) = fix.edits.iter().find_map(|e| guarded_by(renamed_test(root, e.byte_range, src)?, src))
        else {
            continue;
        };
        // What the fix changes: its edits and the findings it fixes.
        let sharing = findings.iter().filter(|(g, _)| g.fix.as_ref().is_some_and(|x| x.edits == fix.edits));
        let covered: Vec<(usize, usize)> =
            fix.edits.iter().map(|e| e.byte_range).chain(sharing.map(|(g, _)| g.byte_range)).collect();
        let reason = device_named(guarded, &covered, src).map(|named| {
            format!(
                "the renamed test runs line {} on the NPU, where `{}` names a device that no fix here \
                 migrates",
                named.start_position().row + 1,
                text(named, src)
            )
        });
        if let Some(reason) = reason {
            unsafe_.push((fix.edits.clone(), reason));
        }
    }
    for (f, _) in findings.iter_mut() {
        let Some(fix) = f.fix.as_mut() else { continue };
        if let Some((_, reason)) = unsafe_.iter().find(|(edits, _)| *edits == fix.edits) {
            fix.make_unsafe(reason);
        }
    }
}

/// The whole test of an `if`, `elif` or conditional expression that holds
/// the `torch.cuda.is_available()` call which the edit at `range` changes
/// (through `not`, `and`, `or` and parentheses).
fn renamed_test<'t>(root: Node<'t>, range: (usize, usize), src: &str) -> Option<Node<'t>> {
    let mut node = root.descendant_for_byte_range(range.0, range.1)?;
    let mut in_call = false;
    loop {
        let parent = node.parent()?;
        in_call |= node.kind_name() == "call" && is_available_call(node, src);
        let is_test = match parent.kind_name() {
            "if_statement" | "elif_clause" => parent.field(Field::Condition) == Some(node),
            "conditional_expression" => crate::parse::conditional_test(parent) == Some(node),
            _ => false,
        };
        if is_test {
            return in_call.then_some(node);
        }
        // Only through the test's own expression: not out of a branch or a statement.
        if !matches!(
            parent.kind_name(),
            "call" | "attribute" | "argument_list" | "not_operator" | "boolean_operator" | "parenthesized_expression"
        ) {
            return None;
        }
        node = parent;
    }
}

/// The first node of `code`, outside the `covered` byte ranges, that names a
/// device (see the module documentation).
fn device_named<'t>(code: Node<'t>, covered: &[(usize, usize)], src: &str) -> Option<Node<'t>> {
    let inside = |n: Node| covered.iter().any(|&(a, b)| a <= n.start_byte() && n.end_byte() <= b);
    let mut stack = vec![code];
    while let Some(node) = stack.pop() {
        if inside(node) {
            continue;
        }
        if names_device(node, src, &inside) {
            return Some(node);
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        // In source order: the stack pops the last pushed first.
        stack.extend(children.into_iter().rev());
    }
    None
}

/// Whether `node` itself names a device (see the module documentation);
/// `migrated` tells the nodes the fix changes.
fn names_device(node: Node, src: &str, migrated: &dyn Fn(Node) -> bool) -> bool {
    let lower = || text(node, src).to_ascii_lowercase();
    match node.kind_name() {
        "identifier" => {
            let name = lower();
            name.contains("cuda") || name.contains("gpu") || (name.contains("device") && passed_to_call(node))
        }
        "string" => names_cuda(node, src) || is_device_index(text(node, src)),
        // A number passed to a call the fix migrates (`torch.npu.get_device_name(0)`) counts NPUs.
        "integer" => node.parent().is_some_and(|args| {
            args.kind_name() == "argument_list"
                && args.parent().and_then(|call| call.field(Field::Function)).is_some_and(|callee| {
                    text(callee, src).to_ascii_lowercase().contains("device") && !migrated(callee)
                })
        }),
        _ => false,
    }
}

/// A string literal holding only a device index or a list of them (`"0"`, `'0,1'`).
fn is_device_index(literal: &str) -> bool {
    let inner = literal.trim_start_matches(|c: char| c.is_ascii_alphabetic()).trim_matches(|c| c == '"' || c == '\'');
    !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit() || b == b',')
}

/// Whether the name is (part of) a value passed to a call, positionally or
/// as a keyword's value: `model.to(device)`, `f(x, device=self.device)`.
fn passed_to_call(identifier: Node) -> bool {
    let mut node = identifier;
    while let Some(parent) = node.parent() {
        match parent.kind_name() {
            "argument_list" => return true,
            "keyword_argument" => return parent.field(Field::Value) == Some(node),
            "attribute" | "subscript" | "parenthesized_expression" => node = parent,
            _ => return false,
        }
    }
    false
}
