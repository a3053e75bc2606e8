//! Predicates over data tables and captured text: table lookups, the closest
//! known name, option strings, and regexes with `${placeholder}` back-references.

use super::context::Context;
use super::data_table::DataTable;
use super::model::{Lookup, Options, Version};
use super::render::render_with;
use super::state::MatchState;
use regex::Regex;
use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    static TEMPLATE_CACHE: RefCell<HashMap<(String, bool), Option<TemplateRegex>>> = RefCell::new(HashMap::new());
}

/// How many compiled templates a thread keeps. The patterns differ with
/// every captured name, so a large cache costs far more memory than the
/// compiles it saves (4,096 entries were 28 MB of a 53 MB heap on the corpus
/// twice over).
const TEMPLATE_CACHE_ENTRIES: usize = 256;

/// A template compiled for one kind of text. Unicode classes (`\w`, `\b`,
/// `\s`) make a regex of up to 500 KB; on ASCII text they mean what their
/// ASCII versions mean, and those compile to a few KB.
#[derive(Clone)]
enum TemplateRegex {
    /// For ASCII text only: Unicode off, so over bytes (a negated class may
    /// then match a byte that no ASCII text holds).
    Ascii(regex::bytes::Regex),
    /// For any text.
    Unicode(Regex),
}

impl TemplateRegex {
    fn is_match(&self, text: &str) -> bool {
        match self {
            TemplateRegex::Ascii(re) => re.is_match(text.as_bytes()),
            TemplateRegex::Unicode(re) => re.is_match(text),
        }
    }
}

/// Whether `text` matches the text regex `template` once each `${name}` in it
/// is replaced with the escaped text captured as `name`; `false` when a
/// placeholder has no capture.
pub fn template_matches(template: &str, st: &MatchState, text: &str) -> bool {
    // `^${name}$`, most templates, is string equality: no regex needed.
    let whole = template.strip_prefix("^${").and_then(|rest| rest.strip_suffix("}$"));
    if let Some(name) = whole.filter(|name| !name.contains(['}', '$'])) {
        return st.get(name) == Some(text);
    }
    template_regex(template, st, text.is_ascii()).is_some_and(|re| re.is_match(text))
}

/// Compiles a text regex after replacing each `${name}` with the escaped text
/// captured as `name`, for ASCII text only when `ascii` (recently compiled
/// ones are cached per thread).
fn template_regex(template: &str, st: &MatchState, ascii: bool) -> Option<TemplateRegex> {
    let pattern = fill_placeholders(template, |name| st.get(name).map(regex::escape))?;
    TEMPLATE_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= TEMPLATE_CACHE_ENTRIES {
            cache.clear();
        }
        let compile = || {
            let ascii_only = || regex::bytes::RegexBuilder::new(&pattern).unicode(false).build().ok();
            match ascii.then(ascii_only).flatten() {
                Some(re) => Some(TemplateRegex::Ascii(re)),
                None => Regex::new(&pattern).ok().map(TemplateRegex::Unicode),
            }
        };
        cache.entry((pattern.clone(), ascii)).or_insert_with(compile).clone()
    })
}

/// `template` with each `${name}` replaced by `value(name)`; `None` when a
/// `${` is not closed or `value` gives nothing for a name.
pub fn fill_placeholders(template: &str, mut value: impl FnMut(&str) -> Option<String>) -> Option<String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let close = rest[i..].find('}')? + i;
        out.push_str(&value(&rest[i + 2..close])?);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

fn fill(template: &str, target: Version, st: &MatchState) -> String {
    render_with(template, |name| match name {
        "target" => format!("{}.{}", target.0, target.1),
        other => st.get(other).unwrap_or_default().to_string(),
    })
}

/// Whether a cell says the name exists (anything but `-`, `no` or empty).
fn present(cell: &str) -> bool {
    !matches!(cell, "" | "-" | "no")
}

/// Whether the row's cell in `column` (`@any`: some version column's) is `ok`.
fn cell_matches(table: &DataTable, row: usize, column: &str, target: Version, ok: impl Fn(&str) -> bool) -> bool {
    if column == "@any" {
        return table.version_columns().iter().any(|i| ok(table.cell(row, *i)));
    }
    table.column(column, target).is_some_and(|i| ok(table.cell(row, i)))
}

/// Whether a cell passes a lookup's `is` and `matches` (without either,
/// whether it says the name exists).
fn accepted(l: &Lookup, st: &MatchState, cell: &str) -> bool {
    listed(l, cell) && l.matches.as_ref().is_none_or(|m| template_matches(m, st, cell))
}

/// Whether a cell passes a lookup's `is` (without `is` or `matches`,
/// whether it says the name exists): what can be told without the captures
/// that a `matches` template reads.
fn listed(l: &Lookup, cell: &str) -> bool {
    match &l.is {
        Some(list) => list.iter().any(|a| a == cell),
        None => l.matches.is_some() || present(cell),
    }
}

/// Whether `lookup` can hold on a found `row`, whatever the matcher
/// captured: its column's cell at `target` is [`listed`].
pub(super) fn may_find(l: &Lookup, table: &DataTable, row: usize, target: Version) -> bool {
    let Some(column) = &l.column else { return true };
    cell_matches(table, row, column, target, |cell| listed(l, cell))
}

/// `lookup`: the row for the key exists (or not); optionally a column's cell is accepted.
pub fn lookup(l: &Lookup, cx: &Context, st: &mut MatchState) -> bool {
    let Some((_, table)) = cx.tables.get(l.table) else { return false };
    let key = fill(&l.key, cx.target, st);
    let row = table.row(&key);
    let holds = match (row, &l.column) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(row), Some(column)) => cell_matches(table, row, column, cx.target, |cell| accepted(l, st, cell)),
    };
    if holds != l.found {
        return false;
    }
    if let Some(row) = row {
        for (placeholder, column) in &l.capture {
            if let Some(i) = table.column(column, cx.target) {
                st.captures.push((placeholder.clone(), table.cell(row, i).to_string()));
            }
        }
    }
    true
}

/// `nearest`: captures the public key of the table closest to the key (edit
/// distance), when it is near enough to be what was meant: at most one edit
/// for every three characters (a far key suggests a name that has nothing to
/// do with it: `enable_graph_mode` is 6 edits from `enable_math_sdp`).
pub fn nearest(table: usize, key: &str, capture: &str, cx: &Context, st: &mut MatchState) -> bool {
    let Some((_, table)) = cx.tables.get(table) else { return false };
    let key = fill(key, cx.target, st).to_lowercase();
    let best = table
        .keys()
        .filter(|k| !k.starts_with('_'))
        .map(|k| (edit_distance(&key, &k.to_lowercase()), k))
        .min_by_key(|(distance, k)| (*distance, k.len()))
        .filter(|(distance, _)| distance * 3 <= key.chars().count())
        .map(|(_, k)| k);
    match best {
        Some(b) => {
            st.captures.push((capture.to_string(), b.to_string()));
            true
        }
        None => false,
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// `options`: checks a `key:value,key:value` string held by a placeholder.
pub fn options(o: &Options, tables: &[(String, DataTable)], target: Version, st: &mut MatchState) -> bool {
    let Some(value) = st.get(&o.of).map(str::to_string) else { return false };
    let pairs: Vec<(String, String)> = value
        .split(o.separator.as_str())
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once(o.assign.as_str()) {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect();
    let has = |entry: &str| match entry.split_once('=') {
        Some((k, v)) => pairs.iter().any(|(pk, pv)| pk == k && pv.eq_ignore_ascii_case(v)),
        None => pairs.iter().any(|(pk, _)| pk == entry),
    };
    if !o.all.iter().all(|e| has(e)) || (!o.any.is_empty() && !o.any.iter().any(|e| has(e))) {
        return false;
    }
    if let Some((table, column)) = &o.unknown_in {
        let Some((_, t)) = tables.get(*table) else { return false };
        let unknown: Vec<String> = pairs
            .iter()
            .filter(|(k, _)| !t.row(k).is_some_and(|row| cell_matches(t, row, column, target, present)))
            .map(|(k, v)| if v.is_empty() { k.clone() } else { format!("{k}{}{v}", o.assign) })
            .collect();
        if unknown.is_empty() {
            return false;
        }
        if let Some(c) = &o.capture {
            st.captures.push((c.clone(), unknown.join(", ")));
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{edit_distance, template_matches, template_regex};
    use crate::rules::state::MatchState;

    #[test]
    fn a_whole_text_template_answers_like_its_regex() {
        let captured = ["x", "self.model", "a+b", "f(x)[0]", "", "naïve"];
        let texts = ["x", "self.model", "self_model", "a+b", "aab", "f(x)[0]", "", "naïve", "x\n", " x"];
        for value in captured {
            let st = MatchState { captures: vec![("n".into(), value.into())], ..MatchState::default() };
            for text in texts {
                let regex = template_regex("^${n}$", &st, false).expect("an escaped value compiles");
                assert_eq!(template_matches("^${n}$", &st, text), regex.is_match(text), "{value:?} on {text:?}");
            }
        }
        let st = MatchState::default();
        assert!(!template_matches("^${n}$", &st, "x"), "a placeholder with no capture matches nothing");
        let st = MatchState { captures: vec![("n".into(), "loader".into())], ..MatchState::default() };
        assert!(template_matches(r"(^|[^\w.])${n}\b", &st, "for b in loader:"));
        assert!(!template_matches(r"(^|[^\w.])${n}\b", &st, "self.loader"));
    }

    #[test]
    fn a_template_means_the_same_on_ascii_and_unicode_text() {
        let templates = [r"(^|[^\w.])${n}\b", r"\b${n}\s*\.\s*parameters\s*\(", r"^\(?\s*${n}\s*,", r"\W${n}\W"];
        let texts = ["for b in x:", "self.x", "x.parameters()", "(x, y)", "y = x + 1", "_x", "x\t.parameters (", ""];
        for value in ["x", "a.b", "naïve"] {
            let st = MatchState { captures: vec![("n".into(), value.into())], ..MatchState::default() };
            for template in templates {
                for text in texts.iter().map(|t| t.replace('x', value)) {
                    let unicode = template_regex(template, &st, false).expect("compiles").is_match(&text);
                    assert_eq!(template_matches(template, &st, &text), unicode, "{template:?} on {text:?}");
                }
            }
        }
        // Around a non-ASCII letter `\b` is no boundary: the Unicode regex decides.
        let st = MatchState { captures: vec![("n".into(), "x".into())], ..MatchState::default() };
        assert!(!template_matches(r"\b${n}\b", &st, "éx"));
        assert!(template_matches(r"\b${n}\b", &st, "é x"));
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("set_memory_strategy", "set_memory_strategy"), 0);
        assert_eq!(edit_distance("memory_usage", "memory_usagee"), 1);
        assert_eq!(edit_distance("abc", "xbd"), 2);
    }
}
