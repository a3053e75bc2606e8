//! Functions that nothing in their project calls. A port keeps the
//! original's helpers that its own scripts stopped using (detectron2's
//! `pres_check` debugging aid, a `model_device()` the trainer no longer
//! calls, a second NMS beside the one the model uses); what they hold never
//! runs. In a project whose launch scripts start its entry scripts (an
//! application, not a library whose users call its functions), a module-level
//! function whose name no other text of the project mentions is such code
//! (see [`crate::launches`]).
//!
//! Mentioned means anywhere, as a whole word: a call, an import, a
//! reference in a dictionary or registry, a string, a comment, a document.
//! A function is also taken as called when some string literal of the project
//! starts its name and is then joined with something
//! (`globals()[f"emulate_int{bits}_{method}"]`, `"train_" + mode`,
//! `"darknet%d" % depth`); a whole string such as `"model"` is no such start
//! of `model_device`. Decorated
//! functions (registered, wrapped, exported), `main`, `test*` functions and
//! special names are left out. The functions are read from the lines,
//! without a parse: a `def` at the start of a line up to the next line that
//! starts at the margin with code; a line of a string that starts there ends
//! the function early, which only keeps more findings as they are.

use aho_corasick::AhoCorasick;
use std::collections::{HashMap, HashSet};

/// A module-level function: its name and its lines (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// The line of its `def`.
    pub first: usize,
    /// Its last line of code.
    pub last: usize,
}

impl Function {
    /// Whether line `line` (1-based) is one of its lines.
    pub fn holds(&self, line: usize) -> bool {
        (self.first..=self.last).contains(&line)
    }
}

/// The module-level, undecorated functions of a Python file's text that
/// may be dead (not `main`, not a test, not a special name).
pub fn top_level_functions(text: &str) -> Vec<Function> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Function> = Vec::new();
    let mut open: Option<Function> = None;
    let mut previous_code: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let at_margin = !line.is_empty() && !line.starts_with([' ', '\t', '#', ')', ']', '}']);
        if at_margin {
            out.extend(open.take());
            let header = line.strip_prefix("async ").unwrap_or(line);
            let name = header
                .strip_prefix("def ")
                .map(|rest| rest.split(|c: char| c == '(' || c.is_whitespace()).next().unwrap_or(""));
            let decorated = previous_code.is_some_and(|p| p.starts_with('@'));
            if let Some(name) = name.filter(|n| may_be_dead(n) && !decorated) {
                open = Some(Function { name: name.to_string(), first: i + 1, last: i + 1 });
            }
        } else if let Some(f) = open.as_mut() {
            if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
                f.last = i + 1;
            }
        }
        if !line.trim().is_empty() && !line.starts_with('#') {
            previous_code = Some(line);
        }
    }
    out.extend(open);
    out
}

/// Names that something outside the project's text runs: `main` (a console
/// script), test functions (pytest), special names.
fn may_be_dead(name: &str) -> bool {
    !name.is_empty() && name != "main" && !name.starts_with("test") && !name.starts_with("__")
}

/// Which of `functions` (by file) nothing in `texts` mentions other than its
/// own definition: the functions that nothing in the project calls.
pub fn uncalled<'f>(
    functions: &'f HashMap<String, Vec<Function>>,
    texts: &[&str],
) -> HashMap<&'f str, Vec<&'f Function>> {
    let names: Vec<&str> = {
        let mut names: Vec<&str> = functions.values().flatten().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names
    };
    let Ok(words) = AhoCorasick::new(&names) else { return HashMap::new() };
    let mut mentions = vec![0usize; names.len()];
    for text in texts {
        for m in words.find_overlapping_iter(*text) {
            if is_whole_word(text, m.start(), m.end()) {
                mentions[m.pattern().as_usize()] += 1;
            }
        }
    }
    // Each definition mentions its name once.
    let defined = functions.values().flatten().fold(HashMap::<&str, usize>::new(), |mut n, f| {
        *n.entry(f.name.as_str()).or_default() += 1;
        n
    });
    let unmentioned: HashSet<&str> =
        names.iter().enumerate().filter(|(i, n)| mentions[*i] <= defined[*n]).map(|(_, n)| *n).collect();
    let joined = joined_in_strings(&unmentioned, texts);
    functions
        .iter()
        .map(|(path, fs)| {
            let dead = fs.iter().filter(|f| unmentioned.contains(f.name.as_str()) && !joined.contains(f.name.as_str()));
            (path.as_str(), dead.collect::<Vec<_>>())
        })
        .filter(|(_, fs)| !fs.is_empty())
        .collect()
}

/// The `names` whose start (four characters or more, not all of it) some
/// string literal of `texts` spells out before a placeholder (`{`, `%`) or
/// before it ends and is added to (`"train_" + mode`): a name built at run time.
fn joined_in_strings<'n>(names: &HashSet<&'n str>, texts: &[&str]) -> HashSet<&'n str> {
    let mut prefixes: Vec<(&str, &'n str)> = Vec::new();
    for name in names {
        let ends = name.char_indices().map(|(i, _)| i).skip(4);
        prefixes.extend(ends.map(|end| (&name[..end], *name)));
    }
    let Ok(starts) = AhoCorasick::new(prefixes.iter().map(|(p, _)| p)) else { return HashSet::new() };
    let mut joined = HashSet::new();
    for text in texts {
        let b = text.as_bytes();
        for m in starts.find_overlapping_iter(*text) {
            let quoted = m.start() > 0 && matches!(b[m.start() - 1], b'"' | b'\'');
            let rest = &text[m.end()..];
            let placeholder = rest.starts_with(['{', '%']);
            let added = rest.starts_with(['"', '\'']) && rest[1..].trim_start_matches([' ', '\t']).starts_with('+');
            if quoted && (placeholder || added) {
                joined.insert(prefixes[m.pattern().as_usize()].1);
            }
        }
    }
    joined
}

/// Whether `text[start..end]` is not part of a longer identifier.
fn is_whole_word(text: &str, start: usize, end: usize) -> bool {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let before = start > 0 && ident(b[start - 1]);
    let after = b.get(end).is_some_and(|&c| ident(c));
    !before && !after
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, usize, usize)> {
        top_level_functions(text).into_iter().map(|f| (f.name, f.first, f.last)).collect()
    }

    #[test]
    fn module_level_functions_are_read_from_the_lines() {
        let text = "import torch\n\n\
                    def helper(x,\n        y):\n    return x.cuda()\n\n\
                    # a comment at the margin\n\
                    def wrapped(\n    a,\n):\n    return a\n\n\
                    @register\ndef registered():\n    pass\n\n\
                    async def fetch():\n    pass\n\
                    class Model:\n    def forward(self):\n        pass\n\n\
                    def main():\n    helper(1, 2)\n\
                    def test_it():\n    pass\n\
                    if __name__ == '__main__':\n    main()\n";
        assert_eq!(
            names(text),
            [("helper".to_string(), 3, 5), ("wrapped".to_string(), 8, 11), ("fetch".to_string(), 17, 18)]
        );
    }

    #[test]
    fn a_function_is_called_when_another_text_names_it_or_builds_its_name() {
        let mut functions = HashMap::new();
        let ops = "def emulate_int8_tensor(w):\n    return w\n\n\
                   def emulate(w, bits, method):\n    return globals()[f\"emulate_int{bits}_{method}\"](w)\n\n\
                   def pres_check(a):\n    return a\n\n\
                   def load_tensor(p):\n    return p\n";
        functions.insert("ops.py".to_string(), top_level_functions(ops));
        let train = "from ops import emulate\n# load_tensor is kept for debugging\nemulate(1, 8, 'tensor')\n\
                     state = {'pres': 1, 'model': 2}\n";
        let dead = uncalled(&functions, &[ops, train]);
        let names: Vec<&str> = dead["ops.py"].iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["pres_check"]);
        let joined =
            ["x = globals()['pres_' + kind]\n", "x = globals()[\"pres_%s\" % kind]\n", "f = 'pres_{}'.format(k)\n"];
        for text in joined {
            assert!(!uncalled(&functions, &[ops, train, text]).contains_key("ops.py"), "{text}");
        }
    }
}
