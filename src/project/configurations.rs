//! Which branches of a project the runs its launch scripts start never take.
//!
//! A port's shell scripts (`test/train_full_8p.sh`) fix the options of every
//! run: `python3 main.py --device npu --amp ...`. An option no script gives
//! keeps its `argparse` default. A branch whose test fails with the options
//! of every run (`if args.num_gpu > 1:` where no script passes `--num-gpu`
//! and the default is 1; the `else:` of `if args.device == 'npu':` where
//! every script passes `--device npu`) holds code no NPU process runs, and
//! its findings are advice, like code no launch script starts
//! ([`crate::project::launches`]).
//!
//! Nothing is decided unless it is certain from what the project says: an
//! option defined twice with different defaults, given a value the script
//! computes (`--lr $lr`), assigned a computed value anywhere in the project
//! (`args.num_gpu = torch.cuda.device_count()`), or a run that passes its own
//! arguments on (`python train.py "$@"`) leaves every test that reads it
//! undecided. A value the code assigns as a literal (`args.num_gpu = 1`) is
//! one more value the option may hold. A launcher between Python and the
//! script (`-m torch.distributed.launch`, `torchrun`) adds `--local_rank`.

use crate::semantic::launch_lines::{Launch, LAUNCHER_OPTIONS};
use crate::semantic::option_defs::{Conversion, Definitions, OptionDef, Takes};
use crate::semantic::options::{CompareOp, Cond, Gate, Operand};
use crate::semantic::values::Literal;
use std::collections::HashMap;

/// A branch of a file that no run of the project takes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Untaken {
    /// The line of its `if`, `elif` or `else`.
    pub line: usize,
    /// The first and last line of its body.
    pub lines: (usize, usize),
    /// The test that fails in every run, as written.
    pub test: String,
}

/// By display path, the branches that no run takes, among the `gates` of a
/// project's files: each file's display path, its gates and the indexes of
/// the `launches` whose process runs it (the script or a module it
/// imports). `definitions` are what the Python files those processes run
/// define. A branch counts when some launch runs its file and none of
/// those takes it.
pub(crate) fn untaken(
    gates: &[(&str, &[Gate], &[usize])],
    definitions: &[Definitions],
    launches: &[&Launch],
) -> HashMap<String, Vec<Untaken>> {
    let options = Options::of(definitions);
    let runs: Vec<Run> = launches.iter().map(|l| options.run(l)).collect();
    let mut out: HashMap<String, Vec<Untaken>> = HashMap::new();
    for (path, gates, reaching) in gates.iter().filter(|(_, _, reaching)| !reaching.is_empty()) {
        for gate in gates.iter() {
            if reaching.iter().all(|&i| runs.get(i).is_some_and(|run| !options.may_hold(&gate.test, run))) {
                out.entry(path.to_string()).or_default().push(untaken_of(gate));
            }
        }
    }
    out
}

fn untaken_of(gate: &Gate) -> Untaken {
    Untaken { line: gate.line, lines: gate.lines, test: gate.shown.clone() }
}

/// The options a project defines and what its code stores in them.
struct Options<'a> {
    /// By destination: the definition, or `None` when two disagree.
    by_dest: HashMap<&'a str, Option<&'a OptionDef>>,
    /// By option string: the destination, or `None` when two disagree.
    by_flag: HashMap<&'a str, Option<&'a str>>,
    /// By attribute name: the literal values stored, or `None` when some stored value is not a literal.
    stored: HashMap<&'a str, Option<Vec<&'a Literal>>>,
    /// Some file may replace any option's value after parsing.
    values_replaced: bool,
    /// The tests under which each `set_defaults(**...)` call runs.
    defaults_replaced: Vec<&'a [Cond]>,
}

/// The options one run gives: by destination, the value (`None` when not known).
struct Run {
    given: HashMap<String, Option<Literal>>,
    /// The run passes arguments the script cannot see (`"$@"`): any option may be given.
    open: bool,
    /// A `set_defaults(**...)` call may run: defaults are not known.
    defaults_replaced: bool,
}

impl<'a> Options<'a> {
    fn of(files: &'a [Definitions]) -> Self {
        let mut options = Options {
            by_dest: HashMap::new(),
            by_flag: HashMap::new(),
            stored: HashMap::new(),
            values_replaced: false,
            defaults_replaced: Vec::new(),
        };
        for file in files {
            options.values_replaced |= file.replaces_values;
            options.defaults_replaced.extend(file.replaces_defaults.iter().map(Vec::as_slice));
            for def in &file.defined {
                options
                    .by_dest
                    .entry(&def.dest)
                    .and_modify(|known| {
                        if known.is_some_and(|k| k.default != def.default || k.takes != def.takes) {
                            *known = None;
                        }
                    })
                    .or_insert(Some(def));
                for flag in &def.flags {
                    let dest = def.dest.as_str();
                    options
                        .by_flag
                        .entry(flag)
                        .and_modify(|known| {
                            if *known != Some(dest) {
                                *known = None;
                            }
                        })
                        .or_insert(Some(dest));
                }
            }
            for (name, value) in &file.stored {
                let entry = options.stored.entry(name).or_insert_with(|| Some(Vec::new()));
                match (entry.as_mut(), value) {
                    (Some(values), Some(v)) => values.push(v),
                    _ => *entry = None,
                }
            }
        }
        options
    }

    /// What `launch` gives its script, read with the options' definitions.
    fn run(&self, launch: &Launch) -> Run {
        let mut run = Run { given: HashMap::new(), open: launch.opaque, defaults_replaced: false };
        if launch.via_launcher {
            run.given.extend(LAUNCHER_OPTIONS.iter().map(|o| (o.to_string(), None)));
        }
        let words: Vec<&str> = launch.words().collect();
        let mut i = 0;
        while i < words.len() {
            let word = words[i];
            i += 1;
            if word.contains('$') && !word.starts_with('-') {
                // A variable standing alone may hold any options at all.
                run.open = true;
                continue;
            }
            if !word.starts_with('-') || word.len() < 2 || word.parse::<f64>().is_ok() {
                continue;
            }
            let (flag, inline) = match word.split_once('=') {
                Some((flag, value)) => (flag, Some(value.to_string())),
                None => (word, None),
            };
            if !word.starts_with("--") && (inline.is_some() || self.flag(flag).is_none()) {
                // `-n8`, `-n=8`, `-av`: a short option with its value attached,
                // or several together. Each option they may stand for is
                // given an unknown value.
                for c in flag.chars().skip(1) {
                    if let Some(dest) = self.flag(&format!("-{c}")) {
                        run.given.insert(dest.to_string(), None);
                    }
                }
                continue;
            }
            let dest = self.flag(flag);
            let next_is_value = words.get(i).is_some_and(|w| !w.starts_with('-') || w.parse::<f64>().is_ok());
            let (Some(dest), Some(def)) = (dest, dest.and_then(|d| self.by_dest.get(d).copied().flatten())) else {
                // An option this project does not define (or defines twice,
                // differently): skip the value it may take.
                if inline.is_none() && next_is_value {
                    i += 1;
                }
                if let Some(dest) = dest {
                    run.given.insert(dest.to_string(), None);
                }
                continue;
            };
            let value = match &def.takes {
                Takes::Nothing(v) => Some(v.clone()),
                Takes::One(conversion) => {
                    let word = match inline {
                        Some(value) => Some(value),
                        None if next_is_value => {
                            i += 1;
                            Some(words[i - 1].to_string())
                        }
                        None => None,
                    };
                    word.filter(|w| !w.contains('$')).and_then(|w| convert(&w, *conversion))
                }
                Takes::Unknown => {
                    if next_is_value {
                        i += 1;
                    }
                    None
                }
            };
            run.given.insert(dest.to_string(), value);
        }
        // Judged with the parser's own defaults: the test of a `set_defaults`
        // call reads options that the configuration file does not set (`--config`).
        run.defaults_replaced = self.defaults_replaced.iter().any(|tests| tests.iter().all(|t| self.may_hold(t, &run)));
        run
    }

    /// The destination of an option string, also abbreviated (argparse
    /// accepts any unique prefix of a long option).
    fn flag(&self, flag: &str) -> Option<&'a str> {
        if let Some(dest) = self.by_flag.get(flag) {
            return *dest;
        }
        if !flag.starts_with("--") {
            return None;
        }
        let mut matches = self.by_flag.iter().filter(|(f, _)| f.starts_with(flag));
        match (matches.next(), matches.next()) {
            (Some((_, dest)), None) => *dest,
            _ => None,
        }
    }

    /// The values `dest` may hold in `run`; `None` when not known.
    fn values(&self, dest: &str, run: &Run) -> Option<Vec<Literal>> {
        if self.values_replaced {
            return None;
        }
        let def = self.by_dest.get(dest).copied().flatten()?;
        let base = match run.given.get(dest) {
            Some(given) => given.clone()?,
            None if run.open || run.defaults_replaced => return None,
            None => def.default.clone()?,
        };
        let stored = match self.stored.get(dest) {
            Some(values) => values.as_ref()?.iter().map(|v| (*v).clone()).collect(),
            None => Vec::new(),
        };
        Some([vec![base], stored].concat())
    }

    /// Whether `test` may hold in `run`.
    fn may_hold(&self, test: &Cond, run: &Run) -> bool {
        self.outcomes(test, run, 0).0
    }

    /// Whether `test` may hold, and whether it may fail, in `run`.
    fn outcomes(&self, test: &Cond, run: &Run, depth: usize) -> (bool, bool) {
        const EITHER: (bool, bool) = (true, true);
        if depth > 64 {
            return EITHER;
        }
        match test {
            Cond::Unknown => EITHER,
            Cond::Truth(o) => match self.operand(o, run) {
                Some(values) => values.iter().fold((false, false), |(t, f), v| (t || truth(v), f || !truth(v))),
                None => EITHER,
            },
            Cond::Not(c) => {
                let (t, f) = self.outcomes(c, run, depth + 1);
                (f, t)
            }
            Cond::All(cs) => {
                cs.iter().map(|c| self.outcomes(c, run, depth + 1)).fold((true, false), |a, b| (a.0 && b.0, a.1 || b.1))
            }
            Cond::Any(cs) => {
                cs.iter().map(|c| self.outcomes(c, run, depth + 1)).fold((false, true), |a, b| (a.0 || b.0, a.1 && b.1))
            }
            Cond::Compare(left, op, right) => {
                let (Some(left), Some(right)) = (self.operand(left, run), self.operand(right, run)) else {
                    return EITHER;
                };
                let mut out = (false, false);
                for l in &left {
                    for r in &right {
                        match compare(l, *op, r) {
                            Some(true) => out.0 = true,
                            Some(false) => out.1 = true,
                            None => return EITHER,
                        }
                    }
                }
                out
            }
        }
    }

    /// The values an operand may have in `run` (a collection is one value).
    fn operand(&self, o: &Operand, run: &Run) -> Option<Vec<Value>> {
        match o {
            Operand::Option(dest) => Some(self.values(dest, run)?.into_iter().map(Value::One).collect()),
            Operand::Value(v) => Some(vec![Value::One(v.clone())]),
            Operand::Values(vs) => Some(vec![Value::Many(vs.clone())]),
            Operand::Unknown => None,
        }
    }
}

/// A value in a test: one literal, or a literal collection.
enum Value {
    One(Literal),
    Many(Vec<Literal>),
}

/// An option's word as `type=` makes it.
fn convert(word: &str, conversion: Conversion) -> Option<Literal> {
    match conversion {
        Conversion::Str => Some(Literal::Str(word.to_string())),
        Conversion::Int => word.parse().ok().map(Literal::Int),
        Conversion::Float => word.parse().ok().map(Literal::Float),
        Conversion::Other => None,
    }
}

/// Python's truth of a value.
fn truth(v: &Value) -> bool {
    match v {
        Value::One(Literal::None) => false,
        Value::One(Literal::Bool(b)) => *b,
        Value::One(Literal::Int(i)) => *i != 0,
        Value::One(Literal::Float(f)) => *f != 0.0,
        Value::One(Literal::Str(s)) => !s.is_empty(),
        Value::Many(vs) => !vs.is_empty(),
    }
}

/// A number as Python compares it (`True` is 1).
fn number(v: &Literal) -> Option<f64> {
    match v {
        Literal::Bool(b) => Some(f64::from(u8::from(*b))),
        Literal::Int(i) => Some(*i as f64),
        Literal::Float(f) => Some(*f),
        Literal::Str(_) | Literal::None => None,
    }
}

/// Python's `==` on two literals.
fn equal(a: &Literal, b: &Literal) -> bool {
    match (a, b) {
        (Literal::Str(x), Literal::Str(y)) => x == y,
        (Literal::None, Literal::None) => true,
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// The result of `left op right`, `None` when Python would raise or the
/// result is not certain (`is` between numbers).
fn compare(left: &Value, op: CompareOp, right: &Value) -> Option<bool> {
    use std::cmp::Ordering;
    let ordering = |a: &Literal, b: &Literal| match (a, b) {
        (Literal::Str(x), Literal::Str(y)) => Some(x.cmp(y)),
        _ => number(a)?.partial_cmp(&number(b)?),
    };
    let contains = |item: &Value, collection: &Value| match (item, collection) {
        (Value::One(x), Value::Many(items)) => Some(items.iter().any(|i| equal(x, i))),
        (Value::One(Literal::Str(x)), Value::One(Literal::Str(s))) => Some(s.contains(x.as_str())),
        _ => None,
    };
    let identical = |a: &Literal, b: &Literal| match (a, b) {
        (Literal::None, Literal::None) => Some(true),
        (Literal::Bool(x), Literal::Bool(y)) => Some(x == y),
        (Literal::None | Literal::Bool(_), _) | (_, Literal::None | Literal::Bool(_)) => Some(false),
        _ => None,
    };
    match (left, op, right) {
        (_, CompareOp::In, _) => contains(left, right),
        (_, CompareOp::NotIn, _) => contains(left, right).map(|c| !c),
        (Value::One(a), _, Value::One(b)) => match op {
            CompareOp::Eq => Some(equal(a, b)),
            CompareOp::Ne => Some(!equal(a, b)),
            CompareOp::Is => identical(a, b),
            CompareOp::IsNot => identical(a, b).map(|i| !i),
            CompareOp::Lt => ordering(a, b).map(|o| o == Ordering::Less),
            CompareOp::Le => ordering(a, b).map(|o| o != Ordering::Greater),
            CompareOp::Gt => ordering(a, b).map(|o| o == Ordering::Greater),
            CompareOp::Ge => ordering(a, b).map(|o| o != Ordering::Less),
            CompareOp::In | CompareOp::NotIn => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::launch_lines::launches_in;
    use crate::semantic::option_defs::in_file;

    /// The options `script`'s definitions give in the run of shell `command`.
    fn run_of(script: &str, command: &str) -> (Options<'static>, Run) {
        let definitions: &'static [Definitions] = Box::leak(Box::new([in_file(script)]));
        let options = Options::of(definitions);
        let launch = launches_in(command, &crate::parse::shell::read(command)).into_iter().next().expect("a launch");
        let run = options.run(&launch);
        (options, run)
    }

    const PARSER: &str = "import argparse\np = argparse.ArgumentParser()\n\
        p.add_argument('-b', '--batch-size', type=int, default=32)\n\
        p.add_argument('--amp', action='store_true')\n\
        p.add_argument('--no-eval', dest='evaluate', action='store_false')\n\
        p.add_argument('--arch', default='resnet50')\n\
        p.add_argument('--scale', type=float)\n\
        p.add_argument('--ids', nargs='+', type=int, default=[0])\n\
        args = p.parse_args()\n";

    #[test]
    fn a_run_gives_what_its_words_say_and_defaults_for_the_rest() {
        let (options, run) =
            run_of(PARSER, "python3 -u train.py -b 64 --amp --no-eval --arch=vit --data /x > log 2>&1");
        let value = |dest: &str| options.values(dest, &run);
        assert_eq!(value("batch_size"), Some(vec![Literal::Int(64)]));
        assert_eq!(value("amp"), Some(vec![Literal::Bool(true)]));
        assert_eq!(value("evaluate"), Some(vec![Literal::Bool(false)]));
        assert_eq!(value("arch"), Some(vec![Literal::Str("vit".into())]));
        assert_eq!(value("scale"), Some(vec![Literal::None]), "no default is None");
        assert_eq!(value("ids"), None, "nargs: not known");
        assert_eq!(value("undefined"), None);
    }

    #[test]
    fn what_a_run_may_give_in_ways_not_read_leaves_the_option_undecided() {
        let parser = "import argparse\np = argparse.ArgumentParser()\n\
            p.add_argument('-n', '--num-gpu', type=int, default=1)\n\
            p.add_argument('-a', '--amp', action='store_true')\n\
            p.add_argument('-v', '--verbose', action='store_true')\n\
            args = p.parse_args()\n";
        // A short option with its value attached, or several together.
        for command in ["python train.py -n8", "python train.py -n=8", "python train.py -av"] {
            let (options, run) = run_of(parser, command);
            let decided = |dest: &str| options.values(dest, &run).is_some();
            let attached = command.contains("-n");
            assert_eq!((decided("num_gpu"), decided("amp")), (!attached, attached), "{command}");
        }
        // The script's own code replaces the default or the parsed value, or parses words it gives.
        for extra in [
            "p.set_defaults(amp=True)\n",
            "vars(args)['amp'] = True\n",
            "args.__dict__['amp'] = True\n",
            "args = p.parse_args(['--amp'])\n",
        ] {
            let (options, run) = run_of(&format!("{parser}{extra}"), "python train.py -n 8");
            assert_eq!(options.values("amp", &run), None, "{extra}");
        }
        // Reading the command line in the usual ways decides as before.
        for extra in ["args = p.parse_args(argv)\n", "args = p.parse_args(sys.argv[1:])\n", "a = p.parse_args(None)\n"]
        {
            let (options, run) = run_of(&format!("{parser}{extra}"), "python train.py -n 8");
            assert_eq!(options.values("amp", &run), Some(vec![Literal::Bool(false)]), "{extra}");
        }
    }

    #[test]
    fn variables_launchers_and_abbreviations() {
        let (options, run) = run_of(PARSER, "python train.py --batch $BS --arch \"$ARCH\"");
        assert_eq!(options.values("batch_size", &run), None, "an abbreviation with a value the script computes");
        assert_eq!(options.values("amp", &run), Some(vec![Literal::Bool(false)]));
        let (options, run) = run_of(PARSER, "python train.py $EXTRA_ARGS");
        assert_eq!(options.values("amp", &run), None, "a variable standing alone may hold any option");
        let with_rank = format!("{PARSER}p.add_argument('--local_rank', type=int, default=-1)\n");
        let (options, run) = run_of(&with_rank, "python -m torch.distributed.launch --nproc_per_node=8 train.py");
        assert_eq!(options.values("local_rank", &run), None, "the launcher passes --local_rank");
        let (options, run) = run_of(&with_rank, "python train.py");
        assert_eq!(options.values("local_rank", &run), Some(vec![Literal::Int(-1)]));
    }

    #[test]
    fn stored_literals_add_values_and_computed_ones_hide_them() {
        let script = format!("{PARSER}args.batch_size = 16\nif x:\n    args.arch = pick()\n");
        let (options, run) = run_of(&script, "python train.py");
        assert_eq!(options.values("batch_size", &run), Some(vec![Literal::Int(32), Literal::Int(16)]));
        assert_eq!(options.values("arch", &run), None);
        let rewritten = format!("{PARSER}vars(args).update(cfg)\n");
        let (options, run) = run_of(&rewritten, "python train.py");
        assert_eq!(options.values("amp", &run), None);
    }

    #[test]
    fn comparisons_follow_python() {
        let one = |l: Literal| Value::One(l);
        let (s, i, f) = (|x: &str| Literal::Str(x.into()), Literal::Int, Literal::Float);
        assert_eq!(compare(&one(i(1)), CompareOp::Eq, &one(f(1.0))), Some(true));
        assert_eq!(compare(&one(Literal::Bool(true)), CompareOp::Eq, &one(i(1))), Some(true));
        assert_eq!(compare(&one(s("1")), CompareOp::Eq, &one(i(1))), Some(false));
        assert_eq!(compare(&one(s("a")), CompareOp::Lt, &one(i(1))), None, "Python raises");
        assert_eq!(compare(&one(s("npu")), CompareOp::In, &one(s("npu:0"))), Some(true));
        assert_eq!(compare(&one(i(4)), CompareOp::NotIn, &Value::Many(vec![i(4), i(8)])), Some(false));
        assert_eq!(compare(&one(Literal::None), CompareOp::Is, &one(Literal::None)), Some(true));
        assert_eq!(compare(&one(i(0)), CompareOp::IsNot, &one(Literal::None)), Some(true));
        assert_eq!(compare(&one(i(1)), CompareOp::Is, &one(i(1))), None, "identity of numbers is not certain");
    }
}
