//! Byte positions inside notebook JSON, which serde_json does not report:
//! where each cell's `"source"` value and its strings are, and how to write
//! a new source in the same layout. Runs only on text serde_json accepted
//! (so nesting is bounded by serde_json's recursion limit).

/// Per cell (in order): the span of its `"source"` value and the spans of the
/// strings in it (`None` for a cell without a source).
pub(super) type SourceSpans = Vec<Option<((usize, usize), Vec<(usize, usize)>)>>;

/// Finds every cell's source in `raw`; `None` if the layout is not a notebook.
pub(super) fn source_spans(raw: &str) -> Option<SourceSpans> {
    let b = raw.as_bytes();
    let mut at = ws(b, 0);
    let mut cells = Vec::new();
    object(b, &mut at, &mut |b, at, key| {
        if key != "cells" {
            return skip(b, at);
        }
        array(b, at, &mut |b, at| {
            let mut found = None;
            let is_object = b.get(*at) == Some(&b'{');
            if is_object {
                object(b, at, &mut |b, at, key| {
                    if key != "source" {
                        return skip(b, at);
                    }
                    let start = *at;
                    let mut pieces = Vec::new();
                    if b.get(*at) == Some(&b'"') {
                        let end = string_end(b, *at)?;
                        pieces.push((*at, end));
                        *at = end;
                    } else {
                        array(b, at, &mut |b, at| {
                            let end = string_end(b, *at)?;
                            pieces.push((*at, end));
                            *at = end;
                            Some(())
                        })?;
                    }
                    found = Some(((start, *at), pieces));
                    Some(())
                })?;
            } else {
                skip(b, at)?;
            }
            cells.push(found);
            Some(())
        })
    })?;
    Some(cells)
}

/// The width in the JSON text of each character of a JSON string's contents
/// (without the quotes): 1, 2 for `\n`, 6 for `\u00e9`, 12 for a surrogate pair.
pub(super) fn escaped_widths(contents: &str) -> impl Iterator<Item = usize> + '_ {
    let mut chars = contents.chars().peekable();
    std::iter::from_fn(move || {
        let c = chars.next()?;
        if c != '\\' {
            return Some(1);
        }
        match chars.next() {
            Some('u') => {
                let hex: String = (0..4).filter_map(|_| chars.next()).collect();
                let high = u32::from_str_radix(&hex, 16).is_ok_and(|v| (0xD800..0xDC00).contains(&v));
                if high && chars.peek() == Some(&'\\') {
                    (0..6).for_each(|_| {
                        chars.next();
                    });
                    return Some(12);
                }
                Some(6)
            }
            _ => Some(2),
        }
    })
}

/// The JSON text for a cell's new `source`, in the layout of the old value:
/// one string per line, indented like the old strings, when it was a list
/// written over several lines; a one-line list or a single string otherwise.
pub(super) fn source_value(raw: &str, span: (usize, usize), pieces: &[(usize, usize)], source: &str) -> String {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
    let old = &raw[span.0..span.1];
    if !old.starts_with('[') {
        return quote(source);
    }
    let lines: Vec<String> = source.split_inclusive('\n').map(quote).collect();
    let multiline = old.contains('\n');
    match pieces.first() {
        Some(first) if multiline => {
            let line_start = raw[..first.0].rfind('\n').map_or(0, |i| i + 1);
            let indent = &raw[line_start..first.0];
            let close_start = raw[..span.1 - 1].rfind('\n').map_or(0, |i| i + 1);
            let close_indent = &raw[close_start..span.1 - 1];
            let newline = if raw[..first.0].ends_with(&format!("\r\n{indent}")) { "\r\n" } else { "\n" };
            let body = lines.iter().map(|l| format!("{indent}{l}")).collect::<Vec<_>>().join(&format!(",{newline}"));
            if lines.is_empty() {
                "[]".to_string()
            } else {
                format!("[{newline}{body}{newline}{close_indent}]")
            }
        }
        _ => format!("[{}]", lines.join(", ")),
    }
}

fn ws(b: &[u8], mut at: usize) -> usize {
    while b.get(at).is_some_and(|c| c.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

/// The offset just after the string starting at `at`.
fn string_end(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Skips any value at `at`.
fn skip(b: &[u8], at: &mut usize) -> Option<()> {
    match b.get(*at)? {
        b'"' => *at = string_end(b, *at)?,
        b'{' => object(b, at, &mut |b, at, _| skip(b, at))?,
        b'[' => array(b, at, &mut |b, at| skip(b, at))?,
        _ => {
            while b.get(*at).is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace()) {
                *at += 1;
            }
        }
    }
    Some(())
}

/// Called with each member's key, `at` on its value; must move `at` past it.
type OnMember<'f> = dyn FnMut(&[u8], &mut usize, &str) -> Option<()> + 'f;

/// Walks the object at `at`, calling `member` on each member.
fn object(b: &[u8], at: &mut usize, member: &mut OnMember) -> Option<()> {
    if b.get(*at) != Some(&b'{') {
        return None;
    }
    *at = ws(b, *at + 1);
    if b.get(*at) == Some(&b'}') {
        *at += 1;
        return Some(());
    }
    loop {
        let end = string_end(b, *at)?;
        let key: String = serde_json::from_slice(&b[*at..end]).ok()?;
        *at = ws(b, end);
        if b.get(*at) != Some(&b':') {
            return None;
        }
        *at = ws(b, *at + 1);
        member(b, at, &key)?;
        *at = ws(b, *at);
        match b.get(*at)? {
            b',' => *at = ws(b, *at + 1),
            b'}' => {
                *at += 1;
                return Some(());
            }
            _ => return None,
        }
    }
}

/// Walks the array at `at`, calling `element` with `at` on each element.
fn array(b: &[u8], at: &mut usize, element: &mut dyn FnMut(&[u8], &mut usize) -> Option<()>) -> Option<()> {
    if b.get(*at) != Some(&b'[') {
        return None;
    }
    *at = ws(b, *at + 1);
    if b.get(*at) == Some(&b']') {
        *at += 1;
        return Some(());
    }
    loop {
        element(b, at)?;
        *at = ws(b, *at);
        match b.get(*at)? {
            b',' => *at = ws(b, *at + 1),
            b']' => {
                *at += 1;
                return Some(());
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sources_and_rewrites_them_in_their_layout() {
        let raw = "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"source\": \"# hi\"\n  },\n  {\n   \"cell_type\": \"code\",\n   \"source\": [\n    \"import torch\\n\",\n    \"x = \\\"\\u00e9\\\".cuda()\"\n   ]\n  }\n ],\n \"nbformat\": 4\n}\n";
        let spans = source_spans(raw).unwrap();
        assert_eq!(spans.len(), 2);
        let (span, pieces) = spans[1].clone().unwrap();
        assert_eq!(&raw[pieces[0].0..pieces[0].1], "\"import torch\\n\"");
        let new = source_value(raw, span, &pieces, "import torch\nx = 1\n");
        assert_eq!(new, "[\n    \"import torch\\n\",\n    \"x = 1\\n\"\n   ]");
        let widths: Vec<usize> = escaped_widths(&raw[pieces[1].0 + 1..pieces[1].1 - 1]).collect();
        assert_eq!(widths, vec![1, 1, 1, 1, 2, 6, 2, 1, 1, 1, 1, 1, 1, 1]);
    }
}
