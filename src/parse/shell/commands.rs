//! The simple commands of a shell script: where each starts once the
//! wrappers that run it are passed (`nohup`, `env X=1`, `timeout 10`,
//! `taskset -c 0-23`, `numactl --cpunodebind=0`, ...), where it ends, whether
//! the script allows for it failing, and its text with the script's
//! one-value variables read.

use std::collections::HashMap;
use tree_sitter::Node;

/// One simple command of a shell script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The command from its command word to its end, redirections included,
    /// after leading assignments and wrappers (`env`, `sudo`, `exec`,
    /// `nohup`, `time`, `timeout`, `nice`, `taskset`, `numactl`, ...).
    pub text: String,
    /// Byte range of `text`.
    pub range: (usize, usize),
    /// The script allows for the command failing or missing: it tests the
    /// command (`if X`, `while X`, `X || ...`, `! X`) or whether it exists
    /// (`command -v X`, `which X`, `type X`, `hash X`).
    pub guarded: bool,
    /// It runs in the script's own shell, in the script's order: no
    /// subshell, function, loop, branch, pipeline or `sh -c` around it
    /// (`a && b` and redirections keep it so), so a `cd` before it holds.
    pub top_level: bool,
    /// It runs in the script's order, maybe in a loop, branch, subshell or
    /// pipeline, which start where the script is: not in a function (which
    /// runs where it is called) or an `sh -c` string (a shell of its own).
    pub in_order: bool,
    /// `text` with `$X` and `${X}` replaced by X's value, for the variables
    /// the script assigns exactly one literal value; None when none is read.
    pub expanded: Option<String>,
}

impl ShellCommand {
    /// The command's words, quotes removed, with the script's one-value
    /// variables read (the command word first).
    pub fn words(&self) -> Vec<String> {
        split_words(self.expanded.as_deref().unwrap_or(&self.text))
    }
}

/// Commands that run the command after them, with the options of theirs
/// that take a separate value.
const WRAPPERS: &[(&str, &[&str])] = &[
    ("env", &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"]),
    ("sudo", &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"]),
    ("exec", &["-a"]),
    ("nohup", &[]),
    ("time", &[]),
    ("builtin", &[]),
    ("nice", &["-n", "--adjustment"]),
    ("ionice", &["-c", "-n", "-p", "--class", "--classdata"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("timeout", &["-s", "--signal", "-k", "--kill-after"]),
    ("taskset", &[]),
    ("numactl", &[]),
];

/// Wrappers whose own arguments (CPU lists, masks, node numbers) come before the command.
const PINNING: &[&str] = &["taskset", "numactl"];

/// Shells whose `-c` argument is a script.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh"];

/// Commands that test whether their arguments are installed commands.
const LOOKUPS: &[&str] = &["command", "which", "type", "hash"];

/// A read of a variable as `$NAME` or `${NAME}`, which a known value can
/// replace in a command's text: the range of the whole expansion and the name.
#[derive(Debug, Clone)]
pub(super) struct PlainRead {
    /// Byte range of the whole expansion.
    pub range: (usize, usize),
    /// The variable read.
    pub name: String,
}

/// What [`parts`] finds in a command node (byte offsets in the text parsed).
pub(super) struct Parts {
    /// Where the command runs from: its command word after wrappers; `None`
    /// when nothing is left to run (`nohup` alone, `exec > log`).
    pub from: Option<usize>,
    /// `env NAME=value`: the name, the value, and the range of the whole word.
    pub assignments: Vec<(String, String, (usize, usize))>,
    /// For `sh -c "..."`: the range of the script inside the quotes.
    pub inner_script: Option<(usize, usize)>,
}

/// The words of a command node, after its wrappers.
pub(super) fn parts(node: Node, text: &str) -> Parts {
    let mut parts = Parts { from: None, assignments: Vec::new(), inner_script: None };
    if node.kind() == "declaration_command" {
        parts.from = Some(node.start_byte());
        return parts;
    }
    let mut cursor = node.walk();
    let words: Vec<Node> = node
        .children(&mut cursor)
        .enumerate()
        .filter(|(i, _)| matches!(node.field_name_for_child(*i as u32), Some("name" | "argument")))
        .map(|(_, c)| c)
        .collect();
    let word = |n: &Node| unquoted(text.get(n.byte_range()).unwrap_or_default());
    let mut k = 0;
    while let Some(w) = words.get(k) {
        let name = word(w);
        let Some((wrapper, takes_value)) = WRAPPERS.iter().find(|(n, _)| *n == name) else { break };
        k += 1;
        while let Some(arg) = words.get(k).map(&word) {
            let assignment = *wrapper == "env" && is_assignment(&arg);
            if assignment {
                let (n, v) = arg.split_once('=').unwrap_or_default();
                let at = words[k].byte_range();
                parts.assignments.push((n.to_string(), v.to_string(), (at.start, at.end)));
            }
            if takes_value.contains(&arg.as_str()) {
                k += 2;
            } else if arg.starts_with('-') || assignment || (PINNING.contains(wrapper) && is_pinning_argument(&arg)) {
                k += 1;
            } else {
                break;
            }
        }
        // `timeout 2h cmd`: the duration comes before the command.
        if *wrapper == "timeout" && words.get(k).is_some_and(|w| word(w).starts_with(|c: char| c.is_ascii_digit())) {
            k += 1;
        }
    }
    let Some(first) = words.get(k) else { return parts };
    parts.from = Some(first.start_byte());
    let name = word(first);
    if SHELLS.contains(&name.rsplit('/').next().unwrap_or(&name)) {
        let c_at = words[k + 1..].iter().position(|w| {
            let w = word(w);
            w.starts_with('-') && !w.starts_with("--") && w.contains('c')
        });
        if let Some(script) = c_at.and_then(|c| words.get(k + 2 + c)) {
            let r = script.byte_range();
            // A quote the text never closes (the parser recovered) leaves the
            // last byte as it is: it may be inside a character.
            let quote = text.as_bytes().get(r.start).filter(|q| matches!(q, b'"' | b'\''));
            let closed = r.end - r.start >= 2 && quote.is_some() && text.as_bytes().get(r.end - 1) == quote;
            let quoted = matches!(script.kind(), "string" | "raw_string") && closed;
            parts.inner_script = Some(if quoted { (r.start + 1, r.end - 1) } else { (r.start, r.end) });
        }
    }
    parts
}

/// Where the redirections of a redirected statement end (`> log 2>&1`), a
/// here-document at its delimiter (`cat <<EOF`).
pub(super) fn redirections_end(statement: Node) -> usize {
    let mut end = statement.start_byte();
    let mut cursor = statement.walk();
    for (i, r) in statement.children(&mut cursor).enumerate() {
        if statement.field_name_for_child(i as u32) != Some("redirect") {
            continue;
        }
        let r_end = match r.kind() {
            "heredoc_redirect" => {
                let mut c = r.walk();
                let start = r.children(&mut c).find(|c| c.kind() == "heredoc_start");
                start.map_or(r.start_byte() + 2, |s| s.end_byte())
            }
            _ => r.end_byte(),
        };
        end = end.max(r_end);
    }
    end
}

/// Reads, in every command, the variables of `values` (those with one
/// literal value) where `reads` reads them, and marks the commands whose
/// existence the script tests.
pub(super) fn finish(text: &str, commands: &mut [ShellCommand], values: &HashMap<String, String>, reads: &[PlainRead]) {
    let mut reads: Vec<&PlainRead> = reads.iter().filter(|r| values.contains_key(r.name.as_str())).collect();
    reads.sort_by_key(|r| r.range);
    reads.dedup_by_key(|r| r.range);
    let mut looked_up: Vec<String> = Vec::new();
    for cmd in commands.iter_mut() {
        let (start, end) = cmd.range;
        let first = reads.partition_point(|r| r.range.0 < start);
        let inside = reads[first..].iter().take_while(|r| r.range.1 <= end);
        let (mut out, mut copied) = (String::new(), start);
        for r in inside {
            if r.range.0 < copied {
                continue;
            }
            out.push_str(&text[copied..r.range.0]);
            out.push_str(values.get(r.name.as_str()).map_or("", |v| v.as_str()));
            copied = r.range.1;
        }
        if copied > start {
            out.push_str(&text[copied..end]);
            cmd.expanded = Some(out);
        }
        let words = split_words(&cmd.text);
        let lookup = match words.first().map(String::as_str) {
            Some("command") => words.get(1).is_some_and(|w| w == "-v" || w == "-V"),
            Some(w) => LOOKUPS.contains(&w),
            None => false,
        };
        if lookup {
            looked_up.extend(words.into_iter().skip(1).filter(|w| !w.starts_with('-')));
        }
    }
    for cmd in commands.iter_mut() {
        let word = cmd.text.split_whitespace().next().unwrap_or("");
        cmd.guarded |= looked_up.iter().any(|w| w == word);
    }
}

/// An option of `taskset`/`numactl` or its value: `-c`, `--membind=0`,
/// `0-23`, `0xff`, `$START-$END`.
fn is_pinning_argument(word: &str) -> bool {
    word.starts_with('-')
        || word.starts_with('$')
        || word.starts_with("0x")
        || word.chars().all(|c| c.is_ascii_digit() || matches!(c, ',' | '-'))
}

/// `NAME=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The words of a command, quotes removed, `\` line continuations as
/// spaces; a command substitution (`$(hostname -I | awk '{print $1}')`,
/// `` `pwd` ``) or `${...}` stays whole, as written, inside its word.
pub(crate) fn split_words(command: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    let mut chars = command.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some('"') | None, '$' | '`') if c == '`' || matches!(chars.peek(), Some((_, '(' | '{'))) => {
                let end = substitution_end(command, at);
                word.push_str(&command[at..end]);
                started = true;
                while chars.peek().is_some_and(|&(i, _)| i < end) {
                    chars.next();
                }
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '\\') => match chars.next().map(|(_, c)| c) {
                Some('\n') | None => {}
                // A line continuation saved with CRLF.
                Some('\r') if chars.peek().is_some_and(|&(_, c)| c == '\n') => {
                    chars.next();
                }
                Some(next) => {
                    word.push(next);
                    started = true;
                }
            },
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// Where the substitution or `${...}` that starts at byte `at` of `text`
/// ends (past its closing bracket or backquote; the end of `text` if it
/// never closes), past nested brackets and quoted text.
fn substitution_end(text: &str, at: usize) -> usize {
    let b = text.as_bytes();
    if b[at] == b'`' {
        return text[at + 1..].find('`').map_or(text.len(), |i| at + i + 2);
    }
    let (open, close) = if b.get(at + 1) == Some(&b'{') { (b'{', b'}') } else { (b'(', b')') };
    let (mut depth, mut i, mut quote) = (0usize, at + 1, None);
    while i < b.len() {
        match (quote, b[i]) {
            (_, b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, c @ (b'\'' | b'"')) => quote = Some(c),
            (None, c) if c == open => depth += 1,
            (None, c) if c == close => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// A word with one level of quotes removed (`"x y"` is `x y`, `'a'"b"` is `ab`).
pub(crate) fn unquoted(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut quote: Option<char> = None;
    for c in word.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => out.push(c),
        }
    }
    out
}
