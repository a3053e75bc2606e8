//! The pipeline: walk -> read -> parse -> analyse -> merge. Files are analysed
//! in parallel; everything after the merge is in a deterministic order.

use crate::finding::{FileProblem, Finding, ProblemKind};
use crate::parse::{first_error_line, parse_python};
use crate::rules::engine::{Engine, FileAnalysis, TableRow};
use crate::rules::render::render_with;
use crate::source::{read_source, LineIndex};
use crate::suppress::{self, Directive};
use crate::walk::{FileKind, ScanFile};
use rayon::prelude::*;

/// What a whole scan found.
pub struct ScanOutcome {
    /// Files looked at (read and analysed, wholly or partly).
    pub files_scanned: usize,
    /// Findings in (path, line, column, code) order.
    pub findings: Vec<Finding>,
    /// Files skipped or only partly analysed.
    pub problems: Vec<FileProblem>,
    /// Summary table rows as `(path, row)`, in path and line order.
    pub rows: Vec<(String, TableRow)>,
    /// Summary counts by count index.
    pub counts: Vec<usize>,
    /// Summary sites as `(sites index, path, line, detail)`, in path and line order.
    pub sites: Vec<(usize, String, usize, String)>,
    /// Summary groups as `(group index, key, value, count)`, sorted by group and key.
    pub groups: Vec<(usize, String, String, usize)>,
    /// Findings silenced by suppression comments, with the reason given.
    pub suppressed: Vec<(Finding, Option<String>)>,
    /// Findings recorded in the `--baseline` (not counted by the gate).
    pub baselined: Vec<Finding>,
    /// Baseline entries that match no finding any more.
    pub stale_baseline: Vec<crate::baseline::Entry>,
}

struct FileOutcome {
    path: String,
    directives: Vec<Directive>,
    analysis: FileAnalysis,
    problem: Option<FileProblem>,
    scanned: bool,
}

/// Analyses every file with `engine`.
pub fn scan(files: &[ScanFile], engine: &Engine) -> ScanOutcome {
    let outcomes: Vec<FileOutcome> = files.par_iter().map(|f| scan_file(f, engine)).collect();
    merge(outcomes, engine)
}

/// Reads and parses every Python file and nothing else (the benchmark's
/// baseline); returns how many parsed.
pub fn parse_only(files: &[ScanFile]) -> usize {
    files
        .par_iter()
        .filter(|f| f.kind == FileKind::Python)
        .filter(|f| read_source(&f.path).ok().and_then(|s| parse_python(&s.text)).is_some())
        .count()
}

fn scan_file(file: &ScanFile, engine: &Engine) -> FileOutcome {
    let mut out = FileOutcome {
        path: file.display.clone(),
        directives: Vec::new(),
        analysis: FileAnalysis::default(),
        problem: None,
        scanned: true,
    };
    let problem = |kind, message: String| Some(FileProblem { path: file.display.clone(), kind, message });
    let path_findings = engine.analyse_path(&file.display);
    if file.kind == FileKind::PathOnly {
        out.analysis.findings = path_findings.into_iter().map(|f| (f, Vec::new())).collect();
        return out;
    }
    let source = match read_source(&file.path) {
        Ok(s) => s,
        Err(e) => {
            out.problem = problem(ProblemKind::Skipped, e.to_string());
            out.scanned = false;
            return out;
        }
    };
    let text = source.text.as_str();
    out.directives = suppress::parse(text);
    let Some(rules) = engine.rules_for(text) else {
        out.analysis.findings = path_findings.into_iter().map(|f| (f, Vec::new())).collect();
        return out;
    };
    let lines = LineIndex::new(text);
    out.analysis = match file.kind {
        FileKind::Shell => engine.analyse_shell(text, &lines, &file.display),
        _ => match parse_python(text) {
            Some(tree) => {
                if let Some(line) = first_error_line(&tree) {
                    out.problem = problem(
                        ProblemKind::Partial,
                        format!("syntax error near line {line}; analysed where the syntax tree is sound"),
                    );
                }
                engine.analyse(tree.root_node(), text, &lines, &file.display, &rules)
            }
            None => {
                out.problem = problem(ProblemKind::Skipped, "the parser gave up on this file".to_string());
                out.scanned = false;
                return out;
            }
        },
    };
    out.analysis.findings.extend(path_findings.into_iter().map(|f| (f, Vec::new())));
    out
}

fn merge(outcomes: Vec<FileOutcome>, engine: &Engine) -> ScanOutcome {
    let n_facts = engine.set.compiler.facts.len();
    let mut facts = vec![false; n_facts];
    for o in &outcomes {
        for (i, f) in o.analysis.facts.iter().enumerate() {
            facts[i] |= *f;
        }
    }
    let mut result = ScanOutcome {
        files_scanned: 0,
        findings: Vec::new(),
        problems: Vec::new(),
        rows: Vec::new(),
        counts: vec![0; engine.set.counts.len()],
        sites: Vec::new(),
        groups: Vec::new(),
        suppressed: Vec::new(),
        baselined: Vec::new(),
        stale_baseline: Vec::new(),
    };
    let known = |code: &str| engine.set.rules.iter().any(|r| r.code.starts_with(code));
    let mut groups: std::collections::BTreeMap<(usize, String), (String, usize)> = Default::default();
    for o in outcomes {
        result.files_scanned += usize::from(o.scanned);
        result.problems.extend(o.problem);
        let kept: Vec<Finding> = o
            .analysis
            .findings
            .into_iter()
            .filter(|(_, clauses)| clauses.iter().all(|c| c.iter().any(|(_, i, want)| facts[*i] == *want)))
            .map(|(f, _)| f)
            .collect();
        let applied = suppress::apply(apply_overrides(kept, engine), &o.directives, &known);
        result.findings.extend(applied.kept);
        result.suppressed.extend(applied.suppressed);
        for (directive, code) in &applied.unused {
            result.findings.extend(meta_finding(engine, "NPM001", &o.path, directive, code));
        }
        for (directive, code) in &applied.unknown {
            result.findings.extend(meta_finding(engine, "NPM002", &o.path, directive, code));
        }
        for (i, c) in o.analysis.counts.iter().enumerate() {
            result.counts[i] += c;
        }
        result.rows.extend(o.analysis.rows.into_iter().map(|r| (o.path.clone(), r)));
        result.sites.extend(o.analysis.sites.into_iter().map(|(i, line, detail)| (i, o.path.clone(), line, detail)));
        for (i, key, value) in o.analysis.groups {
            groups.entry((i, key)).or_insert((value, 0)).1 += 1;
        }
    }
    result.groups = groups.into_iter().map(|((i, key), (value, n))| (i, key, value, n)).collect();
    result.sites.sort_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
    result.findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    result.suppressed.sort_by(|a, b| a.0.sort_key().cmp(&b.0.sort_key()));
    result.rows.sort_by(|a, b| (&a.0, a.1.line, a.1.table).cmp(&(&b.0, b.1.line, b.1.table)));
    result
}

/// Applies `per-file-ignores` (glob -> codes; a glob without `/` matches the
/// file name) and per-code severity overrides from the configuration.
pub fn apply_settings(
    outcome: &mut ScanOutcome,
    per_file_ignores: &std::collections::BTreeMap<String, Vec<String>>,
    severity: &std::collections::BTreeMap<String, crate::finding::Severity>,
) {
    let globs: Vec<(crate::rules::glob::NameGlobs, bool, &Vec<String>)> = per_file_ignores
        .iter()
        .filter_map(|(g, codes)| {
            crate::rules::glob::NameGlobs::new(std::slice::from_ref(g)).ok().map(|n| (n, g.contains('/'), codes))
        })
        .collect();
    outcome.findings.retain(|f| {
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        !globs.iter().any(|(g, full, codes)| {
            g.is_match(if *full { &f.path } else { name }) && codes.iter().any(|c| f.code.starts_with(c.as_str()))
        })
    });
    for f in &mut outcome.findings {
        if let Some(s) = severity.get(&f.code) {
            f.severity = *s;
        }
    }
}

/// A finding about a suppression comment, from the meta rule `code` (if active).
fn meta_finding(engine: &Engine, code: &str, path: &str, d: &Directive, named: &str) -> Option<Finding> {
    let rule = engine.active.iter().map(|&i| &engine.set.rules[i]).find(|r| r.code == code)?;
    let message = render_with(&rule.message, |p| if p == "name" { named.to_string() } else { String::new() });
    let start = crate::finding::Position { line: d.line, column: d.column };
    let end = crate::finding::Position { line: d.line, column: d.end_column };
    Some(Finding { source_line: d.source_line.clone(), ..rule.finding(path, start, end, message) })
}

/// Drops findings that a more specific rule replaces on the same node
/// (one range contains the other) in one file.
fn apply_overrides(findings: Vec<Finding>, engine: &Engine) -> Vec<Finding> {
    let overrides =
        |code: &str| engine.set.rules.iter().find(|r| r.code == code).map(|r| r.overrides.as_slice()).unwrap_or(&[]);
    let overlaps = |a: (usize, usize), b: (usize, usize)| (a.0 <= b.0 && b.1 <= a.1) || (b.0 <= a.0 && a.1 <= b.1);
    let dropped: Vec<bool> = findings
        .iter()
        .map(|f| findings.iter().any(|g| overrides(&g.code).contains(&f.code) && overlaps(f.byte_range, g.byte_range)))
        .collect();
    findings.into_iter().zip(dropped).filter(|(_, d)| !d).map(|(f, _)| f).collect()
}
