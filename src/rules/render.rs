//! Turning a match into what users see: the message and the fix's edits.

use super::context::Context;
use super::lazy_regex::LazyRegex;
use super::model::{EditAction, EditTarget, FixTemplate};
use super::state::MatchState;
use crate::finding::{Edit, Fix};
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use crate::semantic::calls::{callee, method_parts};
use crate::semantic::calls::{ArgState, CallArgs};
use crate::semantic::dispatch::chain_tests;
use crate::semantic::flow;
use crate::semantic::values::{shorten, text};
use crate::source::LineIndex;
use tree_sitter::Node;

/// Fills `{placeholder}`s from the match; `{arg.NAME}` reads the call's
/// argument, `{import:MODULE}` the name the file imports MODULE under.
pub fn render(template: &str, st: &MatchState<'_>, anchor: Node, report: Node, cx: &Context) -> String {
    render_with(template, |name| placeholder(name, st, anchor, report, cx).unwrap_or_default())
}

/// Like [`render`], but `None` when a placeholder cannot be filled (a module
/// the file does not import): a fix is then not offered.
fn render_strict(template: &str, st: &MatchState<'_>, anchor: Node, report: Node, cx: &Context) -> Option<String> {
    render_opt(template, |name| placeholder(name, st, anchor, report, cx))
}

/// Fills `{placeholder}`s with `lookup`.
pub fn render_with(template: &str, lookup: impl Fn(&str) -> String) -> String {
    render_opt(template, |name| Some(lookup(name))).unwrap_or_default()
}

/// Fills `{placeholder}`s with `lookup`; `None` if any lookup fails. The
/// text is kept until the report is written, so it keeps no spare capacity.
fn render_opt(template: &str, lookup: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        rest = &rest[open..];
        let Some(len) = rest.find('}') else { break };
        out.push_str(&lookup(&rest[1..len])?);
        rest = &rest[len + 1..];
    }
    out.push_str(rest);
    out.shrink_to_fit();
    Some(out)
}

/// A fix at a byte range with no syntax node (shell scripts): only edits on the
/// reported text with `replace`, `sub` or `sub_all` apply.
pub fn build_text_fix(
    t: &FixTemplate,
    lookup: impl Fn(&str) -> String,
    range: (usize, usize),
    src: &str,
    lines: &LineIndex,
) -> Option<Fix> {
    let old = src.get(range.0..range.1)?;
    let mut edits = Vec::new();
    for e in &t.edits {
        if e.on != EditTarget::Report {
            return None;
        }
        let new = match &e.action {
            EditAction::Replace(template) => render_with(template, &lookup),
            EditAction::Sub(subs) => {
                let (re, rep) = subs.iter().find(|(re, _)| re.is_match(old))?;
                re.get()?.replacen(old, 1, rep.as_str()).into_owned()
            }
            EditAction::SubAll(subs) => subs.iter().try_fold(old.to_string(), |acc, (re, rep)| {
                Some(re.get()?.replace_all(&acc, rep.as_str()).into_owned())
            })?,
            EditAction::SetKeyword { .. }
            | EditAction::PrependArg(_)
            | EditAction::RemoveArg
            | EditAction::NameArgs(_) => return None,
        };
        edits.push(Edit {
            start: lines.position(src, range.0),
            end: lines.position(src, range.1),
            content: new,
            byte_range: range,
        });
    }
    if edits.len() != 1 {
        return None;
    }
    Some(Fix { applicability: t.applicability, description: render_with(&t.description, &lookup), edits })
}

fn placeholder(name: &str, st: &MatchState<'_>, anchor: Node, report: Node, cx: &Context) -> Option<String> {
    if let Some(v) = st.get(name) {
        return Some(v.to_string());
    }
    if let Some(module) = name.strip_prefix("import:") {
        return cx.model.alias_of(module).map(str::to_string);
    }
    if let Some(arg) = name.strip_prefix("arg.") {
        let args = CallArgs::of(anchor, cx.src);
        return Some(match args.get(Some(arg), None) {
            ArgState::Present(v) => shorten(text(v, cx.src), 40),
            ArgState::Unknown => "?".to_string(),
            ArgState::Absent => "not set".to_string(),
        });
    }
    Some(match name {
        "text" => shorten(text(anchor, cx.src), 60),
        "report" => shorten(text(report, cx.src), 60),
        "target" => format!("{}.{}", cx.target.0, cx.target.1),
        _ => String::new(),
    })
}

/// The node (or byte range) an edit applies to.
fn target_range<'t>(
    on: &EditTarget,
    anchor: Node<'t>,
    report: Node<'t>,
    st: &MatchState<'t>,
    src: &'t str,
) -> Option<(usize, usize, Option<Node<'t>>)> {
    let node_range = |n: Node<'t>| Some((n.start_byte(), n.end_byte(), Some(n)));
    match on {
        EditTarget::Report => node_range(report),
        EditTarget::Node => node_range(anchor),
        EditTarget::Callee => node_range(callee(anchor)?),
        EditTarget::MethodName => node_range(method_parts(anchor)?.1),
        EditTarget::Receiver => node_range(method_parts(anchor)?.0),
        EditTarget::CallTail => Some((method_parts(anchor)?.0.end_byte(), anchor.end_byte(), None)),
        EditTarget::Keyword(k) => node_range(CallArgs::of(anchor, src).keyword(k)?),
        EditTarget::KeywordValue(k) => node_range(CallArgs::of(anchor, src).keyword(k)?.field(Field::Value)?),
        EditTarget::Capture(name) => node_range(st.node(name)?),
        EditTarget::Comparisons => None,
    }
}

/// Builds the fix's edits at this match, or `None` when the template does not
/// apply here (a substitution that finds nothing, a missing node, overlapping edits).
pub fn build_fix<'t>(
    t: &FixTemplate,
    st: &MatchState<'_>,
    anchor: Node,
    report: Node<'t>,
    cx: &Context<'_, 't>,
    lines: &LineIndex,
) -> Option<Fix> {
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for e in &t.edits {
        if let (EditTarget::Comparisons, EditAction::Sub(subs)) = (&e.on, &e.action) {
            edits.extend(comparison_edits(subs, report, cx));
            continue;
        }
        let (start, end, node) = target_range(&e.on, anchor, report, st, cx.src)?;
        let old = cx.src.get(start..end)?;
        match &e.action {
            EditAction::Replace(template) => {
                let new = render_strict(template, st, anchor, report, cx)?;
                edits.push((start, end, indented_like(cx.src, lines, start, new)));
            }
            EditAction::Sub(subs) => {
                let (re, rep) = subs.iter().find(|(re, _)| re.is_match(old))?;
                edits.push((start, end, re.get()?.replacen(old, 1, rep.as_str()).into_owned()));
            }
            EditAction::SubAll(subs) => {
                let mut new = old.to_string();
                for (re, rep) in subs {
                    new = re.get()?.replace_all(&new, rep.as_str()).into_owned();
                }
                if new == old {
                    return None;
                }
                edits.push((start, end, new));
            }
            EditAction::SetKeyword { name, position, value } => {
                let value = render_strict(value, st, anchor, report, cx)?;
                edits.push(set_keyword(node?, name, *position, &value, cx.src)?);
            }
            EditAction::PrependArg(value) => {
                let value = render_strict(value, st, anchor, report, cx)?;
                edits.push(prepend_arg(node?, &value, cx.src)?);
            }
            EditAction::RemoveArg => edits.push(remove_arg(node?, cx.src)?),
            EditAction::NameArgs(names) => edits.extend(name_args(node?, names, cx.src)?),
        }
    }
    edits.sort_by_key(|(s, e, _)| (*s, *e));
    if edits.windows(2).any(|w| w[0].1 > w[1].0) {
        return None;
    }
    let edits = edits
        .into_iter()
        .map(|(s, e, content)| Edit {
            start: lines.position(cx.src, s),
            end: lines.position(cx.src, e),
            content: in_line_endings_of(cx.src, lines, content),
            byte_range: (s, e),
        })
        .collect();
    Some(Fix { applicability: t.applicability, description: render(&t.description, st, anchor, report, cx), edits })
}

/// The edits that migrate the comparisons reading the value stored at
/// `value`: each compared literal that a substitution matches, except in a
/// test whose `if` chain or `and`/`or` already tests for the new value (a
/// dispatch over backends, whose other arm is already right). An
/// `add_argument` default's `choices=` counts as such a test (argparse
/// rejects a value given for the option that is not among them), except
/// when the choices already hold the new value.
fn comparison_edits<'t>(
    subs: &[(LazyRegex, String)],
    value: Node<'t>,
    cx: &Context<'_, 't>,
) -> Vec<(usize, usize, String)> {
    if !flow::is_stored(value, cx.src) {
        return Vec::new();
    }
    let uses = cx.model.name_uses(cx.src);
    let Some(key) = uses.store_key(value, cx.src) else { return Vec::new() };
    let compared = uses.comparisons(key, cx.src);
    // (literal, its test, whether the test is the option's `choices=` collection)
    let tests = compared.iter().map(|&(literal, test)| (literal, test, false));
    let choices = flow::option_choices(value, cx.src).into_iter().map(|(literal, choices)| (literal, choices, true));
    let mut out = Vec::new();
    for (literal, test, in_choices) in tests.chain(choices) {
        let old = text(literal, cx.src);
        let Some((re, rep)) = subs.iter().find(|(re, _)| re.is_match(old)) else { continue };
        let Some(re) = re.get() else { continue };
        let new = re.replacen(old, 1, rep.as_str()).into_owned();
        let word = literal_word(&new);
        let tested = if in_choices { vec![text(test, cx.src)] } else { tests_around(test, cx) };
        if !word.is_empty() && !tested.iter().any(|t| contains_word(t, &word)) {
            out.push((literal.start_byte(), literal.end_byte(), new));
        }
    }
    // The choices were taken after the comparisons: back into source order
    // (each literal is a node of its own, so no edit repeats).
    out.sort_unstable_by_key(|(start, _, _)| *start);
    out
}

/// The word a string literal starts with (`npu` for `"npu:0"`), lowercase.
fn literal_word(literal: &str) -> String {
    let inner = literal.trim_start_matches(|c: char| c.is_ascii_alphabetic() && c != '"' && c != '\'');
    let inner = inner.trim_start_matches(['"', '\'']);
    inner.chars().take_while(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase()
}

fn contains_word(text: &str, word: &str) -> bool {
    text.to_ascii_lowercase().contains(word)
}

/// The texts of the tests around `test`: the `and`/`or` it is part of and
/// the tests of the `if` chains and conditional expressions it sits in, out
/// to the enclosing function.
fn tests_around<'s>(test: Node, cx: &Context<'_, 's>) -> Vec<&'s str> {
    let mut out = Vec::new();
    let mut node = Some(test);
    while let Some(n) = node {
        match n.kind_name() {
            "boolean_operator" => out.push(text(n, cx.src)),
            "if_statement" | "conditional_expression" => {
                out.extend(chain_tests(n).into_iter().map(|t| text(t, cx.src)));
            }
            "function_definition" | "lambda" | "class_definition" | "module" => break,
            _ => {}
        }
        node = n.parent();
    }
    out
}

/// `text`, replacing source from byte `at` on, with every line after its
/// first indented like the line `at` is on (an import inserted after an
/// indented import stays in its block).
fn indented_like(src: &str, lines: &LineIndex, at: usize, text: String) -> String {
    if !text.contains('\n') {
        return text;
    }
    let line_start = lines.line_start(lines.line_of(at) + 1).unwrap_or(0);
    let indent: &str = &src[line_start..at][..src[line_start..at].len() - src[line_start..at].trim_start().len()];
    if indent.is_empty() {
        return text;
    }
    text.replace('\n', &format!("\n{indent}"))
}

/// The byte offset where `node`'s first line starts, from the tree's
/// position (a byte column): O(1), where searching the text for the line
/// break costs the length of the line for every finding on it.
fn line_start_of(node: Node) -> usize {
    node.start_byte().saturating_sub(node.start_position().column)
}

/// `text` with its line breaks in the style of `src`: that of its first line
/// break (CRLF, or a lone CR as in old Mac files), LF otherwise.
fn in_line_endings_of(src: &str, lines: &LineIndex, text: String) -> String {
    if !text.contains('\n') {
        return text;
    }
    // The first line's break, from the index, which ends lines at a lone CR too.
    let Some(next) = lines.line_start(2) else { return text };
    let newline = match &src.as_bytes()[..next] {
        [.., b'\r'] => "\r",
        [.., b'\r', b'\n'] => "\r\n",
        _ => return text,
    };
    text.replace("\r\n", "\n").replace('\n', newline)
}

/// The call an argument edit applies to: the node itself, or the expression of a decorator.
fn call_of(node: Node) -> Node {
    if node.kind_name() == "decorator" {
        node.named_child(0).unwrap_or(node)
    } else {
        node
    }
}

/// Inserts `value` as the first positional argument of a call.
fn prepend_arg(node: Node, value: &str, src: &str) -> Option<(usize, usize, String)> {
    let call = call_of(node);
    let list = CallArgs::of(call, src).list.filter(|l| l.kind_name() == "argument_list")?;
    let at = list.start_byte() + 1;
    let empty = list.named_child_count() == 0;
    Some((at, at, if empty { value.to_string() } else { format!("{value}, ") }))
}

/// Writes each positional argument of the call at `node` as `NAME=value`,
/// with the names in order; `None` when it passes more positional arguments
/// than there are names, or unpacks `*args` (which names they fill is unknown).
fn name_args(node: Node, names: &[String], src: &str) -> Option<Vec<(usize, usize, String)>> {
    let args = CallArgs::of(call_of(node), src);
    if args.star || args.positional.len() > names.len() {
        return None;
    }
    let named = args.positional.iter().zip(names);
    Some(named.map(|(v, name)| (v.start_byte(), v.end_byte(), format!("{name}={}", text(*v, src)))).collect())
}

/// Removes an argument and the comma that separates it from its neighbours:
/// up to the next argument, or from the previous one when it is the last;
/// the only argument empties the parentheses, unless they hold comments,
/// which stay (and so does the line break before them).
fn remove_arg(arg: Node, src: &str) -> Option<(usize, usize, String)> {
    let list = arg.parent().filter(|p| p.kind_name() == "argument_list")?;
    let mut cursor = list.walk();
    let children: Vec<Node> = list.named_children(&mut cursor).collect();
    let has_comments = children.iter().any(|c| c.kind_name() == "comment");
    let args: Vec<&Node> = children.iter().filter(|c| c.kind_name() != "comment").collect();
    let i = args.iter().position(|a| a.id() == arg.id())?;
    let (start, end) = match (i.checked_sub(1).map(|p| args[p]), args.get(i + 1)) {
        (_, Some(next)) => (arg.start_byte(), next.start_byte()),
        (Some(prev), None) => (prev.end_byte(), arg.end_byte()),
        (None, None) if !has_comments => (list.start_byte() + 1, list.end_byte() - 1),
        (None, None) => {
            let comma = arg.next_sibling().filter(|n| n.kind_name() == ",");
            let end = comma.map_or(arg.end_byte(), |c| c.end_byte());
            // Drop the whole line when the argument was all there was on it.
            let line_start = line_start_of(arg);
            // A line break after the closing parenthesis cannot make the rest of the line blank.
            let line_end = Some(crate::source::line_end_at(src, end)).filter(|&le| le < list.end_byte());
            match line_end {
                Some(le) if src[line_start..arg.start_byte()].trim().is_empty() && src[end..le].trim().is_empty() => {
                    (line_start, le + 1)
                }
                _ => (arg.start_byte(), end),
            }
        }
    };
    Some((start, end, String::new()))
}

/// Replaces the argument `name` (by keyword, or at `position`), or inserts
/// `name=value` after the last argument; a bare name (`@decorator`) gains
/// `(name=value)`.
fn set_keyword(
    node: Node,
    name: &str,
    position: Option<usize>,
    value: &str,
    src: &str,
) -> Option<(usize, usize, String)> {
    let call = call_of(node);
    if matches!(call.kind_name(), "identifier" | "attribute") {
        return Some((call.end_byte(), call.end_byte(), format!("({name}={value})")));
    }
    let args = CallArgs::of(call, src);
    if let Some(kw) = args.keyword(name) {
        let v = kw.field(Field::Value)?;
        return Some((v.start_byte(), v.end_byte(), value.to_string()));
    }
    if let Some(v) = position.and_then(|p| args.positional.get(p)) {
        return Some((v.start_byte(), v.end_byte(), value.to_string()));
    }
    let list = args.list.filter(|l| l.kind_name() == "argument_list")?;
    let mut cursor = list.walk();
    let last = list.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").last();
    match last {
        Some(last) => {
            // One argument per line stays one argument per line.
            let line_start = line_start_of(last);
            let indent = &src[line_start..last.start_byte()];
            let own_line = last.start_position().row > list.start_position().row && indent.trim().is_empty();
            if !own_line {
                return Some((last.end_byte(), last.end_byte(), format!(", {name}={value}")));
            }
            // After a trailing comma, the new line goes below the whole line,
            // so a comment there stays with the argument it is about.
            if let Some(comma) = last.next_sibling().filter(|n| n.kind_name() == ",") {
                let line_end = crate::source::line_end_at(src, comma.end_byte());
                if let Some(nl) = Some(line_end).filter(|&le| le < list.end_byte()) {
                    let at = if src[..nl].ends_with('\r') { nl - 1 } else { nl };
                    if at < list.end_byte() {
                        return Some((at, at, format!("\n{indent}{name}={value},")));
                    }
                }
            }
            Some((last.end_byte(), last.end_byte(), format!(",\n{indent}{name}={value}")))
        }
        None => {
            let at = list.start_byte() + 1;
            Some((at, at, format!("{name}={value}")))
        }
    }
}
