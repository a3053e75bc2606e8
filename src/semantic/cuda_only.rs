//! Tests that run only where CUDA is: a test function or class decorated
//! with a skip that holds on every host without CUDA
//! (`@unittest.skipIf(not torch.cuda.is_available(), ...)`,
//! `@pytest.mark.skipif(torch.cuda.device_count() < 2, ...)`,
//! `@unittest.skipUnless(torch.cuda.is_available(), ...)`).
//!
//! On an Ascend host that does not run `transfer_to_npu`, CUDA is never
//! available, so such a test is skipped and nothing in it runs: the upstream
//! suites that ports keep (detectron2's, torchvision's, mmdet's) hold hundreds
//! of `.cuda()` calls in tests of this kind. The skip decorator itself still
//! gets its finding (API001 on `torch.cuda.is_available`), which is where a
//! user who wants the test on the NPU starts. Under `transfer_to_npu` CUDA is
//! reported available and the test runs; the caller decides which applies.

use super::values::{text, unparen};
use crate::parse::{Field, FieldOf, KindOf};
use crate::source::LineSet;
use tree_sitter::Node;

/// The first and last line (1-based) of each definition in the tree rooted at
/// `root` (of source `src`) that a skip decorator limits to CUDA hosts, among
/// those that hold one of `finding_lines`. Nested ones inside such a
/// definition are not listed again.
pub fn tests(root: Node, src: &str, finding_lines: &LineSet) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if finding_lines.is_empty() || !src.contains("skip") || !src.contains("cuda") {
        return out;
    }
    let lines_of = |n: Node| (n.start_position().row + 1, n.end_position().row + 1);
    let holds_finding = |n: Node| {
        let (first, last) = lines_of(n);
        finding_lines.any_within(first, last)
    };
    super::traverse::each_descendant(root, |node| {
        if !holds_finding(node) {
            return false;
        }
        if node.kind_name() != "decorated_definition" {
            return true;
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let definition =
            children.iter().find(|c| matches!(c.kind_name(), "function_definition" | "class_definition")).copied();
        let cuda_only = children
            .iter()
            .filter(|c| c.kind_name() == "decorator")
            .any(|d| d.named_child(0).is_some_and(|e| skips_without_cuda(e, src)));
        match definition {
            Some(def) if cuda_only => {
                out.push(lines_of(def));
                false
            }
            _ => true,
        }
    });
    out
}

/// Whether a decorator's expression is a skip that holds without CUDA:
/// `skipIf`/`skipif` with a condition true without CUDA, or `skipUnless`
/// with one that needs CUDA.
fn skips_without_cuda(expr: Node, src: &str) -> bool {
    if expr.kind_name() != "call" {
        return false;
    }
    let callee = expr.field(Field::Function).map_or("", |f| text(f, src));
    let name = callee.rsplit('.').next().unwrap_or(callee);
    let condition = expr.field(Field::Arguments).and_then(|a| {
        let mut cursor = a.walk();
        let first = a.named_children(&mut cursor).next();
        first.filter(|c| c.kind_name() != "keyword_argument")
    });
    let Some(condition) = condition else { return false };
    match name {
        "skipIf" | "skipif" => without_cuda(condition, src) == Some(true),
        "skipUnless" => without_cuda(condition, src) == Some(false),
        _ => false,
    }
}

/// The value of `cond` on a host without CUDA, where
/// `torch.cuda.is_available()` is false and `torch.cuda.device_count()` 0,
/// as far as that decides it: through `not`, `and` and `or`; `None` when
/// something else decides.
fn without_cuda(cond: Node, src: &str) -> Option<bool> {
    let cond = unparen(cond);
    match cond.kind_name() {
        "call" => is_available_call(cond, src).then_some(false),
        "not_operator" => cond.field(Field::Argument).and_then(|a| without_cuda(a, src)).map(|v| !v),
        "boolean_operator" => {
            let op = cond.field(Field::Operator).map_or("", |o| text(o, src));
            let parts =
                [cond.field(Field::Left), cond.field(Field::Right)].map(|p| p.and_then(|p| without_cuda(p, src)));
            // `and` is false when one part is, `or` true when one part is.
            let decisive = op == "or";
            if parts.contains(&Some(decisive)) {
                Some(decisive)
            } else if parts == [Some(!decisive); 2] {
                Some(!decisive)
            } else {
                None
            }
        }
        "comparison_operator" => device_count_at_zero(cond, src),
        _ => None,
    }
}

/// `torch.cuda.is_available()` (any module path ending in `cuda.is_available`).
fn is_available_call(call: Node, src: &str) -> bool {
    let callee = call.field(Field::Function).map_or("", |f| text(f, src));
    callee == "cuda.is_available" || callee.ends_with(".cuda.is_available")
}

/// The value of a comparison `torch.cuda.device_count() OP n` (`<`, `<=`,
/// `==`, `>`, `>=`, a whole number `n`) on a host without CUDA, where the
/// count is 0; `None` for any other comparison.
fn device_count_at_zero(cond: Node, src: &str) -> Option<bool> {
    let mut cursor = cond.walk();
    let operands: Vec<Node> = cond.named_children(&mut cursor).collect();
    let [left, right] = operands.as_slice() else { return None };
    let callee = (left.kind_name() == "call").then(|| left.field(Field::Function)).flatten()?;
    let callee = text(callee, src);
    if callee != "cuda.device_count" && !callee.ends_with(".cuda.device_count") {
        return None;
    }
    let n = text(*right, src).parse::<i64>().ok()?;
    match text(cond.child(1)?, src) {
        "<" => Some(0 < n),
        "<=" => Some(0 <= n),
        "==" => Some(n == 0),
        ">" => Some(0 > n),
        ">=" => Some(0 >= n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(src: &str) -> Vec<(usize, usize)> {
        let tree = crate::parse::parse_python(src).expect("parses");
        let lines = LineSet::new(1..=src.lines().count());
        tests(tree.root_node(), src, &lines)
    }

    #[test]
    fn skips_that_hold_without_cuda_limit_a_test_to_cuda_hosts() {
        let src = "import unittest, pytest, torch\n\
                   class T(unittest.TestCase):\n\
                   \x20   @unittest.skipIf(not torch.cuda.is_available(), 'no CUDA')\n\
                   \x20   def test_cuda(self):\n\
                   \x20       x = torch.ones(1).cuda()\n\
                   \x20   def test_cpu(self):\n\
                   \x20       x = torch.ones(1).cuda()\n\
                   @pytest.mark.skipif(torch.cuda.device_count() < 2, reason='two GPUs')\n\
                   def test_two():\n\
                   \x20   pass\n\
                   @unittest.skipUnless(torch.cuda.is_available() and HAS_APEX, 'apex')\n\
                   class Apex(unittest.TestCase):\n\
                   \x20   def test_a(self):\n\
                   \x20       pass\n";
        assert_eq!(ranges(src), [(4, 5), (9, 10), (12, 14)]);
    }

    #[test]
    fn skips_that_let_the_test_run_without_cuda_do_not() {
        for decorator in [
            "@unittest.skipIf(torch.cuda.is_available(), 'CPU only')",
            "@unittest.skipIf(not torch.cuda.is_available() and SLOW, 'x')",
            "@unittest.skipUnless(torch.cuda.is_available() or ON_NPU, 'x')",
            "@pytest.mark.skipif(torch.cuda.device_count() > 1, reason='x')",
            "@pytest.mark.skipif(reason='no condition')",
            "@torch.no_grad()",
        ] {
            let src = format!("import torch\n{decorator}\ndef test_it():\n    x = torch.ones(1).cuda()\n");
            assert_eq!(ranges(&src), [], "{decorator}");
        }
    }
}
