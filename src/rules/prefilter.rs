//! What text a file must hold for a matcher to match in it, derived from the
//! matcher itself: the name segments of its calls, methods, attributes and
//! imports, and the literals of the patterns it applies to source text. One
//! automaton looks for all of them before a file is parsed; a file that none
//! of a run's rules, summaries or facts can match is not parsed at all.
//!
//! Every derived requirement must be necessary: a word is required only when
//! no match can exist without it in the file. So a requirement comes from
//! what a match puts in the source as written (an identifier, the text a
//! pattern is applied to), never from normalised values (a string-like
//! value joins `"a" + "b"`, so a word of its pattern may span the two), nor
//! from what the project decides (`project_has`), nor from a negation (but
//! `unless = { unless = X }` requires X).

use super::data;
use super::data_table::DataTable;
use super::glob::NameGlobs;
use super::lazy_regex::LazyRegex;
use super::model::*;
use super::need::{Form, Need, Word};
use super::pattern_words::{self, PatternWords};

/// Derives requirements, knowing the facts a matcher may require
/// (`file_has`) and the data tables it may look keys up in.
pub(super) struct Needs<'s> {
    /// By fact index.
    facts: Vec<Need>,
    tables: &'s [(String, DataTable)],
    /// The version a lookup reads its table's cells at.
    target: Version,
    /// Whether a pattern applied to a node's text is required as a pattern
    /// too ([`Form::Pattern`]), not only by its words.
    text_patterns: bool,
    patterns: PatternWords,
}

impl<'s> Needs<'s> {
    /// Each fact's requirement, in order (a fact only refers to facts
    /// compiled before it), for a run at `target`; with `text_patterns`,
    /// node-text patterns are required as patterns too (searching for them
    /// costs more than for words).
    pub(super) fn new(facts: &[Fact], tables: &'s [(String, DataTable)], target: Version, text_patterns: bool) -> Self {
        let patterns = PatternWords::default();
        let mut needs = Needs { facts: Vec::with_capacity(facts.len()), tables, target, text_patterns, patterns };
        for fact in facts {
            let need = match fact {
                Fact::Imports(globs) => of_globs(globs),
                Fact::Has(alts) => needs.of_alternatives(alts),
            };
            needs.facts.push(need);
        }
        needs
    }

    /// What a file needs for fact `i` to hold in it.
    pub(super) fn of_fact(&self, i: usize) -> Need {
        self.facts.get(i).cloned().unwrap_or_default()
    }

    /// What a file needs for one of `alts` to match in it.
    pub(super) fn of_alternatives(&self, alts: &[Matcher]) -> Need {
        Need::any_of(alts.iter().map(|m| self.of_matcher(m)))
    }

    /// What a file needs for `m` to match in it.
    pub(super) fn of_matcher(&self, m: &Matcher) -> Need {
        let mut need = m.anchor.as_ref().map_or_else(Need::none, |a| self.of_anchor(a));
        for p in &m.preds {
            need.and(self.of_pred(p));
            if let Pred::Lookup(l) = p {
                need.and(self.of_lookup(l, m));
            }
        }
        need
    }

    /// A lookup that must find its row, keyed by text the matcher captures
    /// from the source (`key = "Tensor.{tensor_method}"`) or by the name its
    /// anchor resolves (`key = "{qualname}"`): that text is one of the
    /// table's keys, so the file holds one of them (or their last segments).
    fn of_lookup(&self, l: &Lookup, m: &Matcher) -> Need {
        let (Some(open), Some(close)) = (l.key.find('{'), l.key.rfind('}')) else { return Need::none() };
        let (prefix, placeholder, suffix) = (&l.key[..open], &l.key[open + 1..close], &l.key[close + 1..]);
        let single =
            open < close && !placeholder.contains(['{', '}']) && !prefix.contains('}') && !suffix.contains('{');
        let Some((_, table)) = self.tables.get(l.table) else { return Need::none() };
        if !l.found || !single {
            return Need::none();
        }
        // Keys whose row the lookup cannot accept at the target say nothing.
        let found = |k: &&str| table.row(k).is_some_and(|row| data::may_find(l, table, row, self.target));
        let values = table.keys().filter(found).filter_map(|k| k.strip_prefix(prefix)?.strip_suffix(suffix));
        // A call's or attribute's resolved name ends with an identifier of
        // the file, and matches the matcher's `name_regex`.
        let named = matches!(m.anchor, Some(Anchor::Call(..) | Anchor::Attribute(_)));
        if named && !m.set.iter().any(|(k, _)| k == placeholder) {
            let name_regexes: Vec<&LazyRegex> = m.preds.iter().filter_map(Pred::name_regex).collect();
            let last = |v: &str| Word::new(Form::Identifier, v.rsplit('.').next().unwrap_or(v));
            let named_so = |v: &&str| name_regexes.iter().all(|re| re.is_match(v));
            // A group of `name_regex` that ends the name is part of its last segment.
            let ends_name = |re: &&LazyRegex| pattern_words::group_ends_last_segment(re.pattern(), placeholder);
            match placeholder {
                "qualname" => return Need::one_of(values.filter(named_so).map(last).collect()),
                "name" => return Need::one_of(values.map(last).collect()),
                _ if name_regexes.iter().any(ends_name) => {
                    let in_segment = values.filter(|v| !v.contains('.'));
                    return Need::one_of(in_segment.map(|v| Word::new(Form::Exact, v)).collect());
                }
                _ => {}
            }
        }
        let Some(capture) = captured_text(m, placeholder) else { return Need::none() };
        Need::one_of(values.filter(|v| !capture.excludes(v)).map(|v| capture.word(v)).collect())
    }

    fn of_pred(&self, p: &Pred) -> Need {
        match p {
            // Holds without any caller (every value passed matches).
            Pred::FromCallers(_) => Need::none(),
            Pred::Unless(m) => self.of_double_negation(m),
            Pred::Fields(fields) => {
                let mut need = Need::none();
                fields.iter().for_each(|(_, m)| need.and(self.of_matcher(m)));
                need
            }
            Pred::Any(ms) => self.of_alternatives(ms),
            Pred::Args(checks) => {
                let mut need = Need::none();
                for check in checks {
                    need.and(Need::any_of(check.alternatives.iter().map(|alt| match alt {
                        ArgAlt::Text(re) => self.patterns.of(re.pattern()),
                        ArgAlt::Match(m) => self.of_matcher(m),
                        _ => Need::none(),
                    })));
                }
                need
            }
            Pred::Slot(slots) => Need::any_of(slots.iter().map(of_slot)),
            Pred::FlowsInto(f) => Need::any_of(f.slots.iter().map(of_slot)),
            Pred::Text(re) => {
                let mut need = self.patterns.of(re.pattern());
                // The node's text is the file's text there.
                if let Some(pattern) = pattern_words::unanchored(re.pattern()).filter(|_| self.text_patterns) {
                    need.and(Need::one_of(vec![Word::new(Form::Pattern, &pattern)]));
                }
                need
            }
            Pred::ConditionText(re) | Pred::UnderIf(re) | Pred::InChainTesting(re) => self.patterns.of(re.pattern()),
            Pred::InBranchOf(test) => of_globs(&test.test_calls),
            Pred::InsideWith(globs) | Pred::FileImports(globs) => of_globs(globs),
            Pred::InsideTrainingLoop(true) | Pred::TrainingLoop(true) => training_loop(),
            Pred::Fact(Scope::File, i) => self.of_fact(*i),
            // Receiver, contains, binding, ancestor, the function's other
            // nodes, the loop's iterable: a node of the same file.
            _ => p.single_nested().map_or_else(Need::none, |(_, m)| self.of_matcher(m)),
        }
    }

    /// What an anchor puts in the source.
    fn of_anchor(&self, anchor: &Anchor) -> Need {
        match anchor {
            Anchor::Call(globs, _) | Anchor::Attribute(globs) | Anchor::Import(globs) => of_globs(globs),
            Anchor::Method(names) => Need::one_of(names.iter().map(|n| Word::new(Form::AfterDot, n)).collect()),
            Anchor::Condition(test) => of_globs(&test.test_calls),
            // A string literal's text as written (escapes are not decoded).
            Anchor::EnvVar(re) => self.patterns.of(re.pattern()),
            Anchor::Compare(test) => self.patterns.of(test.literal.pattern()),
            // Never matched in Python.
            Anchor::File { .. } | Anchor::ShellCommand(_) => Need::never(),
            // A string-like value joins `"a" + "b"`: a word of its pattern may
            // span the two literals.
            Anchor::Str(_) | Anchor::Query(_) | Anchor::Kind(_) => Need::none(),
        }
    }

    /// `unless = { unless = X }`, or `unless = { any = [{ unless = X }, ...] }`:
    /// the match is dropped unless X matches, so X is required (as every
    /// such X of the `any`).
    fn of_double_negation(&self, m: &Matcher) -> Need {
        let negated = |m: &Matcher| match (&m.anchor, m.preds.as_slice()) {
            (None, [Pred::Unless(x)]) => Some(self.of_matcher(x)),
            _ => None,
        };
        let mut need = Need::none();
        match (&m.anchor, m.preds.as_slice()) {
            (None, [Pred::Any(alts)]) => alts.iter().filter_map(negated).for_each(|n| need.and(n)),
            _ => need.and(negated(m).unwrap_or_default()),
        }
        need
    }
}

/// By fact index, whether some matcher asks about the fact beyond the file
/// it holds in (`project_has`, `process_imports`, ...): a file where only
/// such a fact holds must still be parsed. A fact asked about only in its
/// own file (`file_has`) matters only where a rule is tried anyway.
pub(super) fn facts_beyond_file<'m>(matchers: impl Iterator<Item = &'m Matcher>, n_facts: usize) -> Vec<bool> {
    let mut beyond = vec![false; n_facts];
    for m in matchers {
        m.any_pred(|p| {
            if let Pred::Fact(scope, i) = p {
                if *scope != Scope::File && *i < n_facts {
                    beyond[*i] = true;
                }
            }
            false
        });
    }
    beyond
}

/// Where a matcher captures a placeholder from the source: what kind of
/// token the captured node is, and the texts its own `unless = { text = ... }`
/// patterns refuse.
struct CapturedText<'m> {
    /// The field the capturing matcher is reached by (`attribute`, `name`), if any.
    field: Option<&'m str>,
    refused: Vec<&'m LazyRegex>,
}

impl CapturedText<'_> {
    /// The word a captured `value` is in the file: an attribute's name
    /// follows a `.`; a `name` field holds an identifier (or a dotted name);
    /// anything else (a string's content) is only known to be in the text.
    fn word(&self, value: &str) -> Word {
        let identifier = !value.is_empty() && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        match self.field {
            Some("attribute") if identifier => Word::new(Form::AfterDot, value),
            Some("name") if identifier => Word::new(Form::Identifier, value),
            _ => Word::new(Form::Exact, value),
        }
    }

    /// Whether the capturing matcher refuses a node with this text.
    fn excludes(&self, value: &str) -> bool {
        self.refused.iter().any(|re| re.is_match(value))
    }
}

/// Where `placeholder` is captured, when it is only ever the source text of
/// a node `m` (or a matcher it holds, negations aside) captures: never
/// `set`, nor read from around it. A placeholder captured at several places
/// is only known to be in the text.
fn captured_text<'m>(m: &'m Matcher, placeholder: &str) -> Option<CapturedText<'m>> {
    let mut sites = Vec::new();
    let mut todo = vec![(None, m)];
    while let Some((field, m)) = todo.pop() {
        if m.set.iter().any(|(name, _)| name == placeholder) || m.reads.contains_key(placeholder) {
            return None;
        }
        for p in &m.preds {
            match p {
                Pred::Capture(name) if name == placeholder => sites.push((field, m)),
                Pred::Unless(_) => {}
                Pred::Fields(fields) => todo.extend(fields.iter().map(|(f, m)| (Some(f.as_str()), m))),
                p => todo.extend(p.nested().into_iter().map(|m| (None, m))),
            }
        }
    }
    match sites.as_slice() {
        [] => None,
        [(field, m)] => Some(CapturedText { field: *field, refused: refused_texts(m) }),
        _ => Some(CapturedText { field: None, refused: Vec::new() }),
    }
}

/// The patterns of `m`'s `unless = { text = ... }` predicates: a node whose
/// text one of them matches does not match `m`.
fn refused_texts(m: &Matcher) -> Vec<&LazyRegex> {
    m.preds.iter().filter_map(refused_text).collect()
}

/// The pattern of `unless = { text = ... }`.
fn refused_text(p: &Pred) -> Option<&LazyRegex> {
    let Pred::Unless(n) = p else { return None };
    match (&n.anchor, n.preds.as_slice(), n.set.is_empty()) {
        (None, [Pred::Text(re)], true) => Some(re),
        _ => None,
    }
}

/// A slot: the call or method whose argument the value is.
fn of_slot(slot: &Slot) -> Need {
    let mut need = slot.call.as_ref().map_or_else(Need::none, of_globs);
    if let Some(names) = &slot.method {
        need.and(Need::one_of(names.iter().map(|n| Word::new(Form::AfterDot, n)).collect()));
    }
    need
}

/// A loop is a training loop only through a `.backward()` or `.step()`
/// call, or a loss scaler called with the loss and optimizer
/// (`crate::semantic`'s `note_training_call`).
fn training_loop() -> Need {
    Need::one_of(vec![
        Word::new(Form::AfterDot, "backward"),
        Word::new(Form::AfterDot, "step"),
        Word::new(Form::AnyCase, "scaler"),
    ])
}

/// A qualified name resolves from the file's own imports and dotted names,
/// so each literal segment of a glob is an identifier of the file, a segment
/// with one wildcard at its start (`*_cuda`) the end of one, one with a
/// wildcard at its end (`_cuda_*`) the start of one, and the literal part of
/// another segment with wildcards is in its text.
pub(super) fn of_globs(globs: &NameGlobs) -> Need {
    let mut alternatives = Vec::new();
    for name in &globs.expanded {
        let mut need = Need::none();
        for segment in name.split('.').filter(|s| !s.is_empty()) {
            let literal = |s: &str| !s.is_empty() && !s.contains(['*', '?']);
            let word = match (segment.strip_prefix('*'), segment.strip_suffix('*')) {
                _ if literal(segment) => Word::new(Form::Identifier, segment),
                (Some(end), _) if literal(end) => Word::new(Form::IdentifierEnd, end),
                (_, Some(start)) if literal(start) => Word::new(Form::IdentifierStart, start),
                _ => {
                    let longest = segment.split(['*', '?']).max_by_key(|run| run.len()).unwrap_or("");
                    Word::new(Form::Exact, longest)
                }
            };
            need.and(Need::one_of(vec![word]));
        }
        alternatives.push(need);
    }
    Need::any_of(alternatives)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_require_every_literal_segment() {
        let globs = NameGlobs::new(&["torch.optim.{SGD,Adam}".into()]).unwrap();
        assert_eq!(of_globs(&globs).texts(), [vec!["torch"], vec!["optim"], vec!["Adam", "SGD"]]);
        let globs = NameGlobs::new(&["*_cuda".into(), "torch.bar".into()]).unwrap();
        // Identifiers sort before parts of names.
        assert_eq!(of_globs(&globs).texts(), [vec!["torch", "_cuda"], vec!["bar", "_cuda"]]);
        // A one-letter segment says nothing.
        let globs = NameGlobs::new(&["a.b".into()]).unwrap();
        assert_eq!(of_globs(&globs), Need::none());
        // Every brace group expands, not only the first.
        let globs = NameGlobs::new(&["torch.{cuda,npu}.{Stream,Event}".into()]).unwrap();
        assert_eq!(of_globs(&globs).texts(), [vec!["torch"], vec!["Event", "Stream"], vec!["cuda", "npu"]]);
    }
}
