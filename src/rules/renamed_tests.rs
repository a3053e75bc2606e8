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
//! bare device index (`"0"`, `"0,1"`; at most two digits each, so a port
//! such as `"29500"` is none), a name holding `device` passed to a call
//! (`model.to(device)`), or a whole number passed to a call whose name holds
//! `device` and that the fix does not migrate (`select_device(0)`, not
//! `torch.npu.set_device(0)`). Any of them makes the fix unsafe, with the
//! line in its description.
//!
//! A whole number assigned to such a name (`args.gpu = 0`, DINO's
//! `args.rank, args.gpu, args.world_size = 0, 0, 1`) is an index, valid on
//! any device; it names CUDA only through what reads it. It does not count
//! when every read of that name in the file is an argument of a call that a
//! safe fix of the file migrates (`torch.cuda.set_device(args.gpu)`). Reads
//! in other files are not seen: they run on the NPU through the other ways
//! of setting the name too, and are reported there.

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
    // What every safe fix of the file changes, for the reads of a device index.
    let migrated_anywhere: Vec<(usize, usize)> = findings
        .iter()
        .filter_map(|(f, _)| f.fix.as_ref().filter(|x| x.applicability == Applicability::Safe))
        .flat_map(|fix| fix.edits.iter().map(|e| e.byte_range))
        .collect();
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
        let reason = device_named(guarded, &covered, &migrated_anywhere, root, src).map(|named| {
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
/// device (see the module documentation); `migrated_anywhere` holds what
/// every safe fix of the file (under `root`) changes.
fn device_named<'t>(
    code: Node<'t>,
    covered: &[(usize, usize)],
    migrated_anywhere: &[(usize, usize)],
    root: Node,
    src: &str,
) -> Option<Node<'t>> {
    let inside = |n: Node| covered.iter().any(|&(a, b)| a <= n.start_byte() && n.end_byte() <= b);
    let mut stack = vec![code];
    while let Some(node) = stack.pop() {
        if inside(node) {
            continue;
        }
        if names_device(node, src, &inside) && !index_read_only_by_migrated_calls(node, migrated_anywhere, root, src) {
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

/// A string literal holding only a device index or a list of them (`"0"`,
/// `'0,1'`), each of at most two digits.
fn is_device_index(literal: &str) -> bool {
    let inner = literal.trim_start_matches(|c: char| c.is_ascii_alphabetic()).trim_matches(|c| c == '"' || c == '\'');
    !inner.is_empty()
        && inner.split(',').all(|index| (1..=2).contains(&index.len()) && index.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `name` is assigned a whole number (`args.gpu = 0`, also by
/// position in `a, args.gpu = 1, 0`) and every read of that name in the
/// file is an argument of a call whose callee a safe fix changes (see the
/// module documentation).
fn index_read_only_by_migrated_calls(name: Node, migrated: &[(usize, usize)], root: Node, src: &str) -> bool {
    if name.kind_name() != "identifier" || assigned_value(name).is_none_or(|v| v.kind_name() != "integer") {
        return false;
    }
    let overlaps = |n: Node| migrated.iter().any(|&(a, b)| a < n.end_byte() && n.start_byte() < b);
    let wanted = text(name, src);
    let mut reads = 0;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind_name() == "identifier" && text(node, src) == wanted && assigned_value(node).is_none() {
            let callee = argument_of(node).and_then(|call| call.field(Field::Function));
            if !callee.is_some_and(overlaps) {
                return false;
            }
            reads += 1;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    reads > 0
}

/// The value assigned to `name` when it is (the last part of) an assignment's
/// target, alone or in a tuple matched by position.
fn assigned_value(name: Node) -> Option<Node> {
    let mut target = name;
    if let Some(attribute) = name.parent().filter(|p| p.kind_name() == "attribute") {
        if attribute.field(Field::Attribute) != Some(name) {
            return None;
        }
        target = attribute;
    }
    let parent = target.parent()?;
    match parent.kind_name() {
        "assignment" if parent.field(Field::Left) == Some(target) => parent.field(Field::Right),
        "pattern_list" | "tuple_pattern" => {
            let assignment = parent.parent().filter(|a| a.kind_name() == "assignment")?;
            let mut cursor = parent.walk();
            let position = parent.named_children(&mut cursor).position(|c| c == target)?;
            let values = assignment.field(Field::Right).filter(|r| r.kind_name() == "expression_list")?;
            values.named_child(position)
        }
        _ => None,
    }
}

/// The call whose arguments hold `node` directly (seen through attributes,
/// so `args.gpu` in `set_device(args.gpu)`), if any.
fn argument_of(node: Node) -> Option<Node> {
    let mut node = node;
    loop {
        let parent = node.parent()?;
        match parent.kind_name() {
            "attribute" => node = parent,
            "argument_list" => return parent.parent(),
            _ => return None,
        }
    }
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
