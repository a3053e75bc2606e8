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
//! run only through their name (`ScaledMaskedSoftmax.apply`). An `nn.Module`
//! class is also read as a whole, by its name: its `forward` runs only on a
//! module something built (GLIP's port keeps EfficientDet's `FocalLoss`,
//! which nothing builds). A class that
//! derives from anything else may be called by that one's library
//! (`training_step`, a hook), so its methods are not. A lookup by a
//! computed name (`getattr(obj, name)`) may find any method or class, and
//! on a module that module's functions, unless its object or its use
//! narrows it ([`lookups`]).
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
//! special names are left out; `@staticmethod` and `@classmethod` register
//! nothing, so methods decorated only with them are read. The functions are read from the lines,
//! without a parse: a `def` at the start of a line up to the next line that
//! starts at the margin with code; a line of a string that starts there ends
//! the function early, which only keeps more findings as they are.

mod lookups;
mod units;

use aho_corasick::AhoCorasick;
use lookups::{Lookups, ANY_MODULE};
use std::collections::{HashMap, HashSet};
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
    /// The names of the project's directories and modules: a library of one
    /// of these names is the project's own.
    modules: HashSet<String>,
}

/// What one text says of the functions' names: how often it mentions each
/// as a whole word, and whether it builds each at run time.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    mentions: Vec<usize>,
    built: Vec<bool>,
    /// Whether a lookup by a computed name in its own file may find each.
    looked_up_here: Vec<bool>,
    /// What the lookups by a computed name may find elsewhere.
    lookups: Lookups,
    /// The files that import some of the names under their own (a
    /// package's `__init__.py` re-exporting them), and those names.
    imported: Vec<(String, Vec<usize>)>,
}

impl<'f> Callers<'f> {
    /// Prepares the search for the names of `functions` (by file), in the
    /// project whose Python files are at `paths`.
    pub(crate) fn new<P: AsRef<str>>(
        functions: &'f HashMap<String, Vec<Function>>,
        paths: impl Iterator<Item = P>,
    ) -> Self {
        let mut modules = HashSet::new();
        for path in paths {
            let parts = path.as_ref().split('/').map(|part| part.strip_suffix(".py").unwrap_or(part));
            modules.extend(parts.map(str::to_string));
        }
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
            modules,
        }
    }

    /// Nothing said of the names yet: what [`Seen::and`] adds to.
    pub(crate) fn nothing_seen(&self) -> Seen {
        let n = self.names.len();
        Seen {
            mentions: vec![0; n],
            built: vec![false; n],
            looked_up_here: vec![false; n],
            lookups: Lookups::default(),
            imported: Vec::new(),
        }
    }

    /// What the text of the file at `path` says of the names.
    pub(crate) fn seen_in(&self, path: &str, text: &str) -> Seen {
        let mut seen = self.nothing_seen();
        let mut imported = Vec::new();
        for (i, only_imported) in self.words_in(text) {
            match only_imported {
                true => imported.push(i),
                false => seen.mentions[i] += 1,
            }
        }
        if let Some(starts) = &self.starts {
            for m in starts.find_overlapping_iter(text) {
                if builds_name(text, m.start(), m.end()) {
                    seen.built[self.start_owner[m.pattern().as_usize()]] = true;
                }
            }
        }
        seen.lookups = lookups::lookups_in(text, &|root| self.modules.contains(root));
        // What the file defines, and what it imports (`globals()` holds both).
        if std::mem::take(&mut seen.lookups.own_file) {
            for f in self.functions.get(path).into_iter().flatten() {
                if let Ok(i) = self.names.binary_search(&f.name.as_str()) {
                    seen.looked_up_here[i] = true;
                }
            }
            imported.iter().for_each(|&i| seen.looked_up_here[i] = true);
        }
        if !imported.is_empty() && !path.is_empty() {
            seen.imported.push((path.to_string(), imported));
        }
        seen
    }

    /// The names (indexes into `names`) that `text` mentions as whole
    /// words, once per mention; an import under the name's own is none.
    fn mentions_in(&self, text: &str) -> Vec<usize> {
        self.words_in(text).into_iter().filter(|&(_, only_imported)| !only_imported).map(|(i, _)| i).collect()
    }

    /// The names (indexes into `names`) that `text` holds as whole words,
    /// once per occurrence, each with whether it is only imported there
    /// ([`only_imports`]).
    fn words_in(&self, text: &str) -> Vec<(usize, bool)> {
        let Some(words) = &self.words else { return Vec::new() };
        words
            .find_overlapping_iter(text)
            .filter(|m| is_whole_word(text, m.start(), m.end()))
            .map(|m| (m.pattern().as_usize(), only_imports(text, m.start(), m.end())))
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
        // What a lookup by a computed name may find is undecided, so called.
        let lookups = &total.lookups;
        let bases: HashSet<&str> = lookups.bases.iter().map(String::as_str).collect();
        let inherited = |f: &Function| {
            lookups.inherited && f.class.as_deref().is_some_and(|c| lookups.unread_base || bases.contains(c))
        };
        // A module looked up may hold any of its files' functions, and those they import (re-exports).
        let modules: HashSet<&str> = lookups.modules.iter().map(String::as_str).collect();
        let in_module = |path: &str| {
            modules.contains(ANY_MODULE)
                || path.split('/').any(|p| modules.contains(p.strip_suffix(".py").unwrap_or(p)))
        };
        let mut reexported = vec![false; self.names.len()];
        for (_, names) in total.imported.iter().filter(|(path, _)| in_module(path)) {
            names.iter().for_each(|&i| reexported[i] = true);
        }
        let undecided: Vec<bool> = (0..self.names.len())
            .map(|i| {
                let found = |path: &str, f: &Function| {
                    lookups.methods && (f.class.is_some() || f.is_class) || f.class.is_none() && in_module(path)
                };
                total.looked_up_here[i] || reexported[i] || by_name[i].iter().any(|(p, f)| found(p, f) || inherited(f))
            })
            .collect();
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
        self.looked_up_here.iter_mut().zip(other.looked_up_here).for_each(|(t, b)| *t |= b);
        self.lookups.and(other.lookups);
        self.imported.extend(other.imported);
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
                ("Head".to_string(), 26, 28),
                ("helper".to_string(), 39, 40),
            ]
        );
        let mut functions = HashMap::new();
        functions.insert("utils.py".to_string(), functions_and_methods(text));
        let logger = "class MetricLogger:\n    def synchronize_between_processes(self):\n\
                      \x20       for meter in self.meters:\n            meter.synchronize_between_processes()\n";
        functions.insert("logger.py".to_string(), functions_and_methods(logger));
        let train = "meter.update(1)\nmeter.reset()\nhelper()\nhead = Head()\n";
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
        for lookup in ["getattr(logger, args.action)()\n", "fn = getattr(self.meters[k], name, None)\nfn()\n"] {
            assert!(uncalled(&functions, &[text, logger, train, lookup]).is_empty(), "{lookup}");
        }
        // Unless its name is read, or what it finds is only read as a value.
        for literal in [
            "getattr(logger, 'update')()\n",
            "getattr(m, f\"update_{k}\")\n",
            "hasattr(x, y)\n",
            "if getattr(args, key) is None:\n    pass\n",
        ] {
            assert_eq!(uncalled(&functions, &[text, logger, train, literal]).len(), 2, "{literal}");
        }
    }

    #[test]
    fn a_lookup_on_self_finds_its_own_files_methods_and_inherited_ones() {
        let meter = "class Meter:\n    def reset(self):\n        pass\n";
        let timer = "class Timer:\n    def stop(self):\n        pass\n";
        let mut functions = HashMap::new();
        functions.insert("meter.py".to_string(), functions_and_methods(meter));
        functions.insert("timer.py".to_string(), functions_and_methods(timer));
        let dead = |lookup: (&str, &str)| {
            let callers = Callers::new(&functions, functions.keys());
            let seen = [("meter.py", meter), ("timer.py", timer), lookup]
                .iter()
                .fold(callers.nothing_seen(), |total, (p, t)| total.and(callers.seen_in(p, t)));
            let mut dead: Vec<String> = callers.uncalled(&seen).into_values().flatten().map(|f| f.name).collect();
            dead.sort();
            dead
        };
        let runner = "class Runner:\n    def run(self, k):\n        return getattr(self, k)()\n";
        assert_eq!(dead(("runner.py", runner)), ["reset", "stop"], "another file's class");
        assert_eq!(dead(("meter.py", &format!("{meter}{runner}"))), ["stop"], "its own file's classes");
        let derived = runner.replace("Runner:", "Runner(Meter):");
        assert_eq!(dead(("runner.py", &derived)), ["stop"], "a class it derives from");
        let unread = runner.replace("Runner:", "Runner(make_base()):");
        assert!(dead(("runner.py", &unread)).is_empty(), "bases that cannot be read");
    }

    #[test]
    fn a_lookup_on_a_module_finds_its_files_functions_and_what_they_import() {
        let resnet = "def resnet50():\n    return 1\n";
        let blocks = "def make_block():\n    return 2\n";
        let debug = "def dump_state():\n    return 3\n";
        let init = "from .resnet import *\nfrom ..layers.blocks import make_block\n";
        let mut functions = HashMap::new();
        for (path, text) in
            [("pkg/models/resnet.py", resnet), ("pkg/layers/blocks.py", blocks), ("tools/debug.py", debug)]
        {
            functions.insert(path.to_string(), functions_and_methods(text));
        }
        let dead = |train: &str| {
            let callers = Callers::new(&functions, functions.keys());
            let texts = [("pkg/models/__init__.py", init), ("train.py", train)];
            let seen = texts.iter().fold(callers.nothing_seen(), |total, (p, t)| total.and(callers.seen_in(p, t)));
            let mut dead: Vec<String> = callers.uncalled(&seen).into_values().flatten().map(|f| f.name).collect();
            dead.sort();
            dead
        };
        assert_eq!(dead("print(1)\n"), ["dump_state", "make_block", "resnet50"]);
        let by_arch = "from pkg import models as M\nnet = getattr(M, args.arch)()\n";
        assert_eq!(dead(by_arch), ["dump_state"], "the package's own and what its __init__ imports");
        let loaded = "m = importlib.import_module(args.module)\nnet = getattr(m, args.arch)()\n";
        assert!(dead(loaded).is_empty(), "a module a loader gives may be any");
        let namespace = "from tools.debug import dump_state\n\ndef run(name):\n    return globals()[name]()\n";
        assert_eq!(dead(namespace), ["make_block", "resnet50"], "globals() holds what the file imports");
    }

    #[test]
    fn a_module_class_runs_once_something_builds_it_and_a_module_lookup_finds_no_method() {
        let losses =
            "class FocalLoss(nn.Module):\n    def __init__(self):\n        super(FocalLoss, self).__init__()\n\n\
                      \x20   def forward(self, x):\n        return x.cuda()\n\n\
                      class DiceLoss(nn.Module):\n    def forward(self, x):\n        return x\n";
        let meter = "class Meter:\n    def reset(self):\n        pass\n";
        let mut functions = HashMap::new();
        functions.insert("pkg/losses.py".to_string(), functions_and_methods(losses));
        functions.insert("pkg/meter.py".to_string(), functions_and_methods(meter));
        let dead = |train: &str| {
            let callers = Callers::new(&functions, functions.keys());
            let texts = [("pkg/losses.py", losses), ("pkg/meter.py", meter), ("train.py", train)];
            let seen = texts.iter().fold(callers.nothing_seen(), |total, (p, t)| total.and(callers.seen_in(p, t)));
            let mut dead: Vec<String> = callers.uncalled(&seen).into_values().flatten().map(|f| f.name).collect();
            dead.sort();
            dead
        };
        assert_eq!(dead("loss = DiceLoss()\n"), ["FocalLoss", "reset"], "its own `super(FocalLoss, ...)` is no use");
        let configured = "loss = {'focal': FocalLoss, 'dice': DiceLoss}[cfg.loss]()\n";
        assert_eq!(dead(configured), ["reset"]);
        // A module of the project holds classes and functions: no method is found there.
        let by_name = "from pkg import losses\nloss = getattr(losses, cfg.loss)()\n";
        assert_eq!(dead(by_name), ["reset"]);
        let on_object = "loss = getattr(registry, cfg.loss)()\n";
        assert!(dead(on_object).is_empty(), "an object's lookup may find any method or class");
    }

    /// By file, the functions that nothing in `texts` calls.
    pub(super) fn uncalled(
        functions: &HashMap<String, Vec<Function>>,
        texts: &[&str],
    ) -> HashMap<String, Vec<Function>> {
        let callers = Callers::new(functions, functions.keys());
        let total = texts.iter().fold(callers.nothing_seen(), |total, t| total.and(callers.seen_in("", t)));
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
        // A lookup on a module by a computed name may find any function; on an object, none.
        let on_module = "import ops\nfn = getattr(ops, name)\nfn(w)\n";
        assert_eq!(dead(&[ops, train, on_module]), Vec::<String>::new());
        let on_object = "fn = getattr(meter, name)\nfn(w)\n";
        assert_eq!(dead(&[ops, train, on_object]), ["pres_check", "walk"]);
    }
}
