//! Rule patterns read `\w`, `\d`, `\s` and `\b` as ASCII classes.
//!
//! The regex crate reads them as Unicode classes by default, and a Unicode
//! `\w` compiles to an automaton of hundreds of kilobytes, with a cache per
//! thread that grows as it matches: the built-in packs' patterns took 13 MB
//! of compiled regexes and 10 MB of caches, half of a corpus scan's heap. The
//! code rules read is Python source whose identifiers, numbers and
//! indentation are ASCII in practice, so the ASCII classes match the same
//! text (the scan's reports on the corpus and on ModelZoo, Chinese comments
//! and strings included, are identical either way) and compile to a
//! fraction of the size. `.`, negated brackets and `\p{..}` stay Unicode.

/// `pattern` with each Perl class written as its ASCII form: `\w` as
/// `(?-u:\w)`, or `[:word:]` inside brackets; `\W` as `[^[:word:]]`, or
/// `[:^word:]` inside brackets; the same for `\d` (digit) and `\s` (space);
/// `\b` as `(?-u:\b)`. `\B` stays Unicode: its ASCII form may split a
/// character, which the regex crate refuses for text. A pattern this
/// reading cannot follow is returned as written, with Unicode classes: one
/// that may set the `x` flag (its `#` comments can hold brackets), or one
/// whose brackets do not balance.
pub(super) fn ascii_classes(pattern: &str) -> String {
    if may_set_verbose_flag(pattern) {
        return pattern.to_string();
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    // How many brackets are open, and the length of `out` just after the
    // latest `[` or `[^`, where a `]` is a literal and not the end.
    let mut depth = 0usize;
    let mut class_start = usize::MAX;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push(c);
                    break;
                };
                match (posix_name(next), depth > 0) {
                    (Some((name, negated)), true) => {
                        out.push_str(&format!("[:{}{name}:]", if negated { "^" } else { "" }));
                    }
                    (Some((name, true)), false) => out.push_str(&format!("[^[:{name}:]]")),
                    (Some(_), false) => out.push_str(&format!("(?-u:\\{next})")),
                    (None, false) if next == 'b' => out.push_str("(?-u:\\b)"),
                    (None, _) => {
                        out.push(c);
                        out.push(next);
                    }
                }
            }
            '[' if depth > 0 && chars.peek() == Some(&':') => {
                // A POSIX class such as `[:alpha:]`: copied to its `:]`.
                out.push(c);
                for p in chars.by_ref() {
                    out.push(p);
                    if p == ']' && out.ends_with(":]") {
                        break;
                    }
                }
            }
            '[' => {
                depth += 1;
                out.push(c);
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                class_start = out.len();
            }
            ']' if depth > 0 && out.len() != class_start => {
                depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    if depth > 0 {
        return pattern.to_string();
    }
    out
}

/// Whether a flag group of `pattern` (`(?x)`, `(?ix:`) may turn on verbose
/// mode; an escaped `\(?x` counts too, which only keeps Unicode classes.
fn may_set_verbose_flag(pattern: &str) -> bool {
    pattern
        .match_indices("(?")
        .any(|(i, _)| pattern[i + 2..].chars().take_while(|c| c.is_ascii_alphabetic() || *c == '-').any(|c| c == 'x'))
}

/// The POSIX class name of a Perl class letter, and whether it is negated.
fn posix_name(letter: char) -> Option<(&'static str, bool)> {
    let name = match letter.to_ascii_lowercase() {
        'w' => "word",
        'd' => "digit",
        's' => "space",
        _ => return None,
    };
    Some((name, letter.is_ascii_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::ascii_classes;
    use regex::Regex;

    #[test]
    fn perl_classes_become_ascii_inside_and_outside_brackets() {
        assert_eq!(ascii_classes(r"^\w+$"), r"^(?-u:\w)+$");
        assert_eq!(ascii_classes(r"[\w)\]]\s*%"), r"[[:word:])\]](?-u:\s)*%");
        assert_eq!(ascii_classes(r"\bnot\s+in\b"), r"(?-u:\b)not(?-u:\s)+in(?-u:\b)");
        assert_eq!(ascii_classes(r"\W[^\D]"), r"[^[:word:]][^[:^digit:]]");
        assert_eq!(ascii_classes(r"[]\w][^]\d]"), r"[][:word:]][^][:digit:]]");
        assert_eq!(ascii_classes(r"[[:alpha:]\w]\B"), r"[[:alpha:][:word:]]\B");
        assert_eq!(ascii_classes(r"[a-z&&[^x]]\w"), r"[a-z&&[^x]](?-u:\w)");
    }

    #[test]
    fn escapes_and_other_text_are_copied() {
        for same in [r"\\w", r"\.\(\x27\p{Greek}\n", r"a.b|[^a-z]", r"(?i)^torch\.cuda\..*$", "trailing\\"] {
            assert_eq!(ascii_classes(same), same);
        }
    }

    #[test]
    fn patterns_it_cannot_follow_keep_unicode_classes() {
        for same in [r"(?x) \w+ # a [ in a comment", r"(?ix:\d) # ]", r"[\w", r"\(?x\w"] {
            assert_eq!(ascii_classes(same), same);
        }
    }

    #[test]
    fn ascii_forms_match_ascii_text_alike_and_no_other_letters_digits_or_spaces() {
        let cases = [
            (r"^torch\.cuda\.[A-Za-z]\w*$", "torch.cuda.synchronize", "torch.cuda.xé"),
            (r"^\w*['\x27](npu(:\d+)?|hccl)['\x27]$", "f'npu:0'", "'npu:٣'"),
            (r".+\bnot\s+in\s+\w*state\w*", "k not in self_state", "k not\u{a0}in state"),
            (r"[\w)\]]\s*%\s*[\w(]", "a % b", "é % é"),
        ];
        for (pattern, ascii_text, other_text) in cases {
            let ascii = Regex::new(&ascii_classes(pattern)).unwrap();
            let unicode = Regex::new(pattern).unwrap();
            assert!(ascii.is_match(ascii_text) && unicode.is_match(ascii_text), "{pattern}");
            assert!(unicode.is_match(other_text) && !ascii.is_match(other_text), "{pattern} on {other_text:?}");
        }
    }
}
