//! Turning a match into what users see: the message and the fix's edits.

use super::context::Context;
use super::matcher::{callee, method_parts, MatchState};
use super::model::{EditAction, EditTarget, FixTemplate};
use crate::finding::{Edit, Fix};
use crate::semantic::calls::CallArgs;
use crate::semantic::values::{shorten, text};
use crate::source::LineIndex;
use tree_sitter::Node;

/// Fills `{placeholder}`s from the match; `{arg.NAME}` reads the call's argument.
pub fn render(template: &str, st: &MatchState<'_>, anchor: Node, report: Node, cx: &Context) -> String {
    render_with(template, |name| placeholder(name, st, anchor, report, cx))
}

/// Fills `{placeholder}`s with `lookup`.
pub fn render_with(template: &str, lookup: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(len) = rest[open..].find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        out.push_str(&lookup(&rest[open + 1..open + len]));
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    out
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
                re.replacen(old, 1, rep.as_str()).into_owned()
            }
            EditAction::SubAll(subs) => {
                subs.iter().fold(old.to_string(), |acc, (re, rep)| re.replace_all(&acc, rep.as_str()).into_owned())
            }
            EditAction::SetKeyword { .. } => return None,
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

fn placeholder(name: &str, st: &MatchState<'_>, anchor: Node, report: Node, cx: &Context) -> String {
    if let Some(v) = st.get(name) {
        return v.to_string();
    }
    match name {
        "text" => shorten(text(anchor, cx.src), 60),
        "report" => shorten(text(report, cx.src), 60),
        "path" => String::new(),
        _ => match name.strip_prefix("arg.") {
            Some(arg) => {
                let args = CallArgs::of(anchor, cx.src);
                match args.get(Some(arg), None) {
                    crate::semantic::calls::ArgState::Present(v) => shorten(text(v, cx.src), 40),
                    crate::semantic::calls::ArgState::Unknown => "?".to_string(),
                    crate::semantic::calls::ArgState::Absent => "not set".to_string(),
                }
            }
            None => String::new(),
        },
    }
}

/// The node (or byte range) an edit applies to.
fn target_range<'t>(
    on: &EditTarget,
    anchor: Node<'t>,
    report: Node<'t>,
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
        EditTarget::KeywordValue(k) => node_range(CallArgs::of(anchor, src).keyword(k)?.child_by_field_name("value")?),
    }
}

/// Builds the fix's edits at this match, or `None` when the template does not
/// apply here (a substitution that finds nothing, a missing node, overlapping edits).
pub fn build_fix(
    t: &FixTemplate,
    st: &MatchState<'_>,
    anchor: Node,
    report: Node,
    cx: &Context,
    lines: &LineIndex,
) -> Option<Fix> {
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for e in &t.edits {
        let (start, end, node) = target_range(&e.on, anchor, report, cx.src)?;
        let old = cx.src.get(start..end)?;
        match &e.action {
            EditAction::Replace(template) => edits.push((start, end, render(template, st, anchor, report, cx))),
            EditAction::Sub(subs) => {
                let (re, rep) = subs.iter().find(|(re, _)| re.is_match(old))?;
                edits.push((start, end, re.replacen(old, 1, rep.as_str()).into_owned()));
            }
            EditAction::SubAll(subs) => {
                let mut new = old.to_string();
                for (re, rep) in subs {
                    new = re.replace_all(&new, rep.as_str()).into_owned();
                }
                if new == old {
                    return None;
                }
                edits.push((start, end, new));
            }
            EditAction::SetKeyword { name, value } => {
                let call = node?;
                let value = render(value, st, anchor, report, cx);
                edits.push(set_keyword(call, name, &value, cx.src)?);
            }
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
            content,
            byte_range: (s, e),
        })
        .collect();
    Some(Fix { applicability: t.applicability, description: render(&t.description, st, anchor, report, cx), edits })
}

/// Replaces the value of keyword `name`, or inserts `name=value` after the last argument.
fn set_keyword(call: Node, name: &str, value: &str, src: &str) -> Option<(usize, usize, String)> {
    let args = CallArgs::of(call, src);
    if let Some(kw) = args.keyword(name) {
        let v = kw.child_by_field_name("value")?;
        return Some((v.start_byte(), v.end_byte(), value.to_string()));
    }
    let list = args.list.filter(|l| l.kind() == "argument_list")?;
    let mut cursor = list.walk();
    let last = list.named_children(&mut cursor).filter(|c| c.kind() != "comment").last();
    match last {
        Some(last) => Some((last.end_byte(), last.end_byte(), format!(", {name}={value}"))),
        None => {
            let at = list.start_byte() + 1;
            Some((at, at, format!("{name}={value}")))
        }
    }
}
