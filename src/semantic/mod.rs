//! The per-file semantic model, built in one pass before matching: imports,
//! module-level definitions, bindings, docstrings and what each loop does.

pub(crate) mod calls;
pub(crate) mod cuda_only;
pub(crate) mod cuda_tests;
pub(crate) mod dispatch;
pub(crate) mod flow;
pub(crate) mod generated;
pub(crate) mod import_lines;
pub(crate) mod imports;
pub(crate) mod launch_lines;
pub(crate) mod memo;
pub(crate) mod named_files;
pub(crate) mod npu_script;
pub(crate) mod option_defs;
pub(crate) mod option_table;
pub(crate) mod options;
pub(crate) mod shell_dirs;
pub(crate) mod steps;
pub(crate) mod subclasses;
pub(crate) mod traverse;
pub(crate) mod try_guards;
pub(crate) mod values;
pub(crate) mod version_gates;

use crate::hash::{FastMap, FastSet};
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use memo::{memoised, Memo};
use std::rc::Rc;
use traverse::{FlatTree, Visitor};
use tree_sitter::Node;

use values::{base_name, dotted_parts, pattern_names, text};

/// Scope key of module-level bindings (function scopes use their node id).
pub(crate) const MODULE_SCOPE: usize = 0;

/// What the matcher needs to know about one loop.
#[derive(Debug, Default)]
pub struct LoopInfo<'t> {
    /// Its own body calls `.backward()` or an optimizer/scaler `.step()`.
    pub training: bool,
    /// Names bound by the loop header (`for x, y in ...`).
    pub targets: Vec<&'t str>,
    /// Names (and `self.attr`s) assigned anywhere in the loop.
    pub assigned: FastSet<&'t str>,
    /// The iterable of a `for` loop.
    pub iterable: Option<Node<'t>>,
    /// The function scope the loop is in.
    pub scope: usize,
    /// The loop directly around this one in the same function, if any.
    pub outer: Option<usize>,
    /// A `try` statement sits directly in the loop (not in a nested loop):
    /// a `while` loop with one retries, it does not step.
    pub has_try: bool,
}

impl LoopInfo<'_> {
    /// Whether the loop runs once per step (see [`steps`]): it trains, or it
    /// is a `while` loop without a `try` in its body (with one it retries
    /// until something works, as benchmark scripts do after running out of
    /// memory).
    pub fn is_step_loop(&self) -> bool {
        self.training || (self.iterable.is_none() && !self.has_try)
    }
}

/// Everything known about one file before rules run.
#[derive(Default)]
pub struct FileModel<'t> {
    imports: FastMap<&'t str, String>,
    /// Names that imports in arms of an `if` chain bind: the first binding is
    /// in `imports`; the other arms' qualified names, where they differ, here
    /// ([`Self::other_arm_imports`]).
    other_arms: FastMap<&'t str, Vec<String>>,
    /// Where the binding in `imports` of each name sits, when in an `if` arm.
    import_arms: FastMap<&'t str, imports::Arm>,
    /// Every qualified name the file imports (modules and names).
    pub imported: Vec<String>,
    /// The qualified names each import statement imports, by its node id.
    imported_by: FastMap<usize, Vec<String>>,
    defined: FastSet<&'t str>,
    bindings: FastMap<(usize, &'t str), Vec<Node<'t>>>,
    /// Loops by node id.
    pub loops: FastMap<usize, LoopInfo<'t>>,
    /// Node ids of the functions that run on every step (see [`steps`]).
    pub per_step_functions: FastSet<usize>,
    /// The `function_definition` nodes of the file, by name.
    definitions: FastMap<&'t str, Vec<Node<'t>>>,
    /// The module-level `class_definition` nodes of the file, by name.
    classes: FastMap<&'t str, Vec<Node<'t>>>,
    /// The calls of names the file may define (`f(...)`, `self.f(...)`), in order.
    local_calls: Vec<steps::LocalCall<'t>>,
    /// Node ids of docstrings.
    pub docstrings: FastSet<usize>,
    /// Names local to each function or lambda, by node id: its parameters and
    /// the functions and classes defined directly in its body.
    pub locals: FastMap<usize, Vec<&'t str>>,
    /// Imported names that some function also binds locally (rare; checked per use).
    pub shadowable: FastSet<&'t str>,
    /// Where each name is read, for value flow; built on first use.
    name_uses: std::cell::OnceCell<flow::NameUses<'t>>,
    /// The `if` statements directly in each block, by the block's node id; read on first use.
    block_ifs: Memo<usize, dispatch::BlockIf<'t>>,
    /// The tests of the `if` statements that make a dispatch with a statement,
    /// by the statement's node id; worked out on first use.
    dispatch_tests: Memo<usize, Node<'t>>,
    /// The file's named nodes, for every pass over them.
    pub tree: FlatTree<'t>,
    /// The imported classes each module-level class derives from, by its name.
    derived: FastMap<&'t str, Vec<subclasses::Derived>>,
    /// Classes other files derive, by the name this file imports them under.
    imported_classes: subclasses::ImportedClasses,
}

impl<'t> FileModel<'t> {
    /// Builds the model of a parsed file.
    pub fn build(root: Node<'t>, src: &'t str) -> Self {
        let tree = FlatTree::new(root);
        let mut builder = Builder {
            src,
            model: FileModel::default(),
            frames: Vec::new(),
            steps: Vec::new(),
            local_calls: Vec::new(),
            classes: FastMap::default(),
        };
        tree.visit(&mut builder);
        let mut model = builder.finish();
        model.tree = tree;
        model
    }

    /// Where each name of the file is read (built the first time a rule asks).
    pub fn name_uses(&self, src: &'t str) -> &flow::NameUses<'t> {
        self.name_uses.get_or_init(|| flow::NameUses::build(&self.tree, src))
    }

    /// The imported classes that the module-level class `name` of this file
    /// derives from, directly or through other classes of the file; empty
    /// for any other name.
    pub fn derived_from(&self, name: &str) -> &[subclasses::Derived] {
        match self.derived.get(name) {
            Some(d) => d,
            None => &[],
        }
    }

    /// Learns the classes other files derive (`imported`): a call of one,
    /// and a class of this file derived from one, construct their bases too.
    pub fn import_classes(&mut self, imported: &subclasses::ImportedClasses) {
        for bases in self.derived.values_mut() {
            subclasses::through_imported(bases, imported);
        }
        self.imported_classes = imported.clone();
    }

    /// The imported classes that a call of `callee` constructs as bases: a
    /// class of this file (see [`Self::derived_from`]), or one that another
    /// file derives and this one imports, by its name or a dotted chain.
    pub fn derived_of_callee(&self, callee: Node, src: &str) -> &[subclasses::Derived] {
        let local = match callee.kind_name() {
            "identifier" => self.derived_from(text(callee, src)),
            _ => &[],
        };
        if !local.is_empty() || self.imported_classes.is_empty() {
            return local;
        }
        let imported = dotted_parts(callee, src).and_then(|parts| self.resolve(&parts));
        imported.and_then(|q| self.imported_classes.get(&q)).map_or(&[], Vec::as_slice)
    }

    /// The module-level classes of the file with an imported base that
    /// `wanted` accepts, with their bases: what the file gives the files
    /// that import it. Sorted by name.
    pub fn derived_classes(&self, wanted: impl Fn(&str) -> bool) -> Vec<(String, Vec<subclasses::Derived>)> {
        let mut out: Vec<(String, Vec<subclasses::Derived>)> = self
            .derived
            .iter()
            .filter(|(_, bases)| bases.iter().any(|d| wanted(&d.base)))
            .map(|(name, bases)| (name.to_string(), bases.clone()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The qualified names that import statement `node` imports (none for any other node).
    pub fn imported_by(&self, node: Node) -> &[String] {
        self.imported_by.get(&node.id()).map_or(&[], Vec::as_slice)
    }

    /// The tests of the sibling `if` statements that make a backend dispatch
    /// with `statement`, a statement directly in `block` (see
    /// [`dispatch::sibling_dispatch_tests`]). Worked out once per statement,
    /// from the block's `if` statements read once per block: every node
    /// inside a statement asks again, and a block can hold thousands of them.
    pub fn dispatch_tests_of(&self, statement: Node<'t>, block: Node<'t>, src: &'t str) -> Rc<[Node<'t>]> {
        memoised(&self.dispatch_tests, statement.id(), || {
            let ifs = memoised(&self.block_ifs, block.id(), || {
                let mut cursor = block.walk();
                let ifs = block.named_children(&mut cursor).filter(|s| s.kind_name() == "if_statement");
                ifs.map(|s| dispatch::BlockIf::new(s, src)).collect()
            });
            dispatch::sibling_dispatch_tests(&ifs, statement, src)
        })
    }

    /// The qualified name of a dotted chain, resolved through imports.
    /// A chain whose root is not imported resolves only when it is a single
    /// name that the module does not define itself (a builtin such as `float`).
    pub fn resolve(&self, parts: &[&str]) -> Option<String> {
        let (root, rest) = parts.split_first()?;
        if self.defined.contains(root) {
            return None;
        }
        let mut out = match self.imports.get(root) {
            Some(q) => q.clone(),
            None if rest.is_empty() => return Some((*root).to_string()),
            None => return None,
        };
        for p in rest {
            out.push('.');
            out.push_str(p);
        }
        Some(out)
    }

    /// The qualified names a dotted chain may also stand for, when its root is
    /// imported in more than one arm of an `if` chain (`if cpu: from m import
    /// CppExtension as Ext` / `else: from m import CUDAExtension as Ext`):
    /// which arm runs is undecided, so a rule sees every one ([`Self::resolve`]
    /// gives the first).
    pub fn other_arm_imports(&self, parts: &[&str]) -> Vec<String> {
        let Some((root, rest)) = parts.split_first() else { return Vec::new() };
        self.other_arms_of(root)
            .iter()
            .map(|q| std::iter::once(q.as_str()).chain(rest.iter().copied()).collect::<Vec<_>>().join("."))
            .collect()
    }

    /// What other arms' imports bind the local name `local` to (see
    /// [`Self::other_arm_imports`]); empty for almost every name.
    pub fn other_arms_of(&self, local: &str) -> &[String] {
        match self.other_arms.get(local) {
            Some(others) if !self.defined.contains(local) => others,
            _ => &[],
        }
    }

    /// Whether any name of the file is imported differently in arms of an
    /// `if` chain: when not, nothing needs [`Self::other_arm_imports`].
    pub fn has_other_arm_imports(&self) -> bool {
        !self.other_arms.is_empty()
    }

    /// Records an import binding of `local` made in `arm`. The first binding
    /// is the name's, except that the arm of a test naming the NPU replaces
    /// an arm's before it (on an NPU host it is the one that runs). Another
    /// arm's different binding of a name first bound in an arm is kept in
    /// `other_arms`, unless the NPU arm decided the name.
    fn bind_import(&mut self, local: &'t str, qualified: String, arm: imports::Arm) {
        use imports::Arm;
        let first_arm = self.import_arms.get(local).copied();
        match (self.imports.get(local), first_arm, arm) {
            (None, _, _) => {
                if arm != Arm::None {
                    self.import_arms.insert(local, arm);
                }
                self.imports.insert(local, qualified);
            }
            (Some(_), Some(Arm::Undecided), Arm::Npu) => {
                self.other_arms.remove(local);
                self.import_arms.insert(local, Arm::Npu);
                self.imports.insert(local, qualified);
            }
            (Some(first), Some(Arm::Undecided), Arm::Undecided) if *first != qualified => {
                let others = self.other_arms.entry(local).or_default();
                if !others.contains(&qualified) {
                    others.push(qualified);
                }
            }
            _ => {}
        }
    }

    /// The qualified name of an expression node (identifier or attribute chain).
    pub fn resolve_node(&self, node: Node, src: &str) -> Option<String> {
        self.resolve(&dotted_parts(node, src)?)
    }

    /// The qualified name an imported local name stands for.
    pub fn import_target(&self, local: &str) -> Option<&str> {
        self.imports.get(local).map(String::as_str)
    }

    /// The local name under which `module` itself is imported (`t` for `import torch as t`).
    pub fn alias_of(&self, module: &str) -> Option<&'t str> {
        let mut names: Vec<&&'t str> = self
            .imports
            .iter()
            .filter(|(local, q)| *q == module && !self.defined.contains(*local))
            .map(|(l, _)| l)
            .collect();
        // The module's own name when it is imported plainly; else a stable choice.
        names.sort_by_key(|n| (**n != module, **n));
        names.first().map(|n| **n)
    }

    /// Whether `root` names an imported module or object.
    pub fn is_imported_name(&self, root: &str) -> bool {
        self.imports.contains_key(root) && !self.defined.contains(root)
    }

    /// The definitions in this file of the function `call` calls by name:
    /// `f(...)`, or `self.f(...)` and `cls.f(...)` (every method `f` of the
    /// file; which class is not checked). Empty for anything else.
    pub fn definitions_called(&self, call: Node<'t>, src: &str) -> &[Node<'t>] {
        calls::own_function_name(call, src).and_then(|n| self.definitions.get(n)).map_or(&[], Vec::as_slice)
    }

    /// The module-level classes of this file that `call` builds by their
    /// name (`Dataset(...)`). Empty for anything else.
    pub fn classes_called(&self, call: Node<'t>, src: &str) -> &[Node<'t>] {
        let name = call.field(Field::Function).filter(|f| f.kind_name() == "identifier").map(|f| text(f, src));
        name.and_then(|n| self.classes.get(n)).map_or(&[], Vec::as_slice)
    }

    /// Whether `value` is the default of a parameter of a function that this
    /// file calls, and every such call passes that parameter (by keyword, or
    /// by position where it may be passed so): the default is not used here.
    pub fn callers_pass(&self, value: Node<'t>, src: &'t str) -> bool {
        let Some(param) =
            value.parent().filter(|p| matches!(p.kind_name(), "default_parameter" | "typed_default_parameter"))
        else {
            return false;
        };
        let Some(def) = param.parent().and_then(|ps| ps.parent()) else { return false };
        self.passed_by_callers(def, param, src).is_some()
    }

    /// When `name`, read at byte `at` inside `function`, is one of its
    /// parameters that it does not bind again before, and every call of the
    /// function in this file passes it: the values those calls pass.
    pub fn caller_arguments(&self, function: Node<'t>, name: &str, at: usize, src: &'t str) -> Option<Vec<Node<'t>>> {
        let rebound = self.bindings.get(&(function.id(), name)).is_some_and(|b| b.iter().any(|n| n.start_byte() < at));
        let params = function.field(Field::Parameters).filter(|_| !rebound)?;
        let param = params.named_children(&mut params.walk()).find(|p| parameter_name(*p, src) == Some(name))?;
        self.passed_by_callers(function, param, src)
    }

    /// The values every call in this file of `def` passes for its parameter
    /// `param` (by keyword, or by position where it may be passed so); `None`
    /// when nothing calls it or some call may not pass it (`*args`, `**kwargs`).
    fn passed_by_callers(&self, def: Node<'t>, param: Node<'t>, src: &'t str) -> Option<Vec<Node<'t>>> {
        let params = def.field(Field::Parameters).filter(|_| def.kind_name() == "function_definition")?;
        let (name, fname) = (parameter_name(param, src)?, text(def.field(Field::Name)?, src));
        let listed: Vec<Node<'t>> = params.named_children(&mut params.walk()).collect();
        let index = listed.iter().position(|p| p.id() == param.id())?;
        // After `*` or `*args` a parameter can only be passed by keyword.
        let keyword_only =
            listed[..index].iter().any(|p| matches!(p.kind_name(), "list_splat_pattern" | "keyword_separator"));
        let takes_self = listed.first().is_some_and(|p| matches!(text(*p, src), "self" | "cls"));
        let callers: Vec<&steps::LocalCall<'t>> = self.local_calls.iter().filter(|c| c.name == fname).collect();
        if callers.is_empty() {
            return None;
        }
        callers
            .iter()
            .map(|c| {
                // `self.f(...)` fills `self` itself.
                let through_self = c.call.field(Field::Function).is_some_and(|f| f.kind_name() == "attribute");
                let position = (!keyword_only).then(|| index - usize::from(takes_self && through_self));
                // A call that unpacks `*args` or `**kwargs` is not known to pass it.
                let args = calls::CallArgs::of(c.call, src);
                match args.get(Some(name), position) {
                    calls::ArgState::Present(v) if !args.star && !args.double_star => Some(v),
                    _ => None,
                }
            })
            .collect()
    }

    /// The last value bound to `name` (or `self.attr`) in `scope`, else at
    /// module level, by an assignment that starts before byte `before`.
    pub fn binding(&self, scope: usize, name: &str, before: usize) -> Option<Node<'t>> {
        let key = if name.starts_with("self.") { MODULE_SCOPE } else { scope };
        let last_before = |v: &Vec<Node<'t>>| v.iter().rev().find(|n| n.start_byte() < before).copied();
        self.bindings
            .get(&(key, name))
            .and_then(last_before)
            .or_else(|| self.bindings.get(&(MODULE_SCOPE, name)).and_then(last_before))
    }
}

/// The name a parameter binds (`x`, `x=1`, `x: int`, `x: int = 1`).
fn parameter_name<'s>(param: Node, src: &'s str) -> Option<&'s str> {
    let name = match param.kind_name() {
        "identifier" => param,
        "default_parameter" | "typed_default_parameter" => param.field(Field::Name)?,
        "typed_parameter" => param.named_child(0).filter(|n| n.kind_name() == "identifier")?,
        _ => return None,
    };
    Some(text(name, src))
}

enum Frame {
    Function(usize),
    Class(usize),
    Loop(usize),
}

struct Builder<'t> {
    src: &'t str,
    model: FileModel<'t>,
    frames: Vec<Frame>,
    /// `.step()` calls: (loop id, receiver, scope), decided once imports are known.
    steps: Vec<(usize, Node<'t>, usize)>,
    /// Calls of names the file may define, for the same.
    local_calls: Vec<steps::LocalCall<'t>>,
    /// Module-level classes that name bases, resolved once imports are known.
    classes: FastMap<&'t str, subclasses::LocalClass<'t>>,
}

impl<'t> Builder<'t> {
    fn scope(&self) -> usize {
        self.frames
            .iter()
            .rev()
            .find_map(|f| if let Frame::Function(id) = f { Some(*id) } else { None })
            .unwrap_or(MODULE_SCOPE)
    }

    /// Loops enclosing the current node within its function, innermost first.
    fn enclosing_loops(&self) -> impl Iterator<Item = usize> + '_ {
        self.frames.iter().rev().take_while(|f| matches!(f, Frame::Loop(_))).map(|f| {
            if let Frame::Loop(id) = f {
                *id
            } else {
                0
            }
        })
    }

    fn at_module_level(&self) -> bool {
        self.frames.iter().all(|f| matches!(f, Frame::Loop(_)))
    }

    fn record_assigned(&mut self, names: &[&'t str]) {
        let loops: Vec<usize> = self.enclosing_loops().collect();
        for id in loops {
            if let Some(info) = self.model.loops.get_mut(&id) {
                info.assigned.extend(names.iter().copied());
            }
        }
    }

    fn note_docstring(&mut self, block: Option<Node<'t>>) {
        let Some(block) = block else { return };
        let Some(first) = block.named_child(0) else { return };
        if first.kind_name() == "expression_statement" {
            if let Some(s) = first.named_child(0).filter(|s| s.kind_name() == "string") {
                self.model.docstrings.insert(s.id());
            }
        }
    }

    fn finish(mut self) -> FileModel<'t> {
        let model = &mut self.model;
        model.shadowable = model.locals.values().flatten().copied().filter(|p| model.imports.contains_key(p)).collect();
        for (loop_id, receiver, scope) in std::mem::take(&mut self.steps) {
            if self.is_optimizer(receiver, scope) {
                if let Some(info) = self.model.loops.get_mut(&loop_id) {
                    info.training = true;
                }
            }
        }
        let loops = &self.model.loops;
        let in_step_loop = |id: usize| {
            let mut at = Some(id);
            while let Some(info) = at.and_then(|id| loops.get(&id)) {
                if info.is_step_loop() {
                    return true;
                }
                at = info.outer;
            }
            false
        };
        let function_ids =
            self.model.definitions.iter().map(|(name, defs)| (*name, defs.iter().map(Node::id).collect()));
        self.model.per_step_functions =
            steps::per_step_functions(&function_ids.collect(), &self.local_calls, in_step_loop);
        self.model.derived = self.classes.keys().map(|name| (*name, self.derived(name, &mut Vec::new()))).collect();
        self.model.local_calls = self.local_calls;
        self.model
    }

    /// The imported bases of the local class `name`, through the file's other
    /// classes; `seen` holds the classes on the way, which ends a cycle.
    fn derived(&self, name: &'t str, seen: &mut Vec<&'t str>) -> Vec<subclasses::Derived> {
        let Some(class) = self.classes.get(name).filter(|_| !seen.contains(&name)) else { return Vec::new() };
        seen.push(name);
        let mut out = Vec::new();
        for base in &class.bases {
            let Some(parts) = dotted_parts(*base, self.src) else { continue };
            match parts.as_slice() {
                [local] if self.classes.contains_key(local) => {
                    out.extend(self.derived(local, seen).into_iter().map(|d| subclasses::Derived {
                        passes_arguments: d.passes_arguments && class.passes_arguments,
                        ..d
                    }))
                }
                _ => out.extend(
                    self.model
                        .resolve(&parts)
                        .map(|base| subclasses::Derived { base, passes_arguments: class.passes_arguments }),
                ),
            }
        }
        seen.pop();
        out
    }

    /// A `.step()` receiver named like an optimizer or grad scaler, or bound
    /// to a `torch.optim` optimizer; learning-rate schedulers never count.
    fn is_optimizer(&self, receiver: Node<'t>, scope: usize) -> bool {
        let recv_text = text(receiver, self.src);
        let last = recv_text.rsplit('.').next().unwrap_or(recv_text).to_ascii_lowercase();
        if last.contains("sched") {
            return false;
        }
        if ["optim", "opt", "scaler"].iter().any(|w| last.contains(w)) {
            return true;
        }
        let bound = self.model.binding(scope, recv_text, receiver.start_byte()).filter(|v| v.kind_name() == "call");
        let qual =
            bound.and_then(|call| call.field(Field::Function)).and_then(|f| self.model.resolve_node(f, self.src));
        qual.is_some_and(|q| q.starts_with("torch.optim.") && !q.starts_with("torch.optim.lr_scheduler."))
    }
}

impl<'t> Visitor<'t> for Builder<'t> {
    fn enter(&mut self, node: Node<'t>) -> bool {
        let src = self.src;
        match node.kind_name() {
            "module" => self.note_docstring(Some(node)),
            "import_statement" | "import_from_statement" => {
                let (bindings, imported) = imports::import_bindings(node, src);
                let arm = imports::arm_of(node, src);
                for b in bindings {
                    self.model.bind_import(b.local, b.qualified, arm);
                }
                self.model.imported.extend(imported.iter().cloned());
                self.model.imported_by.insert(node.id(), imported);
                return false;
            }
            "function_definition" | "class_definition" => {
                if let Some(name) = node.field(Field::Name).map(|n| text(n, src)) {
                    if node.kind_name() == "function_definition" {
                        self.model.definitions.entry(name).or_default().push(node);
                    }
                    if self.at_module_level() {
                        self.model.defined.insert(name);
                        if node.kind_name() == "class_definition" {
                            self.model.classes.entry(name).or_default().push(node);
                        }
                        if let Some(class) = subclasses::LocalClass::of(node, src) {
                            self.classes.insert(name, class);
                        }
                    } else if let Some(Frame::Function(outer)) =
                        self.frames.iter().rev().find(|f| !matches!(f, Frame::Loop(_)))
                    {
                        // `def nms(...)` inside a function hides an imported `nms` there.
                        self.model.locals.entry(*outer).or_default().push(name);
                    }
                }
                self.note_docstring(node.field(Field::Body));
                if let Some(params) = node.field(Field::Parameters) {
                    let mut names = Vec::new();
                    parameter_names(params, src, &mut names);
                    self.model.locals.entry(node.id()).or_default().extend(names);
                }
                self.frames.push(if node.kind_name() == "class_definition" {
                    Frame::Class(node.id())
                } else {
                    Frame::Function(node.id())
                });
            }
            "for_statement" | "while_statement" => {
                let outer = self.enclosing_loops().next();
                let mut info = LoopInfo { scope: self.scope(), outer, ..LoopInfo::default() };
                if let Some(left) = node.field(Field::Left) {
                    pattern_names(left, src, &mut info.targets);
                }
                info.iterable = node.field(Field::Right);
                let targets = info.targets.clone();
                self.record_assigned(&targets);
                self.model.loops.insert(node.id(), info);
                self.frames.push(Frame::Loop(node.id()));
            }
            "assignment" | "augmented_assignment" => {
                let mut names = Vec::new();
                if let Some(left) = node.field(Field::Left) {
                    pattern_names(left, src, &mut names);
                    let right = node.field(Field::Right);
                    if let (Some(right), "identifier" | "attribute") = (right, left.kind_name()) {
                        if node.kind_name() == "assignment" {
                            let scope = self.scope();
                            let key = if left.kind_name() == "attribute" { MODULE_SCOPE } else { scope };
                            let name = text(left, src);
                            self.model.bindings.entry((key, name)).or_default().push(right);
                        }
                    }
                }
                self.record_assigned(&names);
            }
            "named_expression" | "as_pattern_target" => {
                let target = node.field(Field::Name).unwrap_or(node);
                let mut names = Vec::new();
                pattern_names(target, src, &mut names);
                if node.kind_name() == "as_pattern_target" {
                    if let Some(inner) = node.named_child(0) {
                        pattern_names(inner, src, &mut names);
                    }
                }
                self.record_assigned(&names);
            }
            "try_statement" => {
                let innermost = self.enclosing_loops().next();
                if let Some(info) = innermost.and_then(|id| self.model.loops.get_mut(&id)) {
                    info.has_try = true;
                }
            }
            "call" => {
                self.note_training_call(node);
                self.note_local_call(node);
            }
            _ => {}
        }
        true
    }

    fn leave(&mut self, node: Node<'t>) {
        let top = match self.frames.last() {
            Some(Frame::Function(id) | Frame::Class(id) | Frame::Loop(id)) => *id,
            None => return,
        };
        if top == node.id() {
            self.frames.pop();
        }
    }
}

/// The names a parameter list binds (`a`, `b=1`, `c: int`, `*args`, `**kw`).
fn parameter_names<'t>(params: Node<'t>, src: &'t str, out: &mut Vec<&'t str>) {
    let mut cursor = params.walk();
    for p in params.named_children(&mut cursor) {
        let name = match p.kind_name() {
            "identifier" => Some(p),
            "default_parameter" | "typed_default_parameter" => p.field(Field::Name),
            _ => p.named_child(0).filter(|n| n.kind_name() == "identifier"),
        };
        out.extend(name.filter(|n| n.kind_name() == "identifier").map(|n| text(n, src)));
    }
}

impl<'t> Builder<'t> {
    /// Records `f(...)`, `self.f(...)` and `cls.f(...)`: calls of functions the
    /// file may define, for [`steps::per_step_functions`].
    fn note_local_call(&mut self, call: Node<'t>) {
        let Some(name) = calls::own_function_name(call, self.src) else { return };
        let function = match self.scope() {
            MODULE_SCOPE => None,
            id => Some(id),
        };
        let innermost_loop = self.enclosing_loops().next();
        self.local_calls.push(steps::LocalCall { call, name, function, innermost_loop });
    }

    /// `loss_scaler(loss, optimizer, ...)`: a loss scaler called directly (timm's
    /// `NativeScaler.__call__`) runs backward and the optimizer step itself.
    fn is_loss_scaler_call(&self, call: Node<'t>) -> bool {
        let Some(func) = call.field(Field::Function) else { return false };
        let name = match func.kind_name() {
            "identifier" => text(func, self.src),
            "attribute" => func.field(Field::Attribute).map_or("", |a| text(a, self.src)),
            _ => return false,
        };
        // Every call is asked, so the name is checked first, without allocating.
        let named_scaler = name.len() >= 6 && name.as_bytes()[name.len() - 6..].eq_ignore_ascii_case(b"scaler");
        named_scaler
            && call.field(Field::Arguments).is_some_and(|args| {
                let mut cursor = args.walk();
                let positional = args.named_children(&mut cursor).filter(|a| a.kind_name() != "keyword_argument");
                positional.count() >= 2
            })
    }

    /// `.backward()` and `.step()` make the innermost enclosing loop a training loop;
    /// the functional `torch.autograd.backward(...)` does not (custom autograd
    /// functions and recomputation use it to push gradients, without training).
    /// The rules' prefilter relies on these words (`rules::prefilter`'s
    /// `training_loop`): a new sign of training must be added there too.
    fn note_training_call(&mut self, call: Node<'t>) {
        if self.is_loss_scaler_call(call) {
            let innermost = self.enclosing_loops().next();
            if let Some(info) = innermost.and_then(|id| self.model.loops.get_mut(&id)) {
                info.training = true;
            }
            return;
        }
        let Some(func) = call.field(Field::Function).filter(|f| f.kind_name() == "attribute") else { return };
        let Some(method) = func.field(Field::Attribute) else { return };
        let Some(loop_id) = self.enclosing_loops().next() else { return };
        let functional =
            func.field(Field::Object).is_some_and(|o| matches!(text(o, self.src), "torch.autograd" | "autograd"));
        match text(method, self.src) {
            "backward" if !functional => {
                if let Some(info) = self.model.loops.get_mut(&loop_id) {
                    info.training = true;
                }
            }
            "step" => {
                if let Some(receiver) = func.field(Field::Object) {
                    if base_name(receiver, self.src).is_some() {
                        let scope = self.scope();
                        self.steps.push((loop_id, receiver, scope));
                    }
                }
            }
            _ => {}
        }
    }
}
