//! The branches around a file's findings that test command-line options
//! (`if args.num_gpu > 1:`), read from its syntax tree while it is analysed.
//!
//! A port's launch scripts fix the options its runs take; a branch that no
//! launch takes holds code no NPU process runs ([`crate::project::configurations`]
//! decides that for the whole project). Only what the syntax says for sure is
//! read: any part of a test that is not an option, a literal, a comparison,
//! `not`, `and` or `or` is unknown, and an unknown part decides nothing.

use super::values::{literal, text, unparen, Literal};
use crate::parse::{Field, FieldOf, KindOf};
use crate::source::LineSet;
use serde::{Deserialize, Serialize};
use tree_sitter::Node;

/// A branch (the body of an `if`, `elif` or `else`) taken only when its test holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    /// The line of its `if`, `elif` or `else` (1-based).
    pub line: usize,
    /// The first and last line of its body.
    pub lines: (usize, usize),
    /// When the branch runs: its own test, after the earlier tests of its chain fail.
    pub test: Cond,
    /// The test as written, for messages (`args.num_gpu > 1`, `not (args.device == 'npu')`).
    pub shown: String,
}

/// A test, as far as it reads options and literals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Cond {
    /// Something else: a call, a name, an operator not modelled.
    Unknown,
    /// The truth of a value (`if args.amp:`).
    Truth(Operand),
    /// `not` a test.
    Not(Box<Cond>),
    /// Every test holds (`and`).
    All(Vec<Cond>),
    /// Some test holds (`or`).
    Any(Vec<Cond>),
    /// A comparison of two values.
    Compare(Operand, CompareOp, Operand),
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Operand {
    /// The value of the option held in this attribute.
    Option(String),
    /// A literal.
    Value(Literal),
    /// A literal list, tuple or set (the right side of `in`).
    Values(Vec<Literal>),
    /// Anything else.
    Unknown,
}

/// The comparisons a test may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
    /// `not in`
    NotIn,
    /// `is`
    Is,
    /// `is not`
    IsNot,
}

/// Names that hold parsed options by convention (`args = parser.parse_args()`);
/// an attribute of one of them, or of `self.` one of them, is an option.
pub(crate) const NAMESPACES: &[&str] =
    &["args", "opt", "opts", "options", "flags", "FLAGS", "hparams", "hp", "arg", "params"];

/// Tests nested deeper than this are unknown (real tests are a few levels deep).
const MAX_TEST_DEPTH: usize = 32;

/// The branches around the findings of a parsed file (at `finding_lines`)
/// whose tests read options.
pub(crate) fn around(root: Node, src: &str, finding_lines: &LineSet) -> Vec<Gate> {
    let mut out = Vec::new();
    if finding_lines.is_empty() {
        return out;
    }
    let namespaces = parsed_names(src);
    let inside = |n: Node| finding_lines.any_within(n.start_position().row + 1, n.end_position().row + 1);
    // Into the nodes that hold a finding only.
    super::traverse::each_descendant(root, |node| {
        if node.kind_name() == "if_statement" {
            gates_of(node, src, &namespaces, finding_lines, &mut out);
        }
        inside(node)
    });
    out
}

/// Identifiers this file binds to parsed options (`conf = parser.parse_args()`),
/// besides the conventional [`NAMESPACES`].
pub(crate) fn parsed_names(src: &str) -> Vec<&str> {
    crate::source::python_lines(src)
        .filter(|l| l.contains("parse_args(") || l.contains("parse_known_args("))
        .filter_map(|l| {
            let (lhs, _) = l.split_once('=')?;
            let name = lhs.trim().trim_start_matches('(').split(',').next()?.trim();
            name.chars().all(|c| c.is_alphanumeric() || c == '_').then_some(name).filter(|n| !n.is_empty())
        })
        .collect()
}

/// The tests under which `node`, in the tree whose root is `root`, runs: one
/// for each `if`, `elif` or `else` arm around it (the arm's own test after
/// the earlier ones fail).
pub(crate) fn enclosing_tests(root: Node, node: Node, src: &str, namespaces: &[&str]) -> Vec<Cond> {
    let mut tests = Vec::new();
    // One descent from the root: walking up with `parent` is quadratic in the depth.
    let path = super::traverse::path_down(root, node).unwrap_or_default();
    for pair in path.windows(2).rev() {
        let [parent, child] = [pair[0], pair[1]];
        if parent.kind_name() == "if_statement" {
            let line = child.start_position().row + 1;
            let at = |(first, last): (usize, usize)| (first..=last).contains(&line);
            tests.extend(arms(parent, src, namespaces).into_iter().find(|a| at(a.lines)).map(|a| a.test));
        }
    }
    tests
}

/// The branches of the `if` chain at `node` that hold a finding and whose
/// test reads an option.
fn gates_of(node: Node, src: &str, namespaces: &[&str], finding_lines: &LineSet, out: &mut Vec<Gate>) {
    let holds_finding = |(first, last): (usize, usize)| finding_lines.any_within(first, last);
    out.extend(arms(node, src, namespaces).into_iter().filter(|a| holds_finding(a.lines) && a.test.reads_options()));
}

/// Every arm of the `if` chain at `node`, each with the test under which it
/// runs: its own, after the tests of the arms before it fail.
fn arms(node: Node, src: &str, namespaces: &[&str]) -> Vec<Gate> {
    let mut out = Vec::new();
    // The tests of the arms before this one, which must all fail.
    let mut earlier: Vec<(Cond, String)> = Vec::new();
    let mut arms: Vec<(Option<Node>, Node)> = vec![(node.field(Field::Condition), node)];
    let mut cursor = node.walk();
    for clause in node.named_children(&mut cursor) {
        match clause.kind_name() {
            "elif_clause" => arms.push((clause.field(Field::Condition), clause)),
            "else_clause" => arms.push((None, clause)),
            _ => {}
        }
    }
    for (condition, arm) in arms {
        let Some(body) = arm.field(Field::Consequence).or_else(|| arm.field(Field::Body)) else { continue };
        let own = condition.map(|c| (test_of(c, src, namespaces, 0), text(c, src).to_string()));
        let mut parts: Vec<Cond> = earlier.iter().map(|(c, _)| Cond::Not(Box::new(c.clone()))).collect();
        let mut shown: Vec<String> = earlier.iter().map(|(_, s)| format!("not ({s})")).collect();
        if let Some((c, s)) = &own {
            parts.push(c.clone());
            shown.push(s.clone());
        }
        let test = if parts.len() == 1 { parts.remove(0) } else { Cond::All(parts) };
        let lines = (body.start_position().row + 1, body.end_position().row + 1);
        out.push(Gate { line: arm.start_position().row + 1, lines, test, shown: shown.join(" and ") });
        earlier.extend(own);
    }
    out
}

/// The test at `node` as a [`Cond`].
fn test_of(node: Node, src: &str, namespaces: &[&str], depth: usize) -> Cond {
    if depth > MAX_TEST_DEPTH {
        return Cond::Unknown;
    }
    let node = unparen(node);
    let sub = |n: Option<Node>| n.map_or(Cond::Unknown, |n| test_of(n, src, namespaces, depth + 1));
    match node.kind_name() {
        "not_operator" => Cond::Not(Box::new(sub(node.field(Field::Argument)))),
        "boolean_operator" => {
            let (left, right) = (sub(node.field(Field::Left)), sub(node.field(Field::Right)));
            match node.field(Field::Operator).map(|o| text(o, src)) {
                Some("and") => Cond::All(vec![left, right]),
                Some("or") => Cond::Any(vec![left, right]),
                _ => Cond::Unknown,
            }
        }
        "comparison_operator" => comparison(node, src, namespaces),
        _ => match operand(node, src, namespaces) {
            Operand::Unknown => Cond::Unknown,
            o => Cond::Truth(o),
        },
    }
}

/// A comparison of two operands (`a < b < c` is unknown).
fn comparison(node: Node, src: &str, namespaces: &[&str]) -> Cond {
    let mut cursor = node.walk();
    let operands: Vec<Node> = node.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
    let [left, right] = operands[..] else { return Cond::Unknown };
    // The operator is the unnamed text between the operands (`not in` is two words).
    let between = src.get(left.end_byte()..right.start_byte()).unwrap_or("");
    let words: Vec<&str> = between.split(|c: char| c.is_whitespace() || c == ')' || c == '(').collect();
    let op = match words.into_iter().filter(|w| !w.is_empty()).collect::<Vec<_>>()[..] {
        ["=="] => CompareOp::Eq,
        ["!="] => CompareOp::Ne,
        ["<"] => CompareOp::Lt,
        ["<="] => CompareOp::Le,
        [">"] => CompareOp::Gt,
        [">="] => CompareOp::Ge,
        ["in"] => CompareOp::In,
        ["not", "in"] => CompareOp::NotIn,
        ["is"] => CompareOp::Is,
        ["is", "not"] => CompareOp::IsNot,
        _ => return Cond::Unknown,
    };
    Cond::Compare(operand(left, src, namespaces), op, operand(right, src, namespaces))
}

/// A value in a test: an option, a literal, a literal collection.
fn operand(node: Node, src: &str, namespaces: &[&str]) -> Operand {
    let node = unparen(node);
    if let Some(value) = literal(node, src) {
        return Operand::Value(value);
    }
    match node.kind_name() {
        "attribute" => option_name(node, src, namespaces).map_or(Operand::Unknown, |n| Operand::Option(n.to_string())),
        "list" | "tuple" | "set" => {
            let mut cursor = node.walk();
            let items: Option<Vec<Literal>> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind_name() != "comment")
                .map(|c| literal(c, src))
                .collect();
            items.map_or(Operand::Unknown, Operand::Values)
        }
        _ => Operand::Unknown,
    }
}

/// The option an attribute reads: `args.amp`, `self.opt.amp` (`amp`).
fn option_name<'s>(node: Node, src: &'s str, namespaces: &[&str]) -> Option<&'s str> {
    let object = node.field(Field::Object)?;
    let holder = match object.kind_name() {
        "identifier" => text(object, src),
        "attribute" if object.field(Field::Object).is_some_and(|o| text(o, src) == "self") => {
            text(object.field(Field::Attribute)?, src)
        }
        _ => return None,
    };
    let known = NAMESPACES.contains(&holder) || namespaces.contains(&holder);
    known.then(|| node.field(Field::Attribute).map(|a| text(a, src))).flatten()
}

impl Cond {
    /// Whether any part of the test reads an option.
    pub fn reads_options(&self) -> bool {
        let is_option = |o: &Operand| matches!(o, Operand::Option(_));
        match self {
            Cond::Unknown => false,
            Cond::Truth(o) => is_option(o),
            Cond::Not(c) => c.reads_options(),
            Cond::All(cs) | Cond::Any(cs) => cs.iter().any(Cond::reads_options),
            Cond::Compare(a, _, b) => is_option(a) || is_option(b),
        }
    }
}
