//! The search, in a file's text, for the words the run's matchers require
//! ([`super::prefilter`]): which alternatives of the rules, summaries and
//! facts can match the file, and whether anything at all can (if not, the
//! file is not parsed).

use super::need::{Form, Need, Word};
use crate::hash::FastMap;
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use std::cell::OnceCell;

/// A matcher alternative's requirement as word indices: one of the
/// requirement's own alternatives must hold, and one holds when each of its
/// groups has a word in the file. None: it never matches in Python; one
/// with no group: it can match in any file.
type Requirement = Vec<Vec<Vec<usize>>>;

/// Collects the words of requirements, each once.
#[derive(Default)]
pub(super) struct TriggerWords {
    index: FastMap<Word, usize>,
    words: Vec<Word>,
    alternatives: Vec<Requirement>,
    /// By alternative: whether it alone makes a file worth parsing.
    parses: Vec<bool>,
    others: Vec<Requirement>,
}

impl TriggerWords {
    /// Room for `n` matcher alternatives, none of which is tried until given a requirement.
    pub(super) fn new(n: usize) -> Self {
        TriggerWords { alternatives: vec![Vec::new(); n], parses: vec![false; n], ..TriggerWords::default() }
    }

    /// The alternatives of a rule or summary, numbered from `first`, each
    /// with its need: each is tried on a file where its need holds, and the
    /// file is then parsed.
    pub(super) fn sink(&mut self, first: usize, needs: Vec<Need>) {
        self.number(first, needs, true);
    }

    /// The alternatives of a fact, numbered from `first`, each with its
    /// need: each is tried on a file that is parsed and where its need holds.
    pub(super) fn fact(&mut self, first: usize, needs: Vec<Need>) {
        self.number(first, needs, false);
    }

    fn number(&mut self, first: usize, needs: Vec<Need>, parses: bool) {
        for (i, need) in needs.into_iter().enumerate() {
            self.alternatives[first + i] = self.requirement(vec![need]);
            self.parses[first + i] = parses;
        }
    }

    /// Something besides the sinks that needs the file parsed where one of
    /// `alternatives` holds (a project fact, a followed subclass).
    pub(super) fn other(&mut self, alternatives: Vec<Need>) {
        let r = self.requirement(alternatives);
        self.others.push(r);
    }

    fn requirement(&mut self, alternatives: Vec<Need>) -> Requirement {
        let alternatives = alternatives.into_iter().filter(|n| !n.is_never());
        alternatives
            .map(|need| need.0.into_iter().map(|group| group.into_iter().map(|w| self.word(w)).collect()).collect())
            .collect()
    }

    fn word(&mut self, word: Word) -> usize {
        let next = self.words.len();
        *self.index.entry(word.clone()).or_insert_with(|| {
            self.words.push(word);
            next
        })
    }

    /// The automaton over every word, in any case (each match is then
    /// checked against its words' forms), and the patterns.
    pub(super) fn build(self) -> Triggers {
        let mut patterns: Vec<String> = Vec::new();
        let mut by_pattern: FastMap<String, usize> = FastMap::default();
        let mut words_of: Vec<Vec<usize>> = Vec::new();
        let mut regexes = Vec::new();
        let mut regex_of = vec![None; self.words.len()];
        for (i, w) in self.words.iter().enumerate() {
            if w.form == Form::Pattern {
                // One that does not compile (too large) holds in every file.
                regex_of[i] = Some(regexes.len());
                regexes.push(regex::Regex::new(&w.text).ok());
                continue;
            }
            let key = w.text.to_ascii_lowercase();
            let p = *by_pattern.entry(key.clone()).or_insert_with(|| {
                patterns.push(key);
                words_of.push(Vec::new());
                patterns.len() - 1
            });
            words_of[p].push(i);
        }
        let builder = |kind| AhoCorasick::builder().ascii_case_insensitive(true).kind(kind).build(&patterns).ok();
        // A DFA searches fastest; a huge user pack may not fit one.
        let searcher = builder(Some(AhoCorasickKind::DFA)).or_else(|| builder(None));
        let (alternatives, parses, others) = (self.alternatives, self.parses, self.others);
        Triggers { searcher, words_of, words: self.words, regexes, regex_of, alternatives, parses, others }
    }
}

/// The trigger words of a run, ready to search.
pub(super) struct Triggers {
    /// `None` (too many words for any automaton): every rule is tried on every file.
    searcher: Option<AhoCorasick>,
    /// By automaton pattern: the words it stands for.
    words_of: Vec<Vec<usize>>,
    words: Vec<Word>,
    /// The words that are patterns ([`Form::Pattern`]), compiled.
    regexes: Vec<Option<regex::Regex>>,
    /// By word: its place in `regexes`, if it is a pattern.
    regex_of: Vec<Option<usize>>,
    /// By alternative number.
    alternatives: Vec<Requirement>,
    /// By alternative number: whether it alone makes a file worth parsing.
    parses: Vec<bool>,
    others: Vec<Requirement>,
}

impl Triggers {
    /// Which alternatives can match a file with this text; `None` when
    /// nothing that makes a file worth parsing can (the file need not be parsed).
    pub(super) fn alternatives_for(&self, text: &str) -> Option<Vec<bool>> {
        let Some(searcher) = &self.searcher else {
            return Some(self.alternatives.iter().map(|r| !r.is_empty()).collect());
        };
        let bytes = text.as_bytes();
        let mut present = vec![false; self.words.len()];
        // Overlapping matches, so that a word inside another's match, or a
        // prefix of it (`cuda` and `cuda_malloc`), is seen too.
        for m in searcher.find_overlapping_iter(text) {
            for &w in &self.words_of[m.pattern().as_usize()] {
                if !present[w] && appears_at(&self.words[w], bytes, m.start(), m.end()) {
                    present[w] = true;
                }
            }
        }
        // A pattern is searched for once, when a requirement asks about it.
        let searched: Vec<OnceCell<bool>> = self.regexes.iter().map(|_| OnceCell::new()).collect();
        let has = |w: usize| match self.regex_of[w] {
            Some(i) => *searched[i].get_or_init(|| self.regexes[i].as_ref().is_none_or(|re| re.is_match(text))),
            None => present[w],
        };
        let holds = |r: &Requirement| r.iter().any(|alt| alt.iter().all(|group| group.iter().any(|&w| has(w))));
        let active: Vec<bool> = self.alternatives.iter().map(holds).collect();
        let parse = active.iter().zip(&self.parses).any(|(&active, &parses)| active && parses);
        (parse || self.others.iter().any(holds)).then_some(active)
    }
}

/// Whether `word`, found in any case at `start..end` of `text`, is there in its form.
fn appears_at(word: &Word, text: &[u8], start: usize, end: usize) -> bool {
    let exact = || &text[start..end] == word.text.as_bytes();
    let identifier_char = |i: usize| text.get(i).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    let whole = || exact() && !(start > 0 && identifier_char(start - 1)) && !identifier_char(end);
    match word.form {
        Form::AnyCase => true,
        Form::Exact => exact(),
        Form::Identifier => whole(),
        Form::IdentifierEnd => exact() && !identifier_char(end),
        Form::IdentifierStart => exact() && !(start > 0 && identifier_char(start - 1)),
        Form::AfterDot => whole() && after_dot(text, start),
        // Patterns are searched for by their regex, never by the automaton.
        Form::Pattern => false,
    }
}

/// Whether the name starting at `start` follows a `.`, spaces apart. A line
/// break before it is taken to allow one (`x.\` or a comment can end the
/// line before).
fn after_dot(text: &[u8], start: usize) -> bool {
    let before = text[..start].iter().rev().find(|b| !matches!(b, b' ' | b'\t' | b'\x0c'));
    matches!(before, None | Some(b'.' | b'\n' | b'\r' | b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(form: Form, text: &str) -> Need {
        Need(vec![vec![Word { form, text: text.to_string() }]])
    }

    fn triggers(needs: Vec<Need>) -> Triggers {
        let mut t = TriggerWords::new(needs.len());
        t.sink(0, needs);
        t.build()
    }

    #[test]
    fn words_are_found_in_their_form() {
        let t = triggers(vec![
            word(Form::AfterDot, "to"),
            word(Form::Identifier, "cuda"),
            word(Form::Exact, "NCCL_"),
            word(Form::AnyCase, "gpu"),
        ]);
        assert_eq!(t.alternatives_for("x = y.to(0)"), Some(vec![true, false, false, false]));
        assert_eq!(t.alternatives_for("x = y.\\\n    to(0)"), Some(vec![true, false, false, false]));
        assert_eq!(t.alternatives_for("# go to the end\nlisten(total)"), None);
        assert_eq!(t.alternatives_for("torch.cuda.foo"), Some(vec![false, true, false, false]));
        assert_eq!(t.alternatives_for("use_cuda = 1; x = 'NCCL_X'"), Some(vec![false, false, true, false]));
        assert_eq!(t.alternatives_for("nccl_x = 'multi-GPU'"), Some(vec![false, false, false, true]));
    }

    #[test]
    fn parts_of_names_are_found_at_their_end_of_a_name() {
        let t = triggers(vec![word(Form::IdentifierEnd, "_ext"), word(Form::IdentifierStart, "_cuda_")]);
        assert_eq!(t.alternatives_for("from . import nms_ext"), Some(vec![true, false]));
        assert_eq!(t.alternatives_for("x = _cuda_ops.f()"), Some(vec![false, true]));
        assert_eq!(t.alternatives_for("load_extension(is_cuda_x)"), None);
    }

    #[test]
    fn a_fact_is_tried_where_its_words_are_but_does_not_ask_for_a_parse() {
        let mut t = TriggerWords::new(3);
        t.sink(0, vec![word(Form::Identifier, "cuda")]);
        t.fact(1, vec![word(Form::Identifier, "gloo"), word(Form::Identifier, "nccl")]);
        let t = t.build();
        assert_eq!(t.alternatives_for("cuda(); gloo"), Some(vec![true, true, false]));
        assert_eq!(t.alternatives_for("cuda(); nccl"), Some(vec![true, false, true]));
        assert_eq!(t.alternatives_for("cuda()"), Some(vec![true, false, false]));
        assert_eq!(t.alternatives_for("gloo"), None);
    }

    #[test]
    fn a_pattern_must_match_where_the_words_are() {
        let mut depth = word(Form::AnyCase, "depth");
        depth.and(word(Form::Pattern, r"depth\s*=\s*(2[4-9]|[3-9]\d)"));
        let mut t = TriggerWords::new(0);
        t.other(vec![depth]);
        let t = t.build();
        assert_eq!(t.alternatives_for("f(depth = 32)"), Some(vec![]));
        assert_eq!(t.alternatives_for("f(depth=12)"), None);
        // A pattern that does not compile holds in every file with the words.
        let mut t = TriggerWords::new(0);
        t.other(vec![word(Form::Pattern, "(")]);
        assert_eq!(t.build().alternatives_for("x"), Some(vec![]));
    }
}
