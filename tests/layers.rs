//! The modules of `src/` depend on each other in one direction only: down
//! the pipeline. Every top-level module has its place in [`LAYERS`] and uses
//! only modules of the layers below it (walk -> read -> parse -> semantic ->
//! rules -> one file's analysis -> project -> outcome and its filters ->
//! report and fix -> the driver -> the language server); no module reaches
//! itself again through the modules it uses. A module uses another when its
//! code names a path into it: `crate::a::b`, `super::b`, or, in a parent
//! module, `child::item`. Comments and unit-test modules may name anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `rules/matcher.rs` is `rules::matcher`, `rules/mod.rs` is `rules`; the crate roots are none.
fn module_of(relative: &Path) -> Option<String> {
    let name = relative.to_str()?.strip_suffix(".rs")?;
    let name = name.strip_suffix("/mod").unwrap_or(name);
    (name != "lib" && name != "main").then(|| name.replace('/', "::"))
}

/// A file's code without its comments and its `#[cfg(test)] mod tests`.
fn code_of(text: &str) -> String {
    let text = text.find("#[cfg(test)]\nmod tests").map_or(text, |end| &text[..end]);
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The leading segments of every path that follows `prefix` where it starts
/// a path (`crate::a::b` gives `a, b`; `crate::{a::b, c}` gives `a, b` and `c`).
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        if code[..at].chars().next_back().is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        let items = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())].split(',').collect(),
            None => vec![rest],
        };
        for item in items {
            let path: String = item.trim_start().chars().take_while(|&c| is_ident(c) || c == ':').collect();
            paths.push(path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect());
        }
    }
    paths
}

/// The module graph of `src/`.
fn module_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<String, String> = files
        .iter()
        .filter_map(|f| Some((module_of(f.strip_prefix(&src).ok()?)?, code_of(&std::fs::read_to_string(f).ok()?))))
        .collect();
    // The longest prefix of `path` that is a module.
    let resolve =
        |path: &[String]| (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|name| modules.contains_key(name));
    let mut graph = Graph::new();
    for (module, code) in &modules {
        let own: Vec<String> = module.split("::").map(str::to_string).collect();
        let mut used = BTreeSet::new();
        for path in paths_after(code, "crate::") {
            used.extend(resolve(&path));
        }
        for path in paths_after(code, "super::") {
            let ups = 1 + path.iter().take_while(|s| *s == "super").count();
            let base = &own[..own.len().saturating_sub(ups)];
            let rest = path.iter().skip_while(|s| *s == "super");
            used.extend(resolve(&base.iter().cloned().chain(rest.cloned()).collect::<Vec<_>>()));
        }
        for child in modules.keys().filter_map(|m| m.strip_prefix(&format!("{module}::"))) {
            if !child.contains("::") && !paths_after(code, &format!("{child}::")).is_empty() {
                used.insert(format!("{module}::{child}"));
            }
        }
        used.remove(module);
        graph.insert(module.clone(), used);
    }
    graph
}

/// A cycle of `graph` as `a -> b -> a`, if it has one.
fn a_cycle(graph: &Graph) -> Option<String> {
    fn visit<'g>(
        node: &'g str,
        graph: &'g Graph,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|n| *n == node) {
            return Some(format!("{} -> {node}", path[start..].join(" -> ")));
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        let found = graph.get(node).into_iter().flatten().find_map(|next| visit(next, graph, path, done));
        path.pop();
        found
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_uses_itself_through_others() {
    let graph = module_graph();
    assert!(graph.len() > 40, "found only {} modules in src/", graph.len());
    assert!(graph["rules::matcher"].contains("rules::slots"), "the graph misses a use it should see");
    assert_eq!(a_cycle(&graph), None, "modules that use each other");
}

#[test]
fn no_layer_uses_itself_through_others() {
    let mut layers = Graph::new();
    for (module, used) in module_graph() {
        let layer = module.split("::").next().unwrap().to_string();
        let others: Vec<String> =
            used.iter().map(|u| u.split("::").next().unwrap().to_string()).filter(|u| *u != layer).collect();
        layers.entry(layer).or_default().extend(others);
    }
    assert!(layers["rules"].contains("semantic"), "the graph misses a use it should see");
    assert_eq!(a_cycle(&layers), None, "layers that use each other");
}

/// The top-level modules, lowest layer first; a module may use the modules
/// of lower layers only. A new module gets a place here.
const LAYERS: &[&[&str]] = &[
    // Shared types and plumbing.
    &["finding", "hash", "atomic", "progress", "shown_path"],
    &["write", "output"],
    // Settings, then the pipeline.
    &["config"],
    &["walk"],
    &["encoding"],
    &["source"],
    &["notebook", "stdin"],
    &["parse"],
    &["suppress", "semantic"],
    &["rules"],
    &["cache"],
    &["analysis"],
    &["project"],
    // What a scan found, and the filters between it and the report.
    &["baseline", "diff", "add_ignore"],
    &["outcome"],
    &["report", "fix"],
    // The driver and the command line, the language server, and the errors that end a run.
    &["scan", "cli"],
    &["server"],
    &["error"],
];

/// The layer of top-level module `module`.
fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn every_module_uses_only_layers_below_it() {
    let graph = module_graph();
    let top = |m: &str| m.split("::").next().unwrap().to_string();
    let mut unplaced = BTreeSet::new();
    let mut upward = Vec::new();
    for (module, used) in &graph {
        let Some(own) = layer_of(&top(module)) else {
            unplaced.insert(top(module));
            continue;
        };
        for u in used.iter().filter(|u| top(u) != top(module)) {
            match layer_of(&top(u)) {
                Some(theirs) if theirs < own => {}
                Some(_) => upward.push(format!("{module} -> {u}")),
                None => {
                    unplaced.insert(top(u));
                }
            }
        }
    }
    assert!(unplaced.is_empty(), "modules with no place in LAYERS (tests/layers.rs): {unplaced:?}");
    assert!(upward.is_empty(), "modules that use their own layer or one above it:\n{}", upward.join("\n"));
}

#[test]
fn a_use_against_the_layers_is_seen() {
    assert!(layer_of("config") < layer_of("walk") && layer_of("report") == layer_of("fix"));
    let graph = module_graph();
    assert!(graph["scan"].iter().any(|u| u.starts_with("project")), "the driver uses the project layer");
    assert!(graph["project::project_runs"].contains("project::launches"), "the graph sees uses inside a layer");
}

#[test]
fn a_cycle_is_found_and_named() {
    let graph: Graph = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
        .iter()
        .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
        .collect();
    assert_eq!(a_cycle(&graph).as_deref(), Some("a -> b -> c -> a"));
    let acyclic: Graph = [("a", "b"), ("b", "c")]
        .iter()
        .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
        .collect();
    assert_eq!(a_cycle(&acyclic), None);
}
