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
