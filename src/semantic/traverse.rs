//! Iterative depth-first traversals, so that deeply nested code cannot
//! overflow the stack, and bounded in depth, so that it cannot make the
//! analysis quadratic either.

use tree_sitter::Node;

/// How many tree levels below the module the analysis looks at. Real code
/// stays far below (CPython's own parser refuses much shallower nesting of
/// brackets); a chain of thousands of calls would otherwise make every
/// rule that inspects a receiver chain cost time in proportion to its length.
pub(crate) const MAX_DEPTH: usize = 1_000;

/// Receives every named node of a [`FlatTree`] on the way down and on the way
/// back up (anonymous tokens are never visited).
pub trait Visitor<'t> {
    /// Called before the children; return `false` to skip them.
    fn enter(&mut self, node: Node<'t>) -> bool;
    /// Called after the children.
    fn leave(&mut self, node: Node<'t>);
}

/// The named nodes of a file in source order, read with one cursor walk and
/// then visited by every pass (the model, the value flow, the matching), which
/// costs a fraction of walking the tree again each time. Anonymous tokens are
/// left out: no pass looks at them.
#[derive(Default)]
pub struct FlatTree<'t> {
    /// Each named node with the index just past its named descendants.
    nodes: Vec<(Node<'t>, u32)>,
    /// The first node whose children lie deeper than `MAX_DEPTH` and were left out.
    cut: Option<Node<'t>>,
}

impl<'t> FlatTree<'t> {
    /// Reads `root` and its named descendants up to `MAX_DEPTH` levels down.
    pub fn new(root: Node<'t>) -> Self {
        let mut nodes: Vec<(Node<'t>, u32)> = Vec::new();
        // Indices of the nodes whose subtrees are still open, one per tree level
        // (only named nodes are entered).
        let mut open: Vec<usize> = Vec::new();
        let mut cut = None;
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            let named = node.is_named();
            if named {
                nodes.push((node, 0));
            }
            // Anonymous tokens have no named children, so their subtrees are not entered.
            if named && open.len() < MAX_DEPTH && cursor.goto_first_child() {
                open.push(nodes.len() - 1);
                continue;
            }
            if named && open.len() >= MAX_DEPTH && node.child_count() > 0 {
                cut.get_or_insert(node);
            }
            if named {
                let last = nodes.len() - 1;
                nodes[last].1 = nodes.len() as u32;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return FlatTree { nodes, cut };
                }
                if let Some(i) = open.pop() {
                    nodes[i].1 = nodes.len() as u32;
                }
            }
        }
    }

    /// The nodes of the subtree of `node` in source order, each with the
    /// index (into this slice) just past its own subtree; `None` when the tree
    /// does not hold `node` (it lies deeper than `MAX_DEPTH`).
    pub fn subtree(&self, node: Node<'t>) -> Option<FlatSubtree<'_, 't>> {
        // Source order is pre-order: start bytes never decrease, and a node
        // shares its start only with its first descendants.
        let start = node.start_byte();
        let first = self.nodes.partition_point(|(n, _)| n.start_byte() < start);
        let offset = self.nodes[first..]
            .iter()
            .take_while(|(n, _)| n.start_byte() == start)
            .position(|(n, _)| n.id() == node.id())?;
        let at = first + offset;
        let end = self.nodes[at].1 as usize;
        Some(FlatSubtree { nodes: &self.nodes[at..end], base: at })
    }

    /// Every node, in source order (what [`FlatTree::visit`] enters when it skips nothing).
    pub fn nodes(&self) -> impl Iterator<Item = Node<'t>> + '_ {
        self.nodes.iter().map(|&(node, _)| node)
    }

    /// The first node whose children were left out because they lie deeper than `MAX_DEPTH`.
    pub fn cut(&self) -> Option<Node<'t>> {
        self.cut
    }

    /// Visits every node in source order, as a depth-first walk would.
    pub fn visit(&self, visitor: &mut impl Visitor<'t>) {
        let mut open: Vec<(u32, Node<'t>)> = Vec::new();
        let mut i = 0;
        while let Some(&(node, end)) = self.nodes.get(i) {
            while let Some(&(_, above)) = open.last().filter(|(end, _)| *end as usize <= i) {
                visitor.leave(above);
                open.pop();
            }
            if visitor.enter(node) {
                open.push((end, node));
                i += 1;
            } else {
                visitor.leave(node);
                i = end as usize;
            }
        }
        while let Some((_, node)) = open.pop() {
            visitor.leave(node);
        }
    }
}

/// The subtree of one node of a [`FlatTree`]: see [`FlatTree::subtree`].
pub struct FlatSubtree<'a, 't> {
    nodes: &'a [(Node<'t>, u32)],
    /// The index of the subtree's root in the whole tree.
    base: usize,
}

impl<'t> FlatSubtree<'_, 't> {
    /// The node at `i` (0 is the root) and the index just past its subtree.
    pub fn get(&self, i: usize) -> Option<(Node<'t>, usize)> {
        self.nodes.get(i).map(|&(node, end)| (node, end as usize - self.base))
    }
}

/// Whether `node` or a descendant at most `MAX_DEPTH` levels below it
/// satisfies `test` (searched depth-first, without recursion).
///
/// The bound is not a silent one: a node `MAX_DEPTH` levels below another
/// lies at least that deep in the file, so [`traverse`] of the file stops
/// there too and the scan reports the file as partly analysed.
pub(crate) fn any_descendant<'t>(node: Node<'t>, mut test: impl FnMut(Node<'t>) -> bool) -> bool {
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

/// Visits `root` and its named descendants depth-first, without recursion
/// and down to [`MAX_DEPTH`] levels, entering a node's children only where
/// `visit` returns true.
pub(crate) fn each_descendant<'t>(root: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
    let mut stack = vec![(root, 0)];
    while let Some((n, depth)) = stack.pop() {
        if visit(n) && depth < MAX_DEPTH {
            let mut cursor = n.walk();
            let children: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
            // Reversed onto the stack, so that they come off in source order.
            stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
        }
    }
}

/// The nodes from `top` down to `node`, `top` first; `None` when `node` is
/// not `top` or below it. Walking up with `Node::parent` costs a descent from
/// the root per step, so a walk to the root is quadratic in the depth; this
/// costs one descent.
pub(crate) fn path_down<'t>(top: Node<'t>, node: Node<'t>) -> Option<Vec<Node<'t>>> {
    let mut path = vec![top];
    let mut cur = top;
    // Each step goes one level down, so the loop ends.
    while cur.id() != node.id() {
        cur = cur.child_with_descendant(node)?;
        path.push(cur);
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_python, KindOf};

    /// Records enters and leaves, and skips the children of calls.
    struct Events(Vec<String>);

    impl<'t> Visitor<'t> for Events {
        fn enter(&mut self, node: Node<'t>) -> bool {
            self.0.push(format!("+{}@{}", node.kind_name(), node.start_byte()));
            node.kind_name() != "call"
        }
        fn leave(&mut self, node: Node<'t>) {
            self.0.push(format!("-{}@{}", node.kind_name(), node.start_byte()));
        }
    }

    /// The same walk, written the obvious recursive way.
    fn reference<'t>(node: Node<'t>, events: &mut Events) {
        if events.enter(node) {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                reference(child, events);
            }
        }
        events.leave(node);
    }

    #[test]
    fn visits_like_a_recursive_walk() {
        let text = "import os\n@dec(1)\ndef f(a, b=2):\n    # note\n    return [g(x) for x in a if x] or {k: v}\nclass C(B):\n    y = f(1)(2)\n";
        let tree = parse_python(text).unwrap();
        let mut flat = Events(Vec::new());
        FlatTree::new(tree.root_node()).visit(&mut flat);
        let mut expected = Events(Vec::new());
        reference(tree.root_node(), &mut expected);
        assert!(flat.0.len() > 40, "{:?}", flat.0);
        assert_eq!(flat.0, expected.0);
    }

    #[test]
    fn leaves_out_what_lies_too_deep_and_says_where() {
        let depth = MAX_DEPTH + 50;
        let text = format!("x = {}1{}\n", "(".repeat(depth), ")".repeat(depth));
        let tree = parse_python(&text).unwrap();
        let flat = FlatTree::new(tree.root_node());
        let cut = flat.cut().expect("a cut");
        assert_eq!(cut.kind_name(), "parenthesized_expression");
        let mut events = Events(Vec::new());
        flat.visit(&mut events);
        assert!(!events.0.iter().any(|e| e.starts_with("+integer")), "the innermost literal is too deep");
        assert_eq!(events.0.iter().filter(|e| e.starts_with('+')).count(), events.0.len() / 2);
    }
}
