//! Suppression comments: `# npu-mem: ignore[CODE, ...] -- reason` at the end
//! of a line silences those codes on that line; `# npu-mem: ignore-file[CODE]`
//! silences them in the whole file. Codes may be prefixes (`TX`). Suppressions
//! that silence nothing, or name no known rule, are reported themselves.

use crate::finding::Finding;
use crate::parse::KindOf;
use tree_sitter::Node;

/// The marker that starts a suppression inside a comment.
pub(crate) const MARKER: &str = "npu-mem:";

/// One suppression comment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Directive {
    /// 1-based line of the comment.
    pub line: usize,
    /// 1-based column (characters) of the `#`.
    pub column: usize,
    /// 1-based end column (characters) of the directive.
    pub end_column: usize,
    /// Codes or code prefixes it silences.
    pub codes: Vec<String>,
    /// The text after `--`, if any.
    pub reason: Option<String>,
    /// `ignore-file` rather than `ignore`.
    pub whole_file: bool,
    /// The text of its line, for excerpts.
    pub source_line: String,
}

impl Directive {
    /// Whether it silences `finding`.
    pub fn covers(&self, finding: &Finding) -> bool {
        (self.whole_file || self.line == finding.line)
            && self.codes.iter().any(|c| finding.code.starts_with(c.as_str()))
    }
}

/// Every suppression in the comments of a parsed Python file (or a notebook's
/// joined Python): a directive in a string or docstring is text, not a comment.
pub(crate) fn in_python(root: Node, text: &str) -> Vec<Directive> {
    let markers: Vec<usize> = text.match_indices(MARKER).map(|(i, _)| i).collect();
    if markers.is_empty() {
        return Vec::new();
    }
    // Only subtrees that contain a marker are visited, so a file with one
    // directive costs little more than finding it.
    let contains_marker = |n: &Node| {
        let first = markers.partition_point(|&m| m < n.start_byte());
        markers.get(first).is_some_and(|&m| m < n.end_byte())
    };
    let mut comments = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind_name() == "comment" {
            comments.push((node.start_byte(), node.end_byte()));
        } else {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor).filter(|c| contains_marker(c)));
        }
    }
    comments.sort_unstable();
    // Lines as Python counts them (a lone `\r` ends one); the same offsets.
    directives_in(&crate::source::python_line_ends(text), &comments)
}

/// Every suppression in the comments of a shell script, whose comments
/// ([`crate::parse::shell::read`]) are `comments`: a `#` in a quoted string
/// or a here-document is text.
pub(crate) fn in_shell(text: &str, comments: &crate::parse::shell::Comments) -> Vec<Directive> {
    if !text.contains(MARKER) {
        return Vec::new();
    }
    let marked: Vec<(usize, usize)> =
        comments.ranges().into_iter().filter(|&(s, e)| text[s..e].contains(MARKER)).collect();
    directives_in(text, &marked)
}

/// The directives in `comments` (byte ranges of whole comments, in order).
fn directives_in(text: &str, comments: &[(usize, usize)]) -> Vec<Directive> {
    let mut out = Vec::new();
    // Line numbers are counted from one comment to the next: linear in the file.
    let (mut line, mut counted_to) = (1, 0);
    for &(start, end) in comments {
        let comment = &text[start..end];
        let Some(at) = comment.find(MARKER) else { continue };
        let Some(hash) = comment[..at].rfind('#') else { continue };
        if !comment[hash + 1..at].trim().is_empty() {
            continue;
        }
        let rest = comment[at + MARKER.len()..].trim_start();
        let (whole_file, rest) = match rest.strip_prefix("ignore-file") {
            Some(r) => (true, r),
            None => match rest.strip_prefix("ignore") {
                Some(r) => (false, r),
                None => continue,
            },
        };
        let Some(inner) = rest.strip_prefix('[') else { continue };
        let Some(close) = inner.find(']') else { continue };
        // A code named twice is one code: one finding if it is unknown or unused.
        let mut seen = std::collections::HashSet::new();
        let codes: Vec<String> = inner[..close]
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty() && seen.insert(*c))
            .map(str::to_string)
            .collect();
        let after = inner[close + 1..].trim();
        let reason = after.strip_prefix("--").map(|r| r.trim().to_string()).filter(|r| !r.is_empty());
        let hash = start + hash;
        line += text.as_bytes()[counted_to..hash].iter().filter(|&&b| b == b'\n').count();
        counted_to = hash;
        let line_start = text[..hash].rfind('\n').map_or(0, |n| n + 1);
        let line_end = text[hash..].find('\n').map_or(text.len(), |n| hash + n);
        let source_line = text[line_start..line_end].trim_end_matches('\r');
        out.push(Directive {
            line,
            column: text[line_start..hash].chars().count() + 1,
            end_column: source_line.trim_end().chars().count() + 1,
            codes,
            reason,
            whole_file,
            source_line: crate::source::excerpt_of(source_line),
        });
    }
    out
}

/// What suppressions did to one file's findings.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// Findings still reported.
    pub kept: Vec<Finding>,
    /// Silenced findings, with the reason given.
    pub suppressed: Vec<(Finding, Option<String>)>,
    /// `(directive, code)` pairs, the directive as an index into the file's
    /// directives, whose code silenced nothing.
    pub unused: Vec<(usize, String)>,
    /// `(directive, code)` pairs, as in `unused`, whose code names no known rule.
    pub unknown: Vec<(usize, String)>,
}

/// Applies `directives` to `findings`; `known` tells whether a code or prefix names a rule.
pub(crate) fn apply(findings: Vec<Finding>, directives: &[Directive], known: &dyn Fn(&str) -> bool) -> Applied {
    // Most files have no directive: their findings keep their list. Copied
    // into a list that grows, a large scan's findings took twice their room.
    if directives.is_empty() {
        return Applied { kept: findings, ..Applied::default() };
    }
    let mut applied = Applied::default();
    let mut used = vec![vec![false; 0]; directives.len()];
    for (d, u) in directives.iter().zip(used.iter_mut()) {
        *u = vec![false; d.codes.len()];
    }
    // Only the directives of a finding's line and the file-wide ones can cover it:
    // a file with many suppressions costs findings x those, not findings x all.
    let mut on_line: std::collections::HashMap<usize, Vec<usize>> = std::collections::HashMap::new();
    let mut file_wide = Vec::new();
    for (i, d) in directives.iter().enumerate() {
        if d.whole_file {
            file_wide.push(i);
        } else {
            on_line.entry(d.line).or_default().push(i);
        }
    }
    for f in findings {
        let candidates = on_line.get(&f.line).into_iter().flatten().chain(&file_wide);
        // The first directive in the file that covers it, as the reason given.
        let hit = candidates.copied().filter(|&i| directives[i].covers(&f)).min().map(|i| (i, &directives[i]));
        match hit {
            Some((i, d)) => {
                for (j, c) in d.codes.iter().enumerate() {
                    if f.code.starts_with(c.as_str()) {
                        used[i][j] = true;
                    }
                }
                applied.suppressed.push((f, d.reason.clone()));
            }
            None => applied.kept.push(f),
        }
    }
    for (i, (d, u)) in directives.iter().zip(used).enumerate() {
        for (code, was_used) in d.codes.iter().zip(u) {
            if !known(code) {
                applied.unknown.push((i, code.clone()));
            } else if !was_used {
                applied.unused.push((i, code.clone()));
            }
        }
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(text: &str) -> Vec<Directive> {
        let tree = crate::parse::parse_python(text).expect("parses");
        in_python(tree.root_node(), text)
    }

    fn shell(text: &str) -> Vec<Directive> {
        in_shell(text, &crate::parse::shell::read(text).comments)
    }

    #[test]
    fn a_code_named_twice_is_one_code_and_a_long_line_is_not_copied() {
        let long = format!("x = 1  # npu-mem: ignore[TX001, x, TX001, x{}] -- why", ", x".repeat(400));
        let d = python(&long);
        assert_eq!(d[0].codes, ["TX001", "x"]);
        assert!(long.len() > crate::source::MAX_EXCERPT_BYTES);
        assert_eq!(d[0].source_line, "", "a line too long to excerpt is not kept");
        let applied = apply(Vec::new(), &d, &|c| c.starts_with("TX"));
        assert_eq!(applied.unknown, [(0, "x".to_string())]);
        assert_eq!(applied.unused, [(0, "TX001".to_string())]);
    }

    #[test]
    fn parses_line_and_file_directives() {
        let text = "x = y.cuda()  # npu-mem: ignore[TX001, TX006] -- benchmark only\ns = '# npu-mem: ignore[TX002]'\n# npu-mem: ignore-file[API]\n# npu-mem: ignored[TX001]\n";
        // The same directives in a shell script (where `y.cuda()` would be a syntax error).
        let script = text.replace("x = y.cuda()", "python3 x.py");
        for d in [python(text), shell(&script)] {
            assert_eq!(d.len(), 2, "{d:?}");
            assert_eq!(
                (d[0].line, d[0].column, d[0].codes.clone(), d[0].reason.clone()),
                (1, 15, vec!["TX001".into(), "TX006".into()], Some("benchmark only".into()))
            );
            assert!(d[1].whole_file && d[1].codes == vec!["API".to_string()] && d[1].line == 3);
        }
    }

    #[test]
    fn only_real_python_comments_count() {
        let text = "\"\"\"Docs.\n# npu-mem: ignore-file[TX]\n\"\"\"\ns = 'x # npu-mem: ignore-file[API]'\nprint(\"it's\", m.cuda())  # npu-mem: ignore[TX001]\nt = \"\"\"a\nb\"\"\"; m.cuda()  # npu-mem: ignore[TX006]\n";
        let d = python(text);
        let found: Vec<(usize, usize, bool)> = d.iter().map(|d| (d.line, d.column, d.whole_file)).collect();
        assert_eq!(found, [(5, 26, false), (7, 17, false)], "{d:?}");
        assert_eq!(d[0].source_line, "print(\"it's\", m.cuda())  # npu-mem: ignore[TX001]");
    }

    #[test]
    fn comments_at_the_ends_of_blocks_and_of_the_file_are_found() {
        let text = "def f():\n    x = 1\n    # npu-mem: ignore[TX001]\n\n# npu-mem: ignore[TX002]\ny = 2\n\n\n# npu-mem: ignore-file[TX]\n\n";
        let lines: Vec<usize> = python(text).iter().map(|d| d.line).collect();
        assert_eq!(lines, [3, 5, 9]);
    }

    #[test]
    fn shell_quotes_and_here_documents() {
        let text = "echo \"it's\" # npu-mem: ignore[TX009]\necho '# npu-mem: ignore-file[TX]'\necho \"a\nb # npu-mem: ignore-file[API]\"\ncat <<'EOF'\nit's # npu-mem: ignore-file[TX]\nEOF\nx=$# # npu-mem: ignore[TX010]\n";
        let found: Vec<(usize, Vec<String>)> = shell(text).into_iter().map(|d| (d.line, d.codes)).collect();
        assert_eq!(found, [(1, vec!["TX009".to_string()]), (8, vec!["TX010".to_string()])]);
    }
}
