//! Matching one file: a parsed Python file (the rule walk over its tree,
//! then the file's own facts decided), a shell script, or a bare path.

use super::engine::{may_hold, Engine, FileFacts, ProjectAdds};
use super::model::*;
use super::render::{build_text_fix, render_with};
use super::state::Clause;
use super::walker::{shell_match, ShellItem, Walker};
use crate::finding::{Finding, SharedText};
use crate::hash::FastSet;
use crate::semantic::subclasses::ImportedClasses;
use crate::semantic::FileModel;
use crate::source::LineIndex;
use tree_sitter::{Node, StreamingIterator};

impl Engine<'_> {
    /// Matches the matcher alternatives `active` says can match (of rules,
    /// summaries and facts, by [`super::engine::AltNumbers`]) against one parsed file, which imports the
    /// derived classes `imported` from other files (if the project layer found any).
    pub fn analyse(
        &self,
        root: Node,
        src: &str,
        lines: &LineIndex,
        display: &SharedText,
        active: &[bool],
        imported: Option<&ImportedClasses>,
    ) -> FileFacts {
        let mut model = FileModel::build(root, src);
        if let Some(imported) = imported {
            model.import_classes(imported);
        }
        let query_hits = self.run_queries(root, src);
        let facts = self
            .set
            .compiler
            .facts
            .iter()
            .map(|f| match f {
                Fact::Imports(g) => model.imported.iter().any(|q| g.is_match(q)),
                Fact::Has(_) => false,
            })
            .collect();
        let derived_classes = model.derived_classes(|base| self.follows_subclasses_of(base));
        let adds = ProjectAdds { facts, counts: vec![0; self.set.counts.len()], derived_classes, ..Default::default() };
        let out = FileFacts { adds, ..FileFacts::default() };
        let dead = crate::semantic::version_gates::dead_branches(&model.tree, src, self.target);
        let mut walker = Walker::new(self, root, src, &model, lines, display, &query_hits, active, out).skipping(dead);
        model.tree.visit(&mut walker);
        let mut out = walker.finish();
        out.cut_at_line = model.tree.cut().map(|n| n.start_position().row + 1);
        resolve_file_facts(&mut out);
        self.keep_first(&mut out.findings);
        super::guards::pair_fixes(&mut out.findings, &self.set.rules, root, src);
        if !self.guard_only.is_empty() {
            out.findings.retain(|(f, _)| !self.guard_only.iter().any(|c| f.code == *c));
        }
        out
    }

    /// Drops findings beyond the first of each `once_per_file` rule, and
    /// beyond the first on a line of each `once_per_line` rule.
    fn keep_first(&self, findings: &mut Vec<(Finding, Vec<Clause>)>) {
        let per_file: FastSet<&str> =
            self.set.rules.iter().filter(|r| r.once_per_file).map(|r| r.code.as_str()).collect();
        let per_line: FastSet<&str> =
            self.set.rules.iter().filter(|r| r.once_per_line).map(|r| r.code.as_str()).collect();
        if per_file.is_empty() && per_line.is_empty() {
            return;
        }
        findings.sort_by_key(|a| (a.0.line, a.0.column));
        let mut seen: FastSet<(String, usize)> = FastSet::default();
        findings.retain(|(f, _)| {
            let line = if per_file.contains(f.code.as_str()) {
                0
            } else if per_line.contains(f.code.as_str()) {
                f.line
            } else {
                return true;
            };
            seen.insert((f.code.to_string(), line))
        });
    }

    /// Matches environment-variable and command rules against a shell
    /// script, and the facts (`file_has`, `project_has`) a shell item can make true.
    pub fn analyse_shell(
        &self,
        src: &str,
        script: &crate::parse::shell::Script,
        lines: &LineIndex,
        display: &SharedText,
    ) -> FileFacts {
        let adds = ProjectAdds {
            facts: vec![false; self.set.compiler.facts.len()],
            counts: vec![0; self.set.counts.len()],
            ..Default::default()
        };
        let mut out = FileFacts { adds, ..FileFacts::default() };
        let items: Vec<ShellItem> =
            script.mentions.iter().map(ShellItem::Env).chain(script.commands.iter().map(ShellItem::Command)).collect();
        let tables = &self.set.compiler.tables;
        for (fact, holds) in self.set.compiler.facts.iter().zip(out.adds.facts.iter_mut()) {
            if let Fact::Has(alts) = fact {
                *holds =
                    items.iter().any(|&item| alts.iter().any(|m| shell_match(m, item, tables, self.target).is_some()));
            }
        }
        for &i in &self.active {
            let rule = &self.set.rules[i];
            for &item in &items {
                let hit = rule.alternatives.iter().find_map(|m| shell_match(m, item, tables, self.target));
                let Some(hit) = hit else { continue };
                let range = hit.range(&rule.report);
                let lookup = |name: &str| {
                    hit.captures.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default()
                };
                out.findings.push((self.plain_finding(rule, range, src, lines, display, &lookup), Vec::new()));
            }
        }
        out
    }

    /// Matches file-name rules (`file = "*.cu"`) against a path; a match
    /// with `named_in_project` (or another fact decided once every file has
    /// been walked) waits for it.
    pub fn analyse_path(&self, display: &SharedText) -> Vec<(Finding, Vec<Clause>)> {
        let lines = LineIndex::new("");
        let mut out = Vec::new();
        for &i in &self.active {
            let rule = &self.set.rules[i];
            let hit = rule
                .alternatives
                .iter()
                .find(|m| matches!(&m.anchor, Some(Anchor::File { globs, .. }) if globs.is_match(display)));
            if let Some(m) = hit {
                let lookup =
                    |name: &str| if name == "path" || name == "text" { display.to_string() } else { String::new() };
                let clauses = m.preds.iter().filter_map(|p| p.project_literal().map(|literal| vec![literal])).collect();
                out.push((self.plain_finding(rule, (0, 0), "", &lines, display, &lookup), clauses));
            }
        }
        out
    }

    /// A finding at a byte range without a syntax node.
    fn plain_finding(
        &self,
        rule: &Rule,
        range: (usize, usize),
        src: &str,
        lines: &LineIndex,
        display: &SharedText,
        lookup: &dyn Fn(&str) -> String,
    ) -> Finding {
        let start = lines.position(src, range.0);
        let end = lines.position(src, range.1);
        Finding {
            fix: rule.fix.as_ref().and_then(|t| build_text_fix(t, lookup, range, src, lines)),
            byte_range: range,
            source_line: lines.excerpt(src, start.line),
            ..rule.finding(display, start, end, render_with(&rule.message, lookup))
        }
    }

    fn run_queries(&self, root: Node, src: &str) -> Vec<FastSet<usize>> {
        let mut hits = Vec::new();
        for (query, capture) in &self.set.compiler.queries {
            let mut set = FastSet::default();
            let mut cursor = tree_sitter::QueryCursor::new();
            let mut matches = cursor.matches(query, root, src.as_bytes());
            while let Some(m) = matches.next() {
                set.extend(m.captures.iter().filter(|c| c.index == *capture).map(|c| c.node.id()));
            }
            hits.push(set);
        }
        hits
    }
}

/// Decides the file-scope conditions of findings now that every fact of the
/// file is known; project-scope conditions stay for the merge.
fn resolve_file_facts(out: &mut FileFacts) {
    let facts = &out.adds.facts;
    out.findings.retain_mut(|(_, clauses)| {
        if !may_hold(clauses, facts) {
            return false;
        }
        // Satisfied clauses go; the rest keep their project and process literals for the merge.
        clauses.retain(|clause| !clause.iter().any(|(scope, i, want)| *scope == Scope::File && facts[*i] == *want));
        clauses.iter_mut().for_each(|clause| clause.retain(|(scope, _, _)| *scope != Scope::File));
        true
    });
}
