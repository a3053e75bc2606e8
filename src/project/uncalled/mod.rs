//! Functions that nothing in their project calls. A port keeps the
//! original's helpers that its own scripts stopped using (detectron2's
//! `pres_check` debugging aid, a `model_device()` the trainer no longer
//! calls, a second NMS beside the one the model uses); what they hold never
//! runs. In a project whose launch scripts start its entry scripts (an
//! application, not a library whose users call its functions), a module-level
//! function whose name nothing in the project mentions but its own lines (its
//! `def`, a recursive call) is such code
//! (see [`crate::project::launches`]).
//!
//! The methods of a class with no base (`class SmoothedValue:` or
//! `(object)`, undecorated, not a `Test*` class or a `*Mixin`) are looked
//! at the same way, by their name: only the project's own code can call them
//! (torchvision's `SmoothedValue.synchronize_between_processes`, a float64
//! all-reduce that a port's trainer never calls). So are the methods of an
//! `nn.Module` but `forward` and the others torch or a library calls by
//! name (GPT-NeoX's port keeps `forward_fused_softmax`, which its `forward`
//! no longer calls), and `torch.autograd.Function` classes as a whole: they
//! run only through their name (`ScaledMaskedSoftmax.apply`). A class that
//! derives from anything else may be called by that one's library
//! (`training_step`, a hook), so its methods are not. A lookup by a
//! computed name (`getattr(obj, name)`) anywhere in the project may find any
//! method or class: then none of them is dead.
//!
//! Only the function's own project is read (a nested project with its own
//! marker that calls it is not). Mentioned means anywhere, as a whole word: a call, a
//! reference in a dictionary or registry, a string, a comment, a document;
//! an import under its own name is no mention (`from utils import
//! load_state` calls nothing; a caller mentions the name again), an import
//! under another name is (`import load_state as ls`: callers say `ls`).
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

mod units;

use aho_corasick::AhoCorasick;
use std::collections::HashMap;
pub(crate) use units::functions_and_methods;
use units::is_whole_word;
pub(crate) use units::Function;

/// The names of some functions, searched in a project's texts one at a time
/// (the texts are not all held at once).
pub(crate) struct Callers<'f> {
    functions: &'f HashMap<String, Vec<Function>>,
    /// The distinct names, sorted.
    names: Vec<&'f str>,
    /// Whole names.
    words: Option<AhoCorasick>,
    /// Starts of names (four characters or more, not all of it), and the
    /// name each belongs to (an index into `names`).
    starts: Option<AhoCorasick>,
    start_owner: Vec<usize>,
}

/// What one text says of the functions' names: how often it mentions each
/// as a whole word, and whether it builds each at run time.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    mentions: Vec<usize>,
    built: Vec<bool>,
    /// Whether an attribute is looked up by a computed name ([`looks_up_computed_attribute`]).
    computed_attribute: bool,
}

impl<'f> Callers<'f> {
    /// Prepares the search for the names of `functions` (by file).
    pub(crate) fn new(functions: &'f HashMap<String, Vec<Function>>) -> Self {
        let mut names: Vec<&str> = functions.values().flatten().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let mut starts = Vec::new();
        let mut start_owner = Vec::new();
        for (i, name) in names.iter().enumerate() {
            for end in name.char_indices().map(|(at, _)| at).skip(4) {
                starts.push(&name[..end]);
                start_owner.push(i);
            }
        }
        Callers {
            functions,
            words: AhoCorasick::new(&names).ok(),
            starts: AhoCorasick::new(&starts).ok(),
            names,
            start_owner,
        }
    }

    /// Nothing said of the names yet: what [`Seen::and`] adds to.
    pub(crate) fn nothing_seen(&self) -> Seen {
        Seen { mentions: vec![0; self.names.len()], built: vec![false; self.names.len()], computed_attribute: false }
    }

    /// What `text` says of the names.
    pub(crate) fn seen_in(&self, text: &str) -> Seen {
        let mut seen = self.nothing_seen();
        for i in self.mentions_in(text) {
            seen.mentions[i] += 1;
        }
        if let Some(starts) = &self.starts {
            for m in starts.find_overlapping_iter(text) {
                if builds_name(text, m.start(), m.end()) {
                    seen.built[self.start_owner[m.pattern().as_usize()]] = true;
                }
            }
        }
        seen.computed_attribute = looks_up_computed_attribute(text);
        seen
    }

    /// The names (indexes into `names`) that `text` mentions as whole
    /// words, once per mention; an import under the name's own is none.
    fn mentions_in(&self, text: &str) -> Vec<usize> {
        let Some(words) = &self.words else { return Vec::new() };
        words
            .find_overlapping_iter(text)
            .filter(|m| is_whole_word(text, m.start(), m.end()) && !only_imports(text, m.start(), m.end()))
            .map(|m| m.pattern().as_usize())
            .collect()
    }

    /// By file, the functions that nothing mentions other than their own
    /// definitions and nothing builds at run time, from what all the texts
    /// of the project say together (`total`, [`Callers::seen_in`] of each
    /// text added up). A mention inside a function found uncalled is no
    /// call either (a helper whose only caller is dead is dead too): each
    /// function found uncalled takes its mentions off the names it
    /// mentions, and the functions of a name that so loses its last call
    /// are looked at again, until none is left (each function is read once,
    /// however long the chains).
    pub(crate) fn uncalled(&self, total: &Seen) -> HashMap<String, Vec<Function>> {
        let index = |name: &str| self.names.binary_search(&name).ok();
        // By name: its functions, and the mentions of it in their own lines
        // (their `def`s, recursive calls).
        let mut by_name: Vec<Vec<(&str, &Function)>> = vec![Vec::new(); self.names.len()];
        let mut defined = vec![0usize; self.names.len()];
        for (path, fs) in self.functions {
            for f in fs {
                if let Some(i) = index(&f.name) {
                    defined[i] += f.own_mentions();
                    by_name[i].push((path.as_str(), f));
                }
            }
        }
        // A method or class may be what a lookup by a computed name finds: undecided, so called.
        let method = |i: usize| by_name[i].iter().any(|(_, f)| f.class.is_some() || f.is_class);
        let undecided: Vec<bool> = (0..self.names.len()).map(|i| total.computed_attribute && method(i)).collect();
        // Mentions not yet known to sit in dead functions.
        let mut live = total.mentions.clone();
        let called = |i: usize, live: &[usize]| live[i] > defined[i] || total.built[i] || undecided[i];
        let mut dead_names = vec![false; self.names.len()];
        let mut queue: Vec<usize> = (0..self.names.len()).filter(|&i| !called(i, &live)).collect();
        let mut dead: HashMap<&str, Vec<&Function>> = HashMap::new();
        while let Some(i) = queue.pop() {
            if std::mem::replace(&mut dead_names[i], true) {
                continue;
            }
            for &(path, f) in &by_name[i] {
                for j in self.mentions_in(&f.body).into_iter().filter(|&j| j != i) {
                    live[j] = live[j].saturating_sub(1);
                    if !dead_names[j] && !called(j, &live) {
                        queue.push(j);
                    }
                }
                dead.entry(path).or_default().push(f);
            }
        }
        dead.into_iter()
            .map(|(path, mut fs)| {
                fs.sort_by_key(|f| f.first);
                (path.to_string(), fs.into_iter().cloned().collect())
            })
            .collect()
    }
}

impl Seen {
    /// Adds what another text says.
    pub(crate) fn and(mut self, other: Seen) -> Seen {
        self.mentions.iter_mut().zip(other.mentions).for_each(|(t, n)| *t += n);
        self.built.iter_mut().zip(other.built).for_each(|(t, b)| *t |= b);
        self.computed_attribute |= other.computed_attribute;
        self
    }
}

/// Whether the start of a name found at `start..end` of `text` opens a
/// string literal and is followed by a placeholder (`{`, `%`) or closes it
/// and is added to (`"train_" + mode`): a name built at run time. A whole
/// string such as `"model"` builds nothing.
fn builds_name(text: &str, start: usize, end: usize) -> bool {
    let b = text.as_bytes();
    let quoted = start > 0 && matches!(b[start - 1], b'"' | b'\'');
    let rest = &text[end..];
    let placeholder = rest.starts_with(['{', '%']);
    let added = rest.starts_with(['"', '\'']) && rest[1..].trim_start_matches([' ', '\t']).starts_with('+');
    quoted && (placeholder || added)
}

/// Whether the name at `start..end` of `text` is imported on a one-line
/// import statement under its own name (`from utils import load_state`):
/// importing a function calls nothing, and a caller of it mentions it
/// again. Under another name (`import load_state as ls`) the callers
/// mention the other name, so that import counts as a call.
fn only_imports(text: &str, start: usize, end: usize) -> bool {
    let line_start = crate::source::line_start_at(text, start);
    let renamed = text[end..].trim_start_matches([' ', '\t']).starts_with("as ");
    crate::semantic::import_lines::is_import_line(&text[line_start..]) && !renamed
}

/// Whether `text` calls `getattr` with a name that is no string literal
/// (`getattr(model, cfg.method)`): what it finds cannot be read, and may be
/// any method. A literal name is a mention, and an f-string's start a name
/// built at run time ([`builds_name`]).
fn looks_up_computed_attribute(text: &str) -> bool {
    text.match_indices("getattr(").any(|(at, call)| {
        let whole = is_whole_word(text, at, at + call.len() - 1);
        whole && second_argument(&text[at + call.len()..]).is_some_and(|arg| !starts_string_literal(arg))
    })
}

/// The text of a call's second argument onwards, from the text after its
/// `(`: what follows the first comma outside brackets and strings.
fn second_argument(args: &str) -> Option<&str> {
    let (mut depth, mut quote) = (0usize, None::<char>);
    for (at, c) in args.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') if depth == 0 => return None,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => return Some(args[at + 1..].trim_start()),
            _ => {}
        }
    }
    None
}

/// Whether `text` starts with a string literal, prefixes (`f`, `rb`) included.
fn starts_string_literal(text: &str) -> bool {
    let rest = text.trim_start_matches(['r', 'b', 'f', 'u', 'R', 'B', 'F', 'U']);
    text.len() - rest.len() <= 2 && rest.starts_with(['"', '\''])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (`Head.fuse` is left out because libraries call a module's `fuse` by
    /// name; the other kinds of class are read in [`units`]'s tests.)
    #[test]
    fn methods_are_read_from_plain_classes_and_are_called_by_their_name() {
        let text = "class SmoothedValue(object):\n    \"\"\"Tracks a series.\"\"\"\n\n    def __init__(self):\n        self.total = 0\n\n\
                    \x20   def synchronize_between_processes(self):\n        t = torch.tensor([self.total], dtype=torch.float64)\n\
                    \x20       dist.all_reduce(t)\n\n\
                    \x20   @property\n    def avg(self):\n        return self.total\n\n\
                    \x20   def update(\n        self, value,\n    ):\n        self.total += value\n\n\
                    \x20   def write(self, text):\n        pass\n\n\
                    class Meter:\n    def reset(self):\n        pass\n\
                    class Head(nn.Module):\n    def fuse(self):\n        pass\n\
                    class TestMeter:\n    def check(self):\n        pass\n\
                    class LoggingMixin:\n    def on_epoch_end(self):\n        pass\n\
                    @dataclass\nclass Config:\n    def resolve(self):\n        pass\n\
                    def helper():\n    pass\n";
        let found: Vec<(String, usize, usize)> =
            functions_and_methods(text).into_iter().map(|f| (f.qualified_name(), f.first, f.last)).collect();
        assert_eq!(
            found,
            [
                ("SmoothedValue.synchronize_between_processes".to_string(), 7, 9),
                ("SmoothedValue.update".to_string(), 15, 18),
                ("Meter.reset".to_string(), 24, 25),
                ("helper".to_string(), 39, 40),
            ]
        );
        let mut functions = HashMap::new();
        functions.insert("utils.py".to_string(), functions_and_methods(text));
        let logger = "class MetricLogger:\n    def synchronize_between_processes(self):\n\
                      \x20       for meter in self.meters:\n            meter.synchronize_between_processes()\n";
        functions.insert("logger.py".to_string(), functions_and_methods(logger));
        let train = "meter.update(1)\nmeter.reset()\nhelper()\n";
        let dead: Vec<String> = uncalled(&functions, &[text, logger, train])
            .into_values()
            .flatten()
            .map(|f| f.qualified_name())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(
            dead,
            ["MetricLogger.synchronize_between_processes", "SmoothedValue.synchronize_between_processes"],
            "a method called only by a method of the same name that nothing calls"
        );
        let trainer = "metric_logger.synchronize_between_processes()\n";
        assert!(uncalled(&functions, &[text, logger, train, trainer]).is_empty(), "called");
        // A lookup by a computed name may find any method: none is decided dead.
        for lookup in ["getattr(logger, args.action)()\n", "fn = getattr(self.meters[k], name, None)\n"] {
            assert!(uncalled(&functions, &[text, logger, train, lookup]).is_empty(), "{lookup}");
        }
        for literal in ["getattr(logger, 'update')()\n", "getattr(m, f\"update_{k}\")\n", "hasattr(x, y)\n"] {
            assert_eq!(uncalled(&functions, &[text, logger, train, literal]).len(), 2, "{literal}");
        }
    }

    /// By file, the functions that nothing in `texts` calls.
    fn uncalled(functions: &HashMap<String, Vec<Function>>, texts: &[&str]) -> HashMap<String, Vec<Function>> {
        let callers = Callers::new(functions);
        let total = texts.iter().fold(callers.nothing_seen(), |total, t| total.and(callers.seen_in(t)));
        callers.uncalled(&total)
    }

    #[test]
    fn a_function_is_called_when_another_text_names_it_or_builds_its_name() {
        let mut functions = HashMap::new();
        let ops = "def emulate_int8_tensor(w):\n    return w\n\n\
                   def emulate(w, bits, method):\n    return globals()[f\"emulate_int{bits}_{method}\"](w)\n\n\
                   def pres_check(a):\n    return a\n\n\
                   def load_tensor(p):\n    return p\n\n\
                   def walk(m):\n    for c in m.children():\n        walk(c)\n";
        functions.insert("ops.py".to_string(), functions_and_methods(ops));
        let train =
            "from ops import emulate, pres_check\n# load_tensor is kept for debugging\nemulate(1, 8, 'tensor')\n\
                     state = {'pres': 1, 'model': 2}\n";
        let dead = |texts: &[&str]| -> Vec<String> {
            uncalled(&functions, texts)
                .get("ops.py")
                .map_or(Vec::new(), |fs| fs.iter().map(|f| f.name.clone()).collect())
        };
        assert_eq!(dead(&[ops, train]), ["pres_check", "walk"], "imported, never called; called only by itself");
        let only_by_dead = "def prepare_device(n):\n    return n\n\n\
                            def model_device(n):\n    return prepare_device(n)\n\n\
                            def used(n):\n    return n\n\n\
                            def caller(n):\n    return used(n)\n";
        let mut chain = HashMap::new();
        chain.insert("common.py".to_string(), functions_and_methods(only_by_dead));
        let chain_dead: Vec<String> = uncalled(&chain, &[only_by_dead, "caller(1)\n"])
            .get("common.py")
            .map_or(Vec::new(), |fs| fs.iter().map(|f| f.name.clone()).collect());
        assert_eq!(chain_dead, ["prepare_device", "model_device"], "called only by a dead function");
        let renamed = "from ops import pres_check as check\ncheck(1)\nwalk(model)\n";
        assert_eq!(dead(&[ops, train, renamed]), Vec::<String>::new(), "called under another name; called");
        let joined =
            ["x = globals()['pres_' + kind]\n", "x = globals()[\"pres_%s\" % kind]\n", "f = 'pres_{}'.format(k)\n"];
        for text in joined {
            assert_eq!(dead(&[ops, train, text]), ["walk"], "{text}");
        }
    }
}
