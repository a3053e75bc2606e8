//! Classes one file derives and another file imports: `utils/datasets.py`
//! defines `class InfiniteDataLoader(DataLoader)`, and `train.py` builds it
//! after `from utils.datasets import InfiniteDataLoader`. Each file's
//! analysis lists its module-level classes derived from a class that some
//! rule's `call` anchor follows into subclasses
//! ([`crate::rules::engine::FileFacts::derived_classes`]); here the files
//! of the same project that import one are found, so that they can be
//! analysed again knowing what the class constructs.
//!
//! Imports are resolved as the project's import graph resolves them
//! ([`super::processes`]), from each file's import lines. Only projects that
//! define such a class pay for the reading. One step only: a class derived
//! in a third file from an imported subclass, and a class re-exported
//! through a package's `__init__`, are not followed.

use super::facts::python_of;
use super::processes::ImportGraph;
use super::rereads::Rereads;
use crate::analysis::KeptOutcome;
use crate::semantic::subclasses::{Derived, ImportedClasses};
use crate::walk::WalkResult;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A file's derived classes, each with its bases.
type ClassesOfFile<'o> = &'o [(String, Vec<Derived>)];

/// The Python files that import a class which another file of their project
/// derives from a followed base: each file's index in `walked.files` (and in
/// `outcomes`, which are in the same order), with the classes it imports, by
/// the names it imports them under. In file order.
pub(crate) fn importers(
    walked: &WalkResult,
    outcomes: &[KeptOutcome],
    rereads: &Rereads,
) -> Vec<(usize, ImportedClasses)> {
    // The files that define such classes, by project.
    let mut by_project: BTreeMap<usize, HashMap<usize, ClassesOfFile>> = BTreeMap::new();
    for (i, o) in outcomes.iter().enumerate() {
        if let Some(classes) = o.adds().map(|a| a.derived_classes.as_slice()).filter(|c| !c.is_empty()) {
            by_project.entry(o.project()).or_default().insert(i, classes);
        }
    }
    let mut found = Vec::new();
    for (project, defining) in by_project {
        let Some(dir) = walked.projects.get(project) else { continue };
        let (members, python) = python_of(&walked.files, project);
        let graph = ImportGraph::new(python, &dir.display, rereads);
        let classes_of = |node: usize| defining.get(&members[node]).copied();
        // Only a name that ends as a defining module's path does may be it
        // (see `modules_named`): the others are not looked up.
        let nodes = defining.keys().filter_map(|i| members.binary_search(i).ok());
        let endings: HashSet<String> = nodes.filter_map(|node| graph.module_last_part(node)).collect();
        let may_define = |name: &str| {
            let rest = name.trim_start_matches('.');
            rest.is_empty() || endings.contains(rest.rsplit('.').next().unwrap_or(rest))
        };
        let tables: Vec<(usize, ImportedClasses)> = (0..members.len())
            .into_par_iter()
            .filter_map(|n| {
                let mut table = ImportedClasses::new();
                for name in rereads.imported_names(&walked.files[members[n]]).iter().filter(|n| may_define(n)) {
                    let modules = graph.modules_named(n, name).into_iter().filter(|&m| m != n);
                    for (class, bases) in modules.filter_map(classes_of).flatten() {
                        table.insert(format!("{name}.{class}"), bases.clone());
                    }
                }
                (!table.is_empty()).then(|| (members[n], table))
            })
            .collect();
        found.extend(tables);
    }
    found.sort_by_key(|(i, _)| *i);
    found
}
