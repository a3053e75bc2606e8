//! Classes a file derives from other classes (`class InfiniteDataLoader(DataLoader)`):
//! a call of one constructs its base, so rules about the base's constructor
//! can see it (see the `subclasses` key of a `call` matcher). A class
//! another file of the project derives is seen where this file imports it,
//! once the project layer has found it ([`ImportedClasses`]).

use crate::parse::{Field, FieldOf, KindOf};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use tree_sitter::Node;

use super::traverse::each_descendant;
use super::values::text;

/// A module-level class of the file that names base classes, as written.
pub(crate) struct LocalClass<'t> {
    /// Its base class expressions (`torch.utils.data.DataLoader`, `Base`).
    pub(crate) bases: Vec<Node<'t>>,
    /// Whether a call of it hands its arguments to its one base unchanged,
    /// so the base's argument analysis holds ([`passes_arguments`]).
    pub passes_arguments: bool,
}

impl<'t> LocalClass<'t> {
    /// The class `class` defines, if it names a base class.
    pub(crate) fn of(class: Node<'t>, src: &str) -> Option<Self> {
        let list = class.field(Field::Superclasses)?;
        let mut cursor = list.walk();
        let children: Vec<Node<'t>> = list.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
        let bases: Vec<Node<'t>> =
            children.iter().copied().filter(|c| matches!(c.kind_name(), "identifier" | "attribute")).collect();
        if bases.is_empty() {
            return None;
        }
        // A keyword (`metaclass=...`) or a computed base may change construction.
        let one_plain_base = children.len() == 1 && bases.len() == 1;
        let passes_arguments = one_plain_base && passes_arguments(class, bases[0], src);
        Some(LocalClass { bases, passes_arguments })
    }
}

/// A base class a local class derives from, resolved to its qualified name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Derived {
    /// The base's qualified name (`torch.utils.data.dataloader.DataLoader`).
    pub base: String,
    /// A call of the local class hands its arguments to this base unchanged,
    /// through every class between them.
    pub passes_arguments: bool,
}

/// Classes that other files of the project derive from bases the rules
/// match, by the qualified name under which this file imports them
/// (`utils.datasets.InfiniteDataLoader`, `.loaders.Loader`), each with its bases.
pub(crate) type ImportedClasses = HashMap<String, Vec<Derived>>;

/// `bases`, with each base that is itself a class of `imported` replaced by
/// that class's bases: the arguments reach them only if both steps pass them.
pub(crate) fn through_imported(bases: &mut Vec<Derived>, imported: &ImportedClasses) {
    let through = |d: Derived| match imported.get(&d.base) {
        Some(further) => further
            .iter()
            .map(|b| Derived { base: b.base.clone(), passes_arguments: b.passes_arguments && d.passes_arguments })
            .collect(),
        None => vec![d],
    };
    *bases = std::mem::take(bases).into_iter().flat_map(through).collect();
}

/// Whether a call of `class` hands its arguments unchanged to `base`'s
/// constructor. That holds when the class is not decorated (a `@dataclass`
/// writes its own `__init__`), defines no `__new__`, and either defines no
/// `__init__` or one that takes only `self`, `*args` and `**kwargs` and passes
/// them, untouched, to `super().__init__` (or `Base.__init__(self, ...)`).
/// A constructor that reads or changes `kwargs` (`kwargs.setdefault(...)`) or
/// names its own parameters does not: its defaults are not the base's.
fn passes_arguments(class: Node, base: Node, src: &str) -> bool {
    if class.parent().is_some_and(|p| p.kind_name() == "decorated_definition") {
        return false;
    }
    let Some(body) = class.field(Field::Body) else { return false };
    let mut cursor = body.walk();
    let methods: Vec<Node> = body
        .named_children(&mut cursor)
        .filter_map(|s| match s.kind_name() {
            "function_definition" => Some(s),
            "decorated_definition" => s.named_children(&mut s.walk()).find(|c| c.kind_name() == "function_definition"),
            _ => None,
        })
        .collect();
    let named = |name: &str| -> Vec<Node> {
        methods.iter().copied().filter(|m| m.field(Field::Name).is_some_and(|n| text(n, src) == name)).collect()
    };
    if !named("__new__").is_empty() {
        return false;
    }
    match named("__init__").as_slice() {
        [] => true,
        [init] => init.parent().is_some_and(|p| p.kind_name() == "block") && forwards(*init, base, src),
        _ => false,
    }
}

/// Whether `init` is `def __init__(self, *args, **kwargs)` (either splat may
/// be missing) whose body calls the base's `__init__` once with exactly its
/// splats, and reads them nowhere else.
fn forwards(init: Node, base: Node, src: &str) -> bool {
    let Some(params) = init.field(Field::Parameters) else { return false };
    let mut cursor = params.walk();
    let params: Vec<Node> = params.named_children(&mut cursor).collect();
    let Some((own, splats)) = params.split_first() else { return false };
    if own.kind_name() != "identifier" {
        return false;
    }
    let splat_name = |kind: &str| -> Option<Option<&str>> {
        let found: Vec<&Node> = splats.iter().filter(|p| p.kind_name() == kind).collect();
        match found.as_slice() {
            [] => Some(None),
            [p] => p.named_child(0).filter(|n| n.kind_name() == "identifier").map(|n| Some(text(n, src))),
            _ => None,
        }
    };
    let (Some(star), Some(double_star)) = (splat_name("list_splat_pattern"), splat_name("dictionary_splat_pattern"))
    else {
        return false;
    };
    let names = Splats { star, double_star };
    if splats.len() != names.count() {
        return false;
    }
    let Some(body) = init.field(Field::Body) else { return false };
    let mut base_inits = Vec::new();
    let mut reads = 0;
    each_descendant(body, |n| {
        match n.kind_name() {
            "call" if is_base_init(n, base, text(*own, src), src) => base_inits.push(n),
            "identifier" if Some(text(n, src)) == star || Some(text(n, src)) == double_star => reads += 1,
            _ => {}
        }
        true
    });
    let [call] = base_inits.as_slice() else { return false };
    reads == names.count() && passes_exactly(*call, own_arg(*call, src), &names, src)
}

/// The names of a constructor's `*args` and `**kwargs`, those it has.
struct Splats<'s> {
    star: Option<&'s str>,
    double_star: Option<&'s str>,
}

impl Splats<'_> {
    /// How many there are.
    fn count(&self) -> usize {
        usize::from(self.star.is_some()) + usize::from(self.double_star.is_some())
    }
}

/// `super().__init__(...)`, `super(C, self).__init__(...)` or
/// `Base.__init__(self, ...)` where `Base` is written as in the class's bases.
fn is_base_init(call: Node, base: Node, own: &str, src: &str) -> bool {
    let Some(f) = call.field(Field::Function).filter(|f| f.kind_name() == "attribute") else { return false };
    if f.field(Field::Attribute).map(|a| text(a, src)) != Some("__init__") {
        return false;
    }
    let Some(object) = f.field(Field::Object) else { return false };
    let through_super = object.kind_name() == "call"
        && object.field(Field::Function).is_some_and(|s| s.kind_name() == "identifier" && text(s, src) == "super");
    through_super || (text(object, src) == text(base, src) && own_arg(call, src) == Some(own))
}

/// The first argument of an explicit `Base.__init__(self, ...)` call, which
/// passes the instance itself; `None` for `super().__init__(...)`.
fn own_arg<'s>(call: Node, src: &'s str) -> Option<&'s str> {
    let f = call.field(Field::Function)?.field(Field::Object)?;
    if f.kind_name() == "call" {
        return None;
    }
    let args = call.field(Field::Arguments)?;
    args.named_child(0).filter(|a| a.kind_name() == "identifier").map(|a| text(a, src))
}

/// Whether `call`'s arguments, after the instance an explicit call passes,
/// are exactly the splats `names` (those that exist).
fn passes_exactly(call: Node, own: Option<&str>, names: &Splats, src: &str) -> bool {
    let Some(args) = call.field(Field::Arguments) else { return false };
    let mut cursor = args.walk();
    let mut passed: Vec<Node> = args.named_children(&mut cursor).filter(|a| a.kind_name() != "comment").collect();
    if own.is_some() && !passed.is_empty() {
        passed.remove(0);
    }
    let splat = |kind: &str| -> Option<&str> {
        passed.iter().find(|a| a.kind_name() == kind).and_then(|a| a.named_child(0)).map(|n| text(n, src))
    };
    passed.len() == names.count() && splat("list_splat") == names.star && splat("dictionary_splat") == names.double_star
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_python;
    use crate::semantic::FileModel;

    /// The bases the model gives the class `name` of `src`.
    fn derived(src: &str, name: &str) -> Vec<(String, bool)> {
        let tree = parse_python(src).unwrap();
        let model = FileModel::build(tree.root_node(), src);
        model.derived_from(name).iter().map(|d| (d.base.clone(), d.passes_arguments)).collect()
    }

    const IMPORT: &str = "from torch.utils.data import DataLoader\nimport torch.nn as nn\n";

    #[test]
    fn a_class_without_a_constructor_passes_its_arguments() {
        let src = format!("{IMPORT}class Loader(DataLoader):\n    def __iter__(self):\n        yield 1\n");
        assert_eq!(derived(&src, "Loader"), [("torch.utils.data.DataLoader".to_string(), true)]);
    }

    #[test]
    fn a_constructor_that_forwards_its_splats_passes_its_arguments() {
        for init in [
            "super().__init__(*args, **kwargs)\n        self.it = super().__iter__()",
            "super(Loader, self).__init__(*args, **kwargs)",
            "DataLoader.__init__(self, *args, **kwargs)",
        ] {
            let src = format!(
                "{IMPORT}class Loader(DataLoader):\n    def __init__(self, *args, **kwargs):\n        {init}\n"
            );
            assert_eq!(derived(&src, "Loader"), [("torch.utils.data.DataLoader".to_string(), true)], "{init}");
        }
    }

    #[test]
    fn a_constructor_that_reads_or_names_arguments_does_not_pass_them() {
        for init in [
            "def __init__(self, *args, **kwargs):\n        kwargs.setdefault('pin_memory', True)\n        super().__init__(*args, **kwargs)",
            "def __init__(self, dataset, **kwargs):\n        super().__init__(dataset, **kwargs)",
            "def __init__(self, *args, **kwargs):\n        super().__init__(*args, num_workers=4, **kwargs)",
            "def __init__(self, *args, **kwargs):\n        pass",
            "def __new__(cls, *args, **kwargs):\n        return object.__new__(cls)",
        ] {
            let src = format!("{IMPORT}class Loader(DataLoader):\n    {init}\n");
            assert_eq!(derived(&src, "Loader"), [("torch.utils.data.DataLoader".to_string(), false)], "{init}");
        }
    }

    #[test]
    fn a_chain_of_local_classes_reaches_the_imported_base() {
        let src = format!(
            "{IMPORT}class Balanced(nn.DataParallel):\n    def __init__(self, gpu0, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n\
             class Mine(Balanced):\n    pass\nclass Loop(Loop):\n    pass\n"
        );
        assert_eq!(derived(&src, "Mine"), [("torch.nn.DataParallel".to_string(), false)]);
        assert!(derived(&src, "Loop").is_empty());
    }

    #[test]
    fn a_decorated_or_keyword_class_keeps_its_bases_without_passing_arguments() {
        let src = format!(
            "{IMPORT}@dataclass\nclass A(DataLoader):\n    x: int = 1\nclass B(DataLoader, metaclass=M):\n    pass\n"
        );
        assert_eq!(derived(&src, "A"), [("torch.utils.data.DataLoader".to_string(), false)]);
        assert_eq!(derived(&src, "B"), [("torch.utils.data.DataLoader".to_string(), false)]);
    }
}
