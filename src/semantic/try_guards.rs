//! Whether an import line sits in the body of a `try` whose handlers catch
//! `ImportError`, read from the lines around it without parsing the file:
//! the import graph reads imports from lines ([`super::import_lines`]), and
//! a module that imports another only so handles that module failing to
//! load (fairseq's `try: from .dynamicconv_layer import ... except
//! ImportError: <fallback>`).
//!
//! Both searches give up after [`MAX_LINES`] lines and then answer "not
//! guarded", which keeps a finding that depends on it.

/// How many lines each search reads before it gives up.
const MAX_LINES: usize = 2_000;

/// Whether the line starting at byte `start` of `text` is in the body of a
/// `try:` (directly or inside blocks within it) whose first handler is an
/// `except` catching `ImportError`, `ModuleNotFoundError`, `Exception` or
/// everything. An import in a handler, an `else` or a `finally` is not.
pub(crate) fn guarded(text: &str, start: usize) -> bool {
    let Some(mut inner) = indentation(line_at(text, start)) else { return false };
    let mut end = start;
    for _ in 0..MAX_LINES {
        if inner == 0 || end == 0 {
            return false;
        }
        let from = crate::source::line_start_at(text, end - 1);
        let line = line_at(text, from);
        end = from;
        let Some(indent) = indentation(line).filter(|&i| i < inner) else { continue };
        // The header of a block the line is in (or a continuation line,
        // which ends the search as no header would).
        if line.split('#').next().unwrap_or(line).trim() == "try:" {
            return first_handler_catches_import_errors(text, start, indent);
        }
        inner = indent;
    }
    false
}

/// Whether the first line after byte `start` indented by at most
/// `try_indent` (the end of the `try` body) is an `except` that catches
/// import errors.
fn first_handler_catches_import_errors(text: &str, start: usize, try_indent: usize) -> bool {
    let mut next = crate::source::line_end_at(text, start) + 1;
    for _ in 0..MAX_LINES {
        if next >= text.len() {
            return false;
        }
        let line = line_at(text, next);
        next = crate::source::line_end_at(text, next) + 1;
        match indentation(line) {
            Some(indent) if indent <= try_indent => return catches_import_errors(line.trim()),
            _ => continue,
        }
    }
    false
}

/// Whether an `except` line catches import errors: bare, or naming
/// `ImportError`, `ModuleNotFoundError`, `Exception` or `BaseException`.
fn catches_import_errors(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("except") else { return false };
    let rest = rest.split('#').next().unwrap_or(rest).trim();
    rest.starts_with(':')
        || ["ImportError", "ModuleNotFoundError", "Exception", "BaseException"]
            .iter()
            .any(|name| rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word == *name))
}

/// The line that starts at byte `start`, without its end.
fn line_at(text: &str, start: usize) -> &str {
    let line = &text[start..crate::source::line_end_at(text, start)];
    line.strip_suffix('\r').unwrap_or(line)
}

/// The indentation of a line of code; `None` for a blank or comment line.
fn indentation(line: &str) -> Option<usize> {
    let code = line.trim_start();
    (!code.is_empty() && !code.starts_with('#')).then(|| line.len() - code.len())
}

#[cfg(test)]
mod tests {
    use super::guarded;

    /// Whether the line of `src` holding `needle` is guarded.
    fn at(src: &str, needle: &str) -> bool {
        let found = src.find(needle).expect("the needle is in the source");
        guarded(src, crate::source::line_start_at(src, found))
    }

    #[test]
    fn an_import_in_a_try_body_that_catches_import_errors_is_guarded() {
        let src = "def conv():\n    if cuda:\n        try:\n            # the fast layer\n\n            \
                   from .layer import Fast\n            return Fast()\n        except ImportError as e:\n            \
                   print(e)\n    return Slow()\n";
        assert!(at(src, "from .layer"));
        for handler in ["except:", "except (ImportError, OSError):", "except Exception:", "except ModuleNotFoundError:"]
        {
            assert!(at(&format!("try:\n    import fast\n{handler}\n    fast = None\n"), "import fast"), "{handler}");
        }
        assert!(at("try:  # optional\n    import fast\nexcept ImportError:\n    pass\n", "import fast"));
    }

    #[test]
    fn other_imports_are_not_guarded() {
        let cases = [
            ("import fast\n", "import fast"),
            ("try:\n    import fast\nexcept KeyError:\n    pass\n", "import fast"),
            ("try:\n    import fast\nfinally:\n    pass\n", "import fast"),
            // the fallback in the handler, and an import after the try
            ("try:\n    import fast\nexcept ImportError:\n    import slow\n", "import slow"),
            ("try:\n    x = 1\nexcept ImportError:\n    pass\nimport fast\n", "import fast"),
            ("def f():\n    import fast\n", "import fast"),
            // a try that ended before the block the import is in
            ("try:\n    x = 1\nexcept ImportError:\n    pass\nif x:\n    import fast\n", "import fast"),
        ];
        for (src, needle) in cases {
            assert!(!at(src, needle), "{src}");
        }
    }
}
