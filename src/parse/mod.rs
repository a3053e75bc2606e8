//! Parsing Python with tree-sitter, one parser per worker thread; shell
//! scripts with tree-sitter-bash ([`shell`]).

pub(crate) mod shell;

use std::cell::RefCell;
use std::time::{Duration, Instant};
use tree_sitter::{ParseOptions, Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// How long one file may take to parse. tree-sitter's error recovery is
/// quadratic on some broken files (the fuzzer found an 827 KB file with an
/// unclosed string before a 774 KB line that takes 52 s); real files parse in
/// milliseconds. Only such a file can see a different result on a slower
/// machine, and it is reported as skipped with the reason.
pub(crate) const PARSE_TIME_LIMIT: Duration = Duration::from_secs(20);

/// The limit in force, read once: `NPU_MEM_PARSE_LIMIT_MS` shortens it for
/// the test that checks it.
static PARSE_LIMIT_IN_FORCE: std::sync::LazyLock<Duration> = std::sync::LazyLock::new(|| {
    std::env::var("NPU_MEM_PARSE_LIMIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(PARSE_TIME_LIMIT, Duration::from_millis)
});

/// Parses `text` as Python. `None` if tree-sitter gives up, which it does
/// not on ordinary input (syntax errors still produce a tree with error
/// nodes), or if parsing takes longer than `PARSE_TIME_LIMIT`.
pub(crate) fn parse_python(text: &str) -> Option<Tree> {
    parse_python_edited(text, None)
}

/// [`parse_python`], reusing `old`: the tree of the text before an edit,
/// on which the edit was recorded with `Tree::edit` (an editor's buffer,
/// re-parsed after each change in a fraction of the time of a fresh parse).
pub(crate) fn parse_python_edited(text: &str, old: Option<&Tree>) -> Option<Tree> {
    // Python reads a lone `\r` as a line break; tree-sitter does not.
    let python = crate::source::python_line_ends(text);
    parse_with(&PARSER, || tree_sitter_python::LANGUAGE.into(), python.as_bytes(), old)
}

/// Parses `bytes` with the thread's parser in `slot` (made for `language`
/// on first use), within the parse time limit, reusing `old` if given.
fn parse_with(
    slot: &'static std::thread::LocalKey<RefCell<Option<Parser>>>,
    language: fn() -> tree_sitter::Language,
    bytes: &[u8],
    old: Option<&Tree>,
) -> Option<Tree> {
    slot.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&language()).ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        let deadline = Instant::now() + *PARSE_LIMIT_IN_FORCE;
        // Called every hundred parser operations; `true` cancels.
        let mut past_deadline = |_: &tree_sitter::ParseState| Instant::now() > deadline;
        let options = ParseOptions::new().progress_callback(&mut past_deadline);
        let tree = parser.parse_with_options(&mut |at, _| bytes.get(at..).unwrap_or_default(), old, Some(options));
        if tree.is_none() {
            // A cancelled parse leaves state behind; the next file starts afresh.
            parser.reset();
        }
        tree
    })
}

thread_local! {
    static BASH_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `text` as a bash script, as [`parse_python`] parses Python.
pub(crate) fn parse_bash(text: &str) -> Option<Tree> {
    parse_with(&BASH_PARSER, || tree_sitter_bash::LANGUAGE.into(), text.as_bytes(), None)
}

/// The 1-based line of the first syntax error in `tree`, if any.
pub(crate) fn first_error_line(tree: &Tree) -> Option<usize> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return Some(node.start_position().row + 1);
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Some(root.start_position().row + 1);
            }
        }
    }
}

/// A field of the Python grammar that the analysis reads. Looking a child up
/// by field name compares strings on every call; these ids are resolved once.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Field {
    Alias,
    Argument,
    Arguments,
    Attribute,
    Body,
    Condition,
    Consequence,
    Function,
    Key,
    Left,
    ModuleName,
    Name,
    Object,
    Operator,
    Parameters,
    Right,
    Superclasses,
    Value,
}

/// The grammar's names of the fields, in `Field` order.
const FIELD_NAMES: [&str; 18] = [
    "alias",
    "argument",
    "arguments",
    "attribute",
    "body",
    "condition",
    "consequence",
    "function",
    "key",
    "left",
    "module_name",
    "name",
    "object",
    "operator",
    "parameters",
    "right",
    "superclasses",
    "value",
];

/// Field ids in `Field` order (0, which matches no child, if the grammar lacked one).
static FIELD_IDS: std::sync::LazyLock<[u16; 18]> = std::sync::LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    FIELD_NAMES.map(|name| language.field_id_for_name(name).map_or(0, |id| id.get()))
});

/// Children by `Field`.
pub(crate) trait FieldOf<'t> {
    /// The child in `field`, if any.
    fn field(&self, field: Field) -> Option<tree_sitter::Node<'t>>;
}

impl<'t> FieldOf<'t> for tree_sitter::Node<'t> {
    fn field(&self, field: Field) -> Option<tree_sitter::Node<'t>> {
        self.child_by_field_id(FIELD_IDS[field as usize])
    }
}

/// Node kind names by kind id, read from the grammar once. `Node::kind`
/// measures and validates the C string on every call, which the analysis,
/// asking a node's kind millions of times per corpus, felt.
static KIND_NAMES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    (0..language.node_kind_count() as u16).map(|id| language.node_kind_for_id(id).unwrap_or("")).collect()
});

/// The kind of a node, as [`tree_sitter::Node::kind`] gives it, by table lookup.
pub(crate) trait KindOf {
    /// The node's kind name (`"call"`, `"identifier"`, ...).
    fn kind_name(&self) -> &'static str;
}

impl KindOf for tree_sitter::Node<'_> {
    fn kind_name(&self) -> &'static str {
        KIND_NAMES.get(self.kind_id() as usize).copied().unwrap_or("")
    }
}

/// The value if true, the test and the value if false of a conditional
/// expression (`a if test else b`), passing over comments, which are named
/// children too inside a parenthesised expression that spans lines.
pub(crate) fn conditional_parts(node: tree_sitter::Node<'_>) -> Option<[tree_sitter::Node<'_>; 3]> {
    let mut cursor = node.walk();
    let mut parts = node.named_children(&mut cursor).filter(|c| c.kind_name() != "comment");
    Some([parts.next()?, parts.next()?, parts.next()?])
}

/// The test of a conditional expression (`a if test else b`), passing over comments.
pub(crate) fn conditional_test(node: tree_sitter::Node<'_>) -> Option<tree_sitter::Node<'_>> {
    conditional_parts(node).map(|[_, test, _]| test)
}

/// The first named child that is not a comment: the expression inside
/// parentheses that open a line with a comment (`(  # why\n    x)`), or the
/// first argument after one.
pub(crate) fn first_code_child(node: tree_sitter::Node<'_>) -> Option<tree_sitter::Node<'_>> {
    let mut cursor = node.walk();
    let first = node.named_children(&mut cursor).find(|c| c.kind_name() != "comment");
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_exists_in_the_grammar() {
        assert!(FIELD_IDS.iter().all(|id| *id != 0), "{:?}", *FIELD_IDS);
        let tree = parse_python("f(x)\n").unwrap();
        let call = tree.root_node().child(0).unwrap().child(0).unwrap();
        assert_eq!(call.field(Field::Function).map(|n| n.kind()), Some("identifier"));
        assert_eq!(call.field(Field::Arguments).map(|n| n.kind()), Some("argument_list"));
    }

    #[test]
    fn kind_names_agree_with_tree_sitter() {
        let text = "import os\n@dec\ndef f(a, *b, c=1, **d):\n    return [x async for x in y if x] or {k: v}\nclass C(B): pass\n";
        let tree = parse_python(text).unwrap();
        let mut cursor = tree.root_node().walk();
        let mut seen = 0;
        loop {
            let node = cursor.node();
            assert_eq!(node.kind_name(), node.kind());
            seen += 1;
            if cursor.goto_first_child() || cursor.goto_next_sibling() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    assert!(seen > 50, "{seen}");
                    return;
                }
            }
        }
    }
}
