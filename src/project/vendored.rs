//! Projects vendored inside another. A directory with its own `setup.py`
//! (or another project marker) inside a project is a project of its own, so
//! a monorepo's packages get their own verdicts. But a copy of a library kept
//! inside a project (SOLO's `mmcv/`, with its own `setup.py`) runs in the
//! processes of the project that imports it: what that project does (import
//! `transfer_to_npu` or `torch_npu`, use Ascend's apex) holds for the copy too.
//!
//! A nested project counts as vendored by the nearest project around it when
//! a Python file of that project, in the directory that holds the copy or
//! below it (where `import mmcv` finds the copy), imports one of its top-level
//! packages or modules (`import mmcv`, `from mmcv.runner import ...`). The
//! project around must have a marker file: the scan root without one gathers
//! unrelated directories, whose `import timm` means the installed package;
//! and a name the project also defines itself (`utils`, `model`) means its
//! own module. The imports are read from the lines
//! ([`crate::semantic::import_lines`]), not parsed: this runs only for projects that
//! have a project nested inside them.

use crate::semantic::import_lines::imported_names;
use crate::source::read_file;
use crate::walk::{FileKind, WalkResult};
use rayon::prelude::*;
use std::collections::BTreeSet;

/// For each project, the project that vendors it, if any (see the module docs).
pub(crate) fn vendoring_projects(walked: &WalkResult) -> Vec<Option<usize>> {
    let dirs: Vec<&str> = walked.projects.iter().map(|p| p.display.as_str()).collect();
    let parents = enclosing_projects(walked);
    // The top-level packages and modules of each project that has a parent.
    let mut names: Vec<BTreeSet<String>> = vec![BTreeSet::new(); dirs.len()];
    for file in walked.files.iter().filter(|f| f.kind == FileKind::Python && parents[f.project].is_some()) {
        let shown = file.display();
        let Some(rest) = inside(dirs[file.project], &shown) else { continue };
        let top = match rest.split_once('/') {
            Some((package, "__init__.py")) => package,
            None => rest.strip_suffix(".py").filter(|m| *m != "setup").unwrap_or_default(),
            Some(_) => "",
        };
        if is_identifier(top) {
            names[file.project].insert(top.to_string());
        }
    }
    let mut vendored = vec![None; dirs.len()];
    for parent in parents.iter().flatten().copied().collect::<BTreeSet<usize>>() {
        // The scan root without a marker holds unrelated directories, whose
        // `import timm` means the installed timm, not a copy beside another model.
        if walked.projects[parent].marker.is_none() {
            continue;
        }
        let children: Vec<usize> =
            (0..dirs.len()).filter(|&p| parents[p] == Some(parent) && !names[p].is_empty()).collect();
        if children.is_empty() {
            continue;
        }
        // Each file of the project, with the top-level names it imports (not relative ones).
        let sources: Vec<(String, BTreeSet<String>)> = walked
            .files
            .par_iter()
            .filter(|f| f.project == parent && f.kind == FileKind::Python)
            .map(|f| {
                let text = read_file(f).map(|s| s.text).unwrap_or_default();
                let tops = imported_names(&text)
                    .into_iter()
                    .filter(|n| !n.starts_with('.'))
                    .map(|n| n.split('.').next().unwrap_or_default().to_string())
                    .collect();
                (f.display().into_owned(), tops)
            })
            .collect();
        // A name the project also defines itself (`utils`, `model`) is its own
        // module wherever it is imported, not the copy's.
        let own: BTreeSet<&str> = sources.iter().filter_map(|(shown, _)| module_name(shown)).collect();
        for p in children {
            let copy: BTreeSet<&str> = names[p].iter().map(String::as_str).filter(|n| !own.contains(n)).collect();
            // The copy is importable from the directory that holds it, and below.
            let base = dirs[p].rsplit_once('/').map_or(".", |(b, _)| b);
            let importer = sources
                .iter()
                .any(|(shown, tops)| inside(base, shown).is_some() && tops.iter().any(|t| copy.contains(t.as_str())));
            if importer {
                vendored[p] = Some(parent);
            }
        }
    }
    vendored
}

/// For each project, the nearest other project whose directory holds its
/// directory, if any: the project it is nested in.
pub(crate) fn enclosing_projects(walked: &WalkResult) -> Vec<Option<usize>> {
    let dirs: Vec<&str> = walked.projects.iter().map(|p| p.display.as_str()).collect();
    (0..dirs.len()).map(|p| enclosing(&dirs, p)).collect()
}

/// The nearest other project whose directory holds project `p`'s directory.
fn enclosing(dirs: &[&str], p: usize) -> Option<usize> {
    (0..dirs.len())
        .filter(|&q| q != p && inside(dirs[q], dirs[p]).is_some_and(|rest| !rest.is_empty()))
        .max_by_key(|&q| dirs[q].len())
}

/// `path` relative to the directory `dir` (both as displayed), if it lies in it.
pub(crate) fn inside<'p>(dir: &str, path: &'p str) -> Option<&'p str> {
    if dir == "." {
        return (!path.starts_with("../") && !path.starts_with('/')).then_some(path);
    }
    path.strip_prefix(dir)?.strip_prefix('/')
}

/// The module a file defines by its name: `utils.py` defines `utils`, and
/// `model/__init__.py` defines `model` (the name of its directory).
fn module_name(shown: &str) -> Option<&str> {
    let mut parts = shown.rsplit('/');
    match parts.next()? {
        "__init__.py" => parts.next(),
        file => file.strip_suffix(".py"),
    }
}

fn is_identifier(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::{enclosing, inside, module_name};

    #[test]
    fn the_enclosing_project_is_the_nearest_directory_around() {
        let dirs = [".", "solo", "solo/mmcv", "solo/mmcv-tools", "other"];
        assert_eq!(enclosing(&dirs, 2), Some(1));
        assert_eq!(enclosing(&dirs, 3), Some(1), "a name prefix is no directory");
        assert_eq!(enclosing(&dirs, 1), Some(0));
        assert_eq!(enclosing(&dirs, 0), None);
        assert_eq!(inside("solo", "solo/mmcv/x.py"), Some("mmcv/x.py"));
        assert_eq!(inside("solo", "solonot/x.py"), None);
        assert_eq!(inside(".", "../x.py"), None);
        assert_eq!(module_name("a/model/__init__.py"), Some("model"));
        assert_eq!(module_name("a/utils.py"), Some("utils"));
    }
}
