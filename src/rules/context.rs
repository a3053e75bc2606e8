//! Where the walker is: the enclosing functions, loops, with-blocks and
//! `if` branches of the node being matched, and its ancestors.

use crate::semantic::values::{pattern_names, text};
use crate::semantic::FileModel;
use tree_sitter::Node;

/// One enclosing construct that context predicates care about.
#[derive(Debug, Clone, Copy)]
pub enum Frame<'t> {
    /// A function (its node); predicates do not look past it.
    Function(Node<'t>),
    /// A class body.
    Class,
    /// The body of a `for`/`while` loop (the loop node).
    LoopBody(Node<'t>),
    /// A comprehension; its variables are loop variables.
    Comprehension(Node<'t>),
    /// The body of a `with` statement.
    With(Node<'t>),
    /// The body of an `if`/`elif` branch (its test).
    IfBranch(Node<'t>),
}

/// Everything a matcher may consult while evaluating at one node.
pub struct Context<'a, 't> {
    /// The file's text.
    pub src: &'t str,
    /// The file's semantic model.
    pub model: &'a FileModel<'t>,
    /// Enclosing frames, outermost first.
    pub frames: &'a [Frame<'t>],
    /// Ancestors of `current`, root first.
    pub ancestors: &'a [Node<'t>],
    /// The node the walker is at.
    pub current: Node<'t>,
    /// Node ids captured by each raw query.
    pub query_hits: &'a [std::collections::HashSet<usize>],
}

impl<'a, 't> Context<'a, 't> {
    /// The parent of `node`, from the walker's ancestor stack when possible.
    pub fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        if node.id() == self.current.id() {
            return self.ancestors.last().copied();
        }
        let n = self.ancestors.len();
        for i in (n.saturating_sub(12)..n).rev() {
            if self.ancestors[i].id() == node.id() {
                return i.checked_sub(1).map(|j| self.ancestors[j]);
            }
        }
        node.parent()
    }

    /// Frames up to (not past) the innermost function or class, innermost first.
    pub fn local_frames(&self) -> impl Iterator<Item = &Frame<'t>> {
        let mut stop = false;
        self.frames.iter().rev().take_while(move |f| {
            if stop {
                return false;
            }
            if matches!(f, Frame::Function(_) | Frame::Class) {
                stop = true;
            }
            true
        })
    }

    /// The function scope id the current node is in.
    pub fn scope(&self) -> usize {
        self.frames
            .iter()
            .rev()
            .find_map(|f| if let Frame::Function(n) = f { Some(n.id()) } else { None })
            .unwrap_or(crate::semantic::MODULE_SCOPE)
    }

    /// The variables of a comprehension node.
    pub fn comprehension_targets(&self, comp: Node<'t>) -> Vec<&'t str> {
        let mut names = Vec::new();
        let mut cursor = comp.walk();
        for clause in comp.named_children(&mut cursor) {
            if clause.kind() == "for_in_clause" {
                if let Some(left) = clause.child_by_field_name("left") {
                    pattern_names(left, self.src, &mut names);
                }
            }
        }
        names
    }

    /// The text of a node.
    pub fn text(&self, node: Node) -> &'t str {
        text(node, self.src)
    }
}
