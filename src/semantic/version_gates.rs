//! Code that a test of the torch version rules out. Ports and libraries keep
//! arms for old torch releases (`if torch.__version__ >= "1.8": ... else:
//! torch.npu.global_step_inc()`, the `LooseVersion(torch.__version__) >
//! LooseVersion("0.3.1")` of old trackers, mmcv's `TORCH_VERSION ==
//! "parrots"`); under the target's torch (2.1 and later) such an arm never
//! runs, and what it holds is no work for the migration.
//!
//! A test is decided only when its answer is the same for every release of
//! the target's minor version: `torch.__version__` is a `TorchVersion`,
//! which compares as a version (not as a string), so `>= "1.8"` holds and
//! `< (1, 4)` does not at 2.1, while `> "2.1"` (false for 2.1.0, true for
//! 2.1.2) is left undecided, like any test the module cannot read.

use super::traverse::FlatTree;
use crate::parse::{Field, FieldOf, KindOf};
use regex::Regex;
use std::sync::LazyLock;
use tree_sitter::Node;

/// A torch release's major and minor version.
type Version = (u32, u32);

/// How many levels of `not`, `and`/`or` and parentheses a test is read
/// through: a version test has a few; deeper ones are left undecided (and
/// cannot exhaust the stack).
const MAX_TEST_DEPTH: usize = 32;

/// The byte ranges of the branches that the target's torch version never
/// runs, among the nodes of `tree` (which stops at `MAX_DEPTH`, like the
/// rest of the analysis).
pub(crate) fn dead_branches(tree: &FlatTree, src: &str, target: Version) -> Vec<(usize, usize)> {
    if !src.contains("__version__") && !src.contains("TORCH_VERSION") {
        return Vec::new();
    }
    let mut dead = Vec::new();
    for node in tree.nodes() {
        match node.kind_name() {
            "if_statement" => dead_in_if(node, src, target, &mut dead),
            "conditional_expression" => {
                let Some([then, test, otherwise]) = crate::parse::conditional_parts(node) else { continue };
                match holds(test, src, target, 0) {
                    Some(true) => dead.push(otherwise.byte_range()),
                    Some(false) => dead.push(then.byte_range()),
                    None => {}
                }
            }
            _ => {}
        }
    }
    dead.into_iter().map(|r| (r.start, r.end)).collect()
}

/// The dead parts of one `if` chain: the body of a test that fails, and
/// every clause after a test that holds.
fn dead_in_if(node: Node, src: &str, target: Version, dead: &mut Vec<std::ops::Range<usize>>) {
    let mut taken = false;
    let mut cursor = node.walk();
    let clauses = std::iter::once(node).chain(node.children_by_field_name("alternative", &mut cursor));
    for clause in clauses {
        // `if` and `elif` have a consequence, `else` a body.
        let body = clause.field(Field::Consequence).or_else(|| clause.field(Field::Body));
        let Some(body) = body else { continue };
        if taken {
            dead.push(body.byte_range());
            continue;
        }
        match clause.field(Field::Condition).and_then(|c| holds(c, src, target, 0)) {
            Some(true) => taken = true,
            Some(false) => dead.push(body.byte_range()),
            None => {}
        }
    }
}

/// Whether `test` (`depth` levels inside the whole test) holds under the
/// target's torch, when that is known.
fn holds(test: Node, src: &str, target: Version, depth: usize) -> Option<bool> {
    if depth > MAX_TEST_DEPTH {
        return None;
    }
    let inner = |field: Field| holds(test.field(field)?, src, target, depth + 1);
    match test.kind_name() {
        "parenthesized_expression" => holds(crate::parse::first_code_child(test)?, src, target, depth + 1),
        "not_operator" => inner(Field::Argument).map(|v| !v),
        "boolean_operator" => {
            let (left, right) = (inner(Field::Left), inner(Field::Right));
            let and = test.field(Field::Operator)?.kind_name() == "and";
            match (and, left, right) {
                (true, Some(false), _) | (true, _, Some(false)) => Some(false),
                (false, Some(true), _) | (false, _, Some(true)) => Some(true),
                (_, Some(l), Some(r)) => Some(if and { l && r } else { l || r }),
                _ => None,
            }
        }
        "comparison_operator" => compare(test, src, target),
        _ => None,
    }
}

/// A comparison of the torch version with a literal version, either way round.
fn compare(test: Node, src: &str, target: Version) -> Option<bool> {
    let mut cursor = test.walk();
    let operands: Vec<Node> = test.named_children(&mut cursor).collect();
    let [left, right] = operands[..] else { return None };
    let op = src[left.end_byte()..right.start_byte()].trim();
    let text = |n: Node| &src[n.byte_range()];
    let (op, other, version) = match (torch_version(text(left)), torch_version(text(right))) {
        (Some(v), _) => (op, text(right), v),
        (None, Some(v)) => (flipped(op)?, text(left), v),
        (None, None) => return None,
    };
    if let Some(name) = other.strip_prefix(['"', '\'']).and_then(|s| s.strip_suffix(['"', '\''])) {
        if name == "parrots" {
            return match op {
                "==" => Some(false),
                "!=" => Some(true),
                _ => None,
            };
        }
    }
    let (literal, exact) = literal_version(other)?;
    // A plain string compares character by character ("2.6" >= "2.10"), a
    // version does not; they agree when the major versions differ.
    if version == Read::MaybeString && literal.0 == target.0 {
        return None;
    }
    let ordering = target.cmp(&literal);
    // Equal minors decide only `>=` and `<` of a literal without a patch
    // level: 2.1.x >= 2.1 for every x; 2.1.x > 2.1 only for x > 0.
    if ordering == std::cmp::Ordering::Equal && !exact {
        return None;
    }
    use std::cmp::Ordering::*;
    match (op, ordering) {
        (">=", Greater | Equal) | (">", Greater) | ("<=", Less) | ("<", Less) | ("!=", Greater | Less) => Some(true),
        (">=", Less) | (">", Less) | ("<=", Greater) | ("<", Greater | Equal) | ("==", Greater | Less) => Some(false),
        _ => None,
    }
}

/// `a OP b` read as `b OP' a`.
fn flipped(op: &str) -> Option<&'static str> {
    Some(match op {
        ">=" => "<=",
        ">" => "<",
        "<=" => ">=",
        "<" => ">",
        "==" => "==",
        "!=" => "!=",
        _ => return None,
    })
}

/// How an expression holds the installed torch's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// As a version: `torch.__version__` (a `TorchVersion`), or inside a
    /// version parser.
    Version,
    /// A project's own `TORCH_VERSION`, which may be a plain string (mmcv
    /// sets it to `torch.__version__`, others to a part of it).
    MaybeString,
}

/// The installed torch's version, as written, possibly inside a version parser.
static TORCH_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:(?P<parser>[\w.]*(?:parse|Version|digit_version)\(\s*))?(?:torch\.(?:version\.)?__version__|(?P<own>TORCH_VERSION))\s*\)?$",
    )
    .expect("valid regex")
});

/// Whether `text` is the torch version, and how it compares.
fn torch_version(text: &str) -> Option<Read> {
    let c = TORCH_VERSION.captures(text)?;
    Some(if c.name("own").is_some() && c.name("parser").is_none() { Read::MaybeString } else { Read::Version })
}

/// A literal version, as written, possibly inside a version parser: `"1.8"`,
/// `version.parse("1.6.0")`, `(1, 4)`. Its major and minor, and whether
/// it stops there or has a zero patch level (`"1.8"`, `"2.1.0"`), so that
/// every release of that minor compares alike with it.
static LITERAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?:[\w.]*(?:parse|Version|digit_version)\(\s*)?(?:["'](\d+)\.(\d+)(?:\.(\d+))?["']|\(\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))\s*\)?$"#)
        .expect("valid regex")
});

fn literal_version(text: &str) -> Option<(Version, bool)> {
    let c = LITERAL.captures(text)?;
    let number = |a: usize, b: usize| c.get(a).or_else(|| c.get(b)).and_then(|m| m.as_str().parse::<u32>().ok());
    let patch = c.get(3).or_else(|| c.get(6)).map(|m| m.as_str());
    Some(((number(1, 4)?, number(2, 5)?), patch.is_none_or(|p| p.chars().all(|ch| ch == '0'))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `src` that dead branches at `target` start or end on.
    fn dead_lines(src: &str, target: Version) -> Vec<usize> {
        let tree = crate::parse::parse_python(src).unwrap();
        let line = |at: usize| src[..at].matches('\n').count() + 1;
        let flat = FlatTree::new(tree.root_node());
        let mut lines: Vec<usize> =
            dead_branches(&flat, src, target).iter().flat_map(|&(a, b)| line(a)..=line(b)).collect();
        lines.sort();
        lines.dedup();
        lines
    }

    #[test]
    fn arms_for_old_torch_are_dead() {
        let src = "if torch.__version__ >= \"1.8\":\n    a()\nelse:\n    b()\n\
                   if LooseVersion(torch.__version__) > LooseVersion('0.3.1'):\n    c()\nelse:\n    d()\n\
                   if TORCH_VERSION == 'parrots':\n    e()\nelif digit_version(TORCH_VERSION) < digit_version('1.4.0'):\n    f()\nelse:\n    g()\n\
                   x = h() if (1, 6) <= TORCH_VERSION else i()\n\
                   if not torch.__version__ < '1.5' and flag:\n    j()\nelse:\n    k()\n";
        assert_eq!(dead_lines(src, (2, 1)), [4, 8, 10, 12, 15]);
    }

    #[test]
    fn tests_that_differ_within_a_minor_or_that_it_cannot_read_are_left_alone() {
        let src = "if torch.__version__ > '2.1':\n    a()\nelse:\n    b()\n\
                   if torch.__version__ >= version.parse('2.1.2'):\n    c()\n\
                   if float(torch.__version__[:3]) >= 1.8:\n    d()\n\
                   if version >= '1.8':\n    e()\n\
                   if torch.__version__ >= '1.8' or flag:\n    f()\nelse:\n    g()\n";
        assert_eq!(dead_lines(src, (2, 1)), [14]);
    }

    #[test]
    fn the_target_decides() {
        let src = "if torch.__version__ >= '2.6':\n    new()\nelse:\n    old()\n";
        assert_eq!(dead_lines(src, (2, 1)), [2]);
        assert_eq!(dead_lines(src, (2, 6)), [4]);
        assert_eq!(dead_lines(src, (2, 14)), [4]);
        // A project's own TORCH_VERSION may be a plain string: "2.14.0" < "2.6"
        // as text, so a test within the same major version is not decided.
        let own = "if TORCH_VERSION >= '2.6':\n    new()\nelse:\n    old()\n";
        assert_eq!(dead_lines(own, (2, 14)), Vec::<usize>::new());
        assert_eq!(dead_lines(&own.replace("'2.6'", "'1.6'"), (2, 14)), [4]);
        // Comments inside a parenthesised conditional expression.
        let commented = "x = (\n    new()  # the 2.x path\n    if torch.__version__ >= '1.8'\n    else old()\n)\n";
        assert_eq!(dead_lines(commented, (2, 1)), [4]);
    }
}
