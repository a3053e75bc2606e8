//! Predicates that look around the node: where a value sits (its slot), which
//! branch it is in, and what the enclosing loops and with-blocks are.

use super::context::contains_call;
use super::context::{local, Context, Frame};
use super::glob::NameGlobs;
use super::model::{ConditionTest, Slot};
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use crate::semantic::calls::CallArgs;
use crate::semantic::calls::{callee, method_parts};
use crate::semantic::dispatch::chain_tests;
use crate::semantic::values::{plain_string, text, unparen};
use tree_sitter::Node;

/// Where a value sits once parentheses, conditional-expression branches and
/// dictionary values are seen through.
enum Place<'t> {
    Positional { call: Node<'t>, index: usize },
    Keyword { call: Node<'t>, name: &'t str },
    Receiver { call: Node<'t> },
    Assigned { target: Node<'t> },
    Param { name: &'t str },
    Other,
}

/// Where `node` sits; the walk up stops at the first construct that is not
/// seen through, so it ends by itself.
fn place<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> Place<'t> {
    let mut up = cx.self_and_ancestors(node).skip(1);
    let mut value = node;
    while let Some(parent) = up.next() {
        match parent.kind_name() {
            "parenthesized_expression" => value = parent,
            "conditional_expression" if crate::parse::conditional_test(parent) != Some(value) => value = parent,
            "pair" if parent.field(Field::Value) == Some(value) => {
                match up.next().filter(|d| d.kind_name() == "dictionary") {
                    Some(dict) => value = dict,
                    None => return Place::Other,
                }
            }
            "attribute" if parent.field(Field::Object) == Some(value) => {
                return match up.next().filter(|c| c.kind_name() == "call" && c.field(Field::Function) == Some(parent)) {
                    Some(call) => Place::Receiver { call },
                    None => Place::Other,
                };
            }
            "argument_list" => {
                let Some(call) = up.next() else { return Place::Other };
                let args = CallArgs::of(call, cx.src);
                return match args.positional.iter().position(|a| *a == value) {
                    Some(index) => Place::Positional { call, index },
                    None => Place::Other,
                };
            }
            "keyword_argument" if parent.field(Field::Value) == Some(value) => {
                let name = parent.field(Field::Name).map_or("", |n| text(n, cx.src));
                // The argument list, then the call.
                return match up.nth(1) {
                    Some(call) => Place::Keyword { call, name },
                    None => Place::Other,
                };
            }
            "assignment" if parent.field(Field::Right) == Some(value) => {
                return match parent.field(Field::Left) {
                    Some(target) => Place::Assigned { target },
                    None => Place::Other,
                };
            }
            "default_parameter" | "typed_default_parameter" if parent.field(Field::Value) == Some(value) => {
                let name = parent.field(Field::Name).map_or("", |n| text(n, cx.src));
                return Place::Param { name };
            }
            _ => return Place::Other,
        }
    }
    Place::Other
}

/// Whether the value at `node` sits in one of `slots`.
pub fn in_slot<'t>(slots: &[Slot], node: Node<'t>, cx: &Context<'_, 't>) -> bool {
    let place = place(node, cx);
    slots.iter().any(|s| slot_matches(s, &place, cx))
}

fn slot_matches<'t>(s: &Slot, place: &Place<'t>, cx: &Context<'_, 't>) -> bool {
    match place {
        Place::Positional { call, index } => {
            let position_ok = match s.position {
                Some(p) => p == *index,
                None => s.keyword.is_none(),
            };
            !s.receiver && position_ok && call_ok(s, *call, cx)
        }
        Place::Keyword { call, name } => {
            let keyword_ok = s.keyword.as_ref().is_some_and(|ks| ks.iter().any(|k| k == name));
            !s.receiver && keyword_ok && call_ok(s, *call, cx)
        }
        Place::Receiver { call } => s.receiver && call_ok(s, *call, cx),
        Place::Assigned { target } => s.assigned_to.as_ref().is_some_and(|g| {
            let t = text(*target, cx.src);
            matches!(target.kind_name(), "identifier" | "attribute") && g.is_match(t.rsplit('.').next().unwrap_or(t))
        }),
        Place::Param { name } => s.param.as_ref().is_some_and(|g| g.is_match(name)),
        Place::Other => false,
    }
}

/// The call-related parts of a slot (`call`, `method`, `first_arg`) hold for `call`.
fn call_ok<'t>(s: &Slot, call: Node<'t>, cx: &Context<'_, 't>) -> bool {
    if s.assigned_to.is_some() || s.param.is_some() {
        return false;
    }
    if let Some(globs) = &s.call {
        let q = callee(call).and_then(|f| cx.resolve_node(f));
        if !q.is_some_and(|q| globs.is_match(&q)) {
            return false;
        }
    }
    if let Some(methods) = &s.method {
        let name = method_parts(call).map(|(_, n)| text(n, cx.src));
        if !name.is_some_and(|n| methods.iter().any(|m| m == n)) {
            return false;
        }
    }
    if let Some(glob) = &s.first_arg {
        let first = CallArgs::of(call, cx.src).positional.first().and_then(|a| plain_string(*a, cx.src));
        if !first.is_some_and(|f| glob.is_match(&f)) {
            return false;
        }
    }
    true
}

/// Where the value at `node` is read in one of `slots`, when it is stored
/// under a name (see [`crate::semantic::flow`]): a description of the first
/// such read, such as `` `torch.device(…)` on line 7 ``.
pub fn flows_into<'t>(slots: &[Slot], node: Node<'t>, cx: &Context<'_, 't>) -> Option<String> {
    if !crate::semantic::flow::is_stored(node, cx.src) {
        return None;
    }
    let uses = cx.model.name_uses(cx.src);
    let key = uses.store_key(node, cx.src)?;
    let read =
        uses.copies(key, cx.src).iter().find_map(|k| uses.of(k).iter().copied().find(|r| in_slot(slots, *r, cx)))?;
    let (call, keyword) = match place(read, cx) {
        Place::Positional { call, .. } | Place::Receiver { call } => (call, None),
        Place::Keyword { call, name } => (call, Some(name)),
        _ => return None,
    };
    let function = call.field(Field::Function).map_or("", |f| text(f, cx.src));
    // A long callee keeps its end, which names the function.
    let function = match function.char_indices().rev().nth(39) {
        Some((cut, _)) if cut > 0 => format!("…{}", &function[cut..]),
        _ => function.to_string(),
    };
    let args = keyword.map_or("…".to_string(), |k| format!("{k}=…"));
    Some(format!("`{function}({args})` on line {}", read.start_position().row + 1))
}

/// Whether an import statement's names are read anywhere in the file (any
/// scope, so a name used only in one function counts). Anything that is not
/// an import, and `from m import *`, counts as used.
pub fn import_used<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> bool {
    let mut names = Vec::new();
    let mut cursor = node.walk();
    match node.kind_name() {
        "import_statement" => {
            for child in node.named_children(&mut cursor) {
                let bound = match child.kind_name() {
                    "aliased_import" => child.field(Field::Alias),
                    _ => child.named_child(0),
                };
                names.extend(bound.map(|n| text(n, cx.src)));
            }
        }
        "import_from_statement" => {
            for child in node.children_by_field_name("name", &mut cursor) {
                let bound = match child.kind_name() {
                    "aliased_import" => child.field(Field::Alias),
                    _ => child.named_child(child.named_child_count().saturating_sub(1)),
                };
                names.extend(bound.map(|n| text(n, cx.src)));
            }
            if names.is_empty() {
                return true;
            }
        }
        _ => return true,
    }
    let uses = cx.model.name_uses(cx.src);
    names.iter().any(|name| uses.reads_name(name))
}

/// Whether `node` is (inside) a branch value of a conditional expression or
/// `if` chain whose test calls a name matching `test`.
pub fn in_branch_of<'t>(test: &ConditionTest, node: Node<'t>, cx: &Context<'_, 't>) -> bool {
    // The walk up stops at the first construct that is not seen through.
    let mut up = cx.self_and_ancestors(node).skip(1);
    let mut value = node;
    while let Some(parent) = up.next() {
        match parent.kind_name() {
            "parenthesized_expression" | "argument_list" | "call" | "keyword_argument" => value = parent,
            "conditional_expression" => {
                return crate::parse::conditional_test(parent) != Some(value) && tests_call(parent, test, cx);
            }
            "assignment" if parent.field(Field::Right) == Some(value) => {
                let chain = up
                    .next()
                    .filter(|s| s.kind_name() == "expression_statement")
                    .and_then(|_| up.next())
                    .filter(|b| b.kind_name() == "block")
                    .and_then(|_| up.next());
                let chain = match chain {
                    Some(c) if matches!(c.kind_name(), "elif_clause" | "else_clause") => up.next(),
                    other => other,
                };
                return chain.is_some_and(|c| c.kind_name() == "if_statement" && tests_call(c, test, cx));
            }
            _ => return false,
        }
    }
    false
}

fn tests_call<'t>(node: Node<'t>, test: &ConditionTest, cx: &Context<'_, 't>) -> bool {
    chain_tests(node).into_iter().any(|t| contains_call(t, &test.test_calls, cx))
}

/// Inside a with-block whose items call a matching name, or in a function
/// decorated with one (`@torch.no_grad()`), within the current function.
pub fn inside_with<'t>(globs: &NameGlobs, node: Node<'t>, cx: &Context<'_, 't>) -> bool {
    let resolves = |expr: Node<'t>| {
        let expr = unparen(expr);
        let expr = if expr.kind_name() == "as_pattern" { expr.named_child(0).unwrap_or(expr) } else { expr };
        let f = if expr.kind_name() == "call" { expr.field(Field::Function) } else { Some(expr) };
        f.and_then(|f| cx.resolve_node(f)).is_some_and(|q| globs.is_match(&q))
    };
    let frames = cx.frames_of(node);
    for frame in local(&frames) {
        match frame {
            Frame::With(with) => {
                let mut found = false;
                let mut cursor = with.walk();
                for clause in with.named_children(&mut cursor).filter(|c| c.kind_name() == "with_clause") {
                    let mut c2 = clause.walk();
                    for item in clause.named_children(&mut c2) {
                        found |= item.field(Field::Value).is_some_and(resolves);
                    }
                }
                if found {
                    return true;
                }
            }
            Frame::Function(f) => {
                let decorated = cx.parent(*f).filter(|p| p.kind_name() == "decorated_definition");
                if let Some(d) = decorated {
                    let mut cursor = d.walk();
                    let hit = d
                        .named_children(&mut cursor)
                        .filter(|c| c.kind_name() == "decorator")
                        .any(|dec| dec.named_child(0).is_some_and(resolves));
                    if hit {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// The receiver is a name or `self.attr` that the innermost loop neither binds
/// nor assigns (nor does a comprehension around the node).
pub fn receiver_loop_invariant<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> bool {
    let Some(name) = simple_receiver(node, cx) else { return false };
    if lambda_parameter(node, name, cx.src) {
        return false;
    }
    let frames = cx.frames_of(node);
    for frame in local(&frames) {
        match frame {
            Frame::Comprehension(c) if cx.comprehension_targets(*c).contains(&name) => return false,
            Frame::LoopBody(l) => {
                let Some(info) = cx.model.loops.get(&l.id()) else { return false };
                return !info.targets.contains(&name) && !info.assigned.contains(name);
            }
            _ => {}
        }
    }
    false
}

/// `name` is a parameter of a lambda around `node` (`lambda t: t.to(device)`):
/// a new value on every call. Lambdas open no frame, so they are looked for
/// on the way up, as far as the statement around `node`.
fn lambda_parameter(node: Node, name: &str, src: &str) -> bool {
    let mut up = node.parent();
    while let Some(p) = up.filter(|p| !p.kind_name().ends_with("statement") && p.kind_name() != "block") {
        if p.kind_name() == "lambda" {
            let mut cursor = p.walk();
            let parameters = p
                .field(Field::Parameters)
                .into_iter()
                .flat_map(|ps| ps.named_children(&mut cursor).collect::<Vec<_>>());
            if parameters.map(|param| param.field(Field::Name).unwrap_or(param)).any(|id| text(id, src) == name) {
                return true;
            }
        }
        up = p.parent();
    }
    false
}

/// The receiver is a name or `self.attr` that the innermost enclosing training
/// loop assigns: it is created afresh every step (`losses = []` at the top of
/// the step), so what it collects lives for one step only.
pub fn receiver_assigned_in_training_loop<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> bool {
    let Some(name) = simple_receiver(node, cx) else { return false };
    cx.loop_around(node, |info| info.training).is_some_and(|info| info.assigned.contains(name))
}

/// The text of a method call's receiver when it is a plain name or `self.attr`.
fn simple_receiver<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> Option<&'t str> {
    let (recv, _) = method_parts(node)?;
    let recv = unparen(recv);
    let is_simple = recv.kind_name() == "identifier"
        || recv.kind_name() == "attribute" && recv.field(Field::Object).is_some_and(|o| text(o, cx.src) == "self");
    is_simple.then(|| text(recv, cx.src))
}

/// An enclosing `for` loop iterates over something that `over` accepts (seen
/// through `enumerate`/`zip`/`tqdm`/`iter` and name bindings; any iterable
/// without `over`); with `receiver_variable`, the receiver is that loop's (or
/// a nested comprehension's) variable; with `innermost`, only the innermost
/// enclosing loop is looked at.
pub fn loop_over<'t>(
    mut over: Option<&mut dyn FnMut(Node<'t>) -> bool>,
    receiver_variable: bool,
    innermost: bool,
    node: Node<'t>,
    cx: &Context<'_, 't>,
) -> bool {
    let receiver = method_parts(node).and_then(|(r, _)| crate::semantic::values::base_name(r, cx.src));
    let mut comprehension_vars: Vec<&str> = Vec::new();
    let frames = cx.frames_of(node);
    for frame in local(&frames) {
        match frame {
            Frame::Comprehension(c) => comprehension_vars.extend(cx.comprehension_targets(*c)),
            Frame::LoopBody(l) => {
                let iterates = |info: &&crate::semantic::LoopInfo<'t>| match (info.iterable, over.as_mut()) {
                    (None, _) => false,
                    (Some(_), None) => true,
                    (Some(it), Some(accepts)) => iterated_values(it, info.scope, cx).into_iter().any(accepts),
                };
                let Some(info) = cx.model.loops.get(&l.id()).filter(iterates) else {
                    if innermost {
                        return false;
                    }
                    continue;
                };
                if !receiver_variable {
                    return true;
                }
                if receiver.is_some_and(|r| info.targets.contains(&r) || comprehension_vars.contains(&r)) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// What a loop iterates over: the iterable itself, the arguments of wrapping
/// `enumerate`/`zip`/`tqdm`/`iter` calls, both branches of a conditional
/// expression, and the values bound to names.
fn iterated_values<'t>(iterable: Node<'t>, scope: usize, cx: &Context<'_, 't>) -> Vec<Node<'t>> {
    const WRAPPERS: [&str; 5] = ["enumerate", "zip", "tqdm", "iter", "trange"];
    let mut out: Vec<Node<'t>> = Vec::new();
    // Bindings can form cycles (`x = y`, `y = x`, or `x = f(x)`): each node
    // is looked at once, so the search ends however they are chained.
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![unparen(iterable)];
    while let Some(n) = todo.pop() {
        if !seen.insert(n.id()) {
            continue;
        }
        out.push(n);
        match n.kind_name() {
            "call" => {
                let name = n.field(Field::Function).map(|f| text(f, cx.src)).unwrap_or("");
                let last = name.rsplit('.').next().unwrap_or(name);
                if WRAPPERS.contains(&last) {
                    todo.extend(CallArgs::of(n, cx.src).positional.iter().map(|a| unparen(*a)));
                }
            }
            "identifier" | "attribute" => {
                if let Some(v) = cx.model.binding(scope, text(n, cx.src), n.start_byte()) {
                    todo.push(unparen(v));
                }
            }
            // `a if c else b`: the value and the alternative, not the test.
            "conditional_expression" => {
                todo.extend(
                    crate::parse::conditional_parts(n)
                        .into_iter()
                        .flat_map(|[then, _, otherwise]| [then, otherwise])
                        .map(unparen),
                );
            }
            _ => {}
        }
    }
    out
}

/// The value assigned to an environment variable named by the string `key`:
/// `os.environ[key] = v`, `os.environ.setdefault(key, v)`, `os.putenv(key, v)`, `{key: v}`.
pub fn env_value<'t>(key: Node<'t>, cx: &Context<'_, 't>) -> Option<Node<'t>> {
    let parent = cx.parent(key)?;
    match parent.kind_name() {
        "subscript" => {
            let assignment = cx.parent(parent).filter(|a| a.kind_name() == "assignment")?;
            if assignment.field(Field::Left) != Some(parent) {
                return None;
            }
            assignment.field(Field::Right)
        }
        "argument_list" => {
            let call = cx.parent(parent)?;
            let args = CallArgs::of(call, cx.src);
            (args.positional.first() == Some(&key)).then(|| args.positional.get(1).copied()).flatten()
        }
        "pair" if parent.field(Field::Key) == Some(key) => parent.field(Field::Value),
        _ => None,
    }
}

/// Where, relative to the node, `scope_has` looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Anywhere in the scope.
    Anywhere,
    /// Only nodes that end before the node starts.
    Before,
    /// Only nodes that start after the node ends.
    After,
}

/// How many nodes of a function (or module) [`scope_has`] looks at for one
/// node. Each node whose rule asks costs a search of its scope, so without a
/// bound a huge generated module would take time in proportion to the square
/// of its size; the search that stops there answers "no" and the file is
/// reported as partly analysed.
pub const MAX_SCOPE_NODES: usize = 200_000;

/// Whether `accepts` a node of the function (or module) around `node`, tried
/// in source order, not looking into nested functions and classes. A search
/// that stops at [`MAX_SCOPE_NODES`] is recorded in the context.
pub fn scope_has<'t>(
    node: Node<'t>,
    order: Order,
    cx: &Context<'_, 't>,
    mut accepts: impl FnMut(Node<'t>) -> bool,
) -> bool {
    let scope = cx.function_of(node).and_then(|f| f.field(Field::Body)).unwrap_or(cx.root);
    // The scope's nodes in source order, read from the file's flat copy of
    // its tree. A scope deeper than that copy reaches lies in code the scan
    // reports as only partly analysed.
    let Some(nodes) = cx.model.tree.subtree(scope) else { return false };
    let mut budget = MAX_SCOPE_NODES;
    let mut i = 0;
    while let Some((n, subtree_end)) = nodes.get(i) {
        if budget == 0 {
            cx.scope_search_stopped(node);
            return false;
        }
        budget -= 1;
        let skip_subtree = match order {
            Order::Before => n.start_byte() >= node.start_byte(),
            Order::After => n.end_byte() <= node.end_byte() && i != 0,
            Order::Anywhere => false,
        };
        let nested = i != 0 && matches!(n.kind_name(), "function_definition" | "class_definition" | "lambda");
        if skip_subtree || nested {
            i = subtree_end;
            continue;
        }
        let in_range = match order {
            Order::Before => n.end_byte() <= node.start_byte(),
            Order::After => n.start_byte() >= node.end_byte(),
            Order::Anywhere => true,
        };
        if in_range && accepts(n) {
            return true;
        }
        i += 1;
    }
    false
}
