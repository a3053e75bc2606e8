//! The whole table of options that a Python script's `argparse` parser
//! accepts, when the script's own text settles it. A launch line that passes
//! an option outside the table stops at argparse's usage error: it starts no
//! run ([`crate::project::ignored_launches`]).
//!
//! The table is known only when every parser the script parses with is built
//! in the file, `argparse.ArgumentParser(...)` without `parents=` or other
//! prefix characters, and every option is added there by an
//! `add_argument` call whose option strings are literals (also through
//! `add_argument_group` and `add_mutually_exclusive_group`). Anything that
//! may accept more leaves it unknown: `parse_known_args` (it keeps what it
//! does not know), subcommands, `nargs=REMAINDER`, a parser handed to other
//! code (`add_model_args(parser)`, `return parser`) or built by it, a
//! subclass of `ArgumentParser` (it may override `error`), code that edits
//! `sys.argv`, or a file tree-sitter does not parse cleanly.

use super::values::{plain_string, text};
use crate::parse::{parse_python, Field, FieldOf, KindOf};
use std::collections::{BTreeSet, HashMap};
use tree_sitter::Node;

/// The option strings a script's parsers accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OptionTable {
    /// Every option string (`--batch-size`, `-b`), with argparse's own `-h` and `--help`.
    flags: BTreeSet<String>,
    /// argparse accepts a prefix of a long option (`--batch` for
    /// `--batch-size`): no parser says `allow_abbrev=False`.
    abbreviations: bool,
}

impl OptionTable {
    /// The first option among `words` (a command line after the script)
    /// that the parser rejects, as written before any `=value`. Words that
    /// may not be options when the shell runs them (a variable, a glob, a
    /// word with spaces, which argparse takes as positional) count as accepted.
    pub(crate) fn rejected<'w>(&self, words: impl IntoIterator<Item = &'w str>) -> Option<&'w str> {
        for word in words {
            if word == "--" {
                // Everything after it is positional.
                return None;
            }
            let flag = word.split_once('=').map_or(word, |(flag, _)| flag);
            let plain = flag.len() > 1
                && flag.starts_with('-')
                && flag.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
            if plain && flag.parse::<f64>().is_err() && !word.contains(char::is_whitespace) && !self.accepts(flag) {
                return Some(flag);
            }
        }
        None
    }

    /// Whether the parser takes `flag` as one of its options: exactly, as
    /// a prefix of one (when abbreviations are allowed; an ambiguous prefix
    /// counts too), or, for a single dash, as a short option with its value
    /// or others attached (`-n8`, `-av`).
    fn accepts(&self, flag: &str) -> bool {
        let prefix = self.abbreviations && self.flags.iter().any(|f| f.starts_with(flag));
        let short = !flag.starts_with("--") && flag.get(..2).is_some_and(|s| self.flags.contains(s));
        self.flags.contains(flag) || prefix || short
    }
}

/// The table of the Python script with text `src`, if its text settles it
/// (see the module docs).
pub(crate) fn of_script(src: &str) -> Option<OptionTable> {
    let uses_argparse = src.contains("import argparse") || src.contains("from argparse import");
    let may_accept_more = ["parse_known_args", "parse_known_intermixed_args", "add_subparsers", "REMAINDER", "'...'"]
        .iter()
        .any(|s| src.contains(s))
        || src.contains("\"...\"");
    if !uses_argparse || may_accept_more || !src.contains("parse_args(") || edits_argv(src) || subclasses(src) {
        return None;
    }
    let tree = parse_python(src)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut reading = Reading::default();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        reading.visit(node, src)?;
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    reading.table(root, src)
}

/// Whether some line uses `sys.argv` other than to hand it to `parse_args`.
fn edits_argv(src: &str) -> bool {
    crate::source::python_lines(src).any(|l| l.contains("sys.argv") && !l.contains("parse_args("))
}

/// Whether the file defines a class on `ArgumentParser`.
fn subclasses(src: &str) -> bool {
    crate::source::python_lines(src).any(|l| l.trim_start().starts_with("class ") && l.contains("ArgumentParser"))
}

/// What [`of_script`] gathers in one walk of the tree.
#[derive(Default)]
struct Reading<'t> {
    /// Names bound to parsers the file builds (`parser`, `self.parser`).
    parsers: BTreeSet<&'t str>,
    /// Names bound to argument groups, with the name of what they were made from.
    groups: HashMap<&'t str, &'t str>,
    /// Names assigned anything else.
    other_assigned: BTreeSet<&'t str>,
    /// What `add_argument` and `parse_args` are called on, as written.
    receivers: Vec<Node<'t>>,
    flags: BTreeSet<String>,
    /// Some parser says `allow_abbrev=False`.
    no_abbreviations: bool,
}

/// Methods that make a group of a parser: its options are the parser's.
const GROUP_MAKERS: &[&str] = &["add_argument_group", "add_mutually_exclusive_group"];

impl<'t> Reading<'t> {
    /// Reads `node`; `None` when it makes the table unknown.
    fn visit(&mut self, node: Node<'t>, src: &'t str) -> Option<()> {
        match node.kind_name() {
            "assignment" => {
                let (left, right) = (node.field(Field::Left)?, node.field(Field::Right));
                let name = text(left, src);
                match right.filter(|r| r.kind_name() == "call") {
                    Some(call) if is_constructor(call, src) => {
                        self.no_abbreviations |= constructor_forbids_abbreviations(call, src)?;
                        self.parsers.insert(name);
                    }
                    Some(call) if method_of(call, src).is_some_and(|m| GROUP_MAKERS.contains(&m)) => {
                        let object = call.field(Field::Function)?.field(Field::Object)?;
                        self.groups.insert(name, text(object, src));
                    }
                    _ => {
                        self.other_assigned.insert(name);
                    }
                }
            }
            "call" => match method_of(node, src) {
                Some("add_argument") => {
                    self.receivers.push(node.field(Field::Function)?.field(Field::Object)?);
                    self.flags.extend(option_strings(node, src)?);
                }
                Some("parse_args" | "parse_intermixed_args") => {
                    self.receivers.push(node.field(Field::Function)?.field(Field::Object)?);
                }
                _ if is_constructor(node, src) && !is_assigned(node) => {
                    // `argparse.ArgumentParser(...).parse_args()` or one handed on: not followed.
                    return None;
                }
                _ => {}
            },
            _ => {}
        }
        Some(())
    }

    /// The table, once every node is read: `None` unless each receiver is
    /// a parser built here or a group made of one, no name of those is
    /// bound to anything else or used other than to call its methods, and
    /// some parser parses the command line.
    fn table(self, root: Node<'t>, src: &'t str) -> Option<OptionTable> {
        let names: BTreeSet<&str> = self.parsers.iter().chain(self.groups.keys()).copied().collect();
        if names.iter().any(|n| self.other_assigned.contains(n)) || self.parsers.is_empty() {
            return None;
        }
        let resolves = |mut name: &'t str| {
            // A group of a group is a group of the parser; a loop of groups is nothing.
            for _ in 0..=self.groups.len() {
                if self.parsers.contains(name) {
                    return true;
                }
                match self.groups.get(name) {
                    Some(of) => name = of,
                    None => return false,
                }
            }
            false
        };
        let resolved = |r: &Node| match r.kind_name() {
            // `parser.add_argument_group("x").add_argument(...)`.
            "call" => {
                method_of(*r, src).is_some_and(|m| GROUP_MAKERS.contains(&m))
                    && r.field(Field::Function)
                        .and_then(|f| f.field(Field::Object))
                        .is_some_and(|o| resolves(text(o, src)))
            }
            _ => resolves(text(*r, src)),
        };
        if !self.receivers.iter().all(resolved) || !only_methods_called(root, src, &names) {
            return None;
        }
        let mut flags = self.flags;
        flags.extend(["-h".to_string(), "--help".to_string()]);
        Some(OptionTable { flags, abbreviations: !self.no_abbreviations })
    }
}

/// Whether each use of the `names` (parsers and groups) in the tree at
/// `root` is an assignment to it or a method call on it: not an argument,
/// a return value or an alias, where other code may add options.
fn only_methods_called(root: Node, src: &str, names: &BTreeSet<&str>) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if matches!(node.kind_name(), "identifier" | "attribute") && names.contains(text(node, src)) {
            let parent = node.parent();
            let object = parent.is_some_and(|p| p.kind_name() == "attribute" && p.field(Field::Object) == Some(node));
            let target = parent.is_some_and(|p| p.kind_name() == "assignment" && p.field(Field::Left) == Some(node));
            if !(object || target) {
                return false;
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    true
}

/// The method a call calls (`add_argument` of `parser.add_argument(...)`).
fn method_of<'s>(call: Node, src: &'s str) -> Option<&'s str> {
    let function = call.field(Field::Function).filter(|f| f.kind_name() == "attribute")?;
    Some(text(function.field(Field::Attribute)?, src))
}

/// Whether `call` builds an `argparse.ArgumentParser`.
fn is_constructor(call: Node, src: &str) -> bool {
    call.field(Field::Function).is_some_and(|f| matches!(text(f, src), "argparse.ArgumentParser" | "ArgumentParser"))
}

/// Whether `call` is the value of an assignment.
fn is_assigned(call: Node) -> bool {
    call.parent().is_some_and(|p| p.kind_name() == "assignment" && p.field(Field::Right) == Some(call))
}

/// Whether a parser's constructor `call` turns abbreviations off; `None`
/// when it takes options from elsewhere (`parents=`, other prefix
/// characters, `**kwargs`) or says it in a way not read.
fn constructor_forbids_abbreviations(call: Node, src: &str) -> Option<bool> {
    let args = call.field(Field::Arguments)?;
    let mut cursor = args.walk();
    let mut forbids = false;
    for arg in args.named_children(&mut cursor) {
        match arg.kind_name() {
            "keyword_argument" => match text(arg.field(Field::Name)?, src) {
                "parents" | "prefix_chars" => return None,
                "allow_abbrev" => match text(arg.field(Field::Value)?, src) {
                    "False" => forbids = true,
                    "True" => {}
                    _ => return None,
                },
                _ => {}
            },
            "list_splat" | "dictionary_splat" => return None,
            _ => {}
        }
    }
    Some(forbids)
}

/// The option strings of an `add_argument(...)` call (none for a
/// positional argument); `None` when they are not literals (`*flags`,
/// `**kwargs`, a name).
fn option_strings(call: Node, src: &str) -> Option<Vec<String>> {
    let args = call.field(Field::Arguments)?;
    let mut cursor = args.walk();
    let mut strings = Vec::new();
    for arg in args.named_children(&mut cursor) {
        match arg.kind_name() {
            "string" => strings.push(plain_string(arg, src)?),
            "keyword_argument" | "comment" => {}
            _ => return None,
        }
    }
    Some(strings.into_iter().filter(|s| s.starts_with('-')).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "import argparse\n\
        parser = argparse.ArgumentParser()\n\
        parser.add_argument('--batch-size', type=int)\n\
        parser.add_argument('-n', '--nodes', type=int)\n\
        parser.add_argument('data')\n\
        group = parser.add_argument_group('amp')\n\
        group.add_argument('--amp', action='store_true')\n\
        parser.add_mutually_exclusive_group().add_argument('--fp16')\n\
        opt = parser.parse_args()\n";

    fn rejected(src: &str, line: &str) -> Option<String> {
        of_script(src).expect("a known table").rejected(line.split(' ')).map(str::to_string)
    }

    #[test]
    fn a_known_table_rejects_what_argparse_rejects() {
        assert_eq!(rejected(SCRIPT, "d --accum 8"), Some("--accum".into()));
        assert_eq!(rejected(SCRIPT, "d --batch 8 --amp --fp16=1 -n8 -h"), None, "a prefix, a short option's value");
        assert_eq!(rejected(SCRIPT, "d --batch-size -1 -x"), Some("-x".into()));
        assert_eq!(rejected(SCRIPT, "d -- --accum"), None, "positional after --");
        assert_eq!(rejected(SCRIPT, "d --$OPT --accum=$X"), Some("--accum".into()));
        let strict = SCRIPT.replace("ArgumentParser()", "ArgumentParser(allow_abbrev=False)");
        assert_eq!(rejected(&strict, "--batch 8"), Some("--batch".into()));
    }

    #[test]
    fn a_table_others_may_add_to_is_not_known() {
        for change in [
            ("opt = parser.parse_args()", "opt, _ = parser.parse_known_args()"),
            ("opt = parser.parse_args()", "add_model_args(parser)\nopt = parser.parse_args()"),
            ("opt = parser.parse_args()", "opt = parser.parse_args()\nalias = parser"),
            ("argparse.ArgumentParser()", "argparse.ArgumentParser(parents=[base])"),
            ("argparse.ArgumentParser()", "get_parser()"),
            ("'--amp', action", "*AMP, action"),
            ("'data')", "'rest', nargs=argparse.REMAINDER)"),
            ("opt = parser.parse_args()", "sys.argv.append('--amp')\nopt = parser.parse_args()"),
            ("opt = parser.parse_args()", "sub = parser.add_subparsers()\nopt = parser.parse_args()"),
            ("import argparse\n", "import argparse\nclass P(argparse.ArgumentParser):\n    pass\n"),
            ("opt = parser.parse_args()", "opt = other.parse_args()"),
        ] {
            let src = SCRIPT.replace(change.0, change.1);
            assert_ne!(src, SCRIPT, "{change:?}");
            assert_eq!(of_script(&src), None, "{}", change.1);
        }
        assert_eq!(of_script("import argparse\np = argparse.ArgumentParser()\np.add_argument('--x')\n"), None);
    }
}
