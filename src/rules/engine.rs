//! The rule set prepared for a run: every matcher alternative indexed by the
//! kind of node (and trigger name) it can match, and a byte-level prefilter.
//! The per-file entry points that use it are in [`super::analyse`].

use super::compile::Compiler;
pub use super::file_facts::{FileFacts, ProjectAdds, TableRow};
use super::glob::NameGlobs;
use super::model::*;
use super::need::Need;
use super::prefilter::{self, Needs};
use super::schema::Trigger;
use super::state::Clause;
use super::trigger_words::{TriggerWords, Triggers};
use crate::hash::FastMap;
use std::sync::OnceLock;

/// Scans of fewer files than this try every rule on every file ([`Engine::skip_for`]).
const SKIP_FROM_FILES: usize = 32;

/// Every compiled pack of a run.
pub struct RuleSet {
    /// Rules in pack order.
    pub rules: Vec<Rule>,
    /// Summary tables.
    pub tables: Vec<Table>,
    /// Summary counts.
    pub counts: Vec<Count>,
    /// Summary site lists.
    pub sites: Vec<Sites>,
    /// Summary groups.
    pub groups: Vec<Group>,
    /// Summary notes.
    pub notes: Vec<Note>,
    /// Pack compilation state (facts, data tables, queries, extensions).
    pub compiler: Compiler,
    /// A hash of every pack and data file loaded, for cache keys.
    pub fingerprint: u64,
}

impl RuleSet {
    /// The rule with code `code`, if the set has one.
    pub fn rule(&self, code: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.code == code)
    }
}

/// What a matcher alternative feeds when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sink {
    Rule(usize),
    Table(usize),
    Count(usize),
    Sites(usize),
    Group(usize),
    Fact(usize),
}

impl Sink {
    /// The kind of sink, in the order of [`AltNumbers`], and its index.
    fn kind_and_index(self) -> (usize, usize) {
        match self {
            Sink::Rule(i) => (0, i),
            Sink::Table(i) => (1, i),
            Sink::Count(i) => (2, i),
            Sink::Sites(i) => (3, i),
            Sink::Group(i) => (4, i),
            Sink::Fact(i) => (5, i),
        }
    }
}

/// One matcher alternative and where its matches go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub sink: Sink,
    pub alt: usize,
    /// In [`Dispatch::call_by_root`]: the entry is also indexed by name,
    /// under its other globs (a call may reach it both ways).
    pub also_by_name: bool,
}

impl Entry {
    /// Whether both are the same alternative of the same sink.
    pub(super) fn same(&self, other: &Entry) -> bool {
        self.sink == other.sink && self.alt == other.alt
    }
}

/// Entries indexed by the kind of node they can match.
#[derive(Default)]
pub(super) struct Dispatch {
    pub call_by_name: FastMap<String, Vec<Entry>>,
    /// Call anchors whose names end in a wildcard (`torch.cuda.*`), by the
    /// literal first segment of their names: only calls that resolve under it are tried.
    pub call_by_root: FastMap<String, Vec<Entry>>,
    pub call_any: Vec<Entry>,
    pub method_by_name: FastMap<String, Vec<Entry>>,
    pub attribute: Vec<Entry>,
    pub string: Vec<Entry>,
    pub compare: Vec<Entry>,
    pub import: Vec<Entry>,
    pub condition: Vec<Entry>,
    pub query: Vec<Entry>,
    pub kind: FastMap<String, Vec<Entry>>,
}

/// Every matcher alternative of the run's sinks, numbered: rules first, then
/// tables, counts, sites, groups and facts, each sink's alternatives in order.
/// A file's active alternatives ([`Engine::alternatives_for`]) are listed so.
#[derive(Debug, Default)]
pub(super) struct AltNumbers {
    /// By kind of sink (in the order above), then by sink: the number of its
    /// first alternative.
    first: [Vec<usize>; 6],
    len: usize,
}

impl AltNumbers {
    fn new(set: &RuleSet) -> Self {
        let sizes = [
            set.rules.len(),
            set.tables.len(),
            set.counts.len(),
            set.sites.len(),
            set.groups.len(),
            set.compiler.facts.len(),
        ];
        let mut numbers = AltNumbers { first: sizes.map(|size| vec![0; size]), len: 0 };
        // Sinks without alternatives (counts of a rule's findings, import facts) take no number.
        for (sink, alts) in every_sink(set) {
            let (kind, i) = sink.kind_and_index();
            numbers.first[kind][i] = numbers.len;
            numbers.len += alts.len();
        }
        numbers
    }

    /// The number of `entry`'s alternative.
    pub(super) fn of(&self, entry: Entry) -> usize {
        self.first(entry.sink) + entry.alt
    }

    /// The number of the first alternative of `sink`.
    fn first(&self, sink: Sink) -> usize {
        let (kind, i) = sink.kind_and_index();
        self.first[kind][i]
    }
}

/// A rule set prepared for one target version.
pub struct Engine<'r> {
    /// The rules.
    pub set: &'r RuleSet,
    /// The torch_npu version advice is for.
    pub target: Version,
    pub(super) dispatch: Dispatch,
    /// Indices of rules active for the target.
    pub active: Vec<usize>,
    /// Codes of the rules that are not enabled but still run, because their
    /// findings decide whether a safe fix may rename a CUDA test (see
    /// [`super::guards`]); their findings are dropped after that.
    pub(super) guard_only: Vec<String>,
    /// By rule index: whether the rule runs (it is active, or in `guard_only`).
    tried: Vec<bool>,
    /// The numbers of the alternatives in a file's list of active ones.
    pub(super) numbers: AltNumbers,
    /// Whether files are skipped by the words their rules need
    /// ([`Self::skip_nothing`] turns it off).
    skip: bool,
    /// The search for those words, built on first use.
    triggers: OnceLock<Triggers>,
    /// The extensions of the `file` anchors that ask whether the project
    /// names the file (`named_in_project`): the names to collect from every file.
    pub named_extensions: Vec<String>,
    /// The same plus `py`, for shell scripts: a finding in Python code asks
    /// with `named_in_project` whether a script of its project runs the file
    /// (Python strings are not searched for `.py` names, which costs a parse
    /// of many files that no rule reads).
    pub shell_named_extensions: Vec<String>,
    /// The names of the `call` anchors that follow subclasses: a class
    /// derived from one is what a file tells the files that import it.
    subclass_bases: Vec<&'r NameGlobs>,
    /// By alternative number: whether its `call` anchor follows subclasses
    /// (a call of an imported subclass need not hold the alternative's words).
    subclass_alternatives: Vec<bool>,
}

impl<'r> Engine<'r> {
    /// Indexes the rules that apply to `target` and that `enabled` accepts (by code).
    pub fn new(set: &'r RuleSet, target: Version, enabled: &dyn Fn(&str) -> bool) -> Self {
        let mut dispatch = Dispatch::default();
        let mut active = Vec::new();
        let mut guard_only = Vec::new();
        let mut tried = vec![false; set.rules.len()];
        let applies = |rule: &Rule| rule.target.as_ref().is_none_or(|r| r.allows(target));
        // The rules that decide whether an enabled rule's fix may be offered
        // (see `guards`: code that breaks on an NPU, fixes that migrate a CUDA
        // test, fixes paired by `together`) run even when not enabled; their
        // findings are dropped.
        let fixes = set.rules.iter().filter(|r| applies(r) && enabled(&r.code)).filter_map(|r| r.fix.as_ref());
        let mut partners: Vec<&str> = Vec::new();
        let mut any_fix = false;
        for fix in fixes {
            any_fix = true;
            partners.extend(fix.together.iter().flat_map(|t| t.codes.iter().map(String::as_str)));
        }
        let mut index = |sink: Sink, alts: &[Matcher]| {
            for (alt, m) in alts.iter().enumerate() {
                index_anchor(&mut dispatch, Entry { sink, alt, also_by_name: false }, m.anchor.as_ref());
            }
        };
        for (i, rule) in set.rules.iter().enumerate() {
            if !applies(rule) {
                continue;
            }
            if enabled(&rule.code) {
                active.push(i);
            } else if any_fix && super::guards::decides_fixes(rule, &partners) {
                guard_only.push(rule.code.to_string());
            } else {
                continue;
            }
            tried[i] = true;
            index(Sink::Rule(i), &rule.alternatives);
        }
        summaries_and_facts(set).for_each(|(sink, alts)| index(sink, alts));
        let mut named_extensions: Vec<String> = active
            .iter()
            .flat_map(|&i| &set.rules[i].alternatives)
            .filter(|m| m.preds.iter().any(|p| p.named_file_literal().is_some()))
            .flat_map(|m| match &m.anchor {
                Some(Anchor::File { extensions, .. }) => extensions.clone(),
                _ => Vec::new(),
            })
            .collect();
        named_extensions.sort();
        named_extensions.dedup();
        let mut shell_named_extensions = named_extensions.clone();
        if !shell_named_extensions.iter().any(|e| e == "py") {
            shell_named_extensions.push("py".to_string());
        }
        let follows = |m: &'r Matcher| match &m.anchor {
            Some(Anchor::Call(globs, Some(_))) => Some(globs),
            _ => None,
        };
        let subclass_bases = every_matcher(set).filter_map(follows).collect();
        let numbers = AltNumbers::new(set);
        let subclass_alternatives = every_sink(set).flat_map(|(_, alts)| alts).map(|m| follows(m).is_some()).collect();
        Engine {
            set,
            target,
            dispatch,
            active,
            guard_only,
            tried,
            numbers,
            skip: true,
            triggers: OnceLock::new(),
            named_extensions,
            shell_named_extensions,
            subclass_bases,
            subclass_alternatives,
        }
    }

    /// Whether a subclass of `base` (qualified) is one a rule follows.
    pub fn follows_subclasses_of(&self, base: &str) -> bool {
        self.subclass_bases.iter().any(|g| g.is_match(base))
    }

    /// [`Self::alternatives_for`] for a file that imports subclasses of
    /// matched classes from other files: the alternatives that follow
    /// subclasses are tried too.
    pub fn alternatives_for_importer(&self, text: &str) -> Vec<bool> {
        let by_words = self.alternatives_for(text).unwrap_or_else(|| vec![false; self.numbers.len]);
        by_words.iter().zip(&self.subclass_alternatives).map(|(a, b)| *a || *b).collect()
    }

    /// Which matcher alternatives (of rules, summaries and facts; by
    /// [`AltNumbers`]) can match a file with this text, by the words they
    /// require ([`super::prefilter`]); `None` when no rule or summary can
    /// match and no project fact hold (the file need not be parsed).
    pub fn alternatives_for(&self, text: &str) -> Option<Vec<bool>> {
        if !self.skip {
            let mut all = vec![true; self.numbers.len];
            for (i, rule) in self.set.rules.iter().enumerate().filter(|(i, _)| !self.tried[*i]) {
                let first = self.numbers.first(Sink::Rule(i));
                all[first..first + rule.alternatives.len()].fill(false);
            }
            return Some(all);
        }
        self.triggers.get_or_init(|| self.trigger_words()).alternatives_for(text)
    }

    /// Tries every rule on every file and parses every file: the same
    /// findings, slower (`--no-skip`, to check the skip).
    pub fn skip_nothing(&mut self) {
        self.skip = false;
    }

    /// Keeps the skip only for a scan of `files` files, enough to repay
    /// preparing it (about as costly as parsing a few files): a smaller scan,
    /// or an editor's analysis of one file, tries every rule instead.
    pub fn skip_for(&mut self, files: usize) {
        if files < SKIP_FROM_FILES {
            self.skip_nothing();
        }
    }

    /// The words each rule, summary and project fact needs in a file.
    fn trigger_words(&self) -> Triggers {
        let set = self.set;
        let needs = Needs::new(&set.compiler.facts, &set.compiler.tables, self.target, false);
        let of = |alts: &[Matcher]| -> Vec<Need> { alts.iter().map(|m| needs.of_matcher(m)).collect() };
        let first = |sink| self.numbers.first(sink);
        let mut words = TriggerWords::new(self.numbers.len);
        for (sink, alts) in every_sink(set) {
            match sink {
                Sink::Rule(i) if self.tried[i] => {
                    words.sink(first(sink), with_triggers(of(alts), set.rules[i].triggers.as_deref()))
                }
                Sink::Rule(_) => {}
                Sink::Group(i) => words.sink(first(sink), with_triggers(of(alts), set.groups[i].triggers.as_deref())),
                // A fact is tried where its words are, but it alone does not
                // make a file worth parsing: a rule that reads it must match there too.
                Sink::Fact(_) => words.fact(first(sink), of(alts)),
                _ => words.sink(first(sink), of(alts)),
            }
        }
        // A file that only makes a project fact true (an import of
        // `transfer_to_npu`, a use of checkpointing) must still be analysed.
        // Such a file is parsed for the fact alone, so its node-text patterns
        // are looked for too: the words of `depth\s*=\s*(2[4-9]|...)` are in most files.
        let strict = Needs::new(&set.compiler.facts, &set.compiler.tables, self.target, true);
        let beyond_file = prefilter::facts_beyond_file(every_matcher(set), set.compiler.facts.len());
        (0..set.compiler.facts.len()).filter(|&i| beyond_file[i]).for_each(|i| words.other(vec![strict.of_fact(i)]));
        // A file that derives a class from a followed one tells its importers.
        self.subclass_bases.iter().for_each(|globs| words.other(vec![prefilter::of_globs(globs)]));
        words.build()
    }

    /// The matcher of an entry.
    pub(super) fn matcher(&self, e: Entry) -> &Matcher {
        match e.sink {
            Sink::Rule(i) => &self.set.rules[i].alternatives[e.alt],
            Sink::Table(i) => &self.set.tables[i].alternatives[e.alt],
            Sink::Sites(i) => &self.set.sites[i].alternatives[e.alt],
            Sink::Group(i) => &self.set.groups[i].alternatives[e.alt],
            Sink::Fact(i) => match &self.set.compiler.facts[i] {
                Fact::Has(alts) => &alts[e.alt],
                Fact::Imports(_) => unreachable!("import facts are never dispatched"),
            },
            Sink::Count(i) => match &self.set.counts[i].source {
                CountSource::Matches(alts) => &alts[e.alt],
                CountSource::Rule(_) => unreachable!("rule counts are never dispatched"),
            },
        }
    }
}

/// `alternatives`, each also needing one of a pack's own `triggers`, if it gives them.
fn with_triggers(mut alternatives: Vec<Need>, triggers: Option<&[Trigger]>) -> Vec<Need> {
    if let Some(words) = triggers {
        alternatives.iter_mut().for_each(|n| n.and(Need::one_of_triggers(words)));
    }
    alternatives
}

/// Whether `clauses` hold for sure given the file's `facts`: every clause has
/// a true file-scope literal. Project-scope literals are not known while a
/// file is analysed, so a condition that needs one does not hold here.
pub fn holds_in_file(clauses: &[Clause], facts: &[bool]) -> bool {
    clauses.iter().all(|clause| clause.iter().any(|(scope, i, want)| *scope == Scope::File && facts[*i] == *want))
}

/// Whether `clauses` can still hold given the file's `facts`: false when a
/// clause has only file-scope literals and all of them are false.
pub fn may_hold(clauses: &[Clause], facts: &[bool]) -> bool {
    clauses.iter().all(|clause| clause.iter().any(|(scope, i, want)| *scope != Scope::File || facts[*i] == *want))
}

/// Every matcher alternative of `set`: its rules', summaries' and facts'.
fn every_matcher(set: &RuleSet) -> impl Iterator<Item = &Matcher> {
    every_sink(set).flat_map(|(_, alts)| alts)
}

/// Every sink of `set` with matcher alternatives, and them, in the order of [`AltNumbers`].
fn every_sink(set: &RuleSet) -> impl Iterator<Item = (Sink, &[Matcher])> {
    let rules = set.rules.iter().enumerate().map(|(i, r)| (Sink::Rule(i), r.alternatives.as_slice()));
    rules.chain(summaries_and_facts(set))
}

/// Every sink of `set` but its rules, with its matcher alternatives: the
/// summaries and the facts that are matched in the walk.
fn summaries_and_facts(set: &RuleSet) -> impl Iterator<Item = (Sink, &[Matcher])> {
    let counts = set.counts.iter().enumerate().filter_map(|(i, c)| match &c.source {
        CountSource::Matches(alts) => Some((Sink::Count(i), alts.as_slice())),
        CountSource::Rule(_) => None,
    });
    let facts = set.compiler.facts.iter().enumerate().filter_map(|(i, f)| match f {
        Fact::Has(alts) => Some((Sink::Fact(i), alts.as_slice())),
        Fact::Imports(_) => None,
    });
    let tables = set.tables.iter().enumerate().map(|(i, t)| (Sink::Table(i), t.alternatives.as_slice()));
    let sites = set.sites.iter().enumerate().map(|(i, x)| (Sink::Sites(i), x.alternatives.as_slice()));
    let groups = set.groups.iter().enumerate().map(|(i, g)| (Sink::Group(i), g.alternatives.as_slice()));
    tables.chain(counts).chain(sites).chain(groups).chain(facts)
}

/// Adds an entry to the index for the kind of node its anchor matches.
fn index_anchor(d: &mut Dispatch, e: Entry, anchor: Option<&Anchor>) {
    let Some(anchor) = anchor else { return };
    match anchor {
        Anchor::Call(g, _) if g.keys.any => d.call_any.push(e),
        Anchor::Call(g, _) => {
            g.keys.last.iter().for_each(|k| d.call_by_name.entry(k.clone()).or_default().push(e));
            let rooted = Entry { also_by_name: !g.keys.last.is_empty(), ..e };
            g.keys.first.iter().for_each(|r| d.call_by_root.entry(r.clone()).or_default().push(rooted));
        }
        Anchor::Method(names) => names.iter().for_each(|n| d.method_by_name.entry(n.clone()).or_default().push(e)),
        Anchor::Attribute(_) => d.attribute.push(e),
        Anchor::Str(_) | Anchor::EnvVar(_) => d.string.push(e),
        Anchor::Compare(_) => d.compare.push(e),
        Anchor::Import(_) => d.import.push(e),
        Anchor::Condition(_) => d.condition.push(e),
        Anchor::Query(_) => d.query.push(e),
        Anchor::Kind(kinds) => kinds.iter().for_each(|k| d.kind.entry(k.clone()).or_default().push(e)),
        // Never matched in Python: no node needs to be offered.
        Anchor::File { .. } | Anchor::ShellCommand(_) => {}
    }
}
