//! The matching pass: one walk over a parsed file that hands each node to the
//! rules that can match it (indexed by node kind and trigger name), and turns
//! matches into findings, summary rows and counts.

use super::compile::Compiler;
use super::context::{Context, Frame};
use super::matcher::{callee, eval, method_parts, Clause, MatchState};
use super::model::*;
use super::render::{build_fix, build_text_fix, render, render_with};
use crate::finding::Finding;
use crate::semantic::calls::{ArgState, CallArgs};
use crate::semantic::traverse::{traverse, Visitor};
use crate::semantic::values::{shorten, text};
use crate::semantic::FileModel;
use crate::source::LineIndex;
use regex::Regex;
use std::collections::{HashMap, HashSet};
use tree_sitter::{Node, StreamingIterator};

/// Every compiled pack of a run.
pub struct RuleSet {
    /// Rules in pack order.
    pub rules: Vec<Rule>,
    /// Summary tables.
    pub tables: Vec<Table>,
    /// Summary counts.
    pub counts: Vec<Count>,
    /// Pack compilation state (project facts, queries, extensions).
    pub compiler: Compiler,
}

/// What a matcher alternative feeds when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sink {
    Rule(usize),
    Table(usize),
    Count(usize),
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    sink: Sink,
    alt: usize,
}

/// Entries indexed by the kind of node they can match.
#[derive(Default)]
struct Dispatch {
    call_by_name: HashMap<String, Vec<Entry>>,
    call_any: Vec<Entry>,
    method_by_name: HashMap<String, Vec<Entry>>,
    attribute: Vec<Entry>,
    string: Vec<Entry>,
    compare: Vec<Entry>,
    import: Vec<Entry>,
    condition: Vec<Entry>,
    query: Vec<Entry>,
}

/// A rule set prepared for one target version.
pub struct Engine<'r> {
    /// The rules.
    pub set: &'r RuleSet,
    /// The torch_npu version advice is for.
    pub target: Version,
    dispatch: Dispatch,
    /// Indices of rules active for the target.
    pub active: Vec<usize>,
    prefilter: Option<Regex>,
}

/// One row of a summary table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRow {
    /// Table index.
    pub table: usize,
    /// 1-based line.
    pub line: usize,
    /// Cell texts.
    pub cells: Vec<String>,
}

/// What matching one file produced.
#[derive(Debug, Default)]
pub struct FileAnalysis {
    /// Findings, each with project conditions still to check.
    pub findings: Vec<(Finding, Vec<Clause>)>,
    /// Which project facts this file makes true.
    pub facts: Vec<bool>,
    /// Summary table rows.
    pub rows: Vec<TableRow>,
    /// Summary counts, by count index.
    pub counts: Vec<usize>,
}

impl<'r> Engine<'r> {
    /// Indexes the rules that apply to `target`.
    pub fn new(set: &'r RuleSet, target: Version) -> Self {
        let mut dispatch = Dispatch::default();
        let mut triggers: Option<Vec<String>> = Some(Vec::new());
        let mut active = Vec::new();
        let mut add =
            |sink: Sink, alts: &[Matcher], explicit: Option<&Vec<String>>, triggers: &mut Option<Vec<String>>| {
                for (alt, m) in alts.iter().enumerate() {
                    let entry = Entry { sink, alt };
                    let words = index_anchor(&mut dispatch, entry, m.anchor.as_ref());
                    match (explicit, words, triggers.as_mut()) {
                        (Some(list), _, Some(t)) => t.extend(list.iter().cloned()),
                        (None, Some(words), Some(t)) => t.extend(words),
                        (None, None, _) => *triggers = None,
                        _ => {}
                    }
                }
            };
        for (i, rule) in set.rules.iter().enumerate() {
            if rule.target.as_ref().is_some_and(|r| !r.allows(target)) {
                continue;
            }
            active.push(i);
            add(Sink::Rule(i), &rule.alternatives, rule.triggers.as_ref(), &mut triggers);
        }
        for (i, t) in set.tables.iter().enumerate() {
            add(Sink::Table(i), &t.alternatives, None, &mut triggers);
        }
        for (i, c) in set.counts.iter().enumerate() {
            if let CountSource::Matches(alts) = &c.source {
                add(Sink::Count(i), alts, None, &mut triggers);
            }
        }
        // Files that only make a project fact true (an import of
        // `transfer_to_npu`) must still be analysed.
        for facts in &set.compiler.project_facts {
            match (&facts.last_segments, triggers.as_mut()) {
                (Some(words), Some(t)) => t.extend(words.iter().cloned()),
                (None, _) => triggers = None,
                _ => {}
            }
        }
        let prefilter = triggers.map(|mut words| {
            words.sort();
            words.dedup();
            let alternation: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
            Regex::new(&alternation.join("|")).expect("escaped literals form a valid regex")
        });
        Engine { set, target, dispatch, active, prefilter }
    }

    /// Whether a file with this text can match anything (cheap byte-level check).
    pub fn may_match(&self, text: &str) -> bool {
        self.prefilter.as_ref().is_none_or(|re| re.is_match(text))
    }

    /// Matches every rule against one parsed file.
    pub fn analyse(&self, root: Node, src: &str, lines: &LineIndex, display: &str) -> FileAnalysis {
        let model = FileModel::build(root, src);
        let query_hits = self.run_queries(root, src);
        let facts =
            self.set.compiler.project_facts.iter().map(|g| model.imported.iter().any(|q| g.is_match(q))).collect();
        let mut walker = Walker {
            engine: self,
            src,
            model: &model,
            lines,
            display,
            query_hits: &query_hits,
            frames: Vec::new(),
            frame_ids: Vec::new(),
            candidates: Vec::new(),
            ancestors: Vec::new(),
            seen: HashSet::new(),
            out: FileAnalysis { facts, counts: vec![0; self.set.counts.len()], ..FileAnalysis::default() },
        };
        traverse(root, &mut walker);
        walker.out
    }

    /// Matches environment-variable rules against a shell script.
    pub fn analyse_shell(&self, src: &str, lines: &LineIndex, display: &str) -> FileAnalysis {
        let mut out = FileAnalysis {
            facts: vec![false; self.set.compiler.project_facts.len()],
            counts: vec![0; self.set.counts.len()],
            ..FileAnalysis::default()
        };
        let mentions = crate::shell::env_mentions(src);
        for &i in &self.active {
            let rule = &self.set.rules[i];
            for m in &rule.alternatives {
                let Some(Anchor::EnvVar(re)) = &m.anchor else { continue };
                for mention in mentions.iter().filter(|x| re.is_match(&x.name)) {
                    let lookup = |name: &str| match name {
                        "name" | "text" | "report" => mention.name.clone(),
                        "value" => mention.value.clone().unwrap_or_default(),
                        other => m.set.iter().find(|(k, _)| k == other).map(|(_, v)| v.clone()).unwrap_or_default(),
                    };
                    out.findings
                        .push((self.plain_finding(rule, mention.range, src, lines, display, &lookup), Vec::new()));
                }
            }
        }
        out
    }

    /// Matches file-name rules (`file = "*.cu"`) against a path.
    pub fn analyse_path(&self, display: &str) -> Vec<Finding> {
        let lines = LineIndex::new("");
        let mut out = Vec::new();
        for &i in &self.active {
            let rule = &self.set.rules[i];
            let hit = rule
                .alternatives
                .iter()
                .any(|m| matches!(&m.anchor, Some(Anchor::File { globs, .. }) if globs.is_match(display)));
            if hit {
                let lookup =
                    |name: &str| if name == "path" || name == "text" { display.to_string() } else { String::new() };
                out.push(self.plain_finding(rule, (0, 0), "", &lines, display, &lookup));
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
        display: &str,
        lookup: &dyn Fn(&str) -> String,
    ) -> Finding {
        let start = lines.position(src, range.0);
        let end = lines.position(src, range.1);
        Finding {
            code: rule.code.clone(),
            name: rule.name.clone(),
            severity: rule.severity,
            section: rule.section,
            path: display.to_string(),
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
            message: render_with(&rule.message, lookup),
            auto_migrated: rule.auto_migrated,
            blocker: rule.blocker,
            fix: rule.fix.as_ref().and_then(|t| build_text_fix(t, lookup, range, src, lines)),
            byte_range: range,
            source_line: lines.line_text(src, start.line).to_string(),
        }
    }

    fn run_queries(&self, root: Node, src: &str) -> Vec<HashSet<usize>> {
        let mut hits = Vec::new();
        for (query, capture) in &self.set.compiler.queries {
            let mut set = HashSet::new();
            let mut cursor = tree_sitter::QueryCursor::new();
            let mut matches = cursor.matches(query, root, src.as_bytes());
            while let Some(m) = matches.next() {
                set.extend(m.captures.iter().filter(|c| c.index == *capture).map(|c| c.node.id()));
            }
            hits.push(set);
        }
        hits
    }

    fn matcher(&self, e: Entry) -> &Matcher {
        match e.sink {
            Sink::Rule(i) => &self.set.rules[i].alternatives[e.alt],
            Sink::Table(i) => &self.set.tables[i].alternatives[e.alt],
            Sink::Count(i) => match &self.set.counts[i].source {
                CountSource::Matches(alts) => &alts[e.alt],
                CountSource::Rule(_) => unreachable!("rule counts are never dispatched"),
            },
        }
    }
}

/// Adds an entry to the index for its anchor; returns the words a file must
/// contain for it to match (`None`: no such word is known).
fn index_anchor(d: &mut Dispatch, e: Entry, anchor: Option<&Anchor>) -> Option<Vec<String>> {
    let last_literal = |g: &super::glob::NameGlobs| -> Option<Vec<String>> {
        g.last_segments.clone().or_else(|| {
            let words: Option<Vec<String>> = g
                .source
                .iter()
                .map(|s| s.split('.').rev().find(|seg| !seg.contains(['*', '?', '{', '}'])).map(str::to_string))
                .collect();
            words
        })
    };
    match anchor? {
        Anchor::Call(g) => {
            match &g.last_segments {
                Some(keys) => keys.iter().for_each(|k| d.call_by_name.entry(k.clone()).or_default().push(e)),
                None => d.call_any.push(e),
            }
            last_literal(g)
        }
        Anchor::Method(names) => {
            names.iter().for_each(|n| d.method_by_name.entry(n.clone()).or_default().push(e));
            Some(names.clone())
        }
        Anchor::Attribute(g) => {
            d.attribute.push(e);
            last_literal(g)
        }
        Anchor::Str(_) | Anchor::EnvVar(_) => {
            d.string.push(e);
            None
        }
        Anchor::Compare(_) => {
            d.compare.push(e);
            None
        }
        Anchor::Import(g) => {
            d.import.push(e);
            last_literal(g)
        }
        Anchor::Condition(c) => {
            d.condition.push(e);
            last_literal(&c.test_calls)
        }
        Anchor::Query(_) => {
            d.query.push(e);
            None
        }
        Anchor::File { .. } => Some(Vec::new()),
    }
}

struct Walker<'a, 't> {
    engine: &'a Engine<'a>,
    src: &'t str,
    model: &'a FileModel<'t>,
    lines: &'a LineIndex,
    display: &'a str,
    query_hits: &'a [HashSet<usize>],
    frames: Vec<Frame<'t>>,
    frame_ids: Vec<usize>,
    candidates: Vec<Entry>,
    ancestors: Vec<Node<'t>>,
    /// (rule, report start byte) already reported, so alternatives do not repeat a finding.
    seen: HashSet<(usize, usize)>,
    out: FileAnalysis,
}

impl<'a, 't> Visitor<'t> for Walker<'a, 't> {
    fn enter(&mut self, node: Node<'t>, field: Option<&'static str>) -> bool {
        if !node.is_named() {
            return false;
        }
        if let Some(frame) = self.frame_for(node, field) {
            self.frames.push(frame);
            self.frame_ids.push(node.id());
        }
        self.visit(node);
        self.ancestors.push(node);
        true
    }

    fn leave(&mut self, node: Node<'t>) {
        if self.ancestors.last().is_some_and(|a| a.id() == node.id()) {
            self.ancestors.pop();
        }
        while self.frame_ids.last() == Some(&node.id()) {
            self.frame_ids.pop();
            self.frames.pop();
        }
    }
}

impl<'a, 't> Walker<'a, 't> {
    /// The frame a node opens, if any.
    fn frame_for(&self, node: Node<'t>, field: Option<&'static str>) -> Option<Frame<'t>> {
        let parent = self.ancestors.last().copied();
        match (node.kind(), field, parent.map(|p| p.kind())) {
            ("function_definition", _, _) => Some(Frame::Function(node)),
            ("class_definition", _, _) => Some(Frame::Class),
            ("block", Some("body"), Some("for_statement" | "while_statement")) => parent.map(Frame::LoopBody),
            ("block", Some("body"), Some("with_statement")) => parent.map(Frame::With),
            ("block", Some("consequence"), Some("if_statement" | "elif_clause")) => {
                parent.and_then(|p| p.child_by_field_name("condition")).map(Frame::IfBranch)
            }
            (
                "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression",
                _,
                _,
            ) => Some(Frame::Comprehension(node)),
            _ => None,
        }
    }

    /// Hands `node` to every entry that can match its kind.
    fn visit(&mut self, node: Node<'t>) {
        let d = &self.engine.dispatch;
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        match node.kind() {
            "call" | "decorator" => {
                if let Some(f) = callee(node) {
                    // An imported alias (`DL` for DataLoader) is indexed under the name it stands for.
                    let last = match f.kind() {
                        "identifier" => {
                            let name = text(f, self.src);
                            let target = self.model.import_target(name).unwrap_or(name);
                            Some(target.rsplit('.').next().unwrap_or(target))
                        }
                        "attribute" => f.child_by_field_name("attribute").map(|a| text(a, self.src)),
                        _ => None,
                    };
                    if let Some(list) = last.and_then(|l| d.call_by_name.get(l)) {
                        candidates.extend(list);
                    }
                    candidates.extend(&d.call_any);
                }
                if let Some((_, name)) = method_parts(node) {
                    if let Some(list) = d.method_by_name.get(text(name, self.src)) {
                        candidates.extend(list);
                    }
                }
                if node.kind() == "call" {
                    candidates.extend(&d.string);
                }
            }
            "attribute" | "identifier" => candidates.extend(&d.attribute),
            "string" | "binary_operator" => candidates.extend(&d.string),
            "comparison_operator" => candidates.extend(&d.compare),
            "import_statement" | "import_from_statement" => candidates.extend(&d.import),
            "conditional_expression" | "if_statement" => candidates.extend(&d.condition),
            _ => {}
        }
        candidates.extend(&d.query);
        for entry in &candidates {
            self.try_entry(*entry, node);
        }
        self.candidates = candidates;
    }

    fn try_entry(&mut self, entry: Entry, node: Node<'t>) {
        let cx = Context {
            src: self.src,
            model: self.model,
            frames: &self.frames,
            ancestors: &self.ancestors,
            current: node,
            query_hits: self.query_hits,
        };
        let matcher = self.engine.matcher(entry);
        let mut st = MatchState::default();
        if !eval(matcher, node, &cx, &mut st) {
            return;
        }
        match entry.sink {
            Sink::Rule(i) => {
                let rule = &self.engine.set.rules[i];
                let report = report_node(rule, node, &st, &cx);
                if self.seen.insert((i, report.start_byte())) {
                    let finding = make_finding(rule, node, report, &cx, &st, self.lines, self.display);
                    self.out.findings.push((finding, st.pending));
                }
            }
            Sink::Table(i) => {
                let row = table_row(&self.engine.set.tables[i], i, node, &cx, self.lines);
                self.out.rows.push(row);
            }
            Sink::Count(i) => self.out.counts[i] += 1,
        }
    }
}

/// Builds the finding for a match of `rule`.
fn make_finding<'t>(
    rule: &Rule,
    anchor: Node<'t>,
    report: Node<'t>,
    cx: &Context<'_, 't>,
    st: &MatchState<'t>,
    lines: &LineIndex,
    display: &str,
) -> Finding {
    let severity = match &rule.downgrade {
        Some((to, when)) if eval(when, anchor, cx, &mut MatchState::default()) => *to,
        _ => rule.severity,
    };
    let start = lines.position(cx.src, report.start_byte());
    let end = lines.position(cx.src, report.end_byte());
    Finding {
        code: rule.code.clone(),
        name: rule.name.clone(),
        severity,
        section: rule.section,
        path: display.to_string(),
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
        message: render(&rule.message, st, anchor, report, cx),
        auto_migrated: rule.auto_migrated,
        blocker: rule.blocker,
        fix: rule.fix.as_ref().and_then(|t| build_fix(t, st, anchor, report, cx, lines)),
        byte_range: (report.start_byte(), report.end_byte()),
        source_line: lines.line_text(cx.src, start.line).to_string(),
    }
}

/// The node a finding points at.
fn report_node<'t>(rule: &Rule, anchor: Node<'t>, st: &MatchState<'t>, cx: &Context<'_, 't>) -> Node<'t> {
    let natural = match (st.focus, anchor.kind()) {
        (Some(focus), _) => focus,
        (None, "call") => cx.parent(anchor).filter(|p| p.kind() == "decorator").unwrap_or(anchor),
        _ => anchor,
    };
    let args = || CallArgs::of(anchor, cx.src);
    match &rule.report {
        ReportAt::Node => natural,
        ReportAt::Keyword(k) => args().keyword(k).unwrap_or(natural),
        ReportAt::KeywordValue(k) => {
            args().keyword(k).and_then(|kw| kw.child_by_field_name("value")).unwrap_or(natural)
        }
    }
}

/// A summary row: each column's argument as written, `?` when `**kwargs` may
/// hide it, `-` with PyTorch's default when absent.
fn table_row(t: &Table, index: usize, node: Node, cx: &Context, lines: &LineIndex) -> TableRow {
    let args = CallArgs::of(node, cx.src);
    let cells = t
        .columns
        .iter()
        .map(|(name, position, default)| match args.get(Some(name), *position) {
            ArgState::Present(v) => shorten(text(v, cx.src), 28),
            ArgState::Unknown => "?".to_string(),
            ArgState::Absent => format!("- ({default})"),
        })
        .collect();
    TableRow { table: index, line: lines.position(cx.src, node.start_byte()).line, cells }
}
