//! What a project's Python files say about their command-line options: the
//! options their `argparse` calls define, the values their code stores in
//! option attributes, and the calls that may replace any option's value.
//! Read again from the files when a project's branches are judged
//! ([`crate::project::configurations`]), not kept from the analysis: most projects
//! never need them, and the scan keeps almost nothing of a quiet file.

use super::options::{enclosing_tests, parsed_names, Cond, NAMESPACES};
use super::values::{literal, plain_string, text, Literal};
use crate::parse::{parse_python, Field, FieldOf, KindOf};
use tree_sitter::Node;

/// What one file says about options.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Definitions {
    /// The options its `add_argument` calls define.
    pub defined: Vec<OptionDef>,
    /// Attribute names that its code assigns on an object named like parsed
    /// options (`args.num_gpu = 1`), each with the literal value, or `None`
    /// when the value is not a literal. An option assigned so may hold that value too.
    pub stored: Vec<(String, Option<Literal>)>,
    /// It may replace any option's value after parsing: `vars(args).update(...)`,
    /// `args.__dict__.update(...)`, `setattr(args, name, ...)` with a computed
    /// name, `parse_args(namespace=...)`.
    pub replaces_values: bool,
    /// Its `set_defaults(**...)` calls (a configuration file's values as
    /// defaults, as timm's training script does under `if args.config:`),
    /// each with the tests under which it runs (none when always).
    pub replaces_defaults: Vec<Vec<Cond>>,
}

impl Definitions {
    /// Whether the file says nothing about options.
    pub(crate) fn is_empty(&self) -> bool {
        self.defined.is_empty() && self.stored.is_empty() && !self.replaces_values && self.replaces_defaults.is_empty()
    }
}

/// One option an `add_argument` call defines.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OptionDef {
    /// Its option strings (`-b`, `--batch-size`).
    pub flags: Vec<String>,
    /// The attribute that holds its value (`batch_size`, or `dest=`).
    pub dest: String,
    /// The value when no launch gives the option; `None` when not a literal.
    pub default: Option<Literal>,
    /// What giving it on the command line does.
    pub takes: Takes,
}

/// What an option does with the words after it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Takes {
    /// No word: the option sets this value (`store_true` sets `True`).
    Nothing(Literal),
    /// One word, converted by `type=` (or kept a string).
    One(Conversion),
    /// Anything else (`nargs`, `append`, `count`, a custom action): its value is not known.
    Unknown,
}

/// How an option's word becomes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conversion {
    /// No `type=`, or `type=str`.
    Str,
    /// `type=int`.
    Int,
    /// `type=float`.
    Float,
    /// Any other function: the value is not known.
    Other,
}

/// What the Python file with text `src` says about options; it is parsed
/// only when it defines options or sets their defaults from a mapping.
pub(crate) fn in_file(src: &str) -> Definitions {
    let namespaces = parsed_names(src);
    let stored = stored_in(src, &namespaces);
    let mut out = Definitions { stored, replaces_values: replaces_values(src), ..Definitions::default() };
    let sets_defaults = src.contains("set_defaults(");
    if !src.contains("add_argument") && !sets_defaults {
        return out;
    }
    let Some(tree) = parse_python(src) else {
        // Not parsed: a mapping of defaults counts as always set.
        if sets_defaults {
            out.replaces_defaults.push(Vec::new());
        }
        return out;
    };
    super::traverse::each_descendant(tree.root_node(), |node| {
        if node.kind_name() == "call" {
            out.defined.extend(option_def(node, src));
            if is_set_defaults_from_mapping(node, src) {
                out.replaces_defaults.push(enclosing_tests(tree.root_node(), node, src, &namespaces));
            }
            // `set_defaults(amp=True)`: a default other than the definition's.
            out.stored.extend(defaults_set(node, src).into_iter().map(|name| (name, None)));
        }
        true
    });
    out.stored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| format!("{:?}", a.1).cmp(&format!("{:?}", b.1))));
    out.stored.dedup();
    out
}

/// The option names whose defaults a `X.set_defaults(name=value, ...)` call sets.
fn defaults_set(call: Node, src: &str) -> Vec<String> {
    let named = call.field(Field::Function).and_then(|f| f.field(Field::Attribute)).map(|a| text(a, src));
    let Some(args) = call.field(Field::Arguments).filter(|_| named == Some("set_defaults")) else { return Vec::new() };
    let mut cursor = args.walk();
    let names = args.named_children(&mut cursor).filter(|a| a.kind_name() == "keyword_argument");
    names.filter_map(|a| Some(text(a.field(Field::Name)?, src).to_string())).collect()
}

/// The option an `add_argument(...)` call defines, if it is one with option strings.
fn option_def(call: Node, src: &str) -> Option<OptionDef> {
    let function = call.field(Field::Function).filter(|f| f.kind_name() == "attribute")?;
    if function.field(Field::Attribute).map(|a| text(a, src)) != Some("add_argument") {
        return None;
    }
    let args = call.field(Field::Arguments)?;
    let mut cursor = args.walk();
    let (mut flags, mut keywords) = (Vec::new(), Vec::new());
    for arg in args.named_children(&mut cursor) {
        match arg.kind_name() {
            "string" => flags.push(plain_string(arg, src)?),
            "keyword_argument" => keywords.push((text(arg.field(Field::Name)?, src), arg.field(Field::Value)?)),
            "comment" => {}
            // `*flags`, `**kwargs`: not known.
            _ => return None,
        }
    }
    // A positional argument has no option strings; its value always comes from the command line.
    if !flags.iter().all(|f| f.starts_with('-')) || flags.is_empty() {
        return None;
    }
    let keyword = |name: &str| keywords.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let literal_of = |name: &str| keyword(name).and_then(|v| literal(v, src));
    let long = flags.iter().find(|f| f.starts_with("--")).or(flags.first())?;
    let dest = match keyword("dest") {
        Some(d) => plain_string(d, src)?,
        None => long.trim_start_matches('-').replace('-', "_"),
    };
    let action = literal_of("action");
    let takes = match action.as_ref() {
        Some(Literal::Str(a)) if a == "store_true" => Takes::Nothing(Literal::Bool(true)),
        Some(Literal::Str(a)) if a == "store_false" => Takes::Nothing(Literal::Bool(false)),
        Some(Literal::Str(a)) if a == "store_const" => literal_of("const").map_or(Takes::Unknown, Takes::Nothing),
        Some(Literal::Str(a)) if a == "store" => conversion(keyword("type"), src),
        None if keyword("action").is_none() && keyword("nargs").is_none() => conversion(keyword("type"), src),
        _ => Takes::Unknown,
    };
    let default = match (keyword("default"), &takes) {
        (Some(v), _) => literal(v, src),
        (None, Takes::Nothing(Literal::Bool(set))) => Some(Literal::Bool(!set)),
        (None, _) if keyword("required").is_some() => None,
        (None, _) => Some(Literal::None),
    };
    Some(OptionDef { flags, dest, default, takes })
}

/// Whether `call` is `X.set_defaults(**mapping)`.
fn is_set_defaults_from_mapping(call: Node, src: &str) -> bool {
    let named = call.field(Field::Function).and_then(|f| f.field(Field::Attribute)).map(|a| text(a, src));
    let splat = call.field(Field::Arguments).is_some_and(|args| {
        let mut cursor = args.walk();
        let found = args.named_children(&mut cursor).any(|a| a.kind_name() == "dictionary_splat");
        found
    });
    named == Some("set_defaults") && splat
}

/// How `type=` converts an option's word.
fn conversion(type_: Option<Node>, src: &str) -> Takes {
    Takes::One(match type_.map(|t| text(t, src)) {
        None | Some("str") => Conversion::Str,
        Some("int") => Conversion::Int,
        Some("float") => Conversion::Float,
        Some(_) => Conversion::Other,
    })
}

/// Objects besides the [`NAMESPACES`] whose attribute assignments may store
/// options: code often hands parsed options on under these names.
const HOLDERS: &[&str] = &["cfg", "config", "conf", "configs", "opt_", "hyp", "hparam"];

/// The attribute assignments of a file on objects named like parsed options
/// (`args.x = 1`, `self.opt.x = ...`, `args.a, args.b = ...`,
/// `setattr(args, "x", v)`), read from its lines; `namespaces` are the names
/// the file binds to parsed options.
fn stored_in(src: &str, namespaces: &[&str]) -> Vec<(String, Option<Literal>)> {
    let holds_options = |object: &str| {
        let last = object.rsplit('.').next().unwrap_or(object);
        NAMESPACES.contains(&last) || HOLDERS.contains(&last) || namespaces.contains(&last)
    };
    let mut out: Vec<(String, Option<Literal>)> = Vec::new();
    for line in crate::source::python_lines(src) {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("setattr(") {
            let mut parts = rest.split(',').map(str::trim);
            if let (Some(object), Some(name)) = (parts.next(), parts.next().and_then(quoted)) {
                if holds_options(object) {
                    out.push((name.to_string(), None));
                }
            }
            continue;
        }
        // `vars(args)["k"] = v`, `args.__dict__["k"] = v`: a stored value not known here.
        if let Some((object, key)) = item_of_options(line) {
            if holds_options(object) {
                if let Some(name) = quoted(key) {
                    out.push((name.to_string(), None));
                }
            }
            continue;
        }
        let Some((targets, value)) = assignment(line) else { continue };
        let targets: Vec<&str> = targets.split(',').map(str::trim).collect();
        let value = (targets.len() == 1).then(|| simple_literal(value)).flatten();
        for target in targets {
            let Some((object, name)) = target.rsplit_once('.') else { continue };
            let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
            if plain(object) && plain(name) && holds_options(object) {
                out.push((name.to_string(), value.clone()));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| format!("{:?}", a.1).cmp(&format!("{:?}", b.1))));
    out.dedup();
    out
}

/// The object and the key of an item assignment to an option namespace's
/// dictionary: `vars(args)["k"] = ...` or `args.__dict__["k"] = ...`.
fn item_of_options(line: &str) -> Option<(&str, &str)> {
    let (target, _) = assignment_split(line)?;
    let (object, key) = match target.strip_prefix("vars(") {
        Some(rest) => rest.split_once(")[")?,
        None => target.split_once(".__dict__[")?,
    };
    Some((object.trim().trim_start_matches("self."), key.strip_suffix(']')?.trim()))
}

/// The text before and after the `=` of an assignment line (not `==`,
/// `<=`, `>=`, `!=` nor a keyword inside a call).
fn assignment_split(line: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (at, c) in line.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '=' if depth == 0 => {
                let (before, after) = (&line[..at], &line[at + 1..]);
                if after.starts_with('=') || before.ends_with(['!', '<', '>', '=']) {
                    return None;
                }
                return Some((before.trim_end(), after.trim_start()));
            }
            _ => {}
        }
    }
    None
}

/// The targets and value of an assignment line (`a.b = 1`, `a.b += 1`), not a comparison.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let at = line.find('=')?;
    let (before, after) = (&line[..at], &line[at + 1..]);
    if after.starts_with('=') || before.ends_with(['!', '<', '>', '=']) || before.contains(['(', '[', '"', '\'']) {
        return None;
    }
    // An augmented assignment (`+=`) changes the value to one not known.
    let augmented = before.ends_with(['+', '-', '*', '/', '%', '&', '|', '^', '@']);
    let targets = before.trim_end_matches(['+', '-', '*', '/', '%', '&', '|', '^', '@']).trim();
    let targets = targets.split_once(':').map_or(targets, |(t, _)| t).trim();
    Some((targets, if augmented { "" } else { after.trim() }))
}

/// A literal written alone on the right of an assignment (`1`, `'npu'`, `False`).
fn simple_literal(value: &str) -> Option<Literal> {
    let value = value.split_once(" #").map_or(value, |(v, _)| v).trim();
    match value {
        "True" => Some(Literal::Bool(true)),
        "False" => Some(Literal::Bool(false)),
        "None" => Some(Literal::None),
        _ => quoted(value).map(|s| Literal::Str(s.to_string())).or_else(|| {
            value.parse::<i64>().ok().map(Literal::Int).or_else(|| value.parse::<f64>().ok().map(Literal::Float))
        }),
    }
}

/// The content of a one-word quoted string without escapes (`"npu"`).
fn quoted(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('"').and_then(|r| r.strip_suffix('"'));
    let inner = inner.or_else(|| s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))?;
    (!inner.contains(['\\', '"', '\''])).then_some(inner)
}

/// Whether `line` parses options from words it gives (`parse_args(["--num-gpu",
/// "8"])`, `parse_args(words)`) rather than from the command line:
/// `parse_args()`, `parse_args(None)`, `parse_args(argv)`-like names (`args`,
/// `argv`, `sys.argv[1:]`) and the words `parse_known_args()` left over
/// (`rest` in `known, rest = p.parse_known_args()`) read the command line.
fn parses_given_words(line: &str, left_over: &[&str]) -> bool {
    ["parse_args(", "parse_known_args("].iter().any(|call| {
        line.split(call).skip(1).any(|rest| {
            let first = rest.split([',', ')']).next().unwrap_or("").trim();
            let command_line = first.is_empty()
                || first.contains('=')
                || first == "None"
                || first.starts_with("sys.argv")
                || first.ends_with("argv")
                || first.ends_with("args")
                || left_over.contains(&first);
            !command_line
        })
    })
}

/// The names a `known, rest = p.parse_known_args(...)` line binds: the
/// left-over words among them come from the command line.
fn known_args_targets(src: &str) -> Vec<&str> {
    let targets = crate::source::python_lines(src).filter_map(|l| {
        let (targets, value) = assignment_split(l.trim_start())?;
        value.contains("parse_known_args(").then_some(targets)
    });
    targets.flat_map(|t| t.split(',')).map(|t| t.trim().trim_matches(['(', ')', '[', ']']).trim()).collect()
}

/// Whether the file may replace any option's value after parsing: a
/// dictionary update or a `setattr` with a computed name on an object named
/// like parsed options, or parsing into a namespace it was given.
fn replaces_values(src: &str) -> bool {
    let on_options = |object: &str| {
        let object = object.trim().trim_start_matches("self.");
        NAMESPACES.contains(&object)
    };
    let left_over = known_args_targets(src);
    src.contains("parse_args(namespace=")
        || crate::source::python_lines(src).any(|l| {
            let l = l.trim_start();
            let computed_item = item_of_options(l).is_some_and(|(object, key)| on_options(object) && quoted(key).is_none());
            if computed_item || parses_given_words(l, &left_over) {
                return true;
            }
            let dict_update = l.find(".__dict__.update(").is_some_and(|at| on_options(&l[..at]));
            let vars_update = l
                .strip_prefix("vars(")
                .and_then(|r| r.split_once(").update("))
                .is_some_and(|(object, _)| on_options(object));
            let mut setattr = l.strip_prefix("setattr(").map(|r| r.split(',')).into_iter().flatten();
            let computed_setattr = matches!((setattr.next(), setattr.next()), (Some(o), Some(n)) if on_options(o) && quoted(n.trim()).is_none());
            dict_update || vars_update || computed_setattr
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(src: &str) -> OptionDef {
        in_file(&format!("p.add_argument({src})\n")).defined.pop().expect("an option")
    }

    #[test]
    fn definitions_read_what_argparse_would_do() {
        let d = def("'-b', '--batch-size', type=int, default=32");
        assert_eq!(
            (d.flags, d.dest.as_str(), d.default),
            (vec!["-b".into(), "--batch-size".into()], "batch_size", Some(Literal::Int(32)))
        );
        assert_eq!(d.takes, Takes::One(Conversion::Int));
        let flag = def("'--amp', action='store_true'");
        assert_eq!((flag.default, flag.takes), (Some(Literal::Bool(false)), Takes::Nothing(Literal::Bool(true))));
        let off = def("'--no-eval', dest='evaluate', action='store_false'");
        assert_eq!((off.dest.as_str(), off.default), ("evaluate", Some(Literal::Bool(true))));
        assert_eq!(def("'--arch'").default, Some(Literal::None), "no default is None");
        assert_eq!(def("'--data', required=True").default, None, "a required option has no default");
        assert_eq!(def("'--ids', nargs='+', default=0").takes, Takes::Unknown);
        assert_eq!(def("'--x', type=str2bool").takes, Takes::One(Conversion::Other));
        assert!(in_file("p.add_argument('data')\np.add_argument(*names)\n").defined.is_empty(), "positional, unknown");
    }

    #[test]
    fn stores_on_option_holders_are_read_from_lines() {
        let src = "args.workers = 8\nopt.lr *= 2\nself.args.device = 'npu'  # the port\nmodel.fc = head\n\
            args.a, args.b = 1, 2\nif args.x == 1:\n    pass\nsetattr(args, 'gpu', 0)\ncfg.TRAIN.bs = 4\n";
        let stored = in_file(src).stored;
        let want: Vec<(String, Option<Literal>)> = vec![
            ("a".into(), None),
            ("b".into(), None),
            ("device".into(), Some(Literal::Str("npu".into()))),
            ("gpu".into(), None),
            ("lr".into(), None),
            ("workers".into(), Some(Literal::Int(8))),
        ];
        assert_eq!(stored, want, "not model.fc, a comparison or a yacs config node");
    }

    #[test]
    fn wholesale_replacements_are_seen() {
        for src in [
            "vars(args).update(cfg)\n",
            "args.__dict__.update(d)\n",
            "setattr(opt, k, v)\n",
            "p.parse_args(namespace=ns)\n",
            "p.parse_args(['--amp'])\n",
            "p.parse_args(words)\n",
        ] {
            assert!(in_file(src).replaces_values, "{src}");
        }
        for src in [
            "self.__dict__.update(state)\n",
            "setattr(module, name, v)\n",
            "setattr(args, 'x', 1)\n",
            "known, rest = p.parse_known_args()\nargs = p.parse_args(rest)\n",
            "a, (remaining) = p.parse_known_args(argv)\nargs = p.parse_args(remaining)\n",
        ] {
            assert!(!in_file(src).replaces_values, "{src}");
        }
        let guarded = "import argparse\np = argparse.ArgumentParser()\nif args.config:\n    p.set_defaults(**cfg)\n";
        let d = in_file(guarded);
        assert_eq!(d.replaces_defaults.len(), 1);
        assert_eq!(d.replaces_defaults[0].len(), 1, "one enclosing test: {:?}", d.replaces_defaults);
    }
}
