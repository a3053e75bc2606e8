//! Backend dispatches: the `if` chains and separate `if` statements that
//! choose between CUDA and another backend, whose tests the matcher reads to
//! tell code written for one backend on purpose from code that assumes CUDA.

use super::traverse::any_descendant;
use super::values::text;
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use tree_sitter::Node;

/// The tests of a conditional expression, or of an `if` and its `elif`s.
pub(crate) fn chain_tests(node: Node) -> Vec<Node> {
    match node.kind_name() {
        "conditional_expression" => crate::parse::conditional_test(node).into_iter().collect(),
        "if_statement" => {
            let mut tests: Vec<Node> = node.field(Field::Condition).into_iter().collect();
            let mut cursor = node.walk();
            for alt in node.children_by_field_name("alternative", &mut cursor) {
                if alt.kind_name() == "elif_clause" {
                    tests.extend(alt.field(Field::Condition));
                }
            }
            tests
        }
        _ => Vec::new(),
    }
}

/// The `else` branch of the `if` chain `chain` when its test names CUDA and
/// `from` (the child of `chain` the code is in) is not that branch: in
/// `if opt.device == "gpu": <CUDA code> else: <NPU code>` the `else` is the
/// other arm of the dispatch, so what it calls counts as a test.
pub(crate) fn other_else_of_cuda_test<'t>(chain: Node<'t>, from: Option<Node<'t>>, src: &str) -> Option<Node<'t>> {
    if !tests_cuda(chain, src) {
        return None;
    }
    let last = else_of(chain).filter(|e| from != Some(*e))?;
    last.field(Field::Body)
}

/// The other value of the conditional expression `chain` when its test names
/// CUDA and `from` (the child of `chain` the code is in) is its first value:
/// in `"nccl" if is_cuda_available else "hccl"` the `"hccl"` is the other arm
/// of the dispatch, so it counts as a test, as [`other_else_of_cuda_test`]
/// does for an `if` chain.
pub(crate) fn other_value_of_cuda_test<'t>(chain: Node<'t>, from: Option<Node<'t>>, src: &str) -> Option<Node<'t>> {
    let [if_true, test, otherwise] = crate::parse::conditional_parts(chain)?;
    (from == Some(if_true) && names_cuda(text(test, src))).then_some(otherwise)
}

/// Whether a test's text names CUDA (`cuda`, `gpu`, `nccl`), in any case.
fn names_cuda(test: &str) -> bool {
    let t = test.to_ascii_lowercase();
    ["cuda", "gpu", "nccl"].iter().any(|w| t.contains(w))
}

/// The `else` clause of the `if` statement `chain`, if it has one.
pub(crate) fn else_of(chain: Node) -> Option<Node> {
    let mut cursor = chain.walk();
    let last = chain.children_by_field_name("alternative", &mut cursor).last()?;
    (last.kind_name() == "else_clause").then_some(last)
}

/// Whether a test reads as negated (`not x`, `a != b`, `a not in b`): its
/// branch is the other arm's.
pub(crate) fn negated(test: &str) -> bool {
    test.starts_with("not ") || test.contains("!=") || test.contains(" not in ")
}

/// What a dispatch needs to know about one `if` statement of a block, read
/// once per block: a block can hold thousands of statements, and each asks
/// about all of its siblings.
pub(crate) struct BlockIf<'t> {
    /// The `if` statement.
    pub node: Node<'t>,
    /// Its chain's tests ([`chain_tests`]).
    pub tests: Vec<Node<'t>>,
    /// Its test is negated (`not npu`, `!=`, `not in`): `if not npu: return`
    /// leaves the NPU path after it, which is no other arm.
    pub negated: bool,
    /// Its first branch ends in `return`, `continue` or `break` (not `raise`:
    /// `if device not in (..., "npu"): raise` validates, it does not dispatch).
    pub exits: bool,
    /// Its test names CUDA ([`tests_cuda`]).
    pub tests_cuda: bool,
    /// What the statements directly in its first branch assign.
    pub assigned: Vec<Assignment<'t>>,
    /// The statement after it, comments skipped.
    pub next: Option<Node<'t>>,
}

impl<'t> BlockIf<'t> {
    /// Reads `node`, an `if` statement.
    pub(crate) fn new(node: Node<'t>, src: &'t str) -> Self {
        let negated = node.field(Field::Condition).is_some_and(|t| negated(text(t, src)));
        let exits = node.field(Field::Consequence).is_some_and(|body| {
            body.named_child(body.named_child_count().saturating_sub(1)).is_some_and(|last| {
                matches!(last.kind_name(), "return_statement" | "continue_statement" | "break_statement")
            })
        });
        BlockIf {
            node,
            tests: chain_tests(node),
            negated,
            exits,
            tests_cuda: tests_cuda(node, src),
            assigned: assignments(node, src),
            next: next_statement(node),
        }
    }
}

/// A dispatch written as separate `if` statements: the tests of the `if`
/// statements `ifs` (of one block) that end in an early exit before `statement`
/// (`if npu: return "npu"` ... `return "cuda"`), assign the same name
/// that `statement` assigns (`if npu: device = "npu"` / `if cuda: device = "cuda"`;
/// steps that transform it must be the same step, see [`Assignment::same_arm`]),
/// or stand next to `statement` when it is an `if` that tests for CUDA
/// (`if cuda: ...` directly followed by `if npu: ...`, comments between them
/// allowed; `if kind == "a": ...` next to `if kind == "npu": ...` is no dispatch).
pub(crate) fn sibling_dispatch_tests<'t>(ifs: &[BlockIf<'t>], statement: Node<'t>, src: &'t str) -> Vec<Node<'t>> {
    let own = ifs.iter().find(|s| s.node == statement);
    // What `statement` assigns is read only if it has siblings to compare with.
    let assigned = std::cell::OnceCell::new();
    let assigned = || assigned.get_or_init(|| own.map_or_else(|| assignments(statement, src), |s| s.assigned.clone()));
    let statement_tests_cuda = own.is_some_and(|s| s.tests_cuda);
    let statement_next = std::cell::OnceCell::new();
    let mut out = Vec::new();
    for sibling in ifs.iter().filter(|s| s.node != statement) {
        if sibling.node.field(Field::Consequence).is_none() {
            continue;
        }
        let exits_early = sibling.exits && !sibling.negated && sibling.node.end_byte() <= statement.start_byte();
        let same_target = !sibling.assigned.is_empty() && {
            let assigned = assigned();
            sibling.assigned.iter().any(|a| assigned.iter().any(|b| a.same_arm(b)))
        };
        let next_to = statement_tests_cuda
            && !sibling.negated
            && (sibling.next == Some(statement)
                || *statement_next.get_or_init(|| next_statement(statement)) == Some(sibling.node));
        if exits_early || same_target || next_to {
            out.extend(sibling.tests.iter().copied());
        }
    }
    out
}

/// Whether `statement` is an `if` whose test names CUDA (`cuda`, `gpu` or `nccl`).
fn tests_cuda(statement: Node, src: &str) -> bool {
    statement.kind_name() == "if_statement"
        && statement.field(Field::Condition).is_some_and(|t| names_cuda(text(t, src)))
}

/// The statement after `statement` in its block, skipping comments.
fn next_statement(statement: Node) -> Option<Node> {
    let mut next = statement.next_named_sibling();
    while let Some(n) = next.filter(|n| n.kind_name() == "comment") {
        next = n.next_named_sibling();
    }
    next
}

/// A name (or `self.name`) a statement assigns, and how.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Assignment<'t> {
    /// The target's text.
    name: &'t str,
    /// For a step that transforms the value (`model = model.npu()`): its
    /// value with device names masked (`model.DEVICE()`); `None` for a value
    /// that does not read the target (a choice: `device = "npu"`).
    step: Option<String>,
}

impl Assignment<'_> {
    /// Whether two assignments are arms of one dispatch: the same target,
    /// and, where both transform it, the same step for another device
    /// (`x = x.cuda()` / `x = x.npu()`). Separate `if`s of different steps
    /// (`model = model.npu()`, then `model = torch.compile(model)`) are a
    /// pipeline, not a dispatch.
    fn same_arm(&self, other: &Assignment) -> bool {
        self.name == other.name
            && match (&self.step, &other.step) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// The assignments of a statement: `name = ...` (or `self.name = ...`), or,
/// for an `if`, those directly in its first branch.
fn assignments<'s>(statement: Node, src: &'s str) -> Vec<Assignment<'s>> {
    let one = |s: Node| -> Option<Assignment<'s>> {
        let assignment =
            s.named_child(0).filter(|a| s.kind_name() == "expression_statement" && a.kind_name() == "assignment")?;
        let target = assignment.field(Field::Left).filter(|t| matches!(t.kind_name(), "identifier" | "attribute"))?;
        let name = text(target, src);
        let step = assignment.field(Field::Right).filter(|v| reads(*v, name, src)).map(|v| mask_devices(text(v, src)));
        Some(Assignment { name, step })
    };
    match statement.kind_name() {
        "if_statement" => {
            let Some(body) = statement.field(Field::Consequence) else { return Vec::new() };
            let mut cursor = body.walk();
            let names = body.named_children(&mut cursor).filter_map(one).collect();
            names
        }
        _ => one(statement).into_iter().collect(),
    }
}

/// Whether `value` reads `name` (an identifier, or a dotted `self.x`), not
/// counting the attribute part of `y.name`.
fn reads(value: Node, name: &str, src: &str) -> bool {
    any_descendant(value, |n| {
        let attribute_part =
            n.parent().is_some_and(|p| p.kind_name() == "attribute" && p.field(Field::Attribute) == Some(n));
        matches!(n.kind_name(), "identifier" | "attribute") && !attribute_part && text(n, src) == name
    })
}

/// `text` with every device word (`cuda`, `npu`, `gpu`, any case) replaced by
/// `DEVICE`, so that the CUDA and the NPU form of one step compare equal.
fn mask_devices(text: &str) -> String {
    static DEVICE_WORD: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new("(?i)cuda|npu|gpu").expect("a valid regex"));
    DEVICE_WORD.replace_all(text, "DEVICE").into_owned()
}
