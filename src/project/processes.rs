//! Which files of a project run without `transfer_to_npu`. A project that
//! imports it somewhere is on automatic migration, but the import only acts in
//! the processes that execute it: an entry script that imports it neither
//! itself nor through the project's modules (a demo, an API server, an
//! upstream script the port left alone) starts a process where `.cuda()` and
//! `torch.cuda.*` still mean CUDA. Those scripts, and the modules that only
//! they import, are migrated by hand, so their findings keep their severity.
//!
//! The same graph gives the facts of a file's process (`process_imports` in
//! rule packs: what the file and the project modules it imports import).
//!
//! The project's import graph is built from its Python files, with imports
//! resolved the way a script's `sys.path` usually finds them: the importer's
//! own directory, then the project root, then the nearest file whose dotted
//! path ends with the name. A module that no entry script reaches keeps the
//! project's style. The files' imports are read again here, from their
//! lines ([`crate::semantic::import_lines`]: no second parse), not kept from the
//! analysis: the scan keeps almost nothing of a file that reports nothing,
//! so memory stays flat, and only the projects that need the graph pay for
//! it. The language server, which decides the facts again after each edit,
//! remembers them from one time to the next ([`super::rereads`]).

use super::edges::Edges;
use super::rereads::Rereads;
use crate::walk::{FileKind, ScanFile};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The part of a project on automatic migration that runs without it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Unmigrated {
    /// Entry scripts whose process never imports `transfer_to_npu`, in path order.
    pub entries: Vec<String>,
    /// Those scripts and the files only they import (display paths).
    pub files: HashSet<String>,
}

/// Finds the unmigrated part of one project: `graph` is its import graph
/// (built on first use), `importers` the files that import `transfer_to_npu`
/// and `entries` its entry scripts (display paths).
pub(crate) fn unmigrated<'f>(
    graph: &mut LazyGraph<'f, '_>,
    importers: &BTreeSet<String>,
    entries: &BTreeSet<String>,
) -> Unmigrated {
    // Every entry script importing it itself: nothing runs without it.
    if entries.is_subset(importers) {
        return Unmigrated::default();
    }
    let graph = graph.get();
    let (importer_ids, entry_ids) = (graph.ids(importers), graph.ids(entries));
    // Entry scripts that import it through the project's modules start migrated processes too.
    let reaches_importer = graph.edges.reversed().reachable(&importer_ids);
    let migrated_roots: Vec<usize> =
        importer_ids.iter().chain(entry_ids.iter().filter(|&&e| reaches_importer[e])).copied().collect();
    let unmigrated_roots: Vec<usize> = {
        let migrated = graph.edges.reachable(&migrated_roots);
        entry_ids.into_iter().filter(|&e| !migrated[e]).collect()
    };
    Unmigrated {
        entries: unmigrated_roots.iter().map(|&i| graph.python[i].display().to_string()).collect(),
        files: graph.only_reached_from(&unmigrated_roots, &migrated_roots),
    }
}

/// A project's whole import graph, every file read: what the questions
/// about its processes (which run without `transfer_to_npu`, which no
/// launch script starts) are answered on.
pub(crate) struct ProjectGraph<'f> {
    python: Vec<&'f ScanFile>,
    /// For each file, the files of the project it imports.
    edges: Edges,
    /// Display path -> node.
    index: HashMap<String, usize>,
    /// What resolves other imports of the files (unguarded ones).
    modules: ModuleIndex<'f>,
}

impl<'f> ProjectGraph<'f> {
    /// Reads the imports of every Python file among `files`, one project's
    /// files, in a project displayed as `dir`.
    pub(crate) fn new(files: &[&'f ScanFile], dir: &str, rereads: &Rereads) -> Self {
        let python: Vec<&ScanFile> = files.iter().copied().filter(|f| f.kind == FileKind::Python).collect();
        let imports = ImportGraph::new(python.clone(), dir, rereads);
        let edges = Edges::from_lists(imports.read_all());
        let index = python.iter().enumerate().map(|(i, f)| (f.display().into_owned(), i)).collect();
        ProjectGraph { python, edges, index, modules: imports.modules }
    }

    /// The nodes of the files at `paths` (display paths); paths of files
    /// that are not Python are left out.
    pub(crate) fn ids(&self, paths: &BTreeSet<String>) -> Vec<usize> {
        paths.iter().filter_map(|p| self.index.get(p.as_str()).copied()).collect()
    }

    /// Those of the files at `paths` (display paths) that some file of the
    /// project imports.
    pub(crate) fn imported(&self, paths: &BTreeSet<String>) -> HashSet<String> {
        let wanted: HashSet<usize> = self.ids(paths).into_iter().collect();
        let imported: HashSet<usize> = self.edges.targets().filter(|j| wanted.contains(j)).collect();
        imported.into_iter().map(|i| self.python[i].display().to_string()).collect()
    }

    /// For each file, whether some other file of the project imports it.
    pub(crate) fn imported_by_some(&self) -> Vec<bool> {
        let mut imported = vec![false; self.python.len()];
        self.edges.targets().for_each(|j| imported[j] = true);
        imported
    }

    /// For each file, the files that import it directly.
    pub(crate) fn importers(&self) -> Edges {
        self.edges.reversed()
    }

    /// The files (display paths) that `roots` reach, themselves included,
    /// and that `others` do not.
    pub(crate) fn only_reached_from(&self, roots: &[usize], others: &[usize]) -> HashSet<String> {
        let (from_roots, from_others) = (self.edges.reachable(roots), self.edges.reachable(others));
        (0..self.python.len())
            .filter(|&i| from_roots[i] && !from_others[i])
            .map(|i| self.python[i].display().to_string())
            .collect()
    }
}

/// Of the files `asking` (nodes of `graph`, one project's Python files),
/// whether the project loads each only where a failed import is handled:
/// every module that imports it, directly or through modules that import it
/// unguarded, does so inside a `try` that catches `ImportError`, and none of
/// those modules is one that nothing imports (a script, or a package a user
/// of the library imports), which would load it unguarded. A module inside a
/// package does not load that package (the package was loaded first), so
/// its import of the package does not count.
pub(crate) fn loaded_only_guarded(graph: &ProjectGraph, rereads: &Rereads, asking: &[usize]) -> Vec<bool> {
    // Only packages' directories are kept, and an importer's path is built
    // when one of its imports is a package: in a root of 40,000 files, every
    // path and a filtered copy of the edges, turned around, added 19 MB at
    // the scan's peak.
    let package_dirs: Vec<Option<String>> =
        graph.python.iter().map(|f| f.display().strip_suffix("__init__.py").map(str::to_string)).collect();
    let mut importer_path: Option<(usize, Cow<str>)> = None;
    let importers = graph.edges.reversed_where(|j, v| {
        let Some(dir) = &package_dirs[v] else { return true };
        if importer_path.as_ref().is_none_or(|(k, _)| *k != j) {
            importer_path = Some((j, graph.python[j].display()));
        }
        !importer_path.as_ref().is_some_and(|(_, path)| path.starts_with(dir.as_str()))
    });
    // Each importer's unguarded imports are read once, when first asked for.
    let mut unguarded: Vec<Option<Vec<usize>>> = vec![None; graph.python.len()];
    let mut imports_unguarded = |j: usize, v: usize| {
        unguarded[j]
            .get_or_insert_with(|| graph.modules.resolve(j, &rereads.unguarded_names(graph.python[j])))
            .contains(&v)
    };
    asking
        .iter()
        .map(|&k| {
            let mut seen = vec![false; importers.len()];
            seen[k] = true;
            let mut queue = vec![k];
            while let Some(v) = queue.pop() {
                if importers.of(v).next().is_none() {
                    return false;
                }
                for j in importers.of(v) {
                    if !seen[j] && imports_unguarded(j, v) {
                        seen[j] = true;
                        queue.push(j);
                    }
                }
            }
            true
        })
        .collect()
}

/// A project's graph, read the first time a question needs it: most
/// projects need none.
pub(crate) struct LazyGraph<'f, 'a> {
    files: &'a [&'f ScanFile],
    dir: &'a str,
    rereads: &'a Rereads,
    graph: Option<ProjectGraph<'f>>,
}

impl<'f, 'a> LazyGraph<'f, 'a> {
    /// The graph of `files`, one project's files, in a project displayed as `dir`; nothing read yet.
    pub(crate) fn new(files: &'a [&'f ScanFile], dir: &'a str, rereads: &'a Rereads) -> Self {
        LazyGraph { files, dir, rereads, graph: None }
    }

    /// The graph, read now if it was not yet.
    pub(crate) fn get(&mut self) -> &ProjectGraph<'f> {
        let (files, dir, rereads) = (self.files, self.dir, self.rereads);
        self.graph.get_or_insert_with(|| ProjectGraph::new(files, dir, rereads))
    }
}

/// Which of one project's Python files import which: node `i` is the `i`th
/// file given to [`ImportGraph::new`]. A file's imports are read (parsed
/// again) only when a search reaches it: in a large project one script's
/// process is a small part of the whole.
pub(crate) struct ImportGraph<'f, 'r> {
    python: Vec<&'f ScanFile>,
    rereads: &'r Rereads,
    /// Its files and their project directories, hashed: what its resolved
    /// imports are remembered under, when `rereads` remembers.
    identity: Option<u64>,
    modules: ModuleIndex<'f>,
    /// For each file read so far, the files of the project it imports.
    edges: Vec<Option<Vec<usize>>>,
}

impl<'f, 'r> ImportGraph<'f, 'r> {
    /// The graph of `python`, one project's Python files, in a project
    /// displayed as `dir`; no file is read yet.
    pub(crate) fn new(python: Vec<&'f ScanFile>, dir: &str, rereads: &'r Rereads) -> Self {
        Self::across(python, &|_| dir, rereads)
    }

    /// The graph of `python`, Python files of any projects, each file's
    /// modules counted from the directory of its project as `dir_of` gives
    /// it (by project index): an import may be resolved in another project,
    /// as an installed package is. No file is read yet.
    pub(crate) fn across<'d>(
        python: Vec<&'f ScanFile>,
        dir_of: &dyn Fn(usize) -> &'d str,
        rereads: &'r Rereads,
    ) -> Self {
        let modules = ModuleIndex::new(&python, dir_of);
        let identity = rereads.remembers().then(|| modules.identity());
        let edges = vec![None; python.len()];
        ImportGraph { python, rereads, identity, modules, edges }
    }

    /// The files that `names` (dotted module names, as an import of file
    /// `i` would give them) may be.
    pub(crate) fn resolve_from(&self, i: usize, names: &[String]) -> Vec<usize> {
        self.modules.resolve(i, names)
    }

    /// The last part of file `i`'s module path (`pkg/mod.py`: `mod`,
    /// `pkg/__init__.py`: `pkg`): what a dotted name that may be it ends with
    /// (see [`ImportGraph::modules_named`]).
    pub(crate) fn module_last_part(&self, i: usize) -> Option<String> {
        self.modules.module(i).0.pop()
    }

    /// The modules (files) that the dotted name `name`, as file `i` imports
    /// it, may be: without the packages an import runs on the way. A module
    /// found is the name's own path, from some directory: its last part is
    /// the name's last part, unless the name is only dots (the package).
    pub(crate) fn modules_named(&self, i: usize, name: &str) -> Vec<usize> {
        let (own, package) = self.modules.importer(i);
        self.modules.resolve_one(&own, &package, name)
    }

    /// The files of package `package` (dotted), wherever a directory of the
    /// graph's files has that path: what a name computed inside it may load.
    pub(crate) fn package_files(&self, package: &str) -> Vec<usize> {
        let wanted: Vec<&str> = package.split('.').collect();
        let within = |i: &usize| {
            let (parts, init) = self.modules.module(*i);
            let dirs = if init { &parts[..] } else { &parts[..parts.len().saturating_sub(1)] };
            dirs.windows(wanted.len()).any(|w| w.iter().zip(&wanted).all(|(a, b)| a == b))
        };
        (0..self.python.len()).filter(within).collect()
    }

    /// Every file's imports, read in parallel: for each file, the files it imports.
    fn read_all(&self) -> Vec<Vec<usize>> {
        (0..self.python.len()).into_par_iter().map(|i| self.imports_of(i)).collect()
    }

    /// The files that file `i` imports.
    fn imports_of(&self, i: usize) -> Vec<usize> {
        let resolve = || self.modules.resolve(i, &self.rereads.imported_names(self.python[i]));
        match self.identity {
            Some(graph) => self.rereads.resolved_imports(graph, self.python[i], resolve).to_vec(),
            None => resolve(),
        }
    }

    /// Visits the files `roots`, then the files they import, directly or
    /// through each other, breadth first, until `visit` returns true.
    pub(crate) fn search(&mut self, roots: &[usize], mut visit: impl FnMut(usize) -> bool) {
        let mut seen = vec![false; self.python.len()];
        let mut queue = std::collections::VecDeque::new();
        for &root in roots {
            if !std::mem::replace(&mut seen[root], true) {
                queue.push_back(root);
            }
        }
        while let Some(i) = queue.pop_front() {
            if visit(i) {
                return;
            }
            if self.edges[i].is_none() {
                self.edges[i] = Some(self.imports_of(i));
            }
            for &j in self.edges[i].iter().flatten() {
                if !std::mem::replace(&mut seen[j], true) {
                    queue.push_back(j);
                }
            }
        }
    }
}

/// The project's Python files by dotted module path (`pkg/mod.py` is
/// `pkg.mod`, `pkg/__init__.py` is `pkg`), relative to the project directory.
/// It keeps hashes of the paths, not the paths: a project of 40,000 files
/// costs about 1 MB, and a file's path is worked out again when it is asked.
struct ModuleIndex<'f> {
    files: Vec<&'f ScanFile>,
    /// By project index, its directory as displayed, with a trailing `/` (empty for `.`).
    prefixes: HashMap<usize, String>,
    /// (hash of the full module path, file), sorted.
    by_path: Vec<(u64, u32)>,
    /// (hash of the last part of the module path, file), sorted.
    by_last: Vec<(u64, u32)>,
}

/// A hash of a module path or path part, for the index's lookups.
fn key(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl<'f> ModuleIndex<'f> {
    fn new<'d>(files: &[&'f ScanFile], dir_of: &dyn Fn(usize) -> &'d str) -> Self {
        let prefix = |dir: &str| if dir == "." { String::new() } else { format!("{dir}/") };
        let prefixes = files.iter().map(|f| (f.project, prefix(dir_of(f.project)))).collect();
        let mut index = ModuleIndex { files: files.to_vec(), prefixes, by_path: Vec::new(), by_last: Vec::new() };
        for i in 0..files.len() {
            let (parts, _) = index.module(i);
            index.by_path.push((key(&parts.join(".")), i as u32));
            if let Some(last) = parts.last() {
                index.by_last.push((key(last), i as u32));
            }
        }
        index.by_path.sort_unstable();
        index.by_last.sort_unstable();
        index
    }

    /// A hash of its files' display paths and their projects' directories,
    /// in order: equal for two indexes of the same files, which resolve
    /// every import to the same file numbers.
    fn identity(&self) -> u64 {
        let prefix = |f: &ScanFile| self.prefixes.get(&f.project).map_or("", String::as_str);
        self.files.iter().fold(crate::hash::fnv1a(b"import graph"), |h, f| {
            [f.display().as_bytes(), b"\0", prefix(f).as_bytes(), b"\0"]
                .iter()
                .fold(h, |h, part| crate::hash::fnv1a_extend(h, part))
        })
    }

    /// File `i`'s module path, split at the dots, and whether it is a package's `__init__`.
    fn module(&self, i: usize) -> (Vec<String>, bool) {
        let shown = self.files[i].display();
        let prefix = self.prefixes.get(&self.files[i].project).map_or("", String::as_str);
        let relative = shown.strip_prefix(prefix).unwrap_or(&shown);
        let stem = relative.trim_end_matches(".pyi").trim_end_matches(".py");
        let mut parts: Vec<String> =
            stem.split('/').filter(|p| !p.is_empty() && *p != ".").map(str::to_string).collect();
        let init = parts.last().is_some_and(|p| p == "__init__");
        if init {
            parts.pop();
        }
        (parts, init)
    }

    /// The files whose entry in `table` has the hash of `text`, and whose
    /// module path passes `check` (hashes can collide).
    fn lookup(&self, table: &[(u64, u32)], text: &str, check: impl Fn(&[String]) -> bool) -> Vec<usize> {
        let k = key(text);
        let from = table.partition_point(|(h, _)| *h < k);
        let hits = table[from..].iter().take_while(|(h, _)| *h == k).map(|(_, i)| *i as usize);
        hits.filter(|&i| check(&self.module(i).0)).collect()
    }

    /// The files that `names`, imported by file `i`, may be: sorted, without
    /// repeats and without `i` itself. File `i`'s own path is worked out once.
    fn resolve(&self, i: usize, names: &[String]) -> Vec<usize> {
        let (own, package) = self.importer(i);
        let mut to: Vec<usize> = names
            .iter()
            .flat_map(|n| {
                let found = self.resolve_one(&own, &package, n);
                // Importing `a.b.c` runs `a/__init__.py` and `a/b/__init__.py` first.
                let depth = n.trim_start_matches('.').split('.').count();
                let packages: Vec<usize> = found.iter().flat_map(|&j| self.packages_of(j, depth)).collect();
                found.into_iter().chain(packages)
            })
            .filter(|&j| j != i)
            .collect();
        to.sort_unstable();
        to.dedup();
        to
    }

    /// File `i`'s module path and the package its relative imports start from.
    fn importer(&self, i: usize) -> (Vec<String>, Vec<String>) {
        let (own, init) = self.module(i);
        let package = if init { own.clone() } else { own[..own.len().saturating_sub(1)].to_vec() };
        (own, package)
    }

    /// The `__init__.py` files of the packages that an import of file `j` by
    /// a dotted name of `depth` parts runs on the way (`a.b.c`: `a`, `a.b`).
    fn packages_of(&self, j: usize, depth: usize) -> Vec<usize> {
        let (parts, _) = self.module(j);
        let outer = parts.len().saturating_sub(depth);
        (outer + 1..parts.len())
            .flat_map(|k| {
                let package = parts[..k].join(".");
                let is_init = |i: &usize| self.module(*i).1;
                let found = self.lookup(&self.by_path, &package, |found| found.join(".") == package);
                found.into_iter().filter(is_init).collect::<Vec<usize>>()
            })
            .collect()
    }

    /// The files that `name` may be, for an importer whose module path is
    /// `own` in package `package`.
    fn resolve_one(&self, own: &[String], package: &[String], name: &str) -> Vec<usize> {
        let exact = |parts: &[String], rest: &str| -> Vec<usize> {
            let full = match (parts.is_empty(), rest.is_empty()) {
                (true, _) => rest.to_string(),
                (false, true) => parts.join("."),
                (false, false) => format!("{}.{rest}", parts.join(".")),
            };
            self.lookup(&self.by_path, &full, |found| found.join(".") == full)
        };
        let rest = name.trim_start_matches('.');
        let dots = name.len() - rest.len();
        if dots > 0 {
            let up = package.len().saturating_sub(dots - 1);
            return exact(&package[..up], rest);
        }
        let beside = exact(package, rest);
        if !beside.is_empty() {
            return beside;
        }
        let from_root = exact(&[], rest);
        if !from_root.is_empty() {
            return from_root;
        }
        // Some other directory on the path: the nearest file whose module path ends with the name.
        let last = rest.rsplit('.').next().unwrap_or(rest);
        let wanted: Vec<&str> = rest.split('.').collect();
        let ends_with_name = |path: &[String]| {
            path.len() >= wanted.len() && path[path.len() - wanted.len()..].iter().zip(&wanted).all(|(a, b)| a == b)
        };
        let shared = |j: usize| own.iter().zip(&self.module(j).0).take_while(|(a, b)| a == b).count();
        let candidates: Vec<(usize, usize)> =
            self.lookup(&self.by_last, last, ends_with_name).into_iter().map(|j| (j, shared(j))).collect();
        let nearest = candidates.iter().map(|&(_, n)| n).max().unwrap_or(0);
        candidates.into_iter().filter(|&(_, n)| n == nearest).map(|(j, _)| j).collect()
    }
}

/// Which files of `graph` the files `roots` reach, themselves included;
/// only the files reached are read.
pub(crate) fn reachable_in(graph: &mut ImportGraph, roots: &[usize]) -> Vec<bool> {
    let mut seen = vec![false; graph.python.len()];
    graph.search(roots, |j| {
        seen[j] = true;
        false
    });
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn index(paths: &[&str], dir: &str) -> ModuleIndex<'static> {
        // Leaked: the index borrows the files, and a test's few bytes may outlive it.
        let files: &'static [ScanFile] = Vec::leak(
            paths.iter().map(|p| ScanFile::new(PathBuf::from(p), p.to_string(), FileKind::Python, 0)).collect(),
        );
        let refs: Vec<&ScanFile> = files.iter().collect();
        ModuleIndex::new(&refs, &|_| dir)
    }

    #[test]
    fn imports_resolve_beside_the_importer_then_from_the_root_then_to_the_nearest_file() {
        let paths = [
            "p/train.py",
            "p/utils.py",
            "p/pkg/__init__.py",
            "p/pkg/model.py",
            "p/pkg/utils.py",
            "p/pkg/sub/deep.py",
            "p/tools/utils.py",
            "p/vendor/lib/layers.py",
        ];
        let index = index(&paths, "p");
        let at = |name: &str| paths.iter().position(|p| *p == name).unwrap();
        let names = |found: Vec<usize>| found.into_iter().map(|i| paths[i]).collect::<Vec<_>>();
        let resolve = |i: usize, name: &str| index.resolve(i, &[name.to_string()]);
        // A module beside the importer wins over one at the root.
        assert_eq!(names(resolve(at("p/pkg/model.py"), "utils")), ["p/pkg/utils.py"]);
        assert_eq!(names(resolve(at("p/train.py"), "utils")), ["p/utils.py"]);
        // Importing a module of a package runs the package's `__init__.py` too.
        assert_eq!(names(resolve(at("p/train.py"), "pkg.model")), ["p/pkg/__init__.py", "p/pkg/model.py"]);
        assert_eq!(names(resolve(at("p/train.py"), "pkg")), ["p/pkg/__init__.py"]);
        // Relative imports count their dots from the importer's package.
        assert_eq!(names(resolve(at("p/pkg/sub/deep.py"), "..model")), ["p/pkg/model.py"]);
        assert_eq!(names(resolve(at("p/pkg/__init__.py"), ".model")), ["p/pkg/model.py"]);
        assert_eq!(names(resolve(at("p/pkg/model.py"), ".sub.deep")), ["p/pkg/sub/deep.py"]);
        // Another directory on the path: the file whose module path ends with the name.
        assert_eq!(names(resolve(at("p/train.py"), "lib.layers")), ["p/vendor/lib/layers.py"]);
        assert_eq!(names(resolve(at("p/train.py"), "pkg.sub.deep")), ["p/pkg/__init__.py", "p/pkg/sub/deep.py"]);
        // Not the project's: a library.
        assert!(resolve(at("p/train.py"), "torch.nn").is_empty());
    }

    #[test]
    fn the_scan_root_project_has_no_prefix_to_strip() {
        let index = index(&["train.py", "pkg/model.py"], ".");
        assert_eq!(index.resolve(0, &["pkg.model".to_string()]), [1]);
    }
}
