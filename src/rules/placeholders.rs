//! Which placeholders each part of a matcher captures and which it reads, so
//! that the compiler can run captures before their readers (whatever their
//! order in the pack) and reject a read that nothing can fill.

use super::compile::Res;
use super::model::*;

impl Flow {
    /// Adds what `other` provides and reads, with its paths under `prefix`.
    fn absorb(&mut self, prefix: &str, other: &Flow) {
        extend(&mut self.provides, prefix, &other.provides);
        extend(&mut self.reads, prefix, &other.reads);
    }
}

/// The flow of a whole matcher, from the flows of the matchers nested in it:
/// it provides its anchor's placeholders, its predicates' captures and its
/// `set` keys. Stored in [`Matcher::flow`] once its predicates are final.
pub(super) fn flow(m: &Matcher) -> Flow {
    let own = anchor_provides(m.anchor.as_ref());
    let parts: Vec<Flow> = m.preds.iter().map(pred_flow).collect();
    let mut provides = own.clone();
    for part in &parts {
        extend(&mut provides, "", &part.provides);
    }
    for (k, _) in &m.set {
        provides.entry(k.clone()).or_insert_with(|| "set".into());
    }
    Flow { reads: outside_reads(&parts, &own), provides }
}

/// Fails, naming the placeholder and where it is read, if `m` reads a
/// placeholder that neither `m` nor `around` (what the state holds when `m`
/// is evaluated) can fill.
pub(super) fn check_filled(m: &Matcher, around: &Places) -> Res<()> {
    match m.flow.reads.iter().find(|(name, _)| !around.contains_key(*name)) {
        Some((name, at)) => Err(format!(
            "{at}: placeholder `{name}` is read but never captured; capture it in this matcher or one around it \
             (`capture = \"{name}\"`, an argument's `capture`, a `name_regex` group, a `lookup` capture, ...). \
             `file_has`, `project_has` and `downgrade.when` start without the match's captures"
        )),
        None => Ok(()),
    }
}

/// Reorders `items` so that each one runs after every other item that
/// captures a placeholder it reads (ignoring `own`, the placeholders the
/// matcher's anchor sets), keeping their order otherwise. A cycle is an
/// error that names its members.
pub(super) fn dependency_order<T>(items: Vec<T>, own: &Places, flow: impl Fn(&T) -> Flow) -> Res<Vec<T>> {
    let mut flows: Vec<Flow> = items.iter().map(flow).collect();
    for f in &mut flows {
        f.reads.retain(|name, _| !own.contains_key(name));
    }
    if flows.iter().all(|f| f.reads.is_empty()) {
        return Ok(items);
    }
    // `deps[i]`: the other items that capture something item `i` reads.
    let deps: Vec<Vec<usize>> = (0..items.len())
        .map(|i| (0..items.len()).filter(|&j| j != i && captures_for(&flows[i], &flows[j]).is_some()).collect())
        .collect();
    let mut placed = vec![false; items.len()];
    let mut order = Vec::with_capacity(items.len());
    while order.len() < items.len() {
        let ready = (0..items.len()).find(|&i| !placed[i] && deps[i].iter().all(|&j| placed[j]));
        let Some(i) = ready else {
            return Err(cycle_message(&deps, &placed, &flows));
        };
        placed[i] = true;
        order.push(i);
    }
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// A placeholder `reader` reads that `writer` captures: `(name, read at, captured at)`.
fn captures_for<'a>(reader: &'a Flow, writer: &'a Flow) -> Option<(&'a str, &'a str, &'a str)> {
    reader
        .reads
        .iter()
        .find_map(|(name, at)| writer.provides.get(name).map(|by| (name.as_str(), at.as_str(), by.as_str())))
}

/// Describes a cycle among the unplaced items: each reads a placeholder the next captures.
fn cycle_message(deps: &[Vec<usize>], placed: &[bool], flows: &[Flow]) -> String {
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
    let steps: Vec<(&str, &str, &str)> = path
        .iter()
        .zip(path.iter().cycle().skip(1))
        .filter_map(|(&i, &j)| captures_for(&flows[i], &flows[j]))
        .collect();
    let described: Vec<String> =
        steps.iter().skip(1).map(|(name, at, by)| format!("`{at}` reads `{name}`, which `{by}` captures")).collect();
    let (name, at, by) = steps.first().copied().unwrap_or_default();
    format!(
        "{at}: reads `{name}`, which `{by}` captures, and {}: these captures wait for each other, so no order \
         fills them; capture one of them without reading the other",
        described.join(", and ")
    )
}

/// The placeholders read by some of `parts` (the predicates of a matcher, or
/// the entries of a `fields`/`args` list) that no other part captures and
/// that `own` does not hold.
fn outside_reads(parts: &[Flow], own: &Places) -> Places {
    let mut out = Places::new();
    for (i, part) in parts.iter().enumerate() {
        for (name, at) in &part.reads {
            let filled = own.contains_key(name)
                || parts.iter().enumerate().any(|(j, other)| j != i && other.provides.contains_key(name));
            if !filled {
                out.entry(name.clone()).or_insert_with(|| at.clone());
            }
        }
    }
    out
}

/// Adds `more`, with paths under `prefix`, to `out` (the first path of a name wins).
fn extend(out: &mut Places, prefix: &str, more: &Places) {
    for (name, at) in more {
        out.entry(name.clone()).or_insert_with(|| format!("{prefix}{at}"));
    }
}

fn single(name: &str, at: &str) -> Places {
    Places::from([(name.to_string(), at.to_string())])
}

/// The placeholders an anchor sets when it matches (see `matcher::anchor`).
pub(super) fn anchor_provides(a: Option<&Anchor>) -> Places {
    let (key, names): (&str, &[&str]) = match a {
        Some(Anchor::Call(_)) => ("call", &["callee", "name", "qualname"]),
        Some(Anchor::Method(_)) => ("method", &["method", "receiver"]),
        Some(Anchor::Attribute(_)) => ("attribute", &["name", "qualname"]),
        Some(Anchor::Str(_)) => ("string", &["value"]),
        Some(Anchor::EnvVar(_)) => ("env_var", &["name", "value"]),
        Some(Anchor::Compare(_)) => ("compare", &["literal", "op"]),
        Some(Anchor::Import(_)) => ("import", &["name"]),
        Some(Anchor::Condition(_)) => ("condition", &["condition"]),
        Some(Anchor::File { .. } | Anchor::Query(_) | Anchor::Kind(_)) | None => ("", &[]),
    };
    names.iter().map(|n| (n.to_string(), key.to_string())).collect()
}

/// A nested matcher's flow, as part of the predicate at `key`.
fn nested(key: &str, m: &Matcher) -> Flow {
    let mut out = Flow::default();
    out.absorb(&format!("{key}."), &m.flow);
    out
}

/// The flow of an argument check: its own `capture` and the flows of its
/// `{ match = ... }` alternatives. Paths name the argument (`args.device`,
/// `args[0]`, `args.*`), which stays right when the checks are reordered.
pub(super) fn arg_flow(c: &ArgCheck) -> Flow {
    let key = match (&c.name, c.position) {
        _ if c.star => "args.*".to_string(),
        (Some(name), _) => format!("args.{name}"),
        (None, Some(i)) => format!("args[{i}]"),
        (None, None) => "args".to_string(),
    };
    let mut out = Flow::default();
    if let Some(name) = &c.capture {
        out.provides.insert(name.clone(), format!("{key}.capture"));
    }
    for alt in &c.alternatives {
        if let ArgAlt::Match(m) = alt {
            out.absorb(&format!("{key}.is.match."), &m.flow);
        }
    }
    out
}

/// The flow of a `fields` entry.
pub(super) fn field_flow((name, m): &(String, Matcher)) -> Flow {
    nested(&format!("fields.{name}"), m)
}

/// What a predicate captures and what it reads.
pub(super) fn pred_flow(p: &Pred) -> Flow {
    match p {
        Pred::Args(checks) => list_flow(checks.iter().map(arg_flow).collect()),
        Pred::Fields(list) => list_flow(list.iter().map(field_flow).collect()),
        Pred::Any(ms) => alternatives_flow(ms),
        Pred::Receiver(m) => nested("receiver", m),
        Pred::Contains(m) => nested("contains", m),
        Pred::Binding(m) => nested("binding", m),
        Pred::Ancestor(m) => nested("ancestor", m),
        Pred::FunctionHas(m) => nested("function_has", m),
        Pred::Preceded(m) => nested("preceded_in_function", m),
        Pred::Followed(m) => nested("followed_in_function", m),
        Pred::LoopOver { over: Some(m), .. } => nested("loop_over", m),
        // It sees the captures so far; what it captures is dropped.
        Pred::Unless(m) => Flow { provides: Places::new(), reads: nested("unless", m).reads },
        Pred::Capture(name) => Flow { provides: single(name, "capture"), reads: Places::new() },
        Pred::NameRegex(re) => Flow {
            provides: re.group_names().into_iter().map(|g| (g, "name_regex".to_string())).collect(),
            reads: single("qualname", "name_regex"),
        },
        Pred::TextTemplate(t) => Flow { provides: Places::new(), reads: template_reads(t, "${", "text") },
        Pred::Lookup(l) => Flow {
            provides: l.capture.iter().map(|(k, _)| (k.clone(), "lookup.capture".to_string())).collect(),
            reads: template_reads(&l.key, "{", "lookup.key"),
        },
        Pred::Nearest(_, key, capture) => {
            Flow { provides: single(capture, "nearest.capture"), reads: template_reads(key, "{", "nearest.key") }
        }
        Pred::Options(o) => Flow {
            provides: o.capture.as_deref().map(|c| single(c, "options.capture")).unwrap_or_default(),
            reads: single(&o.of, "options.of"),
        },
        _ => Flow::default(),
    }
}

/// A list predicate (`args`, `fields`) whose entries the compiler puts in
/// dependency order: it captures what any entry captures and reads what no
/// other entry captures.
fn list_flow(entries: Vec<Flow>) -> Flow {
    let mut provides = Places::new();
    for e in &entries {
        extend(&mut provides, "", &e.provides);
    }
    Flow { reads: outside_reads(&entries, &Places::new()), provides }
}

/// `any`: the branches are alternatives, so none fills another's reads.
fn alternatives_flow(ms: &[Matcher]) -> Flow {
    let mut out = Flow::default();
    for (i, m) in ms.iter().enumerate() {
        out.absorb(&format!("any[{i}]."), &m.flow);
    }
    out
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

    fn compile(toml: &str) -> Res<Matcher> {
        let spec: MatcherSpec = toml::from_str(toml).map_err(|e| e.to_string())?;
        Compiler::default().matcher(&spec)
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
    fn a_read_of_a_lookup_key_or_options_waits_for_its_capture() {
        let m = compile(
            "kind = 'string'\noptions = { of = 'v', all = ['a'] }\ncontains = { kind = 'string', capture = 'v' }",
        )
        .unwrap();
        assert_eq!(kinds(&m), ["Contains", "Options"]);
        assert!(m.flow.reads.is_empty() && m.flow.provides.contains_key("v"));
    }

    #[test]
    fn what_a_matcher_reads_from_outside_names_where() {
        let m =
            compile("kind = 'call'\nfunction_has = { kind = 'call', fields = { function = { text = '${model}' } } }")
                .unwrap();
        assert_eq!(m.flow.reads.get("model").map(String::as_str), Some("function_has.fields.function.text"));
        assert!(check_filled(&m, &Places::new())
            .unwrap_err()
            .contains("placeholder `model` is read but never captured"));
        assert!(check_filled(&m, &Places::from([("model".into(), "capture".into())])).is_ok());
    }
}
