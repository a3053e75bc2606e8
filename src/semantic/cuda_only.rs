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

use super::cuda_tests::on_npu_host;
use super::values::text;
use crate::parse::{Field, FieldOf, KindOf};
use crate::source::LineSet;
use tree_sitter::Node;

/// The first and last line (1-based) of each definition in the tree rooted at
/// `root` (of source `src`) that a skip decorator limits to CUDA hosts, among
/// those that hold one of `finding_lines`. Nested ones inside such a
/// definition are not listed again.
pub(crate) fn tests(root: Node, src: &str, finding_lines: &LineSet) -> Vec<(usize, usize)> {
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
        "skipIf" | "skipif" => on_npu_host(condition, src) == Some(true),
        "skipUnless" => on_npu_host(condition, src) == Some(false),
        _ => false,
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
