//! An iterative depth-first traversal, so that deeply nested code cannot
//! overflow the stack.

use tree_sitter::Node;

/// Receives every node on the way down and on the way back up.
pub trait Visitor<'t> {
    /// Called before the children; return `false` to skip them.
    fn enter(&mut self, node: Node<'t>, field: Option<&'static str>) -> bool;
    /// Called after the children.
    fn leave(&mut self, node: Node<'t>);
}

/// Visits `root` and every descendant in source order.
pub fn traverse<'t>(root: Node<'t>, visitor: &mut impl Visitor<'t>) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if visitor.enter(node, cursor.field_name()) && cursor.goto_first_child() {
            continue;
        }
        visitor.leave(node);
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            visitor.leave(cursor.node());
        }
    }
}
