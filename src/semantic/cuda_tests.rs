//! CUDA tests: conditions whose value on a host without CUDA (an Ascend host
//! that does not run `transfer_to_npu`) is known, and the code that runs only
//! where CUDA is because of them.
//!
//! `torch.cuda.is_available()` is false there, `torch.cuda.device_count()`
//! is 0, `x.is_cuda` is false, and a device or backend compared with
//! `"cuda"`, `"gpu"` or `"nccl"` is something else. So the branch of
//! `if device.type == "cuda":`, the value if true of
//! `torch.cuda.FloatTensor if p.is_cuda else torch.Tensor`, and the `else`
//! of `if not torch.cuda.is_available():` run only where CUDA is.
//! Not followed: a test held in a name (`use_cuda = torch.cuda.is_available()`
//! ... `if use_cuda:`), and the code after `if not torch.cuda.is_available(): return`.

use super::dispatch::else_of;
use super::values::{text, unparen};
use crate::parse::{conditional_parts, Field, FieldOf, KindOf};
use tree_sitter::Node;

/// A test under which some code runs only where CUDA is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Guard<'t> {
    /// The test (the condition of an `if`, `elif` or conditional expression).
    pub test: Node<'t>,
    /// The code it guards: the branch, or the value, that runs only with CUDA.
    pub guarded: Node<'t>,
}

/// The CUDA tests that the code at byte `offset` runs under, innermost first:
/// every `if`, `elif`, `else` or conditional expression around it whose test
/// lets it run only where CUDA is.
pub(crate) fn guards_at<'t>(root: Node<'t>, offset: usize, src: &str) -> Vec<Guard<'t>> {
    let mut out = Vec::new();
    let Some(deepest) = root.descendant_for_byte_range(offset, offset) else { return out };
    let path = super::traverse::path_down(root, deepest).unwrap_or_default();
    for pair in path.windows(2).rev() {
        let [parent, child] = [pair[0], pair[1]];
        let guard = match parent.kind_name() {
            "if_statement" | "elif_clause" if parent.field(Field::Consequence) == Some(child) => {
                parent.field(Field::Condition).filter(|t| on_npu_host(*t, src) == Some(false))
            }
            // An `else` runs only with CUDA when a test of its chain holds without it.
            "else_clause" if parent.field(Field::Body) == Some(child) => {
                parent.parent().filter(|chain| chain.kind_name() == "if_statement").and_then(|chain| {
                    super::dispatch::chain_tests(chain).into_iter().find(|t| on_npu_host(*t, src) == Some(true))
                })
            }
            "conditional_expression" => conditional_parts(parent).and_then(|[if_true, test, if_false]| {
                let holds = on_npu_host(test, src);
                let guarded = (child == if_true && holds == Some(false)) || (child == if_false && holds == Some(true));
                guarded.then_some(test)
            }),
            _ => None,
        };
        if let Some(test) = guard {
            out.push(Guard { test, guarded: child });
        }
    }
    out
}

/// The code that runs only where CUDA is because of `test`, the condition of
/// an `if`, `elif` or conditional expression: its branch (or value if true)
/// when the test fails without CUDA, the chain's `else` (or value if false)
/// when it holds; `None` when CUDA does not decide the test.
pub(crate) fn guarded_by<'t>(test: Node<'t>, src: &str) -> Option<Node<'t>> {
    let owner = test.parent()?;
    let holds = on_npu_host(test, src)?;
    match owner.kind_name() {
        "if_statement" | "elif_clause" if owner.field(Field::Condition) != Some(test) => None,
        "if_statement" | "elif_clause" if !holds => owner.field(Field::Consequence),
        "if_statement" => else_of(owner)?.field(Field::Body),
        "elif_clause" => else_of(owner.parent()?)?.field(Field::Body),
        "conditional_expression" => {
            let [if_true, cond, if_false] = conditional_parts(owner)?;
            (cond == test).then_some(if holds { if_false } else { if_true })
        }
        _ => None,
    }
}

/// The value of `cond` on a host without CUDA, as far as CUDA decides it:
/// through `not`, `and` and `or`; `None` when something else decides.
pub(crate) fn on_npu_host(cond: Node, src: &str) -> Option<bool> {
    let cond = unparen(cond);
    match cond.kind_name() {
        "call" => is_available_call(cond, src).then_some(false).or_else(|| startswith_cuda(cond, src)),
        "attribute" => {
            let attribute = cond.field(Field::Attribute).map_or("", |a| text(a, src));
            (attribute == "is_cuda").then_some(false)
        }
        "not_operator" => cond.field(Field::Argument).and_then(|a| on_npu_host(a, src)).map(|v| !v),
        "boolean_operator" => {
            let op = cond.field(Field::Operator).map_or("", |o| text(o, src));
            let parts =
                [cond.field(Field::Left), cond.field(Field::Right)].map(|p| p.and_then(|p| on_npu_host(p, src)));
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
        "comparison_operator" => device_count_at_zero(cond, src).or_else(|| cuda_name_compared(cond, src)),
        _ => None,
    }
}

/// `torch.cuda.is_available()` (any module path ending in `cuda.is_available`).
pub(crate) fn is_available_call(call: Node, src: &str) -> bool {
    let callee = call.field(Field::Function).map_or("", |f| text(f, src));
    callee == "cuda.is_available" || callee.ends_with(".cuda.is_available")
}

/// Whether `text` is a string literal naming CUDA's device or backend:
/// `"cuda"`, `"cuda:0"`, `"gpu"`, `"nccl"` (a prefix such as `r` allowed).
pub(crate) fn names_cuda(literal: Node, src: &str) -> bool {
    if literal.kind_name() != "string" {
        return false;
    }
    let t = text(literal, src).trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let inner = t.trim_matches(|c| c == '"' || c == '\'');
    let device = inner
        .split_once(':')
        .map_or(inner, |(d, index)| if index.bytes().all(|b| b.is_ascii_digit()) { d } else { "" });
    matches!(device.to_ascii_lowercase().as_str(), "cuda" | "gpu" | "nccl")
}

/// `x.startswith("cuda")`: false without CUDA.
fn startswith_cuda(call: Node, src: &str) -> Option<bool> {
    let callee = call.field(Field::Function)?;
    let method = callee.field(Field::Attribute).map(|a| text(a, src));
    let args = call.field(Field::Arguments)?;
    let mut cursor = args.walk();
    let only: Vec<Node> = args.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
    (callee.kind_name() == "attribute" && method == Some("startswith") && only.len() == 1 && names_cuda(only[0], src))
        .then_some(false)
}

/// A comparison with CUDA's device or backend name: `x == "cuda"`,
/// `"cuda" in str(x)`, `x in ("cuda", "gpu")` are false without CUDA, their
/// negations (`!=`, `not in`) true. Only a comparison of two operands.
fn cuda_name_compared(cond: Node, src: &str) -> Option<bool> {
    let mut cursor = cond.walk();
    let operands: Vec<Node> = cond.named_children(&mut cursor).collect();
    let [left, right] = operands.as_slice() else { return None };
    let op: String = {
        let mut cursor = cond.walk();
        let ops: Vec<&str> = cond.children(&mut cursor).filter(|c| !c.is_named()).map(|c| text(c, src)).collect();
        ops.join(" ")
    };
    let all_cuda = |n: Node| {
        let n = unparen(n);
        match n.kind_name() {
            "tuple" | "list" | "set" => {
                let mut cursor = n.walk();
                let items: Vec<Node> = n.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
                !items.is_empty() && items.iter().all(|i| names_cuda(*i, src))
            }
            _ => false,
        }
    };
    let holds = match op.as_str() {
        "==" => names_cuda(*left, src) || names_cuda(*right, src),
        "!=" => return (names_cuda(*left, src) || names_cuda(*right, src)).then_some(true),
        "in" => names_cuda(*left, src) || all_cuda(*right),
        "not in" => return (names_cuda(*left, src) || all_cuda(*right)).then_some(true),
        _ => false,
    };
    holds.then_some(false)
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

    fn value(cond: &str) -> Option<bool> {
        let src = format!("if {cond}:\n    pass\n");
        let tree = crate::parse::parse_python(&src).expect("parses");
        let test = tree.root_node().named_child(0).and_then(|s| s.field(Field::Condition)).expect("a test");
        on_npu_host(test, &src)
    }

    #[test]
    fn tests_that_fail_without_cuda() {
        for cond in [
            "torch.cuda.is_available()",
            "x.is_cuda",
            "p[0].is_cuda",
            "device.type == 'cuda'",
            "device.type =='cuda'",
            "str(x.device) == 'cuda:0'",
            "'cuda' in str(device)",
            "args.device in ('cuda', 'gpu')",
            "args.backend == \"nccl\"",
            "device.startswith('cuda')",
            "torch.cuda.device_count() > 1",
            "args.gpu is not None and device.type == 'cuda'",
            "(x.is_cuda or torch.cuda.is_available())",
            "not device.type != 'cuda'",
        ] {
            assert_eq!(value(cond), Some(false), "{cond}");
        }
    }

    #[test]
    fn tests_that_hold_without_cuda_or_are_undecided() {
        for cond in ["not torch.cuda.is_available()", "device.type != 'cuda'", "'cuda' not in str(d)"] {
            assert_eq!(value(cond), Some(true), "{cond}");
        }
        for cond in [
            "use_cuda",
            "args.cuda",
            "device.type == 'cpu'",
            "args.device in ('cuda', 'cpu')",
            "x.is_cuda or x.is_xpu",
            "torch.cuda.device_count() > n",
            "device.startswith(prefix)",
            "'cudagraphs' == mode",
        ] {
            assert_eq!(value(cond), None, "{cond}");
        }
    }

    fn guarded_lines(src: &str, line: usize) -> Vec<(usize, String)> {
        let tree = crate::parse::parse_python(src).expect("parses");
        let offset: usize = src.lines().take(line - 1).map(|l| l.len() + 1).sum::<usize>() + 8;
        guards_at(tree.root_node(), offset, src)
            .into_iter()
            .map(|g| (g.test.start_position().row + 1, text(g.test, src).to_string()))
            .collect()
    }

    #[test]
    fn the_code_a_cuda_test_guards() {
        let src = "if device.type == 'cuda':\n\
                   \x20       x = x.cuda()\n\
                   elif x.is_cuda:\n\
                   \x20       x = x.cuda()\n\
                   else:\n\
                   \x20       x = x.cpu()\n\
                   if not torch.cuda.is_available():\n\
                   \x20       pass\n\
                   else:\n\
                   \x20       x = x.cuda()\n\
                   ft = torch.cuda.FloatTensor if p.is_cuda else torch.Tensor\n";
        assert_eq!(guarded_lines(src, 2), [(1, "device.type == 'cuda'".to_string())]);
        assert_eq!(guarded_lines(src, 4), [(3, "x.is_cuda".to_string())]);
        assert_eq!(guarded_lines(src, 6), []);
        assert_eq!(guarded_lines(src, 8), []);
        assert_eq!(guarded_lines(src, 10), [(7, "not torch.cuda.is_available()".to_string())]);
        // Byte 8 of line 11 is inside `torch.cuda.FloatTensor`, the value if true.
        assert_eq!(guarded_lines(src, 11), [(11, "p.is_cuda".to_string())]);
    }

    #[test]
    fn what_a_cuda_test_guards() {
        let src = "if torch.cuda.is_available():\n    a()\nelif not x.is_cuda:\n    b()\nelse:\n    c()\n\
                   d = e if x.is_cuda else f\nif use_cuda:\n    g()\n";
        let tree = crate::parse::parse_python(src).expect("parses");
        let root = tree.root_node();
        // The code guarded by the test that starts where `at` does and spans `cond`.
        let guarded = |at: &str, cond: &str| -> Option<String> {
            let start = src.find(at).expect("in the source");
            let test = root.descendant_for_byte_range(start, start + cond.len())?;
            guarded_by(test, src).map(|n| text(n, src).trim().to_string())
        };
        assert_eq!(guarded("torch.cuda.is_available()", "torch.cuda.is_available()").as_deref(), Some("a()"));
        // `not x.is_cuda` holds without CUDA: the chain's `else` runs only with it.
        assert_eq!(guarded("not x.is_cuda", "not x.is_cuda").as_deref(), Some("c()"));
        assert_eq!(guarded("x.is_cuda else", "x.is_cuda").as_deref(), Some("e"));
        assert_eq!(guarded("torch.cuda.is_available", "torch.cuda"), None, "not a whole test");
        assert_eq!(guarded("use_cuda", "use_cuda"), None, "CUDA does not decide a name");
    }
}
