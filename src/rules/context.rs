//! Where the walker is: the enclosing functions, loops, with-blocks and
//! `if` branches of the node being matched, and its ancestors.

use super::glob::NameGlobs;
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use crate::semantic::traverse::{any_descendant, path_down};
use crate::semantic::values::{pattern_names, text};
use crate::semantic::{FileModel, LoopInfo};
use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
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

/// The frame that `node` opens, given its parent.
pub fn frame_opened<'t>(parent: Option<Node<'t>>, node: Node<'t>) -> Option<Frame<'t>> {
    match node.kind_name() {
        "function_definition" => Some(Frame::Function(node)),
        "class_definition" => Some(Frame::Class),
        "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression" => {
            Some(Frame::Comprehension(node))
        }
        "block" => {
            let p = parent?;
            let field = |f: Field| p.field(f) == Some(node);
            match p.kind_name() {
                "for_statement" | "while_statement" if field(Field::Body) => Some(Frame::LoopBody(p)),
                "with_statement" if field(Field::Body) => Some(Frame::With(p)),
                "if_statement" | "elif_clause" if field(Field::Consequence) => {
                    p.field(Field::Condition).map(Frame::IfBranch)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Frames up to (not past) the innermost function or class, innermost first.
pub fn local<'f, 't>(frames: &'f [Frame<'t>]) -> impl Iterator<Item = &'f Frame<'t>> {
    let mut stop = false;
    frames.iter().rev().take_while(move |f| {
        if stop {
            return false;
        }
        if matches!(f, Frame::Function(_) | Frame::Class) {
            stop = true;
        }
        true
    })
}

/// Values derived from the walker's current node that many matchers ask
/// for (every `call = "torch.cuda.*"` anchor resolves the same callee): each
/// is worked out at most once per node.
#[derive(Default)]
pub struct NodeMemo {
    /// The resolved dotted name of the node, set by the walker (attribute anchors).
    pub attr: Option<String>,
    callee: OnceCell<Option<String>>,
    string: OnceCell<Option<String>>,
}

impl NodeMemo {
    /// A memo whose resolved dotted name is `attr`.
    pub fn new(attr: Option<String>) -> Self {
        NodeMemo { attr, ..NodeMemo::default() }
    }
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
    pub query_hits: &'a [crate::hash::FastSet<usize>],
    /// The file's root node.
    pub root: Node<'t>,
    /// The torch_npu version advice is for.
    pub target: super::model::Version,
    /// Data tables of the loaded packs.
    pub tables: &'a [(String, super::data_table::DataTable)],
    /// What is worked out once about `current`.
    pub memo: &'a NodeMemo,
    /// The line (1-based) of the first node whose scope search stopped at
    /// its bound (`slots::MAX_SCOPE_NODES`), if any: set only then.
    pub scope_search_cut: &'a Cell<Option<usize>>,
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

    /// `node` and its ancestors, innermost first: from the walker's stack for
    /// the current node (asking tree-sitter for a parent costs a walk from
    /// the root); for another node, the path down to it is found once (from
    /// the current node when it lies inside, else from the root), so a walk
    /// up any number of levels costs time in proportion to the levels.
    pub fn self_and_ancestors(&self, node: Node<'t>) -> Ancestors<'a, 't> {
        let stack = self.ancestors.iter().rev();
        if node.id() == self.current.id() {
            return Ancestors { first: Some(node), below: Vec::new(), above: stack };
        }
        let inside = self.current.start_byte() <= node.start_byte() && node.end_byte() <= self.current.end_byte();
        if inside {
            if let Some(below) = path_down(self.current, node) {
                return Ancestors { first: None, below, above: stack };
            }
        }
        let below = path_down(self.root, node).unwrap_or_else(|| {
            // Not found by its position (it should be): ask tree-sitter, step by step.
            let mut up: Vec<Node<'t>> = std::iter::successors(Some(node), |n| n.parent()).collect();
            up.reverse();
            up
        });
        Ancestors { first: None, below, above: [].iter().rev() }
    }

    /// The frames around `node`: the walker's for the current node, derived
    /// from the root for any other node.
    pub fn frames_of(&self, node: Node<'t>) -> Cow<'a, [Frame<'t>]> {
        // The walker's own frames are borrowed: this runs for every context predicate.
        if node.id() == self.current.id() {
            return Cow::Borrowed(self.frames);
        }
        let mut frames = Vec::new();
        let mut parent: Option<Node<'t>> = None;
        let mut cur = self.root;
        // Each step goes one level down towards `node`, so the loop ends.
        while cur.id() != node.id() {
            frames.extend(frame_opened(parent, cur));
            match cur.child_with_descendant(node) {
                Some(next) => {
                    parent = Some(cur);
                    cur = next;
                }
                None => break,
            }
        }
        Cow::Owned(frames)
    }

    /// The qualified name of the callee `f` of `call` ([`Self::resolve_node`]),
    /// worked out once when `call` is the current node.
    pub fn callee_name(&self, call: Node<'t>, f: Node<'t>) -> Option<Cow<'a, str>> {
        if call.id() != self.current.id() {
            return self.resolve_node(f).map(Cow::Owned);
        }
        self.memo.callee.get_or_init(|| self.resolve_node(f)).as_deref().map(Cow::Borrowed)
    }

    /// `value(node)`, worked out once when `node` is the current node.
    pub fn string_of(&self, node: Node<'t>, value: impl FnOnce() -> Option<String>) -> Option<Cow<'a, str>> {
        if node.id() != self.current.id() {
            return value().map(Cow::Owned);
        }
        self.memo.string.get_or_init(value).as_deref().map(Cow::Borrowed)
    }

    /// The qualified name of an expression, resolved through imports, unless
    /// its root is a local name of an enclosing function: a parameter
    /// (`def f(torch): torch.cuda...`) or a function defined in it.
    pub fn resolve_node(&self, node: Node<'t>) -> Option<String> {
        let parts = crate::semantic::values::dotted_parts(node, self.src)?;
        if self.model.shadowable.contains(parts[0]) {
            let frames = self.frames_of(node);
            let shadowed = frames.iter().any(|f| match f {
                Frame::Function(fun) => self.model.locals.get(&fun.id()).is_some_and(|ps| ps.contains(&parts[0])),
                _ => false,
            });
            if shadowed {
                return None;
            }
        }
        self.model.resolve(&parts)
    }

    /// The other qualified names `node` may stand for, where its root is
    /// imported in several arms of an `if` chain
    /// ([`crate::semantic::FileModel::other_arm_imports`]); empty where
    /// [`Self::resolve_node`] resolves nothing.
    pub fn other_arm_names(&self, node: Node<'t>) -> Vec<String> {
        if !self.model.has_other_arm_imports() {
            return Vec::new();
        }
        match crate::semantic::values::dotted_parts(node, self.src) {
            Some(parts) if self.resolve_node(node).is_some() => self.model.other_arm_imports(&parts),
            _ => Vec::new(),
        }
    }

    /// The innermost loop around `node` in its own function (`node` in its
    /// body) whose information passes `wanted`.
    pub fn loop_around(&self, node: Node<'t>, wanted: impl Fn(&LoopInfo<'t>) -> bool) -> Option<&'a LoopInfo<'t>> {
        local(&self.frames_of(node)).find_map(|f| match f {
            Frame::LoopBody(l) => self.model.loops.get(&l.id()).filter(|info| wanted(info)),
            _ => None,
        })
    }

    /// The innermost function around `node`, if any.
    pub fn function_of(&self, node: Node<'t>) -> Option<Node<'t>> {
        self.frames_of(node).iter().rev().find_map(|f| if let Frame::Function(n) = f { Some(*n) } else { None })
    }

    /// The function scope id `node` is in.
    pub fn scope_of(&self, node: Node<'t>) -> usize {
        self.function_of(node).map_or(crate::semantic::MODULE_SCOPE, |f| f.id())
    }

    /// The variables of a comprehension node.
    pub fn comprehension_targets(&self, comp: Node<'t>) -> Vec<&'t str> {
        let mut names = Vec::new();
        let mut cursor = comp.walk();
        for clause in comp.named_children(&mut cursor) {
            if clause.kind_name() == "for_in_clause" {
                if let Some(left) = clause.field(Field::Left) {
                    pattern_names(left, self.src, &mut names);
                }
            }
        }
        names
    }

    /// Records that the scope search for `node` stopped at its bound (the
    /// first such node is kept, for the report).
    pub fn scope_search_stopped(&self, node: Node<'t>) {
        if self.scope_search_cut.get().is_none() {
            self.scope_search_cut.set(Some(node.start_position().row + 1));
        }
    }

    /// The text of a node.
    pub fn text(&self, node: Node) -> &'t str {
        text(node, self.src)
    }
}

/// A node and its ancestors, innermost first (see [`Context::self_and_ancestors`]).
pub struct Ancestors<'a, 't> {
    /// The node itself, when it is the walker's current node.
    first: Option<Node<'t>>,
    /// A path found below the walker's stack, outermost first (taken from the end).
    below: Vec<Node<'t>>,
    /// The walker's stack, innermost first.
    above: std::iter::Rev<std::slice::Iter<'a, Node<'t>>>,
}

impl<'t> Iterator for Ancestors<'_, 't> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        self.first.take().or_else(|| self.below.pop()).or_else(|| self.above.next().copied())
    }
}

/// Whether `node` or a descendant is a call resolving to a name matching `globs`.
pub fn contains_call<'t>(node: Node<'t>, globs: &NameGlobs, cx: &Context<'_, 't>) -> bool {
    any_descendant(node, |n| {
        n.kind_name() == "call"
            && n.field(Field::Function).and_then(|f| cx.resolve_node(f)).is_some_and(|q| globs.is_match(&q))
    })
}
