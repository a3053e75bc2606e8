//! Iterative depth-first traversals, so that deeply nested code cannot
//! overflow the stack, and bounded in depth, so that it cannot make the
//! analysis quadratic either.

use tree_sitter::Node;

/// How many tree levels below the module the analysis looks at. Real code
/// stays far below (CPython's own parser refuses much shallower nesting of
/// brackets); a chain of thousands of calls would otherwise make every
/// rule that inspects a receiver chain cost time in proportion to its length.
pub const MAX_DEPTH: usize = 1_000;

/// Receives every node on the way down and on the way back up.
pub trait Visitor<'t> {
    /// Called before the children; return `false` to skip them.
    fn enter(&mut self, node: Node<'t>) -> bool;
    /// Called after the children.
    fn leave(&mut self, node: Node<'t>);
}

/// Visits `root` and every descendant up to `MAX_DEPTH` levels down, in
/// source order. Returns the first node whose children were not visited
/// because they lie deeper.
pub fn traverse<'t>(root: Node<'t>, visitor: &mut impl Visitor<'t>) -> Option<Node<'t>> {
    let mut cursor = root.walk();
    let mut depth = 0;
    let mut cut = None;
    loop {
        let node = cursor.node();
        if visitor.enter(node) {
            if depth < MAX_DEPTH && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            if depth >= MAX_DEPTH && node.child_count() > 0 {
                cut.get_or_insert(node);
            }
        }
        visitor.leave(node);
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return cut;
            }
            depth -= 1;
            visitor.leave(cursor.node());
        }
    }
}

/// Whether `node` or a descendant at most `MAX_DEPTH` levels below it
/// satisfies `test` (searched depth-first, without recursion).
///
/// The bound is not a silent one: a node `MAX_DEPTH` levels below another
/// lies at least that deep in the file, so [`traverse`] of the file stops
/// there too and the scan reports the file as partly analysed.
pub fn any_descendant<'t>(node: Node<'t>, mut test: impl FnMut(Node<'t>) -> bool) -> bool {
    let mut stack = vec![(node, 0)];
    while let Some((n, depth)) = stack.pop() {
        if test(n) {
            return true;
        }
        if depth < MAX_DEPTH {
            let mut cursor = n.walk();
            stack.extend(n.named_children(&mut cursor).map(|c| (c, depth + 1)));
        }
    }
    false
}
