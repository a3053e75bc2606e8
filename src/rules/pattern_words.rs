//! The words any match of a regular expression contains: literal runs of
//! the pattern (`torch\.load\(`), alternations of them (`cuda|npu`), and
//! letters in any case (`(?i)cuda` is four two-letter classes), with ASCII
//! letters folded to lowercase. A rule's pattern is applied to source text, so a file
//! without one of these words cannot match it.

use super::need::{Form, Need, Word};
use crate::hash::FastMap;
use regex_syntax::hir::{Class, Hir, HirKind, Look};
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

/// `pattern` without its anchors and word boundaries: it matches somewhere
/// in every text that holds a piece `pattern` matches (the text of a node,
/// in its file). `None` if it does not parse.
pub(super) fn unanchored(pattern: &str) -> Option<String> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    Some(without_looks(hir).to_string())
}

fn without_looks(hir: Hir) -> Hir {
    match hir.into_kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Capture(mut c) => {
            c.sub = Box::new(without_looks(*c.sub));
            Hir::capture(c)
        }
        HirKind::Repetition(mut r) => {
            r.sub = Box::new(without_looks(*r.sub));
            Hir::repetition(r)
        }
        HirKind::Concat(parts) => Hir::concat(parts.into_iter().map(without_looks).collect()),
        HirKind::Alternation(arms) => Hir::alternation(arms.into_iter().map(without_looks).collect()),
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => Hir::literal(l.0),
        HirKind::Class(c) => Hir::class(c),
    }
}

/// Whether the named group `group` of `pattern` can only capture the end
/// of the text, and never a `.`: applied to a dotted name
/// (`name_regex = '^torch\.nn\.(?P<cls>[A-Z]\w*)$'`), it captures a part of
/// the name's last segment.
pub(super) fn group_ends_last_segment(pattern: &str, group: &str) -> bool {
    let Ok(hir) = regex_syntax::Parser::new().parse(pattern) else { return false };
    let HirKind::Concat(parts) = hir.kind() else { return false };
    let is_group = |h: &Hir| matches!(h.kind(), HirKind::Capture(c) if c.name.as_deref() == Some(group));
    let Some(at) = parts.iter().position(is_group) else { return false };
    let HirKind::Capture(capture) = parts[at].kind() else { return false };
    let ends_text = |h: &Hir| matches!(h.kind(), HirKind::Look(Look::End));
    let after = &parts[at + 1..];
    !after.is_empty() && after.iter().all(ends_text) && holds_no_dot(&capture.sub)
}

/// Whether no match of `hir` contains a `.`.
fn holds_no_dot(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(l) => !l.0.contains(&b'.'),
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().all(|r| !(r.start()..=r.end()).contains(&'.')),
        HirKind::Class(Class::Bytes(c)) => c.ranges().iter().all(|r| !(r.start()..=r.end()).contains(&b'.')),
        HirKind::Capture(c) => holds_no_dot(&c.sub),
        HirKind::Repetition(r) => holds_no_dot(&r.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().all(holds_no_dot),
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
    fn unanchored_patterns_match_inside_a_longer_text() {
        let re = |p: &str| regex::Regex::new(&unanchored(p).unwrap()).unwrap();
        let depth = re(r"(?i)^[\w.]*(depth|layers?)\s*[:=]\s*(2[4-9]|[3-9]\d)$");
        assert!(depth.is_match("x = f(Depth=24, y=1)\n"));
        assert!(!depth.is_match("x = f(depth=12)\n"));
        assert!(re(r"\bcuda\b").is_match("use_cuda = 1"));
        assert!(unanchored("(").is_none());
    }

    #[test]
    fn a_group_that_ends_the_name_without_a_dot() {
        let ends = |p: &str, g: &str| group_ends_last_segment(p, g);
        assert!(ends(r"^torch\.nn\.(?:modules\.[a-z_]+\.)?(?P<cls>[A-Z]\w*)$", "cls"));
        assert!(ends(r"^torch\.distributions\.(?:[a-z_]+\.)*(?P<cls>Wishart|MultivariateNormal)$", "cls"));
        // Not at the end, not anchored, or able to take a dot.
        assert!(!ends(r"^torch\.(?P<m>[a-z]+)\.x$", "m"));
        assert!(!ends(r"^torch\.(?P<m>[a-z]+)", "m"));
        assert!(!ends(r"^torch\.(?P<m>.+)$", "m"));
        assert!(!ends(r"^torch\.(?P<m>[\w.]+)$", "m"));
        assert!(!ends(r"^torch\.(?P<m>[a-z]+)$", "other"));
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
