//! Calls: the callee, a method call's receiver and name, and the arguments,
//! looked up by keyword or position.

use super::values::{plain_string, text};
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use tree_sitter::Node;

/// What is known about one argument of a call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgState<'t> {
    /// Not passed, and no `*args`/`**kwargs` could pass it.
    Absent,
    /// Passed; the node is the value.
    Present(Node<'t>),
    /// `*args` or `**kwargs` may pass it.
    Unknown,
}

/// The arguments of one call.
pub(crate) struct CallArgs<'t> {
    /// Positional arguments, in order, up to the first `*args`.
    pub positional: Vec<Node<'t>>,
    /// `(name, keyword_argument node)` pairs.
    pub keywords: Vec<(&'t str, Node<'t>)>,
    /// A `*args` appears.
    pub star: bool,
    /// The value of the first `*args` (`layers` in `f(*layers)`).
    pub star_value: Option<Node<'t>>,
    /// `(key, value)` of the pairs of a `**{"key": value}` written out in
    /// the call: keywords too, as Python passes them.
    pub spread_keywords: Vec<(String, Node<'t>)>,
    /// A `**kwargs` appears whose keys are not all written out.
    pub double_star: bool,
    /// The argument list node, when there is one.
    pub list: Option<Node<'t>>,
}

impl<'t> CallArgs<'t> {
    /// The arguments of `call` (a `call` node; anything else has none).
    pub(crate) fn of(call: Node<'t>, src: &'t str) -> Self {
        let mut args = CallArgs {
            positional: Vec::new(),
            keywords: Vec::new(),
            star: false,
            star_value: None,
            spread_keywords: Vec::new(),
            double_star: false,
            list: None,
        };
        if call.kind_name() != "call" {
            return args;
        }
        let Some(list) = call.field(Field::Arguments) else { return args };
        args.list = Some(list);
        if list.kind_name() == "generator_expression" {
            args.positional.push(list);
            return args;
        }
        let mut cursor = list.walk();
        for child in list.named_children(&mut cursor) {
            match child.kind_name() {
                "keyword_argument" => {
                    if let Some(name) = child.field(Field::Name) {
                        args.keywords.push((text(name, src), child));
                    }
                }
                "list_splat" => {
                    if !args.star {
                        args.star_value = child.named_child(0);
                    }
                    args.star = true;
                }
                "dictionary_splat" => match child.named_child(0).and_then(|d| literal_pairs(d, src)) {
                    Some(pairs) => args.spread_keywords.extend(pairs),
                    None => args.double_star = true,
                },
                "comment" => {}
                _ if !args.star => args.positional.push(child),
                _ => {}
            }
        }
        args
    }

    /// Looks an argument up by keyword name and/or positional index.
    pub(crate) fn get(&self, name: Option<&str>, position: Option<usize>) -> ArgState<'t> {
        if let Some(name) = name {
            if let Some((_, kw)) = self.keywords.iter().find(|(n, _)| *n == name) {
                return kw.field(Field::Value).map_or(ArgState::Unknown, ArgState::Present);
            }
            if let Some((_, value)) = self.spread_keywords.iter().find(|(n, _)| n == name) {
                return ArgState::Present(*value);
            }
        }
        if let Some(pos) = position {
            if let Some(node) = self.positional.get(pos) {
                return ArgState::Present(*node);
            }
            if self.star {
                return ArgState::Unknown;
            }
        }
        if self.double_star && name.is_some() {
            return ArgState::Unknown;
        }
        ArgState::Absent
    }

    /// The `keyword_argument` node for `name`.
    pub(crate) fn keyword(&self, name: &str) -> Option<Node<'t>> {
        self.keywords.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }
}

/// The `(key, value)` pairs of a dictionary display whose keys are all
/// plain strings and which unpacks no other mapping; `None` otherwise.
fn literal_pairs<'t>(dict: Node<'t>, src: &str) -> Option<Vec<(String, Node<'t>)>> {
    if dict.kind_name() != "dictionary" {
        return None;
    }
    let mut cursor = dict.walk();
    let entries = dict.named_children(&mut cursor).filter(|e| e.kind_name() != "comment");
    entries
        .map(|pair| {
            let key = pair.field(Field::Key).filter(|_| pair.kind_name() == "pair")?;
            Some((plain_string(key, src)?, pair.field(Field::Value)?))
        })
        .collect()
}

/// The callee of a call node, or the expression of a bare decorator.
pub(crate) fn callee<'t>(node: Node<'t>) -> Option<Node<'t>> {
    match node.kind_name() {
        "call" => node.field(Field::Function),
        "decorator" => node.named_child(0).filter(|e| matches!(e.kind_name(), "identifier" | "attribute")),
        _ => None,
    }
}

/// The name a call uses for a function its file may define: `f` in `f(...)`,
/// `self.f(...)` or `cls.f(...)`; `None` for any other callee.
pub(crate) fn own_function_name<'s>(call: Node, src: &'s str) -> Option<&'s str> {
    let f = call.field(Field::Function)?;
    match f.kind_name() {
        "identifier" => Some(text(f, src)),
        "attribute" if f.field(Field::Object).is_some_and(|o| matches!(text(o, src), "self" | "cls")) => {
            Some(text(f.field(Field::Attribute)?, src))
        }
        _ => None,
    }
}

/// `(receiver, method name node)` of a method call.
pub(crate) fn method_parts<'t>(node: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
    let f = node.field(Field::Function).filter(|f| node.kind_name() == "call" && f.kind_name() == "attribute")?;
    Some((f.field(Field::Object)?, f.field(Field::Attribute)?))
}
