//! The words any match of a regular expression contains: literal runs of
//! the pattern (`torch\.load\(`), alternations of them (`cuda|npu`), and
//! letters in any case (`(?i)cuda` is four two-letter classes), with ASCII
//! letters folded to lowercase. A rule's pattern is applied to source text, so a file
//! without one of these words cannot match it.

use super::need::{Form, Need, Word};
use crate::hash::FastMap;
use regex_syntax::hir::{Class, Hir, HirKind};
use std::cell::RefCell;

/// At most this many strings are spelt out for one part of a pattern
/// (`(a|b)(c|d)` is four); a larger part gives up its words.
const MAX_STRINGS: usize = 16;

/// A class of at most this many characters is read as alternatives.
const MAX_CLASS: u32 = 4;

/// Derives the words of patterns, each pattern once (many matchers share one).
#[derive(Default)]
pub(super) struct PatternWords {
    seen: RefCell<FastMap<String, Need>>,
}

impl PatternWords {
    /// What any match of `pattern` needs in the text it is applied to; a
    /// pattern that does not parse needs nothing.
    pub(super) fn of(&self, pattern: &str) -> Need {
        if let Some(need) = self.seen.borrow().get(pattern) {
            return need.clone();
        }
        let need = regex_syntax::Parser::new().parse(pattern).map_or_else(|_| Need::none(), |hir| of_hir(&hir).need);
        self.seen.borrow_mut().insert(pattern.to_string(), need.clone());
        need
    }
}

/// What a part of a pattern requires of the text, and, when they are few,
/// the strings it matches (lowercase).
struct Part {
    need: Need,
    strings: Option<Vec<String>>,
}

impl Part {
    fn exactly(strings: Vec<String>) -> Self {
        Part { need: words(&strings), strings: Some(strings) }
    }

    fn needs(need: Need) -> Self {
        Part { need, strings: None }
    }
}

/// One of `strings` required; nothing if one is too short to say anything.
fn words(strings: &[String]) -> Need {
    Need::one_of(strings.iter().map(|s| Word::new(Form::AnyCase, s)).collect())
}

fn of_hir(hir: &Hir) -> Part {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Part::exactly(vec![String::new()]),
        HirKind::Literal(l) => match std::str::from_utf8(&l.0) {
            Ok(s) => Part::exactly(vec![s.to_ascii_lowercase()]),
            Err(_) => Part::needs(Need::none()),
        },
        HirKind::Class(c) => class_strings(c).map_or_else(|| Part::needs(Need::none()), Part::exactly),
        HirKind::Capture(c) => of_hir(&c.sub),
        HirKind::Repetition(r) => {
            let sub = of_hir(&r.sub);
            match (r.min, r.max) {
                (1, Some(1)) => sub,
                (0, Some(1)) => match sub.strings {
                    Some(mut s) => {
                        s.push(String::new());
                        Part::exactly(dedup(s))
                    }
                    None => Part::needs(Need::none()),
                },
                (0, _) => Part::needs(Need::none()),
                _ => Part::needs(sub.need),
            }
        }
        HirKind::Concat(parts) => concat(parts),
        HirKind::Alternation(arms) => {
            let arms: Vec<Part> = arms.iter().map(of_hir).collect();
            let all: Option<Vec<String>> =
                arms.iter().map(|a| a.strings.clone()).collect::<Option<Vec<_>>>().map(|s| dedup(s.concat()));
            match all.filter(|s| s.len() <= MAX_STRINGS) {
                Some(strings) if !words(&strings).0.is_empty() => Part::exactly(strings),
                strings => Part { need: Need::any_of(arms.into_iter().map(|a| a.need)), strings },
            }
        }
    }
}

/// A sequence: every part's requirement, and each run of parts with few
/// strings read as one word (`cuda` after `(?i)`, `"` then `cuda`).
fn concat(parts: &[Hir]) -> Part {
    let mut need = Need::none();
    let mut run: Vec<String> = vec![String::new()];
    let mut whole = true;
    for part in parts.iter().map(of_hir) {
        match part.strings {
            Some(strings) => match product(&run, &strings) {
                Some(longer) => run = longer,
                None => {
                    // Too many spellings together: the run so far is one word, and a new one starts.
                    need.and(words(&run));
                    run = strings;
                    whole = false;
                }
            },
            None => {
                need.and(part.need);
                need.and(words(&run));
                run = vec![String::new()];
                whole = false;
            }
        }
    }
    need.and(words(&run));
    Part { need, strings: whole.then_some(run) }
}

/// Every string of `a` followed by every string of `b`, if not too many.
fn product(a: &[String], b: &[String]) -> Option<Vec<String>> {
    (a.len() * b.len() <= MAX_STRINGS)
        .then(|| dedup(a.iter().flat_map(|x| b.iter().map(move |y| format!("{x}{y}"))).collect()))
}

fn dedup(mut strings: Vec<String>) -> Vec<String> {
    strings.sort();
    strings.dedup();
    strings
}

/// The characters of a small class, in ASCII lowercase (`[cC]` is `c`; the
/// search folds ASCII case only, so `(?i)k`'s Kelvin sign stays a spelling
/// of its own).
fn class_strings(class: &Class) -> Option<Vec<String>> {
    let chars: Vec<char> = match class {
        Class::Unicode(c) => {
            let size: u32 = c.ranges().iter().map(|r| r.end() as u32 - r.start() as u32 + 1).sum();
            if size > MAX_CLASS {
                return None;
            }
            c.ranges().iter().flat_map(|r| r.start()..=r.end()).collect()
        }
        Class::Bytes(c) => {
            let size: u32 = c.ranges().iter().map(|r| u32::from(r.end()) - u32::from(r.start()) + 1).sum();
            if size > MAX_CLASS || c.ranges().iter().any(|r| !r.end().is_ascii()) {
                return None;
            }
            c.ranges().iter().flat_map(|r| r.start()..=r.end()).map(char::from).collect()
        }
    };
    Some(dedup(chars.iter().map(|c| c.to_ascii_lowercase().to_string()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pattern: &str) -> Vec<Vec<String>> {
        PatternWords::default().of(pattern).texts()
    }

    #[test]
    fn literals_in_any_case() {
        assert_eq!(of(r"(?i)cuda|\bgpu\b"), [["cuda", "gpu"]]);
        assert_eq!(of(r"(?:^|[^\w])(?:mps|xpu)(?:[^\w]|$)"), [["mps", "xpu"]]);
        assert_eq!(of(r"^torch\.load\("), [["torch.load("]]);
        assert_eq!(of(r#"^["\x27]cuda["\x27]$"#), [["\"cuda\"", "\"cuda'", "'cuda\"", "'cuda'"]]);
        // Every run of a sequence, each on its own.
        // (`(?i)s` is also the long s, `ſ`.)
        assert_eq!(of(r"(?i)^[\w.]*(criterion|loss)\w*\s*\("), [["criterion", "loss", "losſ", "loſs", "loſſ"]]);
        assert_eq!(of(r"\bset_device\(.*\bcuda\b"), [["set_device("], ["cuda"]]);
        // Only ASCII letters fold: other spellings stay words of their own.
        assert_eq!(of(r"(?i)ok"), [["ok", "o\u{212a}"]]);
        assert_eq!(of(r"Étape"), [["Étape"]]);
    }

    #[test]
    fn optional_parts_and_large_classes_need_nothing() {
        assert!(of(r"(cuda)?\d+").is_empty());
        assert!(of(r"^.$").is_empty());
        assert!(of(r"(unclosed").is_empty());
        assert!(of(r"x|cuda").is_empty());
    }
}
