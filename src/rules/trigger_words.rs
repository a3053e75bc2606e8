//! The search, in a file's text, for the words the run's matchers require
//! ([`super::prefilter`]): which rules, summaries and facts can match the
//! file, and whether anything at all can (if not, the file is not parsed).

use super::need::{Form, Need, Word};
use crate::hash::FastMap;
use aho_corasick::{AhoCorasick, AhoCorasickKind};

/// A sink's requirement as word indices: one of the alternatives must hold,
/// and an alternative holds when each of its groups has a word in the file.
/// No alternative: the sink never matches in Python; an alternative with no
/// group: it can match in any file.
type Requirement = Vec<Vec<Vec<usize>>>;

/// Collects the words of requirements, each once.
#[derive(Default)]
pub(super) struct TriggerWords {
    index: FastMap<Word, usize>,
    words: Vec<Word>,
    sinks: Vec<Requirement>,
    /// By sink: whether it alone makes a file worth parsing.
    parses: Vec<bool>,
    others: Vec<Requirement>,
}

impl TriggerWords {
    /// Room for `n_sinks` sinks, none of which is tried until given a requirement.
    pub(super) fn new(n_sinks: usize) -> Self {
        TriggerWords { sinks: vec![Vec::new(); n_sinks], parses: vec![false; n_sinks], ..TriggerWords::default() }
    }

    /// Sink `i` (a rule or summary) is tried on a file where one of
    /// `alternatives` holds, and the file is then parsed.
    pub(super) fn sink(&mut self, i: usize, alternatives: Vec<Need>) {
        self.sinks[i] = self.requirement(alternatives);
        self.parses[i] = true;
    }

    /// Fact `i` (its sink) is tried on a file that is parsed and where one
    /// of `alternatives` holds.
    pub(super) fn fact(&mut self, i: usize, alternatives: Vec<Need>) {
        self.sinks[i] = self.requirement(alternatives);
    }

    /// A summary, fact or other per-file result that needs the file parsed
    /// where one of `alternatives` holds.
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
    /// checked against its words' forms).
    pub(super) fn build(self) -> Triggers {
        let mut patterns: Vec<String> = Vec::new();
        let mut by_pattern: FastMap<String, usize> = FastMap::default();
        let mut words_of: Vec<Vec<usize>> = Vec::new();
        for (i, w) in self.words.iter().enumerate() {
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
        let (sinks, parses, others) = (self.sinks, self.parses, self.others);
        Triggers { searcher, words_of, words: self.words, sinks, parses, others }
    }
}

/// The trigger words of a run, ready to search.
pub(super) struct Triggers {
    /// `None` (too many words for any automaton): every rule is tried on every file.
    searcher: Option<AhoCorasick>,
    /// By automaton pattern: the words it stands for.
    words_of: Vec<Vec<usize>>,
    words: Vec<Word>,
    /// By sink slot.
    sinks: Vec<Requirement>,
    /// By sink slot: whether the sink alone makes a file worth parsing.
    parses: Vec<bool>,
    others: Vec<Requirement>,
}

impl Triggers {
    /// Which sinks can match a file with this text; `None` when nothing
    /// that makes a file worth parsing can (the file need not be parsed).
    pub(super) fn sinks_for(&self, text: &str) -> Option<Vec<bool>> {
        let Some(searcher) = &self.searcher else { return Some(self.sinks.iter().map(|r| !r.is_empty()).collect()) };
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
        let holds = |r: &Requirement| r.iter().any(|alt| alt.iter().all(|group| group.iter().any(|&w| present[w])));
        let sinks: Vec<bool> = self.sinks.iter().map(holds).collect();
        let parse = sinks.iter().zip(&self.parses).any(|(&active, &parses)| active && parses);
        (parse || self.others.iter().any(holds)).then_some(sinks)
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
        Form::AfterDot => whole() && after_dot(text, start),
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
        for (i, n) in needs.into_iter().enumerate() {
            t.sink(i, vec![n]);
        }
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
        assert_eq!(t.sinks_for("x = y.to(0)"), Some(vec![true, false, false, false]));
        assert_eq!(t.sinks_for("x = y.\\\n    to(0)"), Some(vec![true, false, false, false]));
        assert_eq!(t.sinks_for("# go to the end\nlisten(total)"), None);
        assert_eq!(t.sinks_for("torch.cuda.foo"), Some(vec![false, true, false, false]));
        assert_eq!(t.sinks_for("use_cuda = 1; x = 'NCCL_X'"), Some(vec![false, false, true, false]));
        assert_eq!(t.sinks_for("nccl_x = 'multi-GPU'"), Some(vec![false, false, false, true]));
    }

    #[test]
    fn a_fact_is_tried_where_its_words_are_but_does_not_ask_for_a_parse() {
        let mut t = TriggerWords::new(2);
        t.sink(0, vec![word(Form::Identifier, "cuda")]);
        t.fact(1, vec![word(Form::Identifier, "gloo")]);
        let t = t.build();
        assert_eq!(t.sinks_for("cuda(); gloo"), Some(vec![true, true]));
        assert_eq!(t.sinks_for("cuda()"), Some(vec![true, false]));
        assert_eq!(t.sinks_for("gloo"), None);
    }
}
