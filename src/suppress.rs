//! Suppression comments: `# npu-mem: ignore[CODE, ...] -- reason` at the end
//! of a line silences those codes on that line; `# npu-mem: ignore-file[CODE]`
//! silences them in the whole file. Codes may be prefixes (`TX`). Suppressions
//! that silence nothing, or name no known rule, are reported themselves.

use crate::finding::Finding;

/// The marker that starts a suppression inside a comment.
const MARKER: &str = "npu-mem:";

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

/// Every suppression comment in `text` (a `#` comment containing `npu-mem:`).
pub fn parse(text: &str) -> Vec<Directive> {
    if !text.contains(MARKER) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(at) = line.find(MARKER) else { continue };
        let Some(hash) = line[..at].rfind('#') else { continue };
        // A `#` after an odd number of quotes is inside a string, not a comment.
        let before = &line[..hash];
        let in_string = before.matches('"').count() % 2 == 1 || before.matches('\'').count() % 2 == 1;
        if in_string || !line[hash + 1..at].trim().is_empty() {
            continue;
        }
        let rest = line[at + MARKER.len()..].trim_start();
        let (whole_file, rest) = match rest.strip_prefix("ignore-file") {
            Some(r) => (true, r),
            None => match rest.strip_prefix("ignore") {
                Some(r) => (false, r),
                None => continue,
            },
        };
        let Some(inner) = rest.strip_prefix('[') else { continue };
        let Some(close) = inner.find(']') else { continue };
        let codes: Vec<String> =
            inner[..close].split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
        let after = inner[close + 1..].trim();
        let reason = after.strip_prefix("--").map(|r| r.trim().to_string()).filter(|r| !r.is_empty());
        out.push(Directive {
            line: i + 1,
            column: line[..hash].chars().count() + 1,
            end_column: line.trim_end().chars().count() + 1,
            codes,
            reason,
            whole_file,
            source_line: line.to_string(),
        });
    }
    out
}

/// What suppressions did to one file's findings.
#[derive(Debug, Default)]
pub struct Applied {
    /// Findings still reported.
    pub kept: Vec<Finding>,
    /// Silenced findings, with the reason given.
    pub suppressed: Vec<(Finding, Option<String>)>,
    /// Directives (or codes in them) that silenced nothing, and codes no rule has.
    pub unused: Vec<(Directive, String)>,
    /// `(directive, code)` pairs naming no known rule.
    pub unknown: Vec<(Directive, String)>,
}

/// Applies `directives` to `findings`; `known` tells whether a code or prefix names a rule.
pub fn apply(findings: Vec<Finding>, directives: &[Directive], known: &dyn Fn(&str) -> bool) -> Applied {
    let mut applied = Applied::default();
    let mut used = vec![vec![false; 0]; directives.len()];
    for (d, u) in directives.iter().zip(used.iter_mut()) {
        *u = vec![false; d.codes.len()];
    }
    for f in findings {
        let hit = directives.iter().enumerate().find(|(_, d)| d.covers(&f));
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
    for (d, u) in directives.iter().zip(used) {
        for (code, was_used) in d.codes.iter().zip(u) {
            if !known(code) {
                applied.unknown.push((d.clone(), code.clone()));
            } else if !was_used {
                applied.unused.push((d.clone(), code.clone()));
            }
        }
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_line_and_file_directives() {
        let text = "x = y.cuda()  # npu-mem: ignore[TX001, TX006] -- benchmark only\ns = '# npu-mem: ignore[TX002]'\n# npu-mem: ignore-file[API]\n# npu-mem: ignored[TX001]\n";
        let d = parse(text);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            (d[0].line, d[0].codes.clone(), d[0].reason.clone()),
            (1, vec!["TX001".into(), "TX006".into()], Some("benchmark only".into()))
        );
        assert!(d[1].whole_file && d[1].codes == vec!["API".to_string()]);
    }
}
