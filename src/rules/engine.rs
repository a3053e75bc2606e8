//! The rule set prepared for a run: every matcher alternative indexed by the
//! kind of node (and trigger name) it can match, and a byte-level prefilter.
//! The per-file entry points that use it are in [`super::analyse`].

use super::compile::Compiler;
pub use super::file_facts::{FileFacts, TableRow};
use super::glob::NameGlobs;
use super::model::*;
use super::state::Clause;
use crate::hash::FastMap;
use aho_corasick::{AhoCorasick, AhoCorasickKind};

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

/// One matcher alternative and where its matches go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub sink: Sink,
    pub alt: usize,
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
    triggers: Triggers,
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
    /// By rule: whether some `call` anchor of it follows subclasses (a call
    /// of an imported subclass need not hold the rule's trigger words).
    subclass_rules: Vec<bool>,
}

/// Trigger words: a file must contain one of a rule's words for the rule to be
/// tried, and one of all words (unless some matcher has none) to be parsed.
struct Triggers {
    /// An Aho-Corasick automaton over all words, which builds far faster than
    /// the same alternation as a regex; `None` when the words are too many for
    /// it (a huge user pack): then every rule is tried on every file.
    searcher: Option<AhoCorasick>,
    n_words: usize,
    /// Word indices per rule; `None` for rules that are always tried.
    rule_words: Vec<Option<Vec<usize>>>,
    /// Some summary or fact matcher has no trigger word: parse every file.
    always: bool,
}

impl<'r> Engine<'r> {
    /// Indexes the rules that apply to `target` and that `enabled` accepts (by code).
    pub fn new(set: &'r RuleSet, target: Version, enabled: &dyn Fn(&str) -> bool) -> Self {
        let mut dispatch = Dispatch::default();
        // The distinct trigger words, each with its index in the searcher.
        let mut words: FastMap<String, usize> = FastMap::default();
        let word_index = |w: String, words: &mut FastMap<String, usize>| {
            let next = words.len();
            *words.entry(w).or_insert(next)
        };
        // Words each sink's alternatives need; `None` when some alternative needs none.
        let mut add = |sink: Sink, alts: &[Matcher], explicit: Option<&Vec<String>>| -> Option<Vec<String>> {
            let mut needed = Some(explicit.cloned().unwrap_or_default());
            for (alt, m) in alts.iter().enumerate() {
                let derived = index_anchor(&mut dispatch, Entry { sink, alt }, m.anchor.as_ref());
                match (explicit, derived, needed.as_mut()) {
                    (None, Some(w), Some(n)) => n.extend(w),
                    (None, None, _) => needed = None,
                    _ => {}
                }
            }
            needed
        };
        let mut active = Vec::new();
        let mut guard_only = Vec::new();
        let mut rule_words = vec![None; set.rules.len()];
        let mut always = false;
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
            match add(Sink::Rule(i), &rule.alternatives, rule.triggers.as_ref()) {
                Some(ws) => rule_words[i] = Some(ws.into_iter().map(|w| word_index(w, &mut words)).collect()),
                None => always = true,
            }
        }
        let mut other = |needed: Option<Vec<String>>, words: &mut FastMap<String, usize>| match needed {
            Some(ws) => ws.into_iter().for_each(|w| {
                word_index(w, words);
            }),
            None => always = true,
        };
        for (i, t) in set.tables.iter().enumerate() {
            other(add(Sink::Table(i), &t.alternatives, None), &mut words);
        }
        for (i, c) in set.counts.iter().enumerate() {
            if let CountSource::Matches(alts) = &c.source {
                other(add(Sink::Count(i), alts, None), &mut words);
            }
        }
        for (i, x) in set.sites.iter().enumerate() {
            other(add(Sink::Sites(i), &x.alternatives, None), &mut words);
        }
        for (i, g) in set.groups.iter().enumerate() {
            other(add(Sink::Group(i), &g.alternatives, None), &mut words);
        }
        // A file that only makes a fact true (an import of `transfer_to_npu`,
        // a use of checkpointing) must still be analysed.
        for (i, fact) in set.compiler.facts.iter().enumerate() {
            match fact {
                Fact::Has(alts) => other(add(Sink::Fact(i), alts, None), &mut words),
                Fact::Imports(globs) => other(globs.last_segments.clone(), &mut words),
            }
        }
        let mut words: Vec<(String, usize)> = words.into_iter().collect();
        words.sort_by_key(|(_, i)| *i);
        let words: Vec<String> = words.into_iter().map(|(w, _)| w).collect();
        let searcher = AhoCorasick::builder().kind(Some(AhoCorasickKind::DFA)).build(&words).ok();
        let triggers = Triggers { searcher, n_words: words.len(), rule_words, always };
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
        let subclass_rules = set.rules.iter().map(|r| r.alternatives.iter().any(|m| follows(m).is_some())).collect();
        Engine {
            set,
            target,
            dispatch,
            active,
            guard_only,
            triggers,
            named_extensions,
            shell_named_extensions,
            subclass_bases,
            subclass_rules,
        }
    }

    /// Whether a subclass of `base` (qualified) is one a rule follows.
    pub fn follows_subclasses_of(&self, base: &str) -> bool {
        self.subclass_bases.iter().any(|g| g.is_match(base))
    }

    /// [`Self::rules_for`] for a file that imports subclasses of matched
    /// classes from other files: the rules that follow subclasses are tried too.
    pub fn rules_for_importer(&self, text: &str) -> Vec<bool> {
        let by_words = self.rules_for(text).unwrap_or_else(|| vec![false; self.subclass_rules.len()]);
        by_words.iter().zip(&self.subclass_rules).map(|(a, b)| *a || *b).collect()
    }

    /// Which rules can match a file with this text, by the trigger words it
    /// contains; `None` when nothing can match (the file need not be parsed).
    pub fn rules_for(&self, text: &str) -> Option<Vec<bool>> {
        let t = &self.triggers;
        let Some(searcher) = &t.searcher else { return Some(vec![true; t.rule_words.len()]) };
        let mut present = vec![false; t.n_words];
        let mut any = false;
        // Overlapping matches, so that a word starting inside another's
        // match, or a prefix of it (`cuda` and `cuda_malloc`), is seen too.
        for m in searcher.find_overlapping_iter(text) {
            let i = m.pattern().as_usize();
            any |= !present[i];
            present[i] = true;
        }
        if !any && !t.always {
            return None;
        }
        Some(t.rule_words.iter().map(|w| w.as_ref().is_none_or(|ws| ws.iter().any(|i| present[*i]))).collect())
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
    let counts = set.counts.iter().filter_map(|c| match &c.source {
        CountSource::Matches(alts) => Some(alts),
        CountSource::Rule(_) => None,
    });
    let facts = set.compiler.facts.iter().filter_map(|f| match f {
        Fact::Has(alts) => Some(alts),
        Fact::Imports(_) => None,
    });
    set.rules
        .iter()
        .map(|r| &r.alternatives)
        .chain(set.tables.iter().map(|t| &t.alternatives))
        .chain(set.sites.iter().map(|x| &x.alternatives))
        .chain(set.groups.iter().map(|g| &g.alternatives))
        .chain(counts)
        .chain(facts)
        .flatten()
}

/// Adds an entry to the index for its anchor; returns the words a file must
/// contain for it to match (`None`: no such word is known).
fn index_anchor(d: &mut Dispatch, e: Entry, anchor: Option<&Anchor>) -> Option<Vec<String>> {
    let last_literal = |g: &super::glob::NameGlobs| -> Option<Vec<String>> {
        g.last_segments.clone().or_else(|| {
            g.source
                .iter()
                .map(|s| s.split('.').rev().find(|seg| !seg.contains(['*', '?', '{', '}'])).map(str::to_string))
                .collect()
        })
    };
    match anchor? {
        Anchor::Call(g, _) => {
            match (&g.last_segments, &g.first_segments) {
                (Some(keys), _) => keys.iter().for_each(|k| d.call_by_name.entry(k.clone()).or_default().push(e)),
                (None, Some(roots)) => roots.iter().for_each(|r| d.call_by_root.entry(r.clone()).or_default().push(e)),
                (None, None) => d.call_any.push(e),
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
        Anchor::Kind(kinds) => {
            kinds.iter().for_each(|k| d.kind.entry(k.clone()).or_default().push(e));
            None
        }
        // Never matched in Python: no node needs to be offered.
        Anchor::File { .. } | Anchor::ShellCommand(_) => Some(Vec::new()),
    }
}
