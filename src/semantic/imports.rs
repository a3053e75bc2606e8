//! Import statements: which local names they bind to which qualified names.

use super::values::text;
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use tree_sitter::Node;

/// One name an import binds: `local` refers to `qualified`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding<'s> {
    /// The name usable in the file (`t` in `import torch as t`).
    pub local: &'s str,
    /// What it refers to (`torch`). Relative imports start with dots.
    pub qualified: String,
}

/// The names an import statement binds, and every qualified name it imports.
pub(crate) fn import_bindings<'s>(node: Node, src: &'s str) -> (Vec<Binding<'s>>, Vec<String>) {
    let mut bindings = Vec::new();
    let mut imported = Vec::new();
    let mut cursor = node.walk();
    match node.kind_name() {
        "import_statement" => {
            for name in node.children_by_field_name("name", &mut cursor) {
                if let Some((dotted, alias)) = split_alias(name, src) {
                    imported.push(dotted.to_string());
                    match alias {
                        Some(alias) => bindings.push(Binding { local: alias, qualified: dotted.to_string() }),
                        None => {
                            let root = dotted.split('.').next().unwrap_or(dotted);
                            bindings.push(Binding { local: root, qualified: root.to_string() });
                        }
                    }
                }
            }
        }
        "import_from_statement" => {
            let Some(module) = node.field(Field::ModuleName) else { return (bindings, imported) };
            let module = squash(text(module, src));
            imported.push(module.clone());
            for name in node.children_by_field_name("name", &mut cursor) {
                if let Some((dotted, alias)) = split_alias(name, src) {
                    let qualified =
                        if module.ends_with('.') { format!("{module}{dotted}") } else { format!("{module}.{dotted}") };
                    imported.push(qualified.clone());
                    bindings.push(Binding { local: alias.unwrap_or(dotted), qualified });
                }
            }
        }
        _ => {}
    }
    (bindings, imported)
}

/// `a.b as c` -> (`a.b`, Some(`c`)); `a.b` -> (`a.b`, None).
fn split_alias<'s>(node: Node, src: &'s str) -> Option<(&'s str, Option<&'s str>)> {
    match node.kind_name() {
        "dotted_name" => Some((text(node, src), None)),
        "aliased_import" => {
            let name = node.field(Field::Name)?;
            let alias = node.field(Field::Alias)?;
            Some((text(name, src), Some(text(alias, src))))
        }
        _ => None,
    }
}

/// Removes whitespace inside a dotted module name (`a . b` is legal Python).
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace() && *c != '\\').collect()
}

/// Where an import statement sits, for names that several arms of an `if`
/// chain import.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arm {
    /// Not in an arm of an `if` chain (nearer than any `try`, function or
    /// class around it).
    None,
    /// In an arm that another arm may replace.
    Undecided,
    /// In the arm of a test that names the NPU (`if IS_NPU_AVAILABLE:`):
    /// the arm that runs on an NPU host.
    Npu,
}

/// The arm of an `if` chain that the import statement `node` sits in.
pub(crate) fn arm_of(node: Node, src: &str) -> Arm {
    let mut at = node.parent();
    while let Some(n) = at {
        match n.kind_name() {
            "if_statement" | "elif_clause" => {
                // A negated test (`if not is_npu_available():`) picks the other arm.
                let npu_test = n
                    .field(Field::Condition)
                    .map(|t| text(t, src))
                    .is_some_and(|t| names_npu(t) && !super::dispatch::negated(t));
                return if npu_test { Arm::Npu } else { Arm::Undecided };
            }
            "else_clause" if n.parent().is_some_and(|p| p.kind_name() == "if_statement") => return Arm::Undecided,
            "else_clause" | "try_statement" | "function_definition" | "class_definition" | "module" => {
                return Arm::None
            }
            _ => at = n.parent(),
        }
    }
    Arm::None
}

/// Whether a test names the NPU as a word part (`is_npu_available()`,
/// `IS_NPU_AVAILABLE`, `args.device == "npu"`; not `input`).
fn names_npu(test: &str) -> bool {
    let lower = test.to_ascii_lowercase();
    lower.match_indices("npu").any(|(i, _)| !lower[..i].ends_with(|c: char| c.is_ascii_alphabetic()))
}
