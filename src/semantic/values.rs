//! Reading values out of syntax: literals, string templates, dotted names.

use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use tree_sitter::Node;

/// The source text of `node`.
pub(crate) fn text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// Skips wrapping parentheses.
pub(crate) fn unparen(mut node: Node) -> Node {
    while node.kind_name() == "parenthesized_expression" {
        match crate::parse::first_code_child(node) {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// A literal value as Python would evaluate it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Literal {
    /// `True`/`False`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A plain string.
    Str(String),
    /// `None`.
    None,
}

/// Evaluates a literal: numbers, booleans, `None`, plain strings, `-number`
/// (any number of signs: they are counted in a loop, not by recursion, so no
/// nesting is too deep to evaluate).
pub(crate) fn literal(node: Node, src: &str) -> Option<Literal> {
    let mut node = unparen(node);
    let mut negative = false;
    let mut signed = false;
    while node.kind_name() == "unary_operator" {
        match text(node.field(Field::Operator)?, src) {
            "-" => negative = !negative,
            "+" => {}
            _ => return None,
        }
        signed = true;
        node = unparen(node.field(Field::Argument)?);
    }
    let value = match node.kind_name() {
        "true" => Literal::Bool(true),
        "false" => Literal::Bool(false),
        "none" => Literal::None,
        "integer" => Literal::Int(parse_int(text(node, src))?),
        "float" => Literal::Float(text(node, src).replace('_', "").parse().ok()?),
        "string" => Literal::Str(plain_string(node, src)?),
        _ => return None,
    };
    match value {
        Literal::Int(i) if negative => Some(Literal::Int(i.checked_neg()?)),
        Literal::Float(f) if negative => Some(Literal::Float(-f)),
        v @ (Literal::Int(_) | Literal::Float(_)) => Some(v),
        v if !signed => Some(v),
        _ => None,
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.replace('_', "");
    let lower = s.to_ascii_lowercase();
    let (digits, radix) = match lower.get(..2) {
        Some("0x") => (&lower[2..], 16),
        Some("0o") => (&lower[2..], 8),
        Some("0b") => (&lower[2..], 2),
        _ => (lower.as_str(), 10),
    };
    i64::from_str_radix(digits.trim_end_matches('l'), radix).ok()
}

/// Whether `node` is a literal (what "non-literal" rules test), including
/// lists, tuples and sets of literals, nested to any depth (searched with a
/// stack of its own, not by recursion).
pub(crate) fn is_literal(node: Node, src: &str) -> bool {
    let mut todo = vec![node];
    while let Some(n) = todo.pop() {
        let n = unparen(n);
        match n.kind_name() {
            "list" | "tuple" | "set" => {
                let mut cursor = n.walk();
                todo.extend(n.named_children(&mut cursor));
            }
            _ if literal(n, src).is_none() => return false,
            _ => {}
        }
    }
    true
}

/// The content of a string without interpolation, or `None` for f-strings,
/// byte strings and concatenations.
pub(crate) fn plain_string(node: Node, src: &str) -> Option<String> {
    if node.kind_name() != "string" {
        return None;
    }
    let prefix = string_prefix(node, src);
    if prefix.contains(['b', 'B', 'f', 'F']) {
        return None;
    }
    string_template(node, src)
}

fn string_prefix<'s>(node: Node, src: &'s str) -> &'s str {
    let t = text(node, src);
    let end = t.find(['"', '\'']).unwrap_or(0);
    &t[..end]
}

/// The text of a string literal with every interpolation written as `{}`.
pub(crate) fn string_template(node: Node, src: &str) -> Option<String> {
    if node.kind_name() != "string" {
        return None;
    }
    let mut out = String::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind_name() {
            "string_content" | "escape_sequence" => out.push_str(text(child, src)),
            "interpolation" => out.push_str("{}"),
            _ => {}
        }
    }
    Some(out)
}

/// A string-like value: a literal, f-string, `"..." % x`, `"..." + x` or `"...".format(x)`.
/// Returns the string node inside and the normalised text (placeholders as `{}`).
pub(crate) fn string_like<'t>(node: Node<'t>, src: &str) -> Option<(Node<'t>, String)> {
    match node.kind_name() {
        "string" => {
            if string_prefix(node, src).contains(['b', 'B']) {
                return None;
            }
            Some((node, string_template(node, src)?))
        }
        "binary_operator" => {
            let left = unparen(node.field(Field::Left)?);
            if left.kind_name() != "string" || string_prefix(left, src).contains(['b', 'B']) {
                return None;
            }
            match text(node.field(Field::Operator)?, src) {
                "%" => Some((left, normalise_placeholders(&string_template(left, src)?))),
                // `"cuda:" + str(rank)`: what is added stands for `{}`, as an interpolation does.
                "+" => {
                    let right = unparen(node.field(Field::Right)?);
                    let added = match right.kind_name() {
                        "string" => string_template(right, src)?,
                        _ => "{}".to_string(),
                    };
                    Some((left, string_template(left, src)? + &added))
                }
                _ => None,
            }
        }
        "call" => {
            let f = node.field(Field::Function)?;
            let obj = unparen(f.field(Field::Object)?);
            let attr = f.field(Field::Attribute)?;
            if f.kind_name() != "attribute" || text(attr, src) != "format" || obj.kind_name() != "string" {
                return None;
            }
            Some((obj, normalise_placeholders(&string_template(obj, src)?)))
        }
        _ => None,
    }
}

/// `%d`, `%s`, `{0}`, `{rank}` -> `{}`.
fn normalise_placeholders(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '%' if chars.peek().is_some_and(|n| n.is_ascii_alphabetic()) => {
                chars.next();
                out.push_str("{}");
            }
            '{' => {
                for n in chars.by_ref() {
                    if n == '}' {
                        break;
                    }
                }
                out.push_str("{}");
            }
            c => out.push(c),
        }
    }
    out
}

/// The identifiers of a dotted chain `a.b.c`, or `None` when it contains
/// anything but names (calls, subscripts).
pub(crate) fn dotted_parts<'s>(node: Node, src: &'s str) -> Option<Vec<&'s str>> {
    let mut parts = Vec::new();
    let mut cur = node;
    loop {
        match cur.kind_name() {
            "identifier" => {
                parts.push(text(cur, src));
                break;
            }
            "attribute" => {
                parts.push(text(cur.field(Field::Attribute)?, src));
                cur = cur.field(Field::Object)?;
            }
            _ => return None,
        }
    }
    parts.reverse();
    Some(parts)
}

/// The root of a receiver expression: `a` for `a`, `a.b`, `a[0]`, `a.b[1].c`.
pub(crate) fn base_name<'s>(node: Node, src: &'s str) -> Option<&'s str> {
    // Each step goes one level down the tree, so the loop ends.
    let mut cur = unparen(node);
    loop {
        match cur.kind_name() {
            "identifier" => return Some(text(cur, src)),
            "attribute" => cur = cur.field(Field::Object)?,
            "subscript" => cur = cur.field(Field::Value)?,
            _ => return None,
        }
    }
}

/// The identifiers bound by an assignment or loop target pattern.
pub(crate) fn pattern_names<'s>(node: Node, src: &'s str, out: &mut Vec<&'s str>) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind_name() {
            "identifier" => out.push(text(n, src)),
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "tuple"
            | "list"
            | "expression_list" => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
            "attribute" if n.field(Field::Object).is_some_and(|o| text(o, src) == "self") => out.push(text(n, src)),
            _ => {}
        }
    }
}

/// Shortens `s` to at most `max` characters for messages, on one line.
/// Reads no more of `s` than it needs: a node's text can be megabytes.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    // Whitespace runs become one space between words, lazily: `split_whitespace`
    // would scan a whole word first, and a chained call can be one word long.
    let (mut started, mut gap) = (false, false);
    let mut chars = s.chars().flat_map(|c| {
        if c.is_whitespace() {
            gap = true;
            return None.into_iter().chain(None);
        }
        let space = (started && gap).then_some(' ');
        (started, gap) = (true, false);
        space.into_iter().chain(Some(c))
    });
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_none() {
        head
    } else {
        let cut: String = head.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::{base_name, dotted_parts, is_literal, literal, shorten, Literal};

    /// The expression of the one statement in `src`, handed to `check`.
    fn with_expression<R>(src: &str, check: impl FnOnce(tree_sitter::Node, &str) -> R) -> R {
        let tree = crate::parse::parse_python(src).expect("parses");
        let statement = tree.root_node().named_child(0).expect("a statement");
        check(statement.named_child(0).expect("an expression"), src)
    }

    #[test]
    fn literals_are_evaluated_through_any_number_of_signs() {
        let eval = |src: &str| with_expression(src, literal);
        assert_eq!(eval("-5\n"), Some(Literal::Int(-5)));
        assert_eq!(eval("-(+(-2.5))\n"), Some(Literal::Float(2.5)));
        assert_eq!(eval("-True\n"), None, "a sign makes sense on numbers only");
        assert_eq!(eval("~5\n"), None);
        assert_eq!(eval("'npu'\n"), Some(Literal::Str("npu".into())));
        // Deeper than the old cut-off of 32 levels, and than any stack would take.
        let deep = format!("{}7\n", "-".repeat(5_001));
        assert_eq!(eval(&deep), Some(Literal::Int(-7)));
        let deep = format!("{}(-7){}\n", "+(".repeat(2_000), ")".repeat(2_000));
        assert_eq!(eval(&deep), Some(Literal::Int(-7)));
    }

    #[test]
    fn nested_collections_of_literals_are_literal_at_any_depth() {
        let check = |src: &str| with_expression(src, is_literal);
        assert!(check("[1, (2, -3), {'a'}]\n"));
        assert!(!check("[1, (2, x)]\n"));
        let deep = format!("{}1{}\n", "[".repeat(200), "]".repeat(200));
        assert!(check(&deep), "200 levels of lists of a literal");
        let deep = format!("{}x{}\n", "[".repeat(200), "]".repeat(200));
        assert!(!check(&deep));
    }

    #[test]
    fn long_dotted_chains_are_read_whole() {
        let names: Vec<String> = (0..100).map(|i| format!("n{i}")).collect();
        let src = format!("{}\n", names.join("."));
        let parts = with_expression(&src, |n, src| dotted_parts(n, src).map(|p| p.join(".")));
        assert_eq!(parts.as_deref(), Some(&src[..src.len() - 1]));
        let src = format!("{}[0].x\n", names.join("."));
        assert_eq!(with_expression(&src, |n, s| base_name(n, s).map(str::to_string)).as_deref(), Some("n0"));
    }

    #[test]
    fn shorten_joins_lines_and_cuts_at_max_characters() {
        assert_eq!(shorten("  a\n   b  ", 10), "a b");
        assert_eq!(shorten("abcdef", 6), "abcdef");
        assert_eq!(shorten("abc\ndefg", 6), "abc d…");
        assert_eq!(shorten("ééééééé", 3), "éé…");
        assert_eq!(shorten("", 3), "");
    }
}
