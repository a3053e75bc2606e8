//! A file's findings once the scan's facts are known: those whose project
//! and process conditions hold, minus the ones a more specific rule
//! overrides, split by the file's suppression comments, with findings about
//! the comments themselves (NPM001, NPM002), located by cell in a notebook.

use super::facts::ScanFacts;
use crate::analysis::FileOutcome;
use crate::finding::{Finding, SharedText};
use crate::notebook::{Locator, Notebook};
use crate::rules::engine::Engine;
use crate::rules::model::Scope;
use crate::rules::render::render_with;
use crate::rules::state::Clause;
use crate::source::LineIndex;
use crate::suppress::{self, Directive};
use std::collections::HashMap;

/// What one file reports once the scan's facts are known.
#[derive(Debug, Default)]
pub(crate) struct FileFindings {
    /// Findings still reported, with those about suppression comments.
    pub kept: Vec<Finding>,
    /// Findings its suppression comments silence, with the reason given.
    pub suppressed: Vec<(Finding, Option<String>)>,
}

/// What one file reports once the scan's `facts` are known: findings whose
/// project and process conditions hold, minus overridden ones, split by
/// suppression comments; with the meta rules' findings about comments that
/// silence nothing (NPM001) or name no rule (NPM002).
pub(crate) fn file_findings(o: &FileOutcome, facts: &ScanFacts, engine: &Engine) -> FileFindings {
    let kept = o.facts.findings.iter().filter(|f| conditions_hold(o, facts, f)).map(|(f, _)| f.clone()).collect();
    reported(o, kept, engine)
}

/// [`file_findings`], moving the findings out of `o` instead of copying
/// them: a large scan would otherwise hold every finding twice.
pub(crate) fn take_file_findings(o: &mut FileOutcome, facts: &ScanFacts, engine: &Engine) -> FileFindings {
    let all = std::mem::take(&mut o.facts.findings);
    let kept = all.into_iter().filter(|f| conditions_hold(o, facts, f)).map(|(f, _)| f).collect();
    reported(o, kept, engine)
}

/// Whether the project and process conditions of finding `f` of `o` hold.
fn conditions_hold(o: &FileOutcome, facts: &ScanFacts, (_, clauses): &(Finding, Vec<Clause>)) -> bool {
    let holds = |&(scope, i, want): &(Scope, usize, bool)| facts.holds(scope, o.project, &o.path, i) == want;
    clauses.iter().all(|c| c.iter().any(holds))
}

/// What `o` reports of `kept`, its findings whose conditions hold.
fn reported(o: &FileOutcome, mut kept: Vec<Finding>, engine: &Engine) -> FileFindings {
    kept.iter_mut().for_each(|f| f.project = o.project);
    let known = |code: &str| engine.set.rules.iter().any(|r| r.code.starts_with(code));
    let directives = &o.facts.directives;
    let mut applied = suppress::apply(apply_overrides(kept, engine), directives, &known);
    let mut meta: Vec<Finding> = Vec::new();
    for (i, code) in &applied.unused {
        meta.extend(meta_finding(engine, "NPM001", &o.path, &directives[*i], code));
    }
    for (i, code) in &applied.unknown {
        meta.extend(meta_finding(engine, "NPM002", &o.path, &directives[*i], code));
    }
    meta.iter_mut().for_each(|f| f.project = o.project);
    if let Some(nb) = &o.notebook {
        let suppressed = applied.suppressed.iter_mut().map(|(f, _)| f);
        locate_in_cells(nb, applied.kept.iter_mut().chain(suppressed).chain(meta.iter_mut()));
    }
    applied.kept.extend(meta);
    FileFindings { kept: applied.kept, suppressed: applied.suppressed }
}

/// Moves findings' positions from the notebook's joined Python to its cells;
/// the indexes that needs are built once, and only if there are findings.
fn locate_in_cells<'f>(nb: &Notebook, findings: impl Iterator<Item = &'f mut Finding>) {
    let mut findings = findings.peekable();
    if findings.peek().is_none() {
        return;
    }
    let lines = LineIndex::new(&nb.python);
    let mut locator = nb.locator();
    findings.for_each(|f| locate_in_cell(f, nb, &lines, &mut locator));
}

/// Moves a finding's positions from the notebook's joined Python to its cell.
fn locate_in_cell(f: &mut Finding, nb: &Notebook, lines: &LineIndex, locator: &mut Locator) {
    let Some((cell, line)) = nb.cell_line(lines, f.line) else { return };
    let end_line = nb.cell_line(lines, f.end_line).map_or(line, |(_, l)| l);
    let start = locator.file_position(cell, line, f.column);
    let end = locator.file_position(cell, end_line, f.end_column);
    if let (Some(s), Some(e)) = (start, end) {
        f.file_region = Some(Box::new((s.0, s.1, e.0, e.1)));
    }
    (f.cell, f.line, f.end_line) = (Some(cell), line, end_line);
    for e in f.fix.iter_mut().flat_map(|fix| fix.edits.iter_mut()) {
        e.start.line = nb.cell_line(lines, e.start.line).map_or(e.start.line, |(_, l)| l);
        e.end.line = nb.cell_line(lines, e.end.line).map_or(e.end.line, |(_, l)| l);
    }
}

/// A finding about a suppression comment, from the meta rule `code` (if active).
fn meta_finding(engine: &Engine, code: &str, path: &SharedText, d: &Directive, named: &str) -> Option<Finding> {
    let rule = engine.active.iter().map(|&i| &engine.set.rules[i]).find(|r| r.code == code)?;
    let message = render_with(&rule.message, |p| if p == "name" { named.to_string() } else { String::new() });
    let start = crate::finding::Position { line: d.line, column: d.column };
    let end = crate::finding::Position { line: d.line, column: d.end_column };
    Some(Finding { source_line: d.source_line.clone(), ..rule.finding(path, start, end, message) })
}

/// Drops findings that a more specific rule replaces on the same node
/// (one range contains the other) in one file.
fn apply_overrides(findings: Vec<Finding>, engine: &Engine) -> Vec<Finding> {
    let overrides = |code: &str| engine.set.rule(code).map(|r| r.overrides.as_slice()).unwrap_or(&[]);
    // The ranges of the findings that override each code.
    let mut by_code: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for g in &findings {
        for code in overrides(&g.code) {
            by_code.entry(code.as_str()).or_default().push(g.byte_range);
        }
    }
    if by_code.is_empty() {
        return findings;
    }
    let by_code: HashMap<&str, NestedRanges> =
        by_code.into_iter().map(|(code, ranges)| (code, NestedRanges::new(ranges))).collect();
    findings.into_iter().filter(|f| !by_code.get(f.code.as_str()).is_some_and(|r| r.nests_with(f.byte_range))).collect()
}

/// Byte ranges, indexed so that asking whether one of them contains, or lies
/// within, a given range costs a binary search, however many there are.
struct NestedRanges {
    /// The ranges' starts, sorted.
    starts: Vec<usize>,
    /// For each prefix of `starts`, the largest end among those ranges.
    max_end_before: Vec<usize>,
    /// For each suffix of `starts`, the smallest end among those ranges.
    min_end_after: Vec<usize>,
}

impl NestedRanges {
    fn new(mut ranges: Vec<(usize, usize)>) -> Self {
        ranges.sort_unstable();
        let starts = ranges.iter().map(|r| r.0).collect();
        let max_end_before = ranges
            .iter()
            .scan(0, |m, r| {
                *m = (*m).max(r.1);
                Some(*m)
            })
            .collect();
        let mut min_end_after: Vec<usize> = ranges
            .iter()
            .rev()
            .scan(usize::MAX, |m, r| {
                *m = (*m).min(r.1);
                Some(*m)
            })
            .collect();
        min_end_after.reverse();
        NestedRanges { starts, max_end_before, min_end_after }
    }

    /// Whether some range contains `(start, end)` or lies within it.
    fn nests_with(&self, (start, end): (usize, usize)) -> bool {
        // Ranges starting at or before `start` contain it if one ends at or after `end`.
        let before = self.starts.partition_point(|&s| s <= start);
        let contains = before > 0 && self.max_end_before[before - 1] >= end;
        // Ranges starting at or after `start` lie within it if one ends by `end`.
        let after = self.starts.partition_point(|&s| s < start);
        let within = self.min_end_after.get(after).is_some_and(|&e| e <= end);
        contains || within
    }
}

#[cfg(test)]
mod tests {
    use super::NestedRanges;

    #[test]
    fn nested_ranges_answer_like_comparing_every_pair() {
        let ranges = vec![(10, 20), (30, 60), (35, 40), (70, 70), (5, 8)];
        let index = NestedRanges::new(ranges.clone());
        let nested = |a: (usize, usize), b: (usize, usize)| (a.0 <= b.0 && b.1 <= a.1) || (b.0 <= a.0 && a.1 <= b.1);
        for start in 0..80 {
            for end in start..80 {
                let expected = ranges.iter().any(|&r| nested(r, (start, end)));
                assert_eq!(index.nests_with((start, end)), expected, "({start}, {end})");
            }
        }
    }
}
