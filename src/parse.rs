//! Parsing Python with tree-sitter, one parser per worker thread.

use std::cell::RefCell;
use tree_sitter::{Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `text` as Python. `None` only if tree-sitter gives up (it does not
/// on ordinary input; syntax errors still produce a tree with error nodes).
pub fn parse_python(text: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_python::LANGUAGE.into()).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(text, None)
    })
}

/// The 1-based line of the first syntax error in `tree`, if any.
pub fn first_error_line(tree: &Tree) -> Option<usize> {
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
pub enum Field {
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
    Value,
}

/// The grammar's names of the fields, in `Field` order.
const FIELD_NAMES: [&str; 17] = [
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
    "value",
];

/// Field ids in `Field` order (0, which matches no child, if the grammar lacked one).
static FIELD_IDS: std::sync::LazyLock<[u16; 17]> = std::sync::LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    FIELD_NAMES.map(|name| language.field_id_for_name(name).map_or(0, |id| id.get()))
});

/// Children by `Field`.
pub trait FieldOf<'t> {
    /// The child in `field`, if any.
    fn field(&self, field: Field) -> Option<tree_sitter::Node<'t>>;
}

impl<'t> FieldOf<'t> for tree_sitter::Node<'t> {
    fn field(&self, field: Field) -> Option<tree_sitter::Node<'t>> {
        self.child_by_field_id(FIELD_IDS[field as usize])
    }
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
}
