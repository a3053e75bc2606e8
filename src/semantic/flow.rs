//! Value flow inside one file, flow-insensitive: the name a value is stored
//! under, where that name is read again, and which comparisons read it.
//!
//! A value is stored under a *key*: a local name (`device = ...`, a parameter
//! default) or a member name (`self.device = ...`, `cfg["device"] = ...`,
//! `{"device": ...}`, `parser.add_argument("--device", default=...)`).
//! Members are matched by their last name whatever the object, so `args.device`
//! reads what `add_argument("--device")` stores. Plain copies (`a = b`) pass
//! the value on to another key. Being flow-insensitive, the analysis treats
//! two variables of one name in different functions as one.

use super::memo::{memoised, Memo};
use super::traverse::{FlatTree, Visitor};
use super::values::{plain_string, string_like, text, unparen};
use crate::hash::{FastMap, FastSet};
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use std::borrow::Cow;
use std::rc::Rc;
use tree_sitter::Node;

/// The scope id of the module: names no function binds.
const MODULE: usize = 0;

/// The name a value is stored under.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key<'t> {
    /// A variable or parameter of a scope (a function's node id, or the module).
    Local(usize, Cow<'t, str>),
    /// An attribute, dictionary key or command-line option destination.
    Member(Cow<'t, str>),
}

/// Every read of every key in a file, and the names each function binds,
/// built on first use.
#[derive(Default)]
pub struct NameUses<'t> {
    by_key: FastMap<Key<'t>, Vec<Node<'t>>>,
    /// Names each function assigns or takes as parameters, by node id.
    bound: FastMap<usize, FastSet<&'t str>>,
    /// The function (or `MODULE`) each function is defined in.
    outer: FastMap<usize, usize>,
    /// What [`NameUses::copies`] found, by key: every finding on a value
    /// asks again, and a name assigned thousands of times would make that
    /// quadratic.
    copies: Memo<Key<'t>, Key<'t>>,
    /// What [`NameUses::comparisons`] found, by key.
    comparisons: Memo<Key<'t>, (Node<'t>, Node<'t>)>,
}

impl<'t> NameUses<'t> {
    /// Indexes the names, attributes and string-keyed subscripts of the file.
    pub fn build(tree: &FlatTree<'t>, src: &'t str) -> Self {
        let mut collector = Collector { src, uses: NameUses::default(), scopes: vec![MODULE], names: Vec::new() };
        tree.visit(&mut collector);
        let Collector { mut uses, names, .. } = collector;
        for (scope, node) in names {
            let name = text(node, src);
            let key = Key::Local(uses.scope_binding(scope, name), Cow::Borrowed(name));
            uses.by_key.entry(key).or_default().push(node);
        }
        uses
    }

    /// Whether any variable called `name` is read, in any scope.
    pub fn reads_name(&self, name: &str) -> bool {
        self.by_key.iter().any(|(key, reads)| matches!(key, Key::Local(_, n) if n == name) && !reads.is_empty())
    }

    /// The nodes that read `key`.
    pub fn of(&self, key: &Key<'t>) -> &[Node<'t>] {
        self.by_key.get(key).map_or(&[], Vec::as_slice)
    }

    /// `key` and every key its value is copied to by plain assignments
    /// (`b = a`, `self.device = device`), transitively. Each key is visited
    /// once, so the search ends on any file.
    pub fn copies(&self, key: Key<'t>, src: &'t str) -> Rc<[Key<'t>]> {
        memoised(&self.copies, key.clone(), || {
            let mut seen: FastSet<Key<'t>> = [key.clone()].into_iter().collect();
            let mut order = vec![key];
            let mut next = 0;
            while let Some(k) = order.get(next).cloned() {
                next += 1;
                for &read in self.of(&k) {
                    if let Some(to) = self.store_key(read, src) {
                        if seen.insert(to.clone()) {
                            order.push(to);
                        }
                    }
                }
            }
            order
        })
    }

    /// The string literals that the value stored under `key`, or any of its
    /// [copies](NameUses::copies), is tested against, with their tests: see
    /// [`tested_against`].
    pub fn comparisons(&self, key: Key<'t>, src: &'t str) -> Rc<[(Node<'t>, Node<'t>)]> {
        memoised(&self.comparisons, key.clone(), || tested_against(self, &self.copies(key, src), src))
    }

    /// The innermost scope, from `scope` outwards, that binds `name`: Python's
    /// rule for a name read in a function (class bodies aside).
    fn scope_binding(&self, mut scope: usize, name: &str) -> usize {
        while scope != MODULE {
            if self.bound.get(&scope).is_some_and(|names| names.contains(name)) {
                return scope;
            }
            scope = self.outer.get(&scope).copied().unwrap_or(MODULE);
        }
        MODULE
    }

    /// The key a name, attribute or subscript node stands for.
    fn key_of(&self, node: Node<'t>, src: &'t str) -> Option<Key<'t>> {
        match node.kind_name() {
            "identifier" => {
                let name = text(node, src);
                Some(Key::Local(self.scope_binding(enclosing_function(node), name), Cow::Borrowed(name)))
            }
            _ => member_key(node, src),
        }
    }

    /// The key the value at `node` is stored under, if it is stored at all.
    pub fn store_key(&self, node: Node<'t>, src: &'t str) -> Option<Key<'t>> {
        let value = value_root(node, src);
        let parent = value.parent()?;
        match parent.kind_name() {
            "assignment" if parent.field(Field::Right) == Some(value) => {
                let target = parent.field(Field::Left)?;
                matches!(target.kind_name(), "identifier" | "attribute" | "subscript")
                    .then(|| self.key_of(target, src))
                    .flatten()
            }
            "default_parameter" | "typed_default_parameter" if parent.field(Field::Value) == Some(value) => {
                self.key_of(parent.field(Field::Name)?, src)
            }
            "pair" if parent.field(Field::Value) == Some(value) => {
                Some(Key::Member(Cow::Owned(plain_string(parent.field(Field::Key)?, src)?)))
            }
            "keyword_argument" if parent.field(Field::Value) == Some(value) => option_default(parent, src),
            _ => None,
        }
    }
}

/// Whether the value at `node` is stored under a name at all: a cheap test
/// that spares building the index for values used in place.
pub(crate) fn is_stored(node: Node, src: &str) -> bool {
    let value = value_root(node, src);
    value.parent().is_some_and(|p| match p.kind_name() {
        "assignment" => p.field(Field::Right) == Some(value),
        "default_parameter" | "typed_default_parameter" | "pair" => p.field(Field::Value) == Some(value),
        "keyword_argument" => {
            p.field(Field::Value) == Some(value) && p.field(Field::Name).is_some_and(|n| text(n, src) == "default")
        }
        _ => false,
    })
}

/// The function or lambda `node` is in (a parameter is in its function), or `MODULE`.
fn enclosing_function(node: Node) -> usize {
    let mut at = node.parent();
    while let Some(n) = at {
        if matches!(n.kind_name(), "function_definition" | "lambda") {
            return n.id();
        }
        at = n.parent();
    }
    MODULE
}

struct Collector<'t> {
    src: &'t str,
    uses: NameUses<'t>,
    /// Enclosing functions, innermost last.
    scopes: Vec<usize>,
    /// Every name read, with the function it is read in; keyed once all bindings are known.
    names: Vec<(usize, Node<'t>)>,
}

impl<'t> Visitor<'t> for Collector<'t> {
    fn enter(&mut self, node: Node<'t>) -> bool {
        let scope = self.scopes.last().copied().unwrap_or(MODULE);
        match node.kind_name() {
            "function_definition" | "lambda" => {
                self.uses.outer.insert(node.id(), scope);
                self.scopes.push(node.id());
            }
            "identifier" if is_name(node) => {
                let function = self.scopes.last().copied().unwrap_or(MODULE);
                if binds(node) {
                    self.uses.bound.entry(function).or_default().insert(text(node, self.src));
                }
                self.names.push((function, node));
            }
            _ => {
                if let Some(key) = member_key(node, self.src) {
                    self.uses.by_key.entry(key).or_default().push(node);
                }
            }
        }
        true
    }
    fn leave(&mut self, node: Node<'t>) {
        if matches!(node.kind_name(), "function_definition" | "lambda") {
            self.scopes.pop();
        }
    }
}

/// Whether an identifier is a variable, not the name part of `obj.name`,
/// `name=` or a definition.
pub(crate) fn is_name(node: Node) -> bool {
    let Some(parent) = node.parent() else { return true };
    match parent.kind_name() {
        "attribute" => parent.field(Field::Attribute) != Some(node),
        "keyword_argument" => parent.field(Field::Name) != Some(node),
        "function_definition" | "class_definition" => parent.field(Field::Name) != Some(node),
        // The names of an import statement are bindings, not reads.
        "dotted_name" | "aliased_import" => false,
        _ => true,
    }
}

/// Whether an identifier binds its name in its function: an assignment or
/// loop target, a parameter, a `with ... as` name.
fn binds(node: Node) -> bool {
    let mut child = node;
    while let Some(parent) = child.parent() {
        match parent.kind_name() {
            "pattern_list" | "tuple_pattern" | "list_pattern" | "parenthesized_expression" => child = parent,
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                return parent.field(Field::Left) == Some(child)
            }
            "parameters"
            | "lambda_parameters"
            | "typed_parameter"
            | "list_splat_pattern"
            | "dictionary_splat_pattern" => return true,
            "default_parameter" | "typed_default_parameter" => return parent.field(Field::Name) == Some(child),
            "as_pattern_target" => return true,
            _ => return false,
        }
    }
    false
}

/// The key that an attribute (`obj.name`) or subscript (`obj["name"]`) reads.
fn member_key<'t>(node: Node<'t>, src: &'t str) -> Option<Key<'t>> {
    match node.kind_name() {
        "attribute" => node.field(Field::Attribute).map(|a| Key::Member(Cow::Borrowed(text(a, src)))),
        "subscript" => {
            let index = node.child_by_field_name("subscript")?;
            Some(Key::Member(Cow::Owned(plain_string(index, src)?)))
        }
        _ => None,
    }
}

/// Where the value at `node` ends up once parentheses, the branches of a
/// conditional expression and string formatting (`"cuda:{}".format(i)`,
/// `"cuda:%d" % i`) are seen through.
pub(crate) fn value_root<'t>(node: Node<'t>, src: &str) -> Node<'t> {
    let mut value = node;
    while let Some(parent) = value.parent() {
        let through = match parent.kind_name() {
            "parenthesized_expression" => true,
            "conditional_expression" => crate::parse::conditional_test(parent) != Some(value),
            "binary_operator" => parent.field(Field::Left) == Some(value) && parent.field(Field::Operator).is_some(),
            "attribute" => {
                // `"cuda:{}".format(i)`: the value is the call's result.
                let is_format = value.kind_name() == "string"
                    && parent.field(Field::Object) == Some(value)
                    && parent.field(Field::Attribute).is_some_and(|a| text(a, src) == "format");
                match parent.parent().filter(|c| c.kind_name() == "call") {
                    Some(call) if is_format => {
                        value = call;
                        continue;
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        if !through {
            break;
        }
        value = parent;
    }
    value
}

/// The destination of `add_argument("--some-opt", default=...)`: `some_opt`,
/// or the `dest=` given.
fn option_default<'t>(keyword: Node<'t>, src: &'t str) -> Option<Key<'t>> {
    if keyword.field(Field::Name).map(|n| text(n, src)) != Some("default") {
        return None;
    }
    let args = keyword.parent()?;
    let call = args.parent().filter(|c| c.kind_name() == "call")?;
    let method = call.field(Field::Function).filter(|f| f.kind_name() == "attribute")?.field(Field::Attribute)?;
    if text(method, src) != "add_argument" {
        return None;
    }
    let mut cursor = args.walk();
    let mut long = None;
    for arg in args.named_children(&mut cursor) {
        if arg.kind_name() == "keyword_argument" && arg.field(Field::Name).map(|n| text(n, src)) == Some("dest") {
            return Some(Key::Member(Cow::Owned(plain_string(arg.field(Field::Value)?, src)?)));
        }
        if long.is_none() {
            long = plain_string(arg, src).and_then(|s| s.strip_prefix("--").map(|n| n.replace('-', "_")));
        }
    }
    long.map(|n| Key::Member(Cow::Owned(n)))
}

/// The string literals of the `choices=` of the `add_argument` call whose
/// `default=` holds the value at `node`, each with the collection (argparse
/// tests every value given for the option against it). Empty for any other value.
pub(crate) fn option_choices<'t>(node: Node<'t>, src: &'t str) -> Vec<(Node<'t>, Node<'t>)> {
    let mut out = Vec::new();
    let value = value_root(node, src);
    let Some(keyword) = value.parent().filter(|k| k.kind_name() == "keyword_argument") else { return out };
    if option_default(keyword, src).is_none() {
        return out;
    }
    let Some(args) = keyword.parent() else { return out };
    let mut cursor = args.walk();
    let is_choices = |a: &Node| a.field(Field::Name).is_some_and(|n| text(n, src) == "choices");
    for arg in args.named_children(&mut cursor).filter(|a| a.kind_name() == "keyword_argument" && is_choices(a)) {
        if let Some(choices) = arg.field(Field::Value).map(unparen) {
            string_elements(choices, choices, src, &mut out);
        }
    }
    out
}

/// The string literals that a value read from one of `keys` is tested
/// against, each with the comparison or call that tests it: the other side
/// of a comparison (`device == "cuda"`, `"cuda" in device`,
/// `device.type != "cuda"`, `str(device) in ("cuda", "cpu")`) and the
/// argument of `startswith` or `endswith`.
fn tested_against<'t>(uses: &NameUses<'t>, keys: &[Key<'t>], src: &str) -> Vec<(Node<'t>, Node<'t>)> {
    let mut out = Vec::new();
    for key in keys {
        for &read in uses.of(key) {
            let (derived, test) = derived_value(read, src);
            let Some(test) = test else { continue };
            if test.kind_name() == "comparison_operator" {
                let mut cursor = test.walk();
                for side in test.named_children(&mut cursor).filter(|s| *s != derived) {
                    string_elements(unparen(side), test, src, &mut out);
                }
            } else if let Some(args) = test.field(Field::Arguments) {
                let mut cursor = args.walk();
                for arg in args.named_children(&mut cursor) {
                    string_elements(unparen(arg), test, src, &mut out);
                }
            }
        }
    }
    out.sort_by_key(|(lit, _)| lit.start_byte());
    out.dedup_by_key(|(lit, _)| lit.id());
    out
}

/// Climbs from a read to the value derived from it (`device.type`,
/// `device.split(":")[0]`, `str(device)`) and returns it with the test it
/// feeds, if any: a comparison or a `startswith`/`endswith` call.
fn derived_value<'t>(read: Node<'t>, src: &str) -> (Node<'t>, Option<Node<'t>>) {
    let mut value = read;
    while let Some(parent) = value.parent() {
        match parent.kind_name() {
            "comparison_operator" => return (value, Some(parent)),
            "parenthesized_expression" => value = parent,
            "subscript" if parent.field(Field::Value) == Some(value) => value = parent,
            "attribute" if parent.field(Field::Object) == Some(value) => {
                let name = parent.field(Field::Attribute).map_or("", |a| text(a, src));
                match parent.parent().filter(|c| c.kind_name() == "call" && c.field(Field::Function) == Some(parent)) {
                    Some(call) if matches!(name, "startswith" | "endswith") => return (value, Some(call)),
                    Some(call) => value = call,
                    None => value = parent,
                }
            }
            "argument_list" => {
                // `str(device)`, `torch.device(device)`: the first argument only.
                let is_first =
                    crate::parse::first_code_child(parent) == Some(value) && value.kind_name() != "keyword_argument";
                match parent.parent().filter(|c| c.kind_name() == "call") {
                    Some(call) if is_first => value = call,
                    _ => return (value, None),
                }
            }
            _ => return (value, None),
        }
    }
    (value, None)
}

/// `node` if it is a string, the literal of a string built from one, or the
/// strings of a list, tuple or set literal.
fn string_elements<'t>(node: Node<'t>, test: Node<'t>, src: &str, out: &mut Vec<(Node<'t>, Node<'t>)>) {
    match node.kind_name() {
        "string" => out.push((node, test)),
        // `"cuda:" + str(k)`, `"cuda:%d" % k`, `"cuda:{}".format(k)`: the literal that names the device.
        "binary_operator" | "call" => out.extend(string_like(node, src).map(|(literal, _)| (literal, test))),
        "list" | "tuple" | "set" => {
            let mut cursor = node.walk();
            out.extend(node.named_children(&mut cursor).filter(|e| e.kind_name() == "string").map(|e| (e, test)));
        }
        _ => {}
    }
}
