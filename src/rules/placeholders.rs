//! Which placeholders each part of a matcher captures and which it reads, so
//! that the compiler can run captures before their readers (whatever their
//! order in the pack) and reject a read that nothing can fill.
//!
//! What a matcher reads from outside is kept in [`Matcher::reads`], mostly
//! empty; what a part captures is walked only where something reads, and
//! its paths are written out only for an error, so that compiling packs
//! costs little more for it (it once took a quarter of a one-file scan).

use super::model::*;
use super::spec_error::{Problem, SpecError};

/// The placeholders that the predicates `preds` read and that neither
/// another of them nor the anchor captures: what the matcher reads from the
/// matchers around it.
pub(super) fn matcher_reads(anchor: Option<&Anchor>, preds: &[Pred]) -> Places {
    outside_reads(preds, anchor_names(anchor).1, pred_reads, pred_captures)
}

/// Where a part of a matcher captures a placeholder: its path
/// (`fields.left.capture`), built only when asked for.
pub(super) type At<'a> = &'a dyn Fn() -> String;

/// A visitor of captures: called with each placeholder and where it is
/// captured, it returns `true` to stop the walk.
pub(super) type Visit<'a> = &'a mut dyn FnMut(&str, At<'_>) -> bool;

/// Walks every placeholder `m` may have set once it has matched, in order
/// (so the first path of a name comes first): its anchor's, its predicates'
/// captures (nested matchers included) and its `set` keys. Returns `true` if
/// `visit` stopped the walk. Nothing is allocated but the paths asked for:
/// the compiler asks at every level of every matcher.
fn matcher_captures(m: &Matcher, visit: Visit<'_>) -> bool {
    let (key, names) = anchor_names(m.anchor.as_ref());
    let at = || key.to_string();
    if names.iter().any(|n| visit(n, &at)) {
        return true;
    }
    if let Some(Anchor::ShellCommand(re)) = &m.anchor {
        if re.group_names().iter().any(|g| visit(g, &at)) {
            return true;
        }
    }
    m.preds.iter().any(|p| pred_captures(p, visit)) || m.set.iter().any(|(k, _)| visit(k, &|| "set".into()))
}

/// Whether `m` may capture the placeholder `name`.
pub(super) fn captures(m: &Matcher, name: &str) -> bool {
    matcher_captures(m, &mut |n, _| n == name)
}

/// Where `item` first captures `name`, walked with `captures`.
fn first_capture<T>(item: &T, name: &str, captures: impl Fn(&T, Visit<'_>) -> bool) -> Option<String> {
    let mut found = None;
    captures(item, &mut |n, at| {
        if n == name {
            found = Some(at());
        }
        found.is_some()
    });
    found
}

/// [`matcher_captures`] of the nested matcher `m`, its paths under `prefix`.
fn nested_captures(m: &Matcher, prefix: At<'_>, visit: Visit<'_>) -> bool {
    matcher_captures(m, &mut |name, at| visit(name, &|| format!("{}.{}", prefix(), at())))
}

/// Fails, naming the placeholder and where it is read, if `m` reads a
/// placeholder that `filled` (what the state holds when `m` is evaluated)
/// says no matcher around it captures.
pub(super) fn check_filled(m: &Matcher, filled: impl Fn(&str) -> bool) -> Result<(), SpecError> {
    match m.reads.iter().find(|(name, _)| !filled(name)) {
        // Only an anchor resolves a name: say so rather than suggest capturing it by hand.
        Some((name, at)) if name == "qualname" && at.ends_with("name_regex") => {
            Err(SpecError::at(at, Problem::ResolvedNameOnly))
        }
        Some((name, at)) => Err(SpecError::at(at, Problem::NeverCaptured { name: name.clone() })),
        None => Ok(()),
    }
}

/// Reorders `items` (the predicates of a matcher, or the entries of `fields`
/// or `args`) so that each runs after every other item that captures a
/// placeholder it reads, keeping their order otherwise; the placeholders of
/// the matcher's anchor are there from the start. A cycle is an error that
/// names its members.
pub(super) fn dependency_order<T>(
    items: Vec<T>,
    anchor: Option<&Anchor>,
    reads: impl Fn(&T) -> Places,
    captures: impl Fn(&T, Visit<'_>) -> bool,
) -> Result<Vec<T>, SpecError> {
    let own = anchor_names(anchor).1;
    let needs: Vec<Places> = items
        .iter()
        .map(|item| {
            let mut r = reads(item);
            r.retain(|name, _| !own.contains(&name.as_str()));
            r
        })
        .collect();
    if needs.iter().all(Places::is_empty) {
        return Ok(items);
    }
    // `deps[i]`: the other items that capture something item `i` reads.
    let deps: Vec<Vec<usize>> = (0..items.len())
        .map(|i| {
            (0..items.len()).filter(|&j| j != i && captures(&items[j], &mut |n, _| needs[i].contains_key(n))).collect()
        })
        .collect();
    let mut placed = vec![false; items.len()];
    let mut order = Vec::with_capacity(items.len());
    while order.len() < items.len() {
        let ready = (0..items.len()).find(|&i| !placed[i] && deps[i].iter().all(|&j| placed[j]));
        let Some(i) = ready else {
            let captured_for = |i: usize, j: usize| captured_for(&needs[i], &items[j], &captures);
            return Err(cycle_error(&deps, &placed, captured_for));
        };
        placed[i] = true;
        order.push(i);
    }
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// The first placeholder of `reads` that `item` captures: `(name, read at, captured at)`.
fn captured_for<T>(
    reads: &Places,
    item: &T,
    captures: impl Fn(&T, Visit<'_>) -> bool,
) -> Option<(String, String, String)> {
    reads.iter().find_map(|(name, at)| first_capture(item, name, &captures).map(|by| (name.clone(), at.clone(), by)))
}

/// Describes a cycle among the unplaced items: each reads a placeholder the
/// next captures (`captured_for(i, j)`: what item `i` reads that `j` captures).
fn cycle_error(
    deps: &[Vec<usize>],
    placed: &[bool],
    captured_for: impl Fn(usize, usize) -> Option<(String, String, String)>,
) -> SpecError {
    // Every unplaced item waits for another unplaced one, so walking from
    // any of them comes back to an item already on the path.
    let mut path: Vec<usize> = (0..placed.len()).filter(|&i| !placed[i]).take(1).collect();
    while let Some(&last) = path.last() {
        let Some(&next) = deps[last].iter().find(|&&j| !placed[j]) else { break };
        if let Some(start) = path.iter().position(|&i| i == next) {
            path.drain(..start);
            break;
        }
        path.push(next);
    }
    let mut steps = path.iter().zip(path.iter().cycle().skip(1)).filter_map(|(&i, &j)| captured_for(i, j));
    let (name, at, by) = steps.next().unwrap_or_default();
    SpecError::at(&at, Problem::CaptureCycle { name, by, others: steps.collect() })
}

/// The placeholders read by some of `items` (the predicates of a matcher,
/// or the entries of a `fields`/`args` list) that no other item captures and
/// that are not among `own`. Captures are looked for only if something reads.
fn outside_reads<T>(
    items: &[T],
    own: &[&str],
    reads: impl Fn(&T) -> Places,
    captures: impl Fn(&T, Visit<'_>) -> bool,
) -> Places {
    let mut out = Places::new();
    for (i, item_reads) in items.iter().map(reads).enumerate() {
        for (name, at) in item_reads {
            let filled = own.contains(&name.as_str())
                || items.iter().enumerate().any(|(j, c)| j != i && captures(c, &mut |n, _| n == name));
            if !filled {
                out.entry(name).or_insert(at);
            }
        }
    }
    out
}

/// Adds `more` to `out` (the first path of a name wins).
fn extend(out: &mut Places, more: Places) {
    for (name, at) in more {
        out.entry(name).or_insert(at);
    }
}

/// All of `parts` together (the first path of a name wins).
fn union(parts: impl Iterator<Item = Places>) -> Places {
    let mut out = Places::new();
    for p in parts {
        extend(&mut out, p);
    }
    out
}

/// `places` with every path under the prefix `prefix()` makes (only made when there are any).
fn under(places: &Places, prefix: impl FnOnce() -> String) -> Places {
    if places.is_empty() {
        return Places::new();
    }
    let prefix = prefix();
    places.iter().map(|(name, at)| (name.clone(), format!("{prefix}.{at}"))).collect()
}

fn single(name: &str, at: &str) -> Places {
    Places::from([(name.to_string(), at.to_string())])
}

/// Each anchor's key and the placeholders it sets when it matches (see `matcher::anchor`).
const ANCHOR_PLACEHOLDERS: &[(&str, &[&str])] = &[
    ("call", &["callee", "name", "qualname"]),
    ("method", &["method", "receiver"]),
    ("attribute", &["name", "qualname"]),
    ("string", &["value"]),
    ("env_var", &["name", "value"]),
    ("shell_command", &["command"]),
    ("compare", &["literal", "op"]),
    ("import", &["name"]),
    ("condition", &["condition"]),
];

/// Whether some anchor sets the placeholder `name` when it matches. A
/// `capture` of that name would be overwritten by any anchor of that kind
/// matched later in the same rule (inside `contains`, `ancestor`, `unless`, ...).
pub(super) fn set_by_an_anchor(name: &str) -> bool {
    ANCHOR_PLACEHOLDERS.iter().any(|(_, names)| names.contains(&name))
}

/// The anchor's key and the placeholders it sets when it matches.
fn anchor_names(a: Option<&Anchor>) -> (&'static str, &'static [&'static str]) {
    let key = match a {
        Some(Anchor::Call(..)) => "call",
        Some(Anchor::Method(_)) => "method",
        Some(Anchor::Attribute(_)) => "attribute",
        Some(Anchor::Str(_)) => "string",
        Some(Anchor::EnvVar(_)) => "env_var",
        Some(Anchor::ShellCommand(_)) => "shell_command",
        Some(Anchor::Compare(_)) => "compare",
        Some(Anchor::Import(_)) => "import",
        Some(Anchor::Condition(_)) => "condition",
        Some(Anchor::File { .. } | Anchor::Query(_) | Anchor::Kind(_)) | None => return ("", &[]),
    };
    let names = ANCHOR_PLACEHOLDERS.iter().find(|(k, _)| *k == key).map_or(&[][..], |(_, names)| *names);
    (key, names)
}

/// The key of an argument check in paths: `args.device`, `args[0]`, `args.*`
/// (by name, so it stays right when the checks are reordered).
fn arg_key(c: &ArgCheck) -> String {
    match (&c.name, c.position) {
        _ if c.star => "args.*".to_string(),
        (Some(name), _) => format!("args.{name}"),
        (None, Some(i)) => format!("args[{i}]"),
        (None, None) => "args".to_string(),
    }
}

/// The nested matchers of an argument check (its `{ match = ... }` alternatives).
fn arg_matchers(c: &ArgCheck) -> impl Iterator<Item = &Matcher> {
    c.alternatives.iter().filter_map(|alt| match alt {
        ArgAlt::Match(m) => Some(&**m),
        _ => None,
    })
}

/// What an argument check reads from outside it.
pub(super) fn arg_reads(c: &ArgCheck) -> Places {
    union(arg_matchers(c).map(|m| under(&m.reads, || format!("{}.is.match", arg_key(c)))))
}

/// Walks what an argument check captures: its own `capture`, then what its
/// `{ match = ... }` alternatives capture (see [`matcher_captures`]).
pub(super) fn arg_captures(c: &ArgCheck, visit: Visit<'_>) -> bool {
    if let Some(name) = &c.capture {
        if visit(name, &|| format!("{}.capture", arg_key(c))) {
            return true;
        }
    }
    arg_matchers(c).any(|m| nested_captures(m, &|| format!("{}.is.match", arg_key(c)), visit))
}

/// What a `fields` entry reads from outside it.
pub(super) fn field_reads((name, m): &(String, Matcher)) -> Places {
    under(&m.reads, || format!("fields.{name}"))
}

/// Walks what a `fields` entry captures (see [`matcher_captures`]).
pub(super) fn field_captures((name, m): &(String, Matcher), visit: Visit<'_>) -> bool {
    nested_captures(m, &|| format!("fields.{name}"), visit)
}

/// What a predicate reads from outside it.
pub(super) fn pred_reads(p: &Pred) -> Places {
    if let Some((key, m)) = p.single_nested() {
        return under(&m.reads, || key.to_string());
    }
    match p {
        Pred::Args(checks) => outside_reads(checks, &[], arg_reads, arg_captures),
        Pred::Fields(list) => outside_reads(list, &[], field_reads, field_captures),
        // The branches are alternatives: none fills another's reads.
        Pred::Any(ms) => union(ms.iter().enumerate().map(|(i, m)| under(&m.reads, || format!("any[{i}]")))),
        Pred::NameRegex(_) => single("qualname", "name_regex"),
        Pred::TextTemplate(t) => template_reads(t, "${", "text"),
        Pred::Lookup(l) => {
            let matches = l.matches.as_deref().map(|m| template_reads(m, "${", "lookup.matches"));
            union([template_reads(&l.key, "{", "lookup.key")].into_iter().chain(matches))
        }
        Pred::Nearest(_, key, _) => template_reads(key, "{", "nearest.key"),
        Pred::Options(o) => single(&o.of, "options.of"),
        _ => Places::new(),
    }
}

/// Walks what a predicate captures, nested matchers included (see
/// [`matcher_captures`]).
pub(super) fn pred_captures(p: &Pred, visit: Visit<'_>) -> bool {
    let mut one = |name: &str, at: &str| visit(name, &|| at.to_string());
    match p {
        // It sees the captures so far; what it captures is dropped.
        Pred::Unless(_) => false,
        Pred::Args(checks) => checks.iter().any(|c| arg_captures(c, visit)),
        Pred::Fields(list) => list.iter().any(|entry| field_captures(entry, visit)),
        Pred::Any(ms) => ms.iter().enumerate().any(|(i, m)| nested_captures(m, &|| format!("any[{i}]"), visit)),
        Pred::Capture(name) => one(name, "capture"),
        Pred::FlowsInto(f) => f.capture.as_deref().is_some_and(|c| one(c, "flows_into.capture")),
        Pred::NameRegex(re) => re.group_names().iter().any(|g| one(g, "name_regex")),
        Pred::Lookup(l) => l.capture.iter().any(|(k, _)| one(k, "lookup.capture")),
        Pred::Nearest(_, _, capture) => one(capture, "nearest.capture"),
        Pred::Options(o) => o.capture.as_deref().is_some_and(|c| one(c, "options.capture")),
        _ => p.single_nested().is_some_and(|(key, m)| nested_captures(m, &|| key.to_string(), visit)),
    }
}

/// The names of the placeholders `open`NAME`}` in a template; `{target}`,
/// which every key template may use, is not a capture.
fn template_reads(template: &str, open: &str, at: &str) -> Places {
    let mut out = Places::new();
    let mut rest = template;
    while let Some(i) = rest.find(open) {
        let after = &rest[i + open.len()..];
        let Some(close) = after.find('}') else { break };
        let name = &after[..close];
        if name != "target" {
            out.entry(name.to_string()).or_insert_with(|| at.to_string());
        }
        rest = &after[close + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::compile::Compiler;
    use super::super::schema::MatcherSpec;
    use super::*;

    fn compile(toml: &str) -> Result<Matcher, String> {
        let spec: MatcherSpec = toml::from_str(toml).map_err(|e| e.to_string())?;
        Compiler::default().matcher(&spec).map_err(|e| e.to_string())
    }

    fn kinds(m: &Matcher) -> Vec<String> {
        m.preds.iter().map(|p| format!("{p:?}").split(['(', ' ']).next().unwrap_or_default().to_string()).collect()
    }

    #[test]
    fn readers_move_after_their_captures_and_the_rest_keeps_the_cost_order() {
        let m = compile(
            "kind = 'identifier'\ntext = '^${t}$'\ninside_loop = true\ncontains = { kind = 'call' }\n\
             ancestor = { kind = 'assignment', fields = { left = { capture = 't' } } }",
        )
        .unwrap();
        assert_eq!(kinds(&m), ["InsideLoop", "Contains", "Ancestor", "TextTemplate"]);
        let m = compile("kind = 'identifier'\ntext = 'x'\ninside_loop = true\ncontains = { kind = 'call' }").unwrap();
        assert_eq!(kinds(&m), ["Text", "InsideLoop", "Contains"]);
    }

    #[test]
    fn a_nodes_text_is_tested_before_its_loop_and_if_context() {
        // For a node reached by a search, the context walks down from the root.
        let m = compile("kind = 'identifier'\ninside_loop = true\nunder_if = 'x'\ntext = '^loader$'").unwrap();
        assert_eq!(kinds(&m), ["Text", "InsideLoop", "UnderIf"]);
    }

    #[test]
    fn a_read_of_a_lookup_key_or_options_waits_for_its_capture() {
        let m = compile(
            "kind = 'string'\noptions = { of = 'v', all = ['a'] }\ncontains = { kind = 'string', capture = 'v' }",
        )
        .unwrap();
        assert_eq!(kinds(&m), ["Contains", "Options"]);
        assert!(m.reads.is_empty());
        assert!(captures(&m, "v"));
        assert_eq!(first_capture(&m, "v", matcher_captures).as_deref(), Some("contains.capture"));
    }

    #[test]
    fn what_a_matcher_reads_from_outside_names_where() {
        let m =
            compile("kind = 'call'\nfunction_has = { kind = 'call', fields = { function = { text = '${model}' } } }")
                .unwrap();
        assert_eq!(m.reads.get("model").map(String::as_str), Some("function_has.fields.function.text"));
        let error = check_filled(&m, |_| false).unwrap_err().to_string();
        assert!(error.contains("placeholder `model` is read but never captured"), "{error}");
        assert!(check_filled(&m, |name| name == "model").is_ok());
    }
}
