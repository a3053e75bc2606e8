//! Lookups by a computed name (`getattr(obj, name)`, `globals()[name]`,
//! `module.__dict__[name]`), read from a text without a parse: what they
//! may find. What such a lookup finds cannot be read, so it may be any
//! method or class of the project; on a module of the project that the
//! text imports (`getattr(models, args.arch)`), any function or class of
//! that module, but no method: of the files under a directory or named
//! like it, and what they import under its own name (a package's
//! `__init__.py` re-exporting it). On a module a loader
//! gives (`importlib.import_module(name)`, `sys.modules[name]`), it may be any
//! function. None of those is decided dead. Three forms narrow it, each by
//! what Python does:
//! - **on the file itself**: `getattr(self, name)` or `getattr(cls, name)`
//!   in a method finds a method of the object's class or of a class it
//!   derives from; `globals()[name]` and `locals()[name]` find what the
//!   file defines or imports;
//! - **on a library** that the project is not (`getattr(torch.nn, name)`,
//!   `getattr(F, act)` after `import torch.nn.functional as F`, or the
//!   builtin `object`): nothing of the project;
//! - **read as a value**: a result that is only compared, tested, printed,
//!   formatted or handed to a builtin that does not call it (`str`,
//!   `isinstance`, `callable`), directly or through the one name it is bound
//!   to in a function (`value = getattr(args, key)` with `value` only ever
//!   compared): it calls nothing.
//!
//! Anything else (called, returned, stored, handed to another function)
//! keeps every finding it may reach as it is. What is not recognised as a
//! module (one passed in as a parameter, or imported over several lines)
//! is taken for an object: its methods and classes stay undecided, its
//! module-level functions do not.

use super::units::is_whole_word;

/// What the computed lookups of one text may find.
#[derive(Debug, Clone, Default)]
pub(super) struct Lookups {
    /// Any method or class of the project: a lookup on an object.
    pub(super) methods: bool,
    /// The modules looked up (the last part of each name, `datasets` for
    /// `getattr(D, name)` after `from pkg.data import datasets as D`), or
    /// [`ANY_MODULE`] for one a loader gives: their functions may be found,
    /// with those their files import ([`super::Callers::uncalled`]).
    pub(super) modules: Vec<String>,
    /// What the text's own file defines or imports (`globals()[name]`,
    /// `getattr(self, name)`); [`super::Callers::seen_in`] takes it before
    /// texts are added up, so [`Lookups::and`] has none to add.
    pub(super) own_file: bool,
    /// A method of a class the object's class derives from (`getattr(self, name)`):
    /// see [`Lookups::bases`].
    pub(super) inherited: bool,
    /// The names that the text's class statements derive from (with the
    /// names inside a list that a starred base names, `class A(*BASES)`,
    /// and the imported name behind an alias), read from every text: their
    /// methods are what a lookup on `self` in a derived class may find,
    /// however far down.
    pub(super) bases: Vec<String>,
    /// A class statement derives from something whose names cannot be read
    /// (a call, a starred name the text does not assign): a lookup on `self`
    /// anywhere may find any method.
    pub(super) unread_base: bool,
}

impl Lookups {
    /// Adds what another text's lookups may find.
    pub(super) fn and(&mut self, other: Lookups) {
        self.methods |= other.methods;
        self.modules.extend(other.modules);
        self.inherited |= other.inherited;
        self.unread_base |= other.unread_base;
        self.bases.extend(other.bases);
    }
}

/// Library modules whose attributes are none of the project's, unless the
/// project is that library itself (`is_project`).
#[rustfmt::skip]
const LIBRARIES: &[&str] = &[
    "PIL", "builtins", "collections", "copy", "cv2", "functools", "inspect", "itertools", "logging", "math",
    "numpy", "operator", "os", "random", "re", "scipy", "string", "sys", "timm", "torch", "torch_npu",
    "torchaudio", "torchvision", "transformers", "types", "typing",
];

/// Builtins whose attributes are none of the project's, unless the text binds the name.
const BUILTIN_OBJECTS: &[&str] = &["object", "type", "int", "float", "str", "dict", "list", "tuple", "set"];

/// Calls that give a module by a name computed at run time.
const LOADERS: [&str; 4] = ["importlib.import_module(", "import_module(", "__import__(", "sys.modules["];

/// A module that cannot be named: what a loader gives (`importlib.import_module(name)`).
pub(super) const ANY_MODULE: &str = "*";

/// How many lookups of one text are read ([`lookups_in`]); each may cost a
/// pass over the text, so past this many, anything counts as found.
const MAX_LOOKUPS: usize = 200;

/// Callables that take a value without calling it (they may call its
/// special methods, `__str__` or `__len__`, which are never candidates).
const READERS: &[&str] =
    &["str", "repr", "callable", "isinstance", "issubclass", "type", "print", "len", "bool", "id", "hasattr", "format"];

/// A text and its one-line import statements (each without indentation
/// or comment), read once for all its lookups, and only if one needs them.
struct Source<'t> {
    text: &'t str,
    imports: std::cell::OnceCell<Vec<&'t str>>,
}

impl<'t> Source<'t> {
    fn imports(&self) -> &[&'t str] {
        self.imports.get_or_init(|| import_statements(self.text))
    }
}

/// The lines of `text` that are import statements, without indentation or
/// comment. Only lines holding `import ` are looked at: no other one
/// binds a name, and every `*` import holds it.
fn import_statements(text: &str) -> Vec<&str> {
    let mut statements = Vec::new();
    let mut previous = None;
    for (at, _) in text.match_indices("import ") {
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        if previous.replace(start) == Some(start) {
            continue;
        }
        let line = &text[start..text[at..].find('\n').map_or(text.len(), |i| at + i)];
        // A `\r` before the `\n` goes with the trailing space.
        let statement = line.trim_start().split('#').next().unwrap_or("").trim_end();
        if statement.starts_with("import ") || statement.starts_with("from ") {
            statements.push(statement);
        }
    }
    statements
}

/// What the computed lookups of `text` may find. `is_project(root)` says
/// whether a top-level module name is one of the project's own.
pub(super) fn lookups_in(text: &str, is_project: &dyn Fn(&str) -> bool) -> Lookups {
    let source = Source { text, imports: std::cell::OnceCell::new() };
    let mut found = Lookups::default();
    let mut read = 0;
    let any_found = |found: &mut Lookups| {
        (found.methods, found.own_file, found.inherited) = (true, true, true);
        found.modules.push(ANY_MODULE.to_string());
    };
    for (at, call) in text.match_indices("getattr(") {
        let args_at = at + call.len();
        if !is_whole_word(text, at, at + "getattr".len()) {
            continue;
        }
        read += 1;
        if read > MAX_LOOKUPS {
            any_found(&mut found);
            break;
        }
        match two_arguments(text, args_at) {
            Some((_, name, _)) if starts_string_literal(name) => {}
            Some((object, _, end)) => look_up(&mut found, &source, object, (at, end), is_project),
            // `getattr(*spec)`, or brackets and quotes that cannot be read.
            None => found.methods = true,
        }
    }
    for open in ["globals()[", "locals()["] {
        for (at, _) in text.match_indices(open) {
            let subscript = &text[at + open.len()..];
            if is_whole_word(text, at, at + open.find('(').unwrap_or(0)) && !starts_string_literal(subscript) {
                found.own_file = true;
                // `from models import *` puts every name of `models` in `globals()`.
                if source.imports().iter().any(|l| l.ends_with("import *")) {
                    found.modules.push(ANY_MODULE.to_string());
                }
            }
        }
    }
    for (at, open) in text.match_indices(".__dict__[") {
        let object = object_before(text, at);
        let subscript = at + open.len();
        // An instance's own dictionary holds what was assigned to it, not its class's methods.
        if object == "self" || starts_string_literal(&text[subscript..]) {
            continue;
        }
        read += 1;
        match closing_bracket(text, subscript) {
            _ if read > MAX_LOOKUPS => any_found(&mut found),
            // `import_module(m).__dict__[k]`: a module that cannot be named.
            _ if object.is_empty() => any_found(&mut found),
            Some(end) => look_up(&mut found, &source, object, (at - object.len(), end), is_project),
            None => {
                found.methods = true;
                found.modules.extend(module_named(&source, object));
            }
        }
    }
    if text.contains("class ") {
        read_bases(&source, &mut found);
    }
    found
}

/// Records what a computed lookup on `object`, written at `call` (its
/// start and end in `text`), may find.
fn look_up(
    found: &mut Lookups,
    source: &Source,
    object: &str,
    call: (usize, usize),
    is_project: &dyn Fn(&str) -> bool,
) {
    let text = source.text;
    let root = object.split('.').next().unwrap_or(object);
    let on_library = is_dotted(object) && is_library(source, root, is_project);
    let in_method = || {
        enclosing_function(text, crate::source::line_start_at(text, call.0))
            .is_some_and(|(start, _)| text[start..].starts_with([' ', '\t']))
    };
    if on_library || read_as_value(text, call.0, call.1, true) {
        // Nothing of the project, or nothing called.
    } else if (object == "self" || object == "cls") && in_method() {
        found.own_file = true;
        found.inherited = true;
    } else {
        match module_named(source, object) {
            // A module of the project holds functions and classes, not methods.
            Some(module) if module != ANY_MODULE && is_project(&module) => found.modules.push(module),
            module => {
                found.methods = true;
                found.modules.extend(module);
            }
        }
    }
}

/// Whether `name` is a dotted name (`models`, `torch.nn`), not a call or a subscript.
fn is_dotted(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

/// The first two arguments of the call whose arguments start at `at`
/// (trimmed), and where the call ends (after its `)`).
fn two_arguments(text: &str, at: usize) -> Option<(&str, &str, usize)> {
    let (mut depth, mut quote, mut comma) = (0usize, None::<char>, None);
    for (i, c) in text[at..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') if depth == 0 => {
                let comma = comma?;
                let object = text[at..at + comma].trim();
                return Some((object, text[at + comma + 1..at + i].trim_start(), at + i + 1));
            }
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 && comma.is_none() => comma = Some(i),
            _ => {}
        }
    }
    None
}

/// Where the bracket opened just before `at` closes (after its `]`), on its line.
fn closing_bracket(text: &str, at: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[at..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 0 => return Some(at + i + 1),
            ']' => depth -= 1,
            '\n' => return None,
            _ => {}
        }
    }
    None
}

/// The dotted name that ends at `end` of `text` (`models` in `models.__dict__[`).
fn object_before(text: &str, end: usize) -> &str {
    let start = text[..end].trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '.').len();
    &text[start..end]
}

/// Whether `text` starts with a string literal, prefixes (`f`, `rb`) included.
fn starts_string_literal(text: &str) -> bool {
    let rest = text.trim_start_matches(['r', 'b', 'f', 'u', 'R', 'B', 'F', 'U']);
    text.len() - rest.len() <= 2 && rest.starts_with(['"', '\''])
}

/// Whether `root` names a library module that the text imports (and the
/// project is not), or a builtin the text does not bind.
fn is_library(source: &Source, root: &str, is_project: &dyn Fn(&str) -> bool) -> bool {
    if BUILTIN_OBJECTS.contains(&root) {
        return !binds(source.text, root);
    }
    imported_as(source, root).is_some_and(|module| {
        let top = module.split('.').next().unwrap_or(&module);
        LIBRARIES.contains(&top) && !is_project(top)
    })
}

/// The module `object` may be, by the last part of its name: [`ANY_MODULE`]
/// for what a loader gives (`importlib.import_module(...)`, `__import__(...)`,
/// `sys.modules[...]`, or a name assigned one of them); for a dotted name
/// whose first part an import statement binds (relative ones too), its own
/// last part, or that of the module the import names (`models` for `M`
/// after `from . import models as M`). None when it is not known to be a
/// module: a call's result (`MetadataCatalog.get(d)`), a name no one-line
/// import binds.
fn module_named(source: &Source, object: &str) -> Option<String> {
    if LOADERS.iter().any(|l| object.starts_with(l)) {
        return Some(ANY_MODULE.to_string());
    }
    if !is_dotted(object) {
        return None;
    }
    let text = source.text;
    let (name, attribute) = object.split_once('.').map_or((object, None), |(n, rest)| (n, Some(rest)));
    let loaded = text.match_indices(name).any(|(at, _)| {
        let rest = text[at + name.len()..].trim_start_matches([' ', '\t']);
        let value = rest.strip_prefix('=').filter(|v| !v.starts_with('=')).map(str::trim_start);
        is_whole_word(text, at, at + name.len()) && value.is_some_and(|v| LOADERS.iter().any(|l| v.starts_with(l)))
    });
    if loaded {
        return Some(ANY_MODULE.to_string());
    }
    let imported = imported_as(source, name)?;
    let last = attribute.unwrap_or(&imported).rsplit('.').next().unwrap_or(name);
    Some(last.to_string())
}

/// The dotted name that an import statement of the text binds to `name`:
/// `pkg.models` for `from pkg import models` or `import pkg.models as
/// name`, `pkg` for `import pkg.models` (which binds `pkg`), `.models` for
/// `from . import models`.
fn imported_as(source: &Source, name: &str) -> Option<String> {
    source.imports().iter().find_map(|line| {
        let (from, names) = match line.split_once(" import ") {
            Some((from, names)) => (Some(from.strip_prefix("from")?.trim()), names),
            None => (None, line.strip_prefix("import ")?),
        };
        names.split(',').find_map(|part| {
            let part = part.trim_matches(['(', ')', ' ', '\\']);
            let (module, alias) = part.split_once(" as ").map_or((part, None), |(m, a)| (m.trim(), Some(a.trim())));
            let binds = alias.unwrap_or_else(|| module.split('.').next().unwrap_or(module));
            let named = match (from, alias) {
                (Some(from), _) if from.ends_with('.') => format!("{from}{module}"),
                (Some(from), _) => format!("{from}.{module}"),
                (None, Some(_)) => module.to_string(),
                (None, None) => binds.to_string(),
            };
            (binds == name).then_some(named)
        })
    })
}

/// Whether `text` may bind `name` itself: an assignment, a parameter (of a
/// `def`, or on a line with a `lambda`), a loop or `with` target, an import
/// or a `def`/`class` of that name.
fn binds(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let end = at + name.len();
        if !is_whole_word(text, at, end) {
            return false;
        }
        let before = text[..at].trim_end();
        let after = text[end..].trim_start_matches([' ', '\t']);
        let assigned = after.starts_with('=') && !after.starts_with("==");
        let in_def = || enclosing_call(text, at).is_some_and(|(_, s)| text[..s].trim_end().ends_with("def"));
        let in_lambda = || text[crate::source::line_start_at(text, at)..at].contains("lambda");
        let listed = before.ends_with(['(', ',', '*']) && after.starts_with([',', ')', ':', '=']);
        let keyword = ["as", "for", "def", "class", "import", "global", "nonlocal", "lambda"]
            .iter()
            .any(|k| before.strip_suffix(k).is_some_and(|b| b.is_empty() || b.ends_with([' ', '\t', '\n', ','])));
        assigned || listed && (in_def() || in_lambda()) || keyword
    })
}

/// At most this many bytes of a line before an expression are read.
const BEFORE_LIMIT: usize = 200;

/// Whether the expression at `start..end` of `text` is only read as a
/// value: compared, tested, formatted in an f-string, or handed to one of
/// [`READERS`]; or, when `follow` and it is bound to a name in a function
/// (`value = getattr(...)`), every use of that name in the function is.
fn read_as_value(text: &str, start: usize, end: usize, follow: bool) -> bool {
    let after = text[end..].trim_start_matches([' ', '\t']);
    if after.starts_with(['(', '.', '[']) {
        return false;
    }
    let line_start = crate::source::line_start_at(text, start);
    let mut from = line_start.max(start.saturating_sub(BEFORE_LIMIT));
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let before = text[from..start].trim();
    let spaced = format!(" {before}");
    // `for f in getattr(...)` runs over what it finds, which may hold functions.
    let iterated = before.starts_with("for ") || before.contains(" for ");
    let compared = !iterated
        && ["==", "!=", "<", ">", "<=", ">=", " is", " in", " not"].iter().any(|op| spaced.ends_with(op))
        || ["==", "!=", "<", ">", "is ", "in ", "not in "].iter().any(|op| after.starts_with(op));
    let tested = ["if", "elif", "while", "assert", "if not", "elif not", "while not", "assert not"].contains(&before)
        && after.starts_with([':', ',']);
    // `{value}` in an f-string, not a set or a dictionary's key.
    let in_f_string = before.contains("f\"") || before.contains("f'");
    let formatted = in_f_string && before.ends_with('{') && after.starts_with(['}', '!', ':']);
    // An argument may be the last of its line (`.format(\n    a, value\n)`).
    let handed = (before.ends_with('(') || before.ends_with(',') || before.is_empty())
        && text[end..].trim_start().starts_with([',', ')'])
        // A builtin, or a string's `format` (`"{}".format(value)`, whose callee reads `.format`).
        && enclosing_call(text, start).is_some_and(|(callee, _)| READERS.contains(&callee) || callee == ".format");
    compared || tested || formatted || handed || follow && bound_name_read_as_value(text, before, after, line_start)
}

/// For a lookup written as `name = getattr(...)` on a line of its own in a
/// function, whether every use of `name` in that function is read as a
/// value. At the module's level (where other files may import the name) none is.
fn bound_name_read_as_value(text: &str, before: &str, after: &str, line_start: usize) -> bool {
    let Some(name) = before.strip_suffix('=').map(str::trim_end) else { return false };
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !is_name || !(after.is_empty() || after.starts_with(['\n', '\r', '#'])) {
        return false;
    }
    let Some((from, to)) = enclosing_function(text, line_start) else { return false };
    let assigned_at = line_start + text[line_start..].find(name).unwrap_or(0);
    text[from..to].match_indices(name).all(|(at, _)| {
        let (at, end) = (from + at, from + at + name.len());
        let rest = text[end..].trim_start_matches([' ', '\t']);
        let rebound = rest.starts_with('=') && !rest.starts_with("==");
        at == assigned_at || !is_whole_word(text, at, end) || rebound || read_as_value(text, at, end, false)
    })
}

/// The byte range of the innermost `def` whose body holds the line that
/// starts at `line_start`, read from indentation: from the `def` (found up
/// from the line) to the next `def`, `class` or decorator at its level or
/// above that is not inside a triple-quoted string. None at the module's level.
fn enclosing_function(text: &str, line_start: usize) -> Option<(usize, usize)> {
    let indent = |line: &str| line.len() - line.trim_start_matches([' ', '\t']).len();
    let is_def = |code: &str| code.starts_with("def ") || code.starts_with("async def ");
    let mut floor = indent(&text[line_start..]);
    let mut def = None;
    let mut next = line_start;
    while next > 0 && def.is_none() && floor > 0 {
        let start = text[..next - 1].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[start..next];
        let code = line.trim_start_matches([' ', '\t']);
        // A closing bracket ends a header or a call over several lines (`) -> dict:`): no block.
        let continued = code.starts_with([')', ']', '}']);
        if !code.trim().is_empty() && !code.starts_with('#') && !continued && indent(line) < floor {
            floor = indent(line);
            def = is_def(code).then_some((start, floor));
        }
        next = start;
    }
    let (start, depth) = def?;
    let mut end = line_start;
    let mut in_string = false;
    for line in text[line_start..].split_inclusive('\n') {
        let code = line.trim_start_matches([' ', '\t']);
        let definition = is_def(code) || code.starts_with("class ") || code.starts_with('@');
        if !in_string && definition && indent(line) <= depth {
            break;
        }
        let quotes = line.matches("\"\"\"").count() + line.matches("\'\'\'").count();
        in_string ^= quotes % 2 == 1;
        end += line.len();
    }
    Some((start, end))
}

/// The callee of the innermost call whose parentheses hold `at`, read back
/// over at most 600 characters, and where it starts: `str` in
/// `str(getattr(...))`, `.format` in `"{}".format(value)`, `get` in `def
/// get(object)`. None when the innermost bracket is no call's, or none is found.
fn enclosing_call(text: &str, at: usize) -> Option<(&str, usize)> {
    let window = text[..at].char_indices().rev().take(600);
    let mut depth = 0usize;
    for (i, c) in window {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' if depth > 0 => depth -= 1,
            '(' => {
                let callee = object_before(text, i);
                return (!callee.is_empty()).then_some((callee, i - callee.len()));
            }
            '[' | '{' => return None,
            _ => {}
        }
    }
    None
}

/// Reads the bases of the class statements of the text into `found`; a
/// base imported under another name adds the name it is imported by too.
fn read_bases(source: &Source, found: &mut Lookups) {
    let text = source.text;
    for line in crate::source::python_lines(text) {
        let Some(rest) = line.trim_start().strip_prefix("class ") else { continue };
        let Some((_, bases)) = rest.split_once('(') else { continue };
        let Some((bases, _)) = bases.rsplit_once(')') else {
            // Bases over several lines.
            found.unread_base = true;
            continue;
        };
        for base in bases.split(',').map(str::trim).filter(|b| !b.is_empty() && !b.contains('=')) {
            if let Some(list) = base.strip_prefix('*').filter(|l| is_dotted(l)) {
                match assigned_list(text, list) {
                    Some(names) => found.bases.extend(names),
                    None => found.unread_base = true,
                }
            } else if is_dotted(base) {
                let last = |name: &str| name.rsplit('.').next().unwrap_or(name).to_string();
                found.bases.push(last(base));
                found.bases.extend(imported_as(source, base).map(|name| last(&name)));
            } else {
                found.unread_base = true;
            }
        }
    }
}

/// The names inside the list or tuple that `text` assigns to `name` at its
/// margin (`BASES = [A, B]`), if it does.
fn assigned_list(text: &str, name: &str) -> Option<Vec<String>> {
    let at = text.match_indices(name).find(|&(at, _)| {
        crate::source::line_start_at(text, at) == at
            && text[at + name.len()..]
                .trim_start()
                .strip_prefix('=')
                .is_some_and(|r| r.trim_start().starts_with(['[', '(']))
    })?;
    let value = text[at.0 + name.len()..].trim_start()[1..].trim_start();
    let close = value.find([']', ')'])?;
    let words = value[..close].split(|c: char| !(c.is_alphanumeric() || c == '_'));
    Some(words.filter(|w| !w.is_empty()).map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookups(text: &str) -> Lookups {
        lookups_in(text, &|root| root == "mypkg")
    }

    #[test]
    fn import_statements_are_the_lines_that_import() {
        let text = "import os, sys  # tools\r\n    from a.b import c as d\nx = 'import y'\nfrom . import (e,\n  f)\n\
                    from g import*\nfrom h import *\n# import z\nimport i; import j\nfrom k import(l)";
        assert_eq!(
            import_statements(text),
            ["import os, sys", "from a.b import c as d", "from . import (e,", "from h import *", "import i; import j"]
        );
    }

    #[test]
    fn a_lookup_whose_result_may_be_called_finds_any_method_and_on_a_module_any_function() {
        for text in [
            "getattr(logger, args.action)()\n",
            "fn = getattr(self.meters[k], name, None)\nfn()\n",
            "return getattr(model, name)\n",
            "register(getattr(ops, cfg.op))\n",
            "op = getattr(ops, cfg.op)\nresult = run(op)\n",
            "x = getattr(m, n) or default\n",
            "getattr(mypkg, name)\n",
            "import mypkg.models as torch\nf = getattr(torch, name)\nf()\n",
            "cls = models.__dict__[args.arch]\nnet = cls()\n",
            "getattr(a, n).apply(x)\n",
        ] {
            assert!(lookups(text).methods, "{text}");
        }
        let on_module = |text: &str| lookups(text).modules;
        assert_eq!(on_module("from . import models\nnet = getattr(models, args.arch)()\n"), ["models"]);
        assert_eq!(on_module("import mypkg.ops as O\nf = O.__dict__[name]\nf()\n"), ["ops"]);
        let as_d = "from pkg.data import datasets as D\nfactory = getattr(D, data['factory'])\nd = factory()\n";
        assert_eq!(on_module(as_d), ["datasets"]);
        assert_eq!(on_module("import pkg.ops\nf = getattr(pkg.ops.nms, name)\nf()\n"), ["nms"]);
        assert_eq!(on_module("m = importlib.import_module(path)\nfn = getattr(m, name)\nfn()\n"), ["*"]);
        assert_eq!(on_module("return getattr(importlib.import_module(m), cls)\n"), ["*"]);
        assert!(on_module("fn = getattr(self.meters[k], name, None)\nfn()\n").is_empty(), "an object's attribute");
        assert!(on_module("module = load(path)\nreturn getattr(module, name)\n").is_empty(), "no import binds it");
        assert!(on_module("from data import Catalog\nreturn getattr(Catalog.get(d), key)\n").is_empty(), "a call");
    }

    #[test]
    fn a_lookup_read_as_a_value_or_on_a_library_finds_nothing_of_the_project() {
        for text in [
            "if getattr(args, key) is None:\n    pass\n",
            "return callable(getattr(o, name, None))\n",
            "writer.add_text(arg_name, str(getattr(neox_args, arg_name)))\n",
            "def f(args, k, v):\n    value = getattr(args, k)\n    assert v == value, \"differs: {}\".format(value)\n\
             \x20   print(str(value))\n",
            "def f(args, k):\n    value = getattr(args, k)\n    if value:\n        pass\n    log(f\"{value}\")\n",
            "def f(args, k):\n    value = getattr(args, k)\n    message = \"{} differs\".format(\n        k, value\n    )\n",
            "import torch.nn as nn\nact = getattr(nn, cfg.act)()\n",
            "import torch.nn.functional as F\nreturn getattr(F, name)(x)\n",
            "from torchvision import models\nnet = models.__dict__[args.arch]()\n",
            "def __getattr__(self, attr):\n    return self.__dict__[attr]\n",
            "def get(obj: object, name: str):\n    return getattr(object, name)\n",
            "getattr(m, 'update')()\n",
            "getattr(m, f\"update_{k}\")\n",
        ] {
            let found = lookups(text);
            assert!(!found.methods && found.modules.is_empty() && !found.own_file, "{text}: {found:?}");
        }
        // A name bound to the builtin's name is no builtin.
        assert!(lookups("def get(object, name):\n    return getattr(object, name)\n").methods);
        // The module itself, a call rooted at a library, a set, a module-level name.
        assert!(lookups("import sys\nm = getattr(sys.modules[__name__], cfg.name)(cfg)\n").modules == ["*"]);
        assert!(lookups("import copy\ngetattr(copy.deepcopy(model), m)()\n").methods);
        assert!(lookups("hooks = {getattr(mod, n)}\nfor h in hooks:\n    h()\n").methods);
        assert!(lookups("import losses\nLOSS = getattr(losses, os.environ['LOSS'])\n").modules == ["losses"]);
        // In a method whose header runs over several lines, `self` is still the file's.
        let header = "class A:\n    def f(\n        self, k\n    ) -> dict:\n        return getattr(self, k)()\n";
        assert!(lookups(header).own_file && !lookups(header).methods);
        // `self` outside a class's method is any object.
        assert!(lookups("def call(cls, name):\n    return getattr(cls, name)()\n").methods);
        // Iterated over, or handed to a method that happens to be named like a builtin.
        assert!(lookups("for hook in getattr(self.cfg, name):\n    hook()\n").methods);
        assert!(lookups("self.format(getattr(m, name))\n").methods);
        // A name used otherwise than as a value: passed on.
        assert!(lookups("value = getattr(self.cfg, k)\nargs.extend(convert(k, value))\n").methods);
        // Only its own function's uses count.
        let other_function = "def a(cfg, k):\n    value = getattr(cfg, k)\n    return value is None\n\n\
                              def b(value):\n    return run(value)\n";
        assert!(!lookups(other_function).methods);
        let same_function = other_function.replace("return value is None", "return run(value)");
        assert!(lookups(&same_function).methods);
        let in_method =
            "class A:\n    def a(self, k):\n        for x in k:\n            value = getattr(self.cfg, x)\n\
                         \x20           s = \"\"\"\ntext at the margin\n\"\"\"\n            run(value)\n";
        assert!(lookups(in_method).methods, "a string's line at the margin does not end the method");
        assert!(!lookups(&in_method.replace("run(value)", "print(value)")).methods);
    }

    #[test]
    fn lines_that_only_look_like_imports_are_read_without_a_panic() {
        for text in [
            "\"\"\"Model zoo.\nfrom \u{201c}Deep Residual Learning\u{201d}\n\"\"\"\ndef build(model, name):\n    return getattr(model, name)()\n",
            "from \r\nimport\nfrom x import\ndef f(m, n):\n    return getattr(m, n)()\n",
            "getattr(",
            ".__dict__[",
            "x = y.__dict__[k",
        ] {
            let _ = lookups(text);
        }
    }

    #[test]
    fn lookups_on_the_file_itself_find_its_own_definitions_and_inherited_methods() {
        let text = "BASES = [Parallelism, Model]\n\nclass Args(*BASES):\n    def check(self, k):\n        \
                    x = getattr(self, k)\n        return x\n\nclass Head(base.Block, nn.Module):\n    pass\n";
        let found = lookups(text);
        assert!(found.own_file && found.inherited && !found.methods && !found.unread_base, "{found:?}");
        assert_eq!(found.bases, ["Parallelism", "Model", "Block", "Module"]);
        let unread = lookups("class A(make_base()):\n    def f(self, k):\n        getattr(self, k)()\n");
        assert!(unread.unread_base);
        let namespace = lookups("def build(name):\n    return globals()[name]()\n");
        assert!(namespace.own_file && !namespace.inherited && !namespace.methods && namespace.modules.is_empty());
        let star = lookups("from models import *\n\ndef build(name):\n    return globals()[name]()\n");
        assert_eq!(star.modules, ["*"], "a star import puts another module's names in globals()");
        let aliased = lookups("from .meters import AverageMeter as Meter\n\nclass Tracker(Meter):\n    pass\n");
        assert_eq!(aliased.bases, ["Meter", "AverageMeter"]);
    }
}
