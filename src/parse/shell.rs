//! Shell scripts as the analysis sees them, read from tree-sitter-bash's
//! tree: their comments, environment variables (assignments such as
//! `export X=v`, `X=v cmd`, `env X=v cmd`, and reads such as `$X`, `${X}`,
//! `${X:-d}`) and simple commands (`nvidia-smi -L`, `python -m
//! torch.distributed.launch ...`), wherever they stand: in pipelines,
//! `&&`/`||` lists, subshells, braces, functions, `if`/`case`/loops, command
//! substitutions, and in the script that `sh -c "..."` runs.
//!
//! What the parser cannot read (a syntax error, a token it had to assume)
//! is kept as [`Script::unreadable`]: a reader that must not miss anything
//! there treats it as unknown. Comments inside such a part are not taken as
//! comments, so that a name there still counts.

mod commands;

pub(crate) use commands::{split_words, unquoted, ShellCommand};

use commands::PlainRead;
use std::collections::HashMap;
use tree_sitter::{Node, Tree};

/// What a shell script says, read once.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Where its comments are.
    pub comments: Comments,
    /// Every assignment and read of a variable, in order.
    pub mentions: Vec<EnvMention>,
    /// Every simple command, in order (see [`ShellCommand`]).
    pub commands: Vec<ShellCommand>,
    /// Byte ranges the parser could not read (syntax errors, tokens it had
    /// to assume), in order; the whole text when it gave up.
    pub unreadable: Vec<(usize, usize)>,
    /// Variables that take values no assignment spells out (loop variables).
    varying: Vec<String>,
}

impl Script {
    /// The variables that loops set (`for d in a b`): they take several values.
    pub fn loop_variables(&self) -> impl Iterator<Item = &str> {
        self.varying.iter().map(String::as_str)
    }
}

/// Whether a comment of the shell text `text` may cover any byte from
/// `at` to `to` (excluded), found without parsing: a comment runs from a
/// `#` to the end of its line, so one can only if a `#` stands between
/// the start of `at`'s line and `to`. (In its error recovery tree-sitter-bash
/// may start a comment node earlier, with a `\` and whitespace, even on the
/// line before; no name stands there.)
pub(crate) fn comment_may_cover(text: &str, at: usize, to: usize) -> bool {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text.as_bytes()[line..to.min(text.len())].contains(&b'#')
}

/// Where a shell text's comments are (byte ranges, in order): those the
/// parser read, and apart from them those inside a part it could not read
/// (which may be text instead).
#[derive(Debug, Clone, Default)]
pub struct Comments {
    read: Vec<std::ops::Range<usize>>,
    unsure: Vec<std::ops::Range<usize>>,
}

impl Comments {
    /// Whether byte `at` is inside a comment the parser read.
    pub fn contain(&self, at: usize) -> bool {
        let after = self.read.partition_point(|r| r.start <= at);
        after > 0 && self.read[after - 1].contains(&at)
    }

    /// `text` with every comment the parser read blanked out (same length,
    /// so byte offsets stay valid).
    pub fn blank(&self, text: &str) -> String {
        let mut out = text.to_string().into_bytes();
        for r in &self.read {
            // A comment node ends before its newline; ASCII spaces keep the text UTF-8.
            if let Some(bytes) = out.get_mut(r.clone()) {
                bytes.fill(b' ');
            }
        }
        String::from_utf8(out).unwrap_or_else(|_| text.to_string())
    }

    /// The byte ranges of every comment, those in unreadable parts too
    /// (a suppression written there still counts), in order.
    pub fn ranges(&self) -> Vec<(usize, usize)> {
        let mut all: Vec<(usize, usize)> = self.read.iter().chain(&self.unsure).map(|r| (r.start, r.end)).collect();
        all.sort_unstable();
        all
    }
}

/// One mention of an environment variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvMention {
    /// The variable name.
    pub name: String,
    /// Byte range of the name.
    pub range: (usize, usize),
    /// The assigned value, for assignments (quotes removed).
    pub value: Option<String>,
    /// Byte range of the value as written, for assignments.
    pub value_range: Option<(usize, usize)>,
}

/// Scripts that `sh -c "..."` runs, nested deeper than this, are left as
/// text, like command substitutions nested deeper than this: real scripts
/// nest a few levels, and the limit keeps the reading shallow.
pub(crate) const MAX_NESTING: usize = 8;

/// `text`, a shell script run with no arguments, with its positional
/// parameters spelled out: `$1` to `$9`, `${1}` to `${9}`, `$@` and `$*`
/// are empty (`""` outside double quotes, so that `[[ $1 == x ]]` and
/// `for a in $*` stay sound), and `$#` is `0`. Single-quoted text, escaped
/// `\$` and other forms (`${1:-default}`) are left as they are.
pub(crate) fn without_positional_parameters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let parameter = (c == '$' && !single && !escaped).then(|| positional_parameter(rest, double)).flatten();
        if let Some((value, len)) = parameter {
            out.push_str(value);
            rest = &rest[len..];
            continue;
        }
        match c {
            '\\' if !single => escaped = !escaped,
            '\'' if !double && !escaped => single = !single,
            '"' if !single && !escaped => double = !double,
            _ => {}
        }
        if c != '\\' {
            escaped = false;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The positional parameter that `rest` starts with (`$1`, `${2}`, `$@`,
/// `$#`), as its value in a run without arguments, and its length.
fn positional_parameter(rest: &str, in_double_quotes: bool) -> Option<(&'static str, usize)> {
    let empty = if in_double_quotes { "" } else { "\"\"" };
    let forms = [("$#", "0"), ("${#}", "0"), ("$@", empty), ("$*", empty), ("${@}", empty), ("${*}", empty)];
    if let Some((form, value)) = forms.iter().find(|(form, _)| rest.starts_with(form)) {
        return Some((value, form.len()));
    }
    let digit = |at: usize| rest.as_bytes().get(at).is_some_and(|b| (b'1'..=b'9').contains(b));
    match (digit(1), rest.get(1..2) == Some("{") && digit(2) && rest.get(3..4) == Some("}")) {
        (true, _) => Some((empty, 2)),
        (_, true) => Some((empty, 4)),
        _ => None,
    }
}

/// Reads `text`, a shell script.
pub(crate) fn read(text: &str) -> Script {
    let mut script = Script::default();
    let mut reads = Vec::new();
    read_into(text, 0, 0, &mut script, &mut reads);
    script.comments.read.sort_by_key(|r| r.start);
    script.mentions.sort_by_key(|m| m.range);
    script.commands.sort_by_key(|c| c.range.0);
    // A read in `sh -c "...$X..."` is seen by the outer script and by the inner one.
    script.mentions.dedup();
    script.unreadable.sort_unstable();
    let values = literal_values(&script);
    commands::finish(text, &mut script.commands, &values, &reads);
    script
}

/// Reads `text`, found at byte `offset` of the script (the inside of a
/// `sh -c` string `nesting` levels deep), into `script`.
fn read_into(text: &str, offset: usize, nesting: usize, script: &mut Script, reads: &mut Vec<PlainRead>) {
    let Some(tree) = crate::parse::parse_bash(text) else {
        script.unreadable.push((offset, offset + text.len()));
        return;
    };
    // Read tidied only where that is what the parser stumbled on.
    let tidied = tree.root_node().has_error().then(|| tidy(text)).flatten().and_then(|t| {
        let tree = crate::parse::parse_bash(&t).filter(|tree| !tree.root_node().has_error())?;
        Some((t, tree))
    });
    let owned: String;
    let (text, tree) = match tidied {
        Some((t, tree)) => {
            owned = t;
            (owned.as_str(), tree)
        }
        None => (text, tree),
    };
    let mut walk = Walk { text, offset, nesting, script, reads, inner: Vec::new() };
    walk.tree(&tree);
    for (start, end) in std::mem::take(&mut walk.inner) {
        // Never a range that splits a character; should one come, it is not read.
        if let Some(inner) = text.get(start..end) {
            read_into(inner, offset + start, nesting + 1, script, reads);
        }
    }
}

/// `text` with two forms that tree-sitter-bash cannot parse, though bash
/// runs them, made plain byte for byte (offsets stay valid): a `\` that
/// ends the file (a line continued into nothing) becomes a space, and empty
/// backquotes (an empty command substitution) become `""`, the same empty
/// word. `None` when it has neither.
fn tidy(text: &str) -> Option<String> {
    let mut out = text.replace("``", "\"\"");
    let end = out.trim_end().len();
    if out[..end].ends_with('\\') {
        out.replace_range(end - 1..end, " ");
    }
    (out != text).then_some(out)
}

/// What the walk knows about a node from the nodes around it.
#[derive(Debug, Clone, Copy, Default)]
struct Around {
    /// The node's first command is tested (`if X`, `while X`, `! X`).
    first_tested: bool,
    /// The node's last command is tested (`X || ...`, `! X`).
    last_tested: bool,
    /// Where the statement the node is the body of ends with its
    /// redirections (`cmd > log 2>&1`), if it has any.
    redirect_end: Option<usize>,
    /// Command substitutions around the node.
    substitutions: usize,
    /// The node is inside a part the parser could not read.
    in_error: bool,
}

/// One walk over a parsed text.
struct Walk<'a> {
    text: &'a str,
    offset: usize,
    nesting: usize,
    script: &'a mut Script,
    reads: &'a mut Vec<PlainRead>,
    /// The insides of `sh -c` strings, read afterwards as scripts of their own.
    inner: Vec<(usize, usize)>,
}

impl<'a> Walk<'a> {
    fn at(&self, node: Node) -> (usize, usize) {
        (self.offset + node.start_byte(), self.offset + node.end_byte())
    }

    fn node_text(&self, node: Node) -> &'a str {
        self.text.get(node.byte_range()).unwrap_or_default()
    }

    /// Walks the tree without recursion (a script may nest deeply).
    fn tree(&mut self, tree: &Tree) {
        let mut stack: Vec<(Node, Around)> = vec![(tree.root_node(), Around::default())];
        while let Some((node, around)) = stack.pop() {
            if node.is_missing() {
                let (at, _) = self.at(node);
                self.script.unreadable.push((at, at));
                continue;
            }
            match node.kind() {
                "comment" => {
                    let (start, end) = self.at(node);
                    match around.in_error {
                        false => self.script.comments.read.push(start..end),
                        true => self.script.comments.unsure.push(start..end),
                    }
                }
                "ERROR" => self.script.unreadable.push(self.at(node)),
                "variable_assignment" => self.assignment(node),
                "declaration_command" => {
                    self.declaration(node);
                    self.command(node, around);
                }
                "simple_expansion" | "expansion" => self.expansion(node),
                "command" => self.command(node, around),
                // The loop variable takes several values.
                "for_statement" => {
                    if let Some(v) = node.child_by_field_name("variable") {
                        self.script.varying.push(self.node_text(v).to_string());
                    }
                }
                _ => {}
            }
            let kind = node.kind();
            let substitution = matches!(kind, "command_substitution" | "process_substitution");
            if substitution && around.substitutions >= MAX_NESTING {
                continue;
            }
            let base = Around {
                first_tested: false,
                last_tested: false,
                redirect_end: None,
                substitutions: around.substitutions + usize::from(substitution),
                in_error: around.in_error || kind == "ERROR",
            };
            let passed = passed_on(node, kind, around);
            let mut cursor = node.walk();
            let mut more = cursor.goto_first_child();
            while more {
                let child = cursor.node();
                let inner = match passed.iter().find(|(id, _)| *id == child.id()) {
                    Some((_, tested)) => {
                        Around { substitutions: base.substitutions, in_error: base.in_error, ..*tested }
                    }
                    None => base,
                };
                stack.push((child, inner));
                more = cursor.goto_next_sibling();
            }
        }
    }

    /// `NAME=value` (`NAME+=value` appends: its value is not known).
    fn assignment(&mut self, node: Node) {
        let Some(name) = node.child_by_field_name("name").filter(|n| n.kind() == "variable_name") else { return };
        let appends = {
            let mut cursor = node.walk();
            let appends = node.children(&mut cursor).any(|c| c.kind() == "+=");
            appends
        };
        let (value, value_range) = match node.child_by_field_name("value") {
            Some(v) => (unquoted(self.node_text(v)), self.at(v)),
            None => (String::new(), (self.at(node).1, self.at(node).1)),
        };
        self.script.mentions.push(EnvMention {
            name: self.node_text(name).to_string(),
            range: self.at(name),
            value: Some(if appends { format!("${{{}}}{value}", self.node_text(name)) } else { value }),
            value_range: Some(value_range),
        });
    }

    /// `export X` without a value still names X for the environment.
    fn declaration(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        if children.first().is_none_or(|c| c.kind() != "export") {
            return;
        }
        for c in children.iter().filter(|c| c.kind() == "variable_name") {
            self.script.mentions.push(EnvMention {
                name: self.node_text(*c).to_string(),
                range: self.at(*c),
                value: None,
                value_range: None,
            });
        }
    }

    /// `$X`, `${X}`, `${X:-d}`: a read of X (`$1`, `$@` read no variable).
    fn expansion(&mut self, node: Node) {
        let mut cursor = node.walk();
        let name = node.named_children(&mut cursor).find_map(|c| match c.kind() {
            "variable_name" => Some(c),
            "subscript" => c.child_by_field_name("name"),
            _ => None,
        });
        let Some(name) = name else { return };
        let text = self.node_text(name);
        if !text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return;
        }
        self.script.mentions.push(EnvMention {
            name: text.to_string(),
            range: self.at(name),
            value: None,
            value_range: None,
        });
        let whole = self.node_text(node);
        if whole == format!("${text}") || whole == format!("${{{text}}}") {
            self.reads.push(PlainRead { range: self.at(node), name: text.to_string() });
        }
    }

    /// A simple command (or a declaration such as `export A=1`).
    fn command(&mut self, node: Node, around: Around) {
        let parts = commands::parts(node, self.text);
        // `env X=1 cmd`: the assignments the wrapper makes.
        for (name, value, at) in &parts.assignments {
            self.script.mentions.push(EnvMention {
                name: name.clone(),
                range: (self.offset + at.0, self.offset + at.0 + name.len()),
                value: Some(value.clone()),
                value_range: Some((self.offset + at.0 + name.len() + 1, self.offset + at.1)),
            });
        }
        if let Some(inner) = parts.inner_script.filter(|_| self.nesting < MAX_NESTING) {
            self.inner.push(inner);
        }
        let Some(from) = parts.from else { return };
        let end = around.redirect_end.map_or(node.end_byte(), |e| e.max(node.end_byte()));
        let to = from + self.text[from..end].trim_end().len();
        self.script.commands.push(ShellCommand {
            text: self.text[from..to].to_string(),
            range: (self.offset + from, self.offset + to),
            guarded: around.first_tested || around.last_tested,
            top_level: self.nesting == 0 && in_sequence(node),
            in_order: self.nesting == 0 && !in_function(node),
            expanded: None,
        });
    }
}

/// Whether `node` runs in its script's own shell, in order: its ancestors
/// are only `&&`/`||` lists and redirections up to the script itself.
fn in_sequence(node: Node) -> bool {
    let mut at = node.parent();
    while let Some(p) = at {
        match p.kind() {
            "program" => return true,
            "list" | "redirected_statement" => at = p.parent(),
            _ => return false,
        }
    }
    false
}

/// Whether `node` is in the body of a function definition.
fn in_function(node: Node) -> bool {
    std::iter::successors(node.parent(), Node::parent).any(|p| p.kind() == "function_definition")
}

/// What `node` (of `kind`, with `around`) passes on to the children it
/// tests or redirects, by child id: which of them inherit a test of their
/// first or last command, and the end of a redirected statement's redirections.
fn passed_on(node: Node, kind: &str, around: Around) -> Vec<(usize, Around)> {
    let tested = |first_tested, last_tested| Around { first_tested, last_tested, ..Around::default() };
    let named = |i: usize| node.named_child(i);
    let last_named = || node.named_child_count().checked_sub(1).and_then(named);
    let mut out: Vec<(usize, Around)> = Vec::new();
    let mut pass = |child: Option<Node>, a: Around| {
        let Some(child) = child else { return };
        match out.iter_mut().find(|(id, _)| *id == child.id()) {
            Some((_, known)) => {
                known.first_tested |= a.first_tested;
                known.last_tested |= a.last_tested;
            }
            None => out.push((child.id(), a)),
        }
    };
    match kind {
        "redirected_statement" => {
            let body = node.child_by_field_name("body");
            let end = commands::redirections_end(node);
            pass(body, Around { redirect_end: Some(end), ..tested(around.first_tested, around.last_tested) });
        }
        "pipeline" => {
            pass(named(0), tested(around.first_tested, false));
            pass(last_named(), tested(false, around.last_tested));
        }
        "list" => {
            let mut cursor = node.walk();
            let or = node.children(&mut cursor).any(|c| c.kind() == "||");
            pass(named(0), tested(around.first_tested, or));
            pass(last_named(), tested(false, around.last_tested));
        }
        "negated_command" => pass(named(0), tested(true, true)),
        "if_statement" | "elif_clause" | "while_statement" => {
            let mut cursor = node.walk();
            let condition = node.named_children(&mut cursor).find(|c| c.kind() != "comment");
            pass(condition.filter(|c| c.kind() != "do_group"), tested(true, false));
        }
        _ => {}
    }
    out
}

/// The variables the script assigns, each with its value, where every
/// assignment gives the same literal value (no `$` or backquote in it).
fn literal_values(script: &Script) -> HashMap<String, String> {
    let mut values: HashMap<&str, Option<&str>> = HashMap::new();
    for m in &script.mentions {
        let Some(v) = &m.value else { continue };
        let literal = (!v.contains(['$', '`'])).then_some(v.as_str());
        values
            .entry(m.name.as_str())
            .and_modify(|known| {
                if *known != literal {
                    *known = None;
                }
            })
            .or_insert(literal);
    }
    for name in &script.varying {
        values.insert(name.as_str(), None);
    }
    values.into_iter().filter_map(|(k, v)| Some((k.to_string(), v?.to_string()))).collect()
}

#[cfg(test)]
mod tests;
