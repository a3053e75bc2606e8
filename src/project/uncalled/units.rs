//! The functions, methods and classes of a Python file that may be dead
//! ([`super`]), read from its lines without a parse.

/// A module-level function, a method, or an autograd function's class: its
/// name and its lines (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// The class it is a method of.
    pub class: Option<String>,
    /// The line of its `def`.
    pub first: usize,
    /// Its last line of code.
    pub last: usize,
    /// Its lines: what it calls counts only while it is called itself.
    pub body: String,
    /// It is a whole class (a `torch.autograd.Function`), named like one.
    pub is_class: bool,
}

impl Function {
    /// The function or class `name` whose header is on line `i` (0-based),
    /// as a method of `class` if given, its lines and body still to read.
    pub(super) fn new(name: &str, class: Option<&str>, i: usize, is_class: bool) -> Self {
        let class = class.map(str::to_string);
        Function { name: name.to_string(), class, first: i + 1, last: i + 1, body: String::new(), is_class }
    }

    /// How often its own lines mention its name: its `def`, and the calls
    /// of a recursive function, which call it only once something else has.
    pub(super) fn own_mentions(&self) -> usize {
        mentions(&self.body, &self.name)
    }

    /// Its name as a report shows it: `SmoothedValue.synchronize_between_processes`.
    pub fn qualified_name(&self) -> String {
        match &self.class {
            Some(class) => format!("{class}.{}", self.name),
            None => self.name.clone(),
        }
    }

    /// Whether its lines mention `name` as a whole word.
    pub(crate) fn mentions(&self, name: &str) -> bool {
        mentions(&self.body, name) > 0
    }

    /// Whether line `line` (1-based) is one of its lines.
    pub fn holds(&self, line: usize) -> bool {
        (self.first..=self.last).contains(&line)
    }
}

/// How often `text` mentions `name` as a whole word.
fn mentions(text: &str, name: &str) -> usize {
    text.match_indices(name).filter(|(at, _)| is_whole_word(text, *at, at + name.len())).count()
}

/// Whether `text[start..end]` is not part of a longer identifier.
pub(super) fn is_whole_word(text: &str, start: usize, end: usize) -> bool {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let before = start > 0 && ident(b[start - 1]);
    let after = b.get(end).is_some_and(|&c| ident(c));
    !before && !after
}

/// The module-level, undecorated functions of a Python file's text that
/// may be dead (not `main`, not a test, not a special name); the undecorated
/// methods of its classes without a base, or based on `nn.Module` but those
/// torch or a library calls by name; its `torch.autograd.Function`
/// classes, run only through their name (`Op.apply`), as a whole
/// ([`class_at`]); and its `nn.Module` classes as a whole too: `forward`
/// and the hooks run only on a module that something built by its name.
pub(crate) fn functions_and_methods(text: &str) -> Vec<Function> {
    let lines: Vec<&str> = crate::source::python_lines(text).collect();
    let function_imported = lines.iter().any(|l| imports_autograd_function(l));
    let mut out: Vec<Function> = Vec::new();
    let mut open: Option<Function> = None;
    // The last line that starts at the margin: a decorator, also one whose
    // arguments run over several lines (their closing `)` is not at the margin).
    let mut previous_margin: Option<&str> = None;
    let mut class: Option<ClassBody> = None;
    // An `nn.Module` class as a whole: what torch calls on it (`forward`)
    // runs only once something names the class.
    let mut module_class: Option<Function> = None;
    for (i, line) in lines.iter().enumerate() {
        let at_margin = !line.is_empty() && !line.starts_with([' ', '\t', '#', ')', ']', '}']);
        if at_margin {
            out.extend(open.take());
            out.extend(module_class.take());
            let decorated = previous_margin.is_some_and(|p| p.starts_with('@'));
            open = function_at(line, i, None, decorated);
            class = None;
            match class_at(line, function_imported).filter(|_| !decorated) {
                Some((name, ClassKind::AutogradFunction)) => open = Some(Function::new(name, None, i, true)),
                Some((name, kind)) => {
                    if kind == ClassKind::Module {
                        module_class = Some(Function::new(name, None, i, true));
                    }
                    class = Some(ClassBody::new(name, kind));
                }
                None => {}
            }
            previous_margin = Some(line);
        } else if let Some(body) = class.as_mut() {
            extend(&mut module_class, line, i);
            match body.statement(line) {
                Statement::Member(member) if member.starts_with('@') => {
                    out.extend(open.take());
                    body.decorators.push(member);
                }
                Statement::Member(member) => {
                    out.extend(open.take());
                    // `@staticmethod` and `@classmethod` register nothing: callers still name the method.
                    let plain = |d: &&str| matches!(d.trim_end(), "@staticmethod" | "@classmethod");
                    let decorated = !body.decorators.iter().all(plain);
                    open = function_at(member, i, Some((&body.name, body.kind)), decorated);
                    body.decorators.clear();
                }
                // A line of a string or of a bracket below the members' margin: the method ends early.
                Statement::Below => out.extend(open.take()),
                Statement::Inside => extend(&mut open, line, i),
            }
        } else {
            extend(&mut open, line, i);
        }
    }
    out.extend(open);
    out.extend(module_class);
    for f in &mut out {
        f.body = lines[f.first - 1..f.last].join("\n");
    }
    out
}

/// The function that `line` (line `i`, 0-based, without its indentation)
/// starts, if it is a `def` that may be dead: for a method, of a `class`
/// of that kind.
fn function_at(line: &str, i: usize, class: Option<(&str, ClassKind)>, decorated: bool) -> Option<Function> {
    let header = line.strip_prefix("async ").unwrap_or(line);
    // The name alone: `def first[T](xs)` (PEP 695) is `first`.
    let name = header
        .strip_prefix("def ")
        .map(|rest| rest.trim_start().split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or(""))?;
    let callable_from_outside = match class {
        None => false,
        Some((_, kind)) => {
            PROTOCOL_METHODS.contains(&name) || kind == ClassKind::Module && MODULE_METHODS.contains(&name)
        }
    };
    (may_be_dead(name) && !decorated && !callable_from_outside)
        .then(|| Function::new(name, class.map(|c| c.0), i, false))
}

/// Line `i` of the open function, if any: a line of code extends it.
fn extend(open: &mut Option<Function>, line: &str, i: usize) {
    if let Some(f) = open.as_mut() {
        if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
            f.last = i + 1;
        }
    }
}

/// Methods that Python or the standard library call on any object that has
/// them, without a special name: a file-like object's (`sys.stdout =
/// Logger()`), an iterator's, a mapping's (`**obj`), a logging filter's.
const PROTOCOL_METHODS: &[&str] =
    &["write", "flush", "close", "read", "readline", "fileno", "isatty", "seek", "tell", "keys", "next", "filter"];

/// Methods of an `nn.Module` that torch calls by name (`forward`, the
/// state-dict hooks), that code elsewhere calls on any module (`train`,
/// `to`), or that libraries look for by convention (timm's
/// `no_weight_decay`, transformers' `_init_weights`, mmcv's `init_weights`,
/// RepVGG's `switch_to_deploy`; detectron2's `@configurable` calls a
/// class's `from_config`, torch's quantization `convert` a module's
/// `from_float`): such a method may run with nothing in the project naming it.
const MODULE_METHODS: &[&str] = &[
    "forward",
    "from_config",
    "from_float",
    "extra_repr",
    "reset_parameters",
    "_reset_parameters",
    "init_weights",
    "_init_weights",
    "_load_from_state_dict",
    "_save_to_state_dict",
    "state_dict",
    "load_state_dict",
    "get_extra_state",
    "set_extra_state",
    "train",
    "eval",
    "_apply",
    "apply",
    "to",
    "cuda",
    "npu",
    "cpu",
    "half",
    "float",
    "double",
    "bfloat16",
    "type",
    "parameters",
    "named_parameters",
    "buffers",
    "named_buffers",
    "children",
    "named_children",
    "modules",
    "named_modules",
    "zero_grad",
    "requires_grad_",
    "share_memory",
    "compile",
    "_get_name",
    "_replicate_for_data_parallel",
    "_conv_forward",
    "_check_input_dim",
    "no_weight_decay",
    "no_weight_decay_keywords",
    "fuse",
    "fuse_model",
    "switch_to_deploy",
    "get_classifier",
    "reset_classifier",
    "forward_features",
    "forward_head",
    "set_grad_checkpointing",
    "group_matcher",
    "tie_weights",
    "get_input_embeddings",
    "set_input_embeddings",
    "get_output_embeddings",
    "set_output_embeddings",
    "prepare_inputs_for_generation",
    "gradient_checkpointing_enable",
    "_set_gradient_checkpointing",
];

/// Classes without a base that a framework finds by their name and whose
/// methods it calls: Triton's Python backend loads `TritonPythonModel` and
/// calls its `initialize`, `execute` and `finalize`.
const FRAMEWORK_CLASSES: &[&str] = &["TritonPythonModel"];

/// What a class's base says of who may call into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClassKind {
    /// No base (`class Meter:`, `(object)`): only the project's code calls its methods.
    Plain,
    /// `nn.Module`: torch calls `forward` and its hooks ([`MODULE_METHODS`]).
    Module,
    /// `torch.autograd.Function`: its static `forward` and `backward` run
    /// only through the class's name (`Op.apply`), so the class is one unit.
    AutogradFunction,
}

/// The name and kind of the class that `line` starts, if its methods (or
/// the class itself) can be dead: based on nothing, `nn.Module` or
/// `torch.autograd.Function` (`Function` where the file imports it from
/// `torch.autograd`), and neither a test class (`Test*`, run by pytest), a
/// mixin (which another file may mix into a library's class), nor one of
/// [`FRAMEWORK_CLASSES`]. A class with another base may be called by that
/// base's library (`training_step`, a hook).
fn class_at(line: &str, function_imported: bool) -> Option<(&str, ClassKind)> {
    let rest = line.strip_prefix("class ")?.trim_start();
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    let (name, after) = rest.split_at(end);
    let after: String = after.chars().filter(|c| !c.is_whitespace()).collect();
    let based = |bases: &[&str]| bases.iter().any(|b| after.starts_with(&format!("({b}):")));
    let kind = if [":", "():", "(object):"].iter().any(|b| after.starts_with(b)) {
        ClassKind::Plain
    } else if based(&["nn.Module", "torch.nn.Module"]) {
        ClassKind::Module
    } else if based(&["torch.autograd.Function", "autograd.Function"]) || function_imported && based(&["Function"]) {
        ClassKind::AutogradFunction
    } else {
        return None;
    };
    let framework = FRAMEWORK_CLASSES.contains(&name);
    let excluded = name.is_empty() || name.starts_with("Test") || name.ends_with("Mixin") || framework;
    (!excluded).then_some((name, kind))
}

/// Whether `line` imports `Function` from `torch.autograd`.
fn imports_autograd_function(line: &str) -> bool {
    let Some(names) = line.strip_prefix("from torch.autograd import") else { return false };
    names.split([',', '(', ')', ' ']).any(|n| n == "Function")
}

/// The body of a class whose methods are read.
struct ClassBody<'t> {
    name: String,
    kind: ClassKind,
    /// The indentation of its members, from its first line of code.
    margin: Option<usize>,
    /// The decorators above the member to come, without the indentation.
    decorators: Vec<&'t str>,
}

/// What a line inside a class body is.
enum Statement<'t> {
    /// A statement at the members' margin (a `def`, a decorator, an attribute), without the indentation.
    Member(&'t str),
    /// A line below that margin that is not at the file's margin either.
    Below,
    /// Anything else: a line of a member, a blank line or a comment.
    Inside,
}

impl<'t> ClassBody<'t> {
    fn new(name: &str, kind: ClassKind) -> Self {
        ClassBody { name: name.to_string(), kind, margin: None, decorators: Vec::new() }
    }

    fn statement(&mut self, line: &'t str) -> Statement<'t> {
        let code = line.trim_start_matches([' ', '\t']);
        if code.is_empty() || code.starts_with('#') || code.starts_with([')', ']', '}']) {
            return Statement::Inside;
        }
        let depth = line.len() - code.len();
        let margin = *self.margin.get_or_insert(depth);
        match depth.cmp(&margin) {
            std::cmp::Ordering::Equal => Statement::Member(code),
            std::cmp::Ordering::Less => Statement::Below,
            std::cmp::Ordering::Greater => Statement::Inside,
        }
    }
}

/// Names that something outside the project's text runs: `main` (a console
/// script), test functions (pytest), special names.
fn may_be_dead(name: &str) -> bool {
    !name.is_empty() && name != "main" && !name.starts_with("test") && !name.starts_with("__")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, usize, usize)> {
        functions_and_methods(text).into_iter().map(|f| (f.name, f.first, f.last)).collect()
    }

    #[test]
    fn module_level_functions_are_read_from_the_lines() {
        let text = "import torch\n\n\
                    def helper(x,\n        y):\n    return x.cuda()\n\n\
                    # a comment at the margin\n\
                    def wrapped(\n    a,\n):\n    return a\n\n\
                    @register\ndef registered():\n    pass\n\n\
                    @register(\n    \"x\",\n)\ndef registered_too():\n    pass\n\n\
                    def first[T](xs: list[T]) -> T:\n    return xs[0]\n\n\
                    async def fetch():\n    pass\n\
                    class Model(nn.Module):\n    def forward(self):\n        pass\n\n\
                    def main():\n    helper(1, 2)\n\
                    def test_it():\n    pass\n\
                    if __name__ == '__main__':\n    main()\n";
        assert_eq!(
            names(text),
            [
                ("helper".to_string(), 3, 5),
                ("wrapped".to_string(), 8, 11),
                ("first".to_string(), 23, 24),
                ("fetch".to_string(), 26, 27),
                ("Model".to_string(), 28, 30)
            ]
        );
    }

    #[test]
    fn module_methods_and_autograd_functions_are_read() {
        let text = "from torch.autograd import Function\nimport torch.nn as nn\n\n\
                    class FusedSoftmax(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n\
                    \x20       import softmax_cuda\n        return softmax_cuda.forward(x)\n\n\
                    class DeformFn(Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n\
                    class Softmax(nn.Module):\n    def forward(self, x):\n        return self.forward_torch(x)\n\n\
                    \x20   def forward_fused(self, x):\n        return FusedSoftmax.apply(x)\n\n\
                    \x20   def forward_torch(self, x):\n        return x.softmax(-1)\n\n\
                    \x20   def extra_repr(self):\n        return ''\n\n\
                    \x20   @staticmethod\n    def batch_per_block(sq):\n        import softmax_cuda\n\
                    \x20       return softmax_cuda.batch(sq)\n\n\
                    \x20   @lru_cache\n    @staticmethod\n    def cached(x):\n        return x\n\n\
                    class Head(Base):\n    def helper(self):\n        pass\n";
        let found: Vec<(String, usize, usize, bool)> = functions_and_methods(text)
            .into_iter()
            .map(|f| (f.qualified_name(), f.first, f.last, f.is_class))
            .collect();
        let row = |name: &str, first, last, is_class| (name.to_string(), first, last, is_class);
        assert_eq!(
            found,
            [
                row("FusedSoftmax", 4, 8, true),
                row("DeformFn", 10, 13, true),
                row("Softmax.forward_fused", 19, 20, false),
                row("Softmax.forward_torch", 22, 23, false),
                row("Softmax.batch_per_block", 29, 31, false),
                // The module as a whole: its `forward` runs once something builds it by name.
                row("Softmax", 15, 36, true),
            ]
        );
        // Without the import, `Function` may be any class.
        let other = text.replace("from torch.autograd import Function", "from sympy import Function");
        assert!(!functions_and_methods(&other).iter().any(|f| f.name == "DeformFn"));
        let mut functions = std::collections::HashMap::new();
        functions.insert("softmax.py".to_string(), functions_and_methods(text));
        let dead = |texts: &[&str]| -> Vec<String> {
            let mut names: Vec<String> = super::super::tests::uncalled(&functions, texts)
                .into_values()
                .flatten()
                .map(|f| f.qualified_name())
                .collect();
            names.sort();
            names
        };
        let train = "model = Softmax()\n";
        // A class whose only user is a dead method is dead too.
        let all = ["DeformFn", "FusedSoftmax", "Softmax.batch_per_block", "Softmax.forward_fused"];
        assert_eq!(dead(&[text, train]), all);
        let called = "y = model.forward_fused(x)\nn = Softmax.batch_per_block(4)\n";
        assert_eq!(dead(&[text, train, called]), ["DeformFn"]);
        // A lookup by a computed name may find a class.
        assert!(dead(&[text, train, "op = getattr(ops, cfg.op)\ny = op.apply(x)\n"]).is_empty());
    }
}
