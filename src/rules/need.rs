//! Requirements on a file's text: which words it must hold, in which form,
//! for a matcher to be able to match in it (see [`super::prefilter`]).

use super::schema::Trigger;

/// How a word must appear in a file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Form {
    /// As a whole identifier: a segment of a dotted name.
    Identifier,
    /// As a whole identifier after a `.`: a method's name.
    AfterDot,
    /// As the end of an identifier: a name segment `*_ext`.
    IdentifierEnd,
    /// As the start of an identifier: a name segment `_cuda_*`.
    IdentifierStart,
    /// Anywhere, as written: part of a glob segment, a pack's `triggers`.
    Exact,
    /// Anywhere, in any ASCII case: a literal of a pattern.
    AnyCase,
    /// A match of this regular expression, anywhere (a node-text pattern
    /// without its anchors): looked for only where the other groups of a
    /// requirement hold.
    Pattern,
}

/// One word a requirement names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Word {
    pub form: Form,
    /// The word; lowercase for [`Form::AnyCase`].
    pub text: String,
}

impl Word {
    pub(super) fn new(form: Form, text: &str) -> Self {
        let text = if form == Form::AnyCase { text.to_ascii_lowercase() } else { text.to_string() };
        Word { form, text }
    }

    /// How much a file that holds this word says; longer, stricter words
    /// are rarer, so a requirement keeps its rarest group when it must
    /// keep one.
    fn strength(&self) -> usize {
        let bonus = match self.form {
            Form::AfterDot => 3,
            Form::Identifier | Form::IdentifierEnd | Form::IdentifierStart => 1,
            Form::Exact | Form::AnyCase => 0,
            // Longer than any word it holds: kept first.
            Form::Pattern => 64,
        };
        self.text.len() + bonus
    }
}

/// A conjunction of groups, each a disjunction of words: a file can match
/// only if, for every group, it holds one of its words. No group: nothing
/// is required. An empty group: nothing can match (a shell or file anchor
/// never matches in Python).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Need(pub Vec<Vec<Word>>);

/// At most this many groups are kept per requirement (the rarest): any
/// subset of the groups is still a necessary condition.
const MAX_GROUPS: usize = 6;

/// Words shorter than this are in nearly every file: not worth a group.
const MIN_WORD: usize = 2;

impl Need {
    /// Nothing required.
    pub(super) fn none() -> Self {
        Need(Vec::new())
    }

    /// Nothing can match.
    pub(super) fn never() -> Self {
        Need(vec![Vec::new()])
    }

    /// One of `words` required; nothing when any of them is too short to say anything.
    pub(super) fn one_of(words: Vec<Word>) -> Self {
        if words.is_empty() || words.iter().any(|w| w.text.len() < MIN_WORD) {
            return Need::none();
        }
        let mut words = words;
        words.sort();
        words.dedup();
        Need(vec![words])
    }

    /// One of a pack's own `triggers`: a word anywhere in the text as
    /// written, or a whole name.
    pub(super) fn one_of_triggers(triggers: &[Trigger]) -> Self {
        let word = |t: &Trigger| match t {
            Trigger::Text(text) => Word::new(Form::Exact, text),
            Trigger::Name(whole) => Word::new(Form::Identifier, &whole.name),
        };
        Need::one_of(triggers.iter().map(word).collect())
    }

    /// The words of each group, for tests.
    #[cfg(test)]
    pub(super) fn texts(&self) -> Vec<Vec<String>> {
        self.0.iter().map(|g| g.iter().map(|w| w.text.clone()).collect()).collect()
    }

    /// Whether nothing can match.
    pub(super) fn is_never(&self) -> bool {
        self.0.iter().any(Vec::is_empty)
    }

    /// This and `other` both required.
    pub(super) fn and(&mut self, other: Need) {
        for group in other.0 {
            if !self.0.contains(&group) {
                self.0.push(group);
            }
        }
        if self.0.len() > MAX_GROUPS {
            keep_rarest(&mut self.0);
        }
    }

    /// One of `needs` required: (a and b) or c is (a or c) and (b or c),
    /// so each group of the result joins one group of every need. The
    /// rarest groups are kept at every step (fewer groups still say less).
    pub(super) fn any_of(needs: impl IntoIterator<Item = Need>) -> Self {
        let mut needs = needs.into_iter().filter(|n| !n.is_never());
        let Some(first) = needs.next() else { return Need::never() };
        let mut out = first;
        for need in needs {
            let mut product = Vec::new();
            for g in &out.0 {
                for h in &need.0 {
                    let mut joined: Vec<Word> = g.iter().chain(h).cloned().collect();
                    joined.sort();
                    joined.dedup();
                    if !product.contains(&joined) {
                        product.push(joined);
                    }
                }
            }
            // A group that holds another says nothing more.
            let implied = |g: &Vec<Word>| product.iter().any(|h| h != g && h.iter().all(|w| g.contains(w)));
            let mut product: Vec<Vec<Word>> = product.iter().filter(|g| !implied(g)).cloned().collect();
            keep_rarest(&mut product);
            out = Need(product);
        }
        out
    }
}

/// The [`MAX_GROUPS`] rarest of `groups`, rarest first.
fn keep_rarest(groups: &mut Vec<Vec<Word>>) {
    groups.sort_by_key(|g| std::cmp::Reverse(group_strength(g)));
    groups.truncate(MAX_GROUPS);
}

/// A group is as rare as its commonest word.
fn group_strength(group: &[Word]) -> usize {
    group.iter().map(Word::strength).min().unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_of_keeps_shared_groups_and_never_is_dropped() {
        let a = Need::one_of(vec![Word::new(Form::Identifier, "torch")]);
        let mut b = a.clone();
        b.and(Need::one_of(vec![Word::new(Form::Identifier, "cuda")]));
        let mut c = a.clone();
        c.and(Need::one_of(vec![Word::new(Form::Identifier, "npu")]));
        let either = Need::any_of([b.clone(), c, Need::never()]);
        assert_eq!(either.texts(), [vec!["torch"], vec!["cuda", "npu"]]);
        assert_eq!(Need::any_of([b, Need::none()]), Need::none());
        assert!(Need::any_of([Need::never()]).is_never());
    }
}
