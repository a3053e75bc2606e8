//! The matching walk over one parsed file: keeps the enclosing frames and
//! ancestors, hands each node to the entries indexed for its kind, and turns
//! matches into findings, summary rows, counts and facts.

use super::context::{frame_opened, local, Context, Frame, NodeMemo};
use super::data_table::DataTable;
use super::engine::{Engine, Entry, FileFacts, Sink, TableRow};
use super::matcher::eval;
use super::model::*;
use super::render::{build_fix, render, render_with};
use super::state::MatchState;
use crate::finding::{Applicability, Finding, SharedText};
use crate::hash::FastSet;
use crate::parse::shell::{EnvMention, ShellCommand};
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use crate::semantic::calls::{callee, method_parts};
use crate::semantic::calls::{ArgState, CallArgs};
use crate::semantic::traverse::Visitor;
use crate::semantic::values::{shorten, text};
use crate::semantic::FileModel;
use crate::source::LineIndex;
use tree_sitter::Node;

/// The visitor of the matching pass.
pub struct Walker<'a, 't> {
    engine: &'a Engine<'a>,
    root: Node<'t>,
    src: &'t str,
    model: &'a FileModel<'t>,
    lines: &'a LineIndex,
    display: &'a SharedText,
    query_hits: &'a [FastSet<usize>],
    /// By alternative number: whether its trigger words occur in this file.
    active: &'a [bool],
    frames: Vec<Frame<'t>>,
    frame_ids: Vec<usize>,
    ancestors: Vec<Node<'t>>,
    candidates: Vec<Entry>,
    /// What is worked out once about the node being visited.
    memo: NodeMemo,
    /// (rule, report start byte) already reported, so alternatives do not repeat a finding.
    seen: FastSet<(usize, usize)>,
    /// (summary sink, node) already counted, for the same reason.
    seen_summary: FastSet<(u8, usize, usize)>,
    /// Matches that wait for the file's facts before their findings are built.
    deferred: Vec<Deferred<'t>>,
    /// The line of the first node whose scope search stopped at its bound, if any.
    scope_search_cut: std::cell::Cell<Option<usize>>,
    /// Branches that the target's torch never runs (byte ranges of their
    /// nodes): nothing in them is matched.
    dead: FastSet<(usize, usize)>,
    /// What the walk produced.
    pub out: FileFacts,
}

impl<'a, 't> Walker<'a, 't> {
    /// A walker over one file.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        engine: &'a Engine<'a>,
        root: Node<'t>,
        src: &'t str,
        model: &'a FileModel<'t>,
        lines: &'a LineIndex,
        display: &'a SharedText,
        query_hits: &'a [FastSet<usize>],
        active: &'a [bool],
        out: FileFacts,
    ) -> Self {
        Walker {
            engine,
            root,
            src,
            model,
            lines,
            display,
            query_hits,
            active,
            frames: Vec::new(),
            frame_ids: Vec::new(),
            ancestors: Vec::new(),
            candidates: Vec::new(),
            memo: NodeMemo::default(),
            seen: FastSet::default(),
            seen_summary: FastSet::default(),
            deferred: Vec::new(),
            scope_search_cut: std::cell::Cell::new(None),
            dead: FastSet::default(),
            out,
        }
    }

    /// Leaves the nodes at `dead` (byte ranges), and what is inside them, unmatched.
    pub fn skipping(mut self, dead: impl IntoIterator<Item = (usize, usize)>) -> Self {
        self.dead.extend(dead);
        self
    }

    /// Builds the findings of deferred matches whose file conditions hold, in
    /// the places the walk would have put them, and returns what the walk produced.
    pub fn finish(mut self) -> FileFacts {
        let deferred = std::mem::take(&mut self.deferred);
        for d in deferred.into_iter().rev() {
            if !super::engine::may_hold(&d.st.pending, &self.out.adds.facts) {
                continue;
            }
            let memo = NodeMemo::new(d.current_attr.clone());
            let cx = self.context_at(d.node, &d.frames, &d.ancestors, &memo);
            let rule = &self.engine.set.rules[d.rule];
            let finding =
                make_finding(rule, d.node, d.report, &cx, &d.st, &self.out.adds.facts, self.lines, self.display);
            self.out.findings.insert(d.at, (finding, d.st.pending));
        }
        self.out.scope_search_cut_at_line = self.scope_search_cut.get();
        self.out
    }
}

/// A match whose finding waits for the end of the walk, because a condition on
/// the whole file must hold first: building it (its fix) can cost a walk of its
/// own, and most such matches (`file_has` rules anchored on the module) fail.
/// The walker's frames and ancestors at the node are kept for that moment.
struct Deferred<'t> {
    rule: usize,
    node: Node<'t>,
    report: (usize, usize),
    st: MatchState<'t>,
    frames: Vec<Frame<'t>>,
    ancestors: Vec<Node<'t>>,
    current_attr: Option<String>,
    /// Where in the findings the walk would have put it.
    at: usize,
}

impl<'a, 't> Visitor<'t> for Walker<'a, 't> {
    fn enter(&mut self, node: Node<'t>) -> bool {
        if !self.dead.is_empty() && self.dead.contains(&(node.start_byte(), node.end_byte())) {
            return false;
        }
        if let Some(frame) = frame_opened(self.ancestors.last().copied(), node) {
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
    /// Hands `node` to every entry that can match its kind.
    fn visit(&mut self, node: Node<'t>) {
        let d = &self.engine.dispatch;
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        self.memo = NodeMemo::default();
        match node.kind_name() {
            "call" | "decorator" => {
                if let Some(f) = callee(node) {
                    // An imported alias (`DL` for DataLoader) is indexed under the name it stands for.
                    let last = match f.kind_name() {
                        "identifier" => {
                            let name = text(f, self.src);
                            let target = self.model.import_target(name).unwrap_or(name);
                            Some(target.rsplit('.').next().unwrap_or(target))
                        }
                        "attribute" => f.field(Field::Attribute).map(|a| text(a, self.src)),
                        _ => None,
                    };
                    if let Some(list) = last.and_then(|l| d.call_by_name.get(l)) {
                        candidates.extend(list);
                    }
                    // ... and under what other arms' imports of it stand for, and
                    // the classes it derives from, where it is a derived class;
                    // each name once, so that no entry is tried twice.
                    let others = match f.kind_name() {
                        "identifier" => self.model.other_arms_of(text(f, self.src)),
                        _ => &[],
                    };
                    let bases = self.model.derived_of_callee(f, self.src).iter().map(|class| &class.base);
                    let mut seen: Vec<&str> = last.into_iter().collect();
                    for other in others.iter().chain(bases) {
                        let other_last = other.rsplit('.').next().unwrap_or(other);
                        if !seen.contains(&other_last) {
                            candidates.extend(d.call_by_name.get(other_last).into_iter().flatten());
                            seen.push(other_last);
                        }
                    }
                    if !d.call_by_root.is_empty() {
                        // Resolved once here; the anchors read the same memo.
                        let cx = self.context(node);
                        let resolved = cx.callee_name(node, f);
                        let resolved_root = resolved.as_deref().map(root_of);
                        // An entry whose other globs are indexed by name may be here already.
                        if let Some(list) = resolved_root.and_then(|r| d.call_by_root.get(r)) {
                            let named = candidates.len();
                            for e in list {
                                if !e.also_by_name || !candidates[..named].iter().any(|c| c.same(e)) {
                                    candidates.push(*e);
                                }
                            }
                        }
                        // The anchor also matches what other arms' imports of the
                        // callee stand for, and the bases of a derived class: their
                        // roots too, each entry once.
                        let others = cx.other_arm_names(f);
                        let bases = self.model.derived_of_callee(f, self.src).iter().map(|class| class.base.as_str());
                        let mut roots: Vec<&str> = Vec::new();
                        for other in others.iter().map(String::as_str).chain(bases).map(root_of) {
                            if resolved_root == Some(other) || roots.contains(&other) {
                                continue;
                            }
                            for e in d.call_by_root.get(other).into_iter().flatten() {
                                if !candidates.iter().any(|c| c.same(e)) {
                                    candidates.push(*e);
                                }
                            }
                            roots.push(other);
                        }
                    }
                    candidates.extend(&d.call_any);
                }
                if let Some((_, name)) = method_parts(node) {
                    if let Some(list) = d.method_by_name.get(text(name, self.src)) {
                        candidates.extend(list);
                    }
                }
                if node.kind_name() == "call" {
                    candidates.extend(&d.string);
                }
            }
            "attribute" | "identifier" if !d.attribute.is_empty() => {
                // Resolve once for every attribute anchor; most names resolve to nothing.
                self.memo = NodeMemo::new(self.resolve_attribute(node));
                if self.memo.attr.is_some() {
                    candidates.extend(&d.attribute);
                }
            }
            "string" | "binary_operator" => candidates.extend(&d.string),
            "comparison_operator" => candidates.extend(&d.compare),
            "import_statement" | "import_from_statement" => candidates.extend(&d.import),
            "conditional_expression" | "if_statement" => candidates.extend(&d.condition),
            _ => {}
        }
        if let Some(list) = d.kind.get(node.kind_name()) {
            candidates.extend(list);
        }
        candidates.extend(&d.query);
        for entry in &candidates {
            self.try_entry(*entry, node);
        }
        self.candidates = candidates;
    }

    fn context(&self, node: Node<'t>) -> Context<'_, 't> {
        self.context_at(node, &self.frames, &self.ancestors, &self.memo)
    }

    fn context_at<'c>(
        &'c self,
        node: Node<'t>,
        frames: &'c [Frame<'t>],
        ancestors: &'c [Node<'t>],
        memo: &'c NodeMemo,
    ) -> Context<'c, 't> {
        Context {
            src: self.src,
            model: self.model,
            frames,
            ancestors,
            current: node,
            query_hits: self.query_hits,
            root: self.root,
            target: self.engine.target,
            tables: &self.engine.set.compiler.tables,
            memo,
            scope_search_cut: &self.scope_search_cut,
        }
    }

    fn resolve_attribute(&self, node: Node<'t>) -> Option<String> {
        super::matcher::attribute_name(node, &self.context(node))
    }

    fn try_entry(&mut self, entry: Entry, node: Node<'t>) {
        match entry.sink {
            Sink::Fact(i) if self.out.adds.facts[i] => {}
            _ if !self.active[self.engine.numbers.of(entry)] => {}
            _ => {
                if let Some(outcome) = self.evaluate(entry, node) {
                    self.record(outcome, node);
                }
            }
        }
    }

    /// Matches one entry at `node`; what a match produces, not yet recorded.
    fn evaluate(&self, entry: Entry, node: Node<'t>) -> Option<Outcome<'t>> {
        let cx = self.context(node);
        let mut st = MatchState::default();
        if !eval(self.engine.matcher(entry), node, &cx, &mut st) {
            return None;
        }
        let set = self.engine.set;
        if let Some(key) = summary_key(entry.sink) {
            if self.seen_summary.contains(&(key.0, key.1, node.id())) {
                return None;
            }
        }
        Some(match entry.sink {
            Sink::Rule(i) => {
                let rule = &set.rules[i];
                let report = report_range(rule, node, &st, &cx);
                if self.seen.contains(&(i, report.0)) {
                    return None;
                }
                if rule.conditions_read_file || st.pending.iter().flatten().any(|(scope, _, _)| *scope == Scope::File) {
                    return Some(Outcome::Deferred(Box::new(Deferred {
                        rule: i,
                        node,
                        report,
                        frames: self.frames.clone(),
                        ancestors: self.ancestors.clone(),
                        current_attr: self.memo.attr.clone(),
                        st,
                        at: 0,
                    })));
                }
                // Not deferred: the rule's conditions read no fact of the file.
                let finding = make_finding(rule, node, report, &cx, &st, &[], self.lines, self.display);
                Outcome::Finding(i, report.0, Box::new(finding), st.pending)
            }
            Sink::Table(i) => Outcome::Row(table_row(&set.tables[i], i, node, &cx, self.lines)),
            Sink::Count(i) => Outcome::Count(i),
            Sink::Sites(i) => {
                let detail =
                    set.sites[i].detail.as_deref().map(|d| render(d, &st, node, node, &cx)).unwrap_or_default();
                Outcome::Site(i, self.lines.position(self.src, node.start_byte()).line, detail)
            }
            Sink::Group(i) => {
                let g = &set.groups[i];
                Outcome::Group(i, render(&g.key, &st, node, node, &cx), render(&g.value, &st, node, node, &cx))
            }
            // A fact that holds only if other facts do is not a fact yet.
            Sink::Fact(i) => match st.pending.is_empty() {
                true => Outcome::Fact(i),
                false => return None,
            },
        })
    }

    fn record(&mut self, outcome: Outcome<'t>, node: Node<'t>) {
        match outcome {
            Outcome::Finding(i, start, finding, pending) => {
                self.seen.insert((i, start));
                self.out.findings.push((*finding, pending));
            }
            Outcome::Deferred(mut d) => {
                self.seen.insert((d.rule, d.report.0));
                d.at = self.out.findings.len();
                self.deferred.push(*d);
            }
            Outcome::Fact(i) => self.out.adds.facts[i] = true,
            Outcome::Row(row) => {
                self.seen_summary.insert((0, row.table, node.id()));
                self.out.rows.push(row);
            }
            Outcome::Count(i) => {
                self.seen_summary.insert((1, i, node.id()));
                self.out.adds.counts[i] += 1;
            }
            Outcome::Site(i, line, detail) => {
                self.seen_summary.insert((2, i, node.id()));
                self.out.sites.push((i, line, detail));
            }
            Outcome::Group(i, key, value) => {
                self.seen_summary.insert((3, i, node.id()));
                self.out.groups.push((i, key, value));
            }
        }
    }
}

/// What one match produces.
enum Outcome<'t> {
    Finding(usize, usize, Box<Finding>, Vec<super::state::Clause>),
    Deferred(Box<Deferred<'t>>),
    Row(TableRow),
    Count(usize),
    Site(usize, usize, String),
    Group(usize, String, String),
    Fact(usize),
}

/// Summary sinks count each node once, whichever alternative matched it.
fn summary_key(sink: Sink) -> Option<(u8, usize)> {
    match sink {
        Sink::Table(i) => Some((0, i)),
        Sink::Count(i) => Some((1, i)),
        Sink::Sites(i) => Some((2, i)),
        Sink::Group(i) => Some((3, i)),
        Sink::Rule(_) | Sink::Fact(_) => None,
    }
}

/// Builds the finding for a match of `rule`; `facts` are the file's facts,
/// complete when the rule's conditions read them (`Rule::conditions_read_file`).
#[allow(clippy::too_many_arguments)]
fn make_finding<'t>(
    rule: &Rule,
    anchor: Node<'t>,
    report: (usize, usize),
    cx: &Context<'_, 't>,
    st: &MatchState<'t>,
    facts: &[bool],
    lines: &LineIndex,
    display: &SharedText,
) -> Finding {
    // A condition holds if it matches and the file facts it depends on are true.
    let holds = |when: &Matcher, state: &mut MatchState<'t>| {
        let before = state.pending.len();
        eval(when, anchor, cx, state) && super::engine::holds_in_file(&state.pending[before..], facts)
    };
    let downgraded = rule.downgrade.as_ref().filter(|(_, when)| holds(when, &mut MatchState::default()));
    let handled = rule.auto_migrated_when.as_ref().is_some_and(|when| holds(when, &mut MatchState::default()));
    let severity = downgraded.map_or(rule.severity, |(to, _)| *to);
    let report_node = cx.root.descendant_for_byte_range(report.0, report.1).unwrap_or(anchor);
    let start = lines.position(cx.src, report.0);
    let end = lines.position(cx.src, report.1);
    // The fix's `when` may capture nodes its edits refer to, so it extends the match's state.
    let fix = rule.fix.as_ref().and_then(|t| {
        let mut fix_state = st.clone();
        let applies = t.when.as_ref().is_none_or(|w| holds(w, &mut fix_state));
        applies.then(|| build_fix(t, &fix_state, anchor, report_node, cx, lines)).flatten()
    });
    // A fix that would break the code's own NPU handling is withheld, and says so.
    let withheld = fix.as_ref().and_then(|_| rule.fix.as_ref()?.withheld.as_ref());
    let fix_withheld = withheld.filter(|(when, _)| holds(when, &mut MatchState::default())).map(|(_, why)| why.clone());
    let mut fix = fix.filter(|_| fix_withheld.is_none());
    // A fix that may change what the program does elsewhere becomes unsafe, and says why.
    let unsafe_when = rule.fix.as_ref().and_then(|t| t.unsafe_when.as_ref());
    if let (Some(f), Some((when, why))) = (fix.as_mut(), unsafe_when) {
        if f.applicability == Applicability::Safe && holds(when, &mut MatchState::default()) {
            f.make_unsafe(why);
        }
    }
    Finding {
        severity,
        // What makes a finding less severe also keeps it from blocking, and
        // what automatic migration handles blocks nothing.
        blocker: rule.blocker && downgraded.is_none() && !handled,
        auto_migrated: rule.auto_migrated || handled,
        fix,
        fix_withheld,
        byte_range: report,
        source_line: lines.excerpt(cx.src, start.line),
        ..rule.finding(display, start, end, render(&rule.message, st, anchor, report_node, cx))
    }
}

/// The byte range a finding points at.
fn report_range<'t>(rule: &Rule, anchor: Node<'t>, st: &MatchState<'t>, cx: &Context<'_, 't>) -> (usize, usize) {
    let natural = match (st.focus, anchor.kind_name()) {
        (Some(focus), _) => focus,
        (None, "call") => cx.parent(anchor).filter(|p| p.kind_name() == "decorator").unwrap_or(anchor),
        _ => anchor,
    };
    let range = |n: Node| (n.start_byte(), n.end_byte());
    let header = |n: Node| {
        let line_end = crate::source::line_end_at(cx.src, n.start_byte());
        (n.start_byte(), line_end.min(n.end_byte()))
    };
    let args = || CallArgs::of(anchor, cx.src);
    match &rule.report {
        ReportAt::Node => range(natural),
        ReportAt::Keyword(k) => range(args().keyword(k).unwrap_or(natural)),
        ReportAt::KeywordValue(k) => range(args().keyword(k).and_then(|kw| kw.field(Field::Value)).unwrap_or(natural)),
        ReportAt::Header => header(natural),
        ReportAt::FileStart => (0, crate::source::line_end_at(cx.src, 0)),
        ReportAt::EnclosingLoop => {
            let frames = cx.frames_of(anchor);
            let found = local(&frames).find_map(|f| if let Frame::LoopBody(l) = f { Some(*l) } else { None });
            found.map_or(range(natural), header)
        }
        ReportAt::Capture(name) => range(st.node(name).unwrap_or(natural)),
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

/// What a rule can match in a shell script.
#[derive(Clone, Copy)]
pub enum ShellItem<'a> {
    /// An environment variable, for `env_var` anchors.
    Env(&'a EnvMention),
    /// A simple command, for `shell_command` anchors.
    Command(&'a ShellCommand),
}

/// A match in a shell script.
pub struct ShellMatch {
    /// The placeholders, in the order they were captured.
    pub captures: Vec<(String, String)>,
    /// The byte range of the item, and of captures a rule can report
    /// (`report = "capture:value"`, or a named group of a `shell_command` regex).
    ranges: Vec<(String, (usize, usize))>,
}

impl ShellMatch {
    /// Where a finding is reported: the capture `report` names, else the whole item.
    pub fn range(&self, report: &ReportAt) -> (usize, usize) {
        let named = match report {
            ReportAt::Capture(name) => self.ranges.iter().find(|(k, _)| k == name),
            _ => None,
        };
        named.or(self.ranges.first()).map_or((0, 0), |(_, r)| *r)
    }
}

/// Matches an `env_var` or `shell_command` alternative against a shell item.
/// Only the anchor, `options` and `set` apply in shell scripts; an alternative
/// with other predicates does not match there.
pub fn shell_match(
    m: &Matcher,
    item: ShellItem,
    tables: &[(String, DataTable)],
    target: Version,
) -> Option<ShellMatch> {
    let mut st = MatchState::default();
    let mut ranges = Vec::new();
    match (&m.anchor, item) {
        (Some(Anchor::EnvVar(re)), ShellItem::Env(mention)) if re.is_match(&mention.name) => {
            ranges.push((String::new(), mention.range));
            ranges.extend(mention.value_range.map(|r| ("value".to_string(), r)));
            st.captures.push(("name".into(), mention.name.clone()));
            st.captures.push(("text".into(), mention.name.clone()));
            // Only a literal value can be checked: `$OTHER` or `$(cmd)` is unknown.
            if let Some(v) = mention.value.as_ref().filter(|v| !v.contains(['$', '`'])) {
                st.captures.push(("value".into(), v.clone()));
            }
        }
        (Some(Anchor::ShellCommand(re)), ShellItem::Command(cmd)) if !cmd.guarded => {
            // The command as written, else with the script's variables read:
            // a group found only there is reported at the whole command.
            let (caps, as_written) = match re.get()?.captures(&cmd.text) {
                Some(caps) => (caps, true),
                None => (re.get()?.captures(cmd.expanded.as_deref()?)?, false),
            };
            ranges.push((String::new(), cmd.range));
            for group in re.get()?.capture_names().flatten() {
                if let Some(m) = caps.name(group) {
                    st.captures.push((group.to_string(), m.as_str().to_string()));
                    let at = if as_written { (cmd.range.0 + m.start(), cmd.range.0 + m.end()) } else { cmd.range };
                    ranges.push((group.to_string(), at));
                }
            }
            let first_line = cmd.text.lines().next().unwrap_or_default();
            st.captures.push(("command".into(), cmd.text.clone()));
            st.captures.push(("text".into(), shorten(first_line, 60)));
        }
        _ => return None,
    }
    st.captures.push(("target".into(), format!("{}.{}", target.0, target.1)));
    let assignment = matches!(item, ShellItem::Env(m) if m.value.is_some());
    if !shell_preds(&m.preds, assignment, tables, target, &mut st) {
        return None;
    }
    for (k, v) in &m.set {
        let value = render_with(v, |name| st.get(name).unwrap_or_default().to_string());
        st.captures.push((k.clone(), value));
    }
    Some(ShellMatch { captures: st.captures, ranges })
}

/// Whether predicates hold for a shell mention. Predicates about Python syntax
/// do not hold there, so an `unless` made of them does.
fn shell_preds(
    preds: &[Pred],
    assignment: bool,
    tables: &[(String, DataTable)],
    target: Version,
    st: &mut MatchState,
) -> bool {
    preds.iter().all(|p| match p {
        Pred::Options(o) => super::data::options(o, tables, target, st),
        Pred::ShellAssignmentsOnly => assignment,
        Pred::Unless(inner) => {
            !(inner.anchor.is_none() && shell_preds(&inner.preds, assignment, tables, target, &mut st.clone()))
        }
        _ => false,
    })
}

/// The first dotted segment of a qualified name: what `call_by_root` is keyed by.
fn root_of(qualified: &str) -> &str {
    qualified.split('.').next().unwrap_or(qualified)
}
