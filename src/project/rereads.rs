//! What the project layer reads again from files' texts once every file is
//! analysed: the modules a file imports ([`crate::semantic::import_lines`]),
//! the options it defines ([`crate::semantic::option_defs`]) and the options
//! it accepts ([`crate::semantic::option_table`]), and the files its imports
//! resolve to in an import graph. `scan` decides the project facts once and
//! keeps nothing; the language server decides them again after every edit,
//! where only the edited buffer changed, so it remembers what each file
//! gave, with the text it came from.

use crate::semantic::option_defs::{self, Definitions};
use crate::semantic::option_table::{self, OptionTable};
use crate::source::read_file;
use crate::walk::ScanFile;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What was read again from each file, when remembering; see the module
/// doc. `Rereads::default()` remembers nothing, as `scan` wants.
#[derive(Default)]
pub struct Rereads {
    remembered: Option<Remembered>,
}

/// A memo per kind of reading.
#[derive(Default)]
struct Remembered {
    imports: Memo<Vec<String>>,
    unguarded: Memo<Vec<String>>,
    options: Memo<Option<Definitions>>,
    tables: Memo<Option<OptionTable>>,
    resolved: Memo<Vec<usize>>,
}

impl Rereads {
    /// Rereads that remember, for projects decided again and again over the
    /// same files (each file's content as of the walk, or its buffer).
    pub fn remembering() -> Rereads {
        Rereads { remembered: Some(Remembered::default()) }
    }

    /// Every qualified name `file` loads (relative ones start with dots): its
    /// import statements, and `importlib.import_module` with a literal name;
    /// none for a file that cannot be read.
    pub(crate) fn imported_names(&self, file: &ScanFile) -> Arc<Vec<String>> {
        self.read(file, |r| &r.imports, crate::semantic::import_lines::loaded_names)
    }

    /// What `file`'s import statements import outside a `try` that catches
    /// `ImportError` (sorted, each once); none for a file that cannot be read.
    pub(crate) fn unguarded_names(&self, file: &ScanFile) -> Arc<Vec<String>> {
        self.read(file, |r| &r.unguarded, crate::semantic::import_lines::unguarded_names)
    }

    /// What `file` says about options; `None` when it cannot be read.
    pub(crate) fn option_definitions(&self, file: &ScanFile) -> Arc<Option<Definitions>> {
        self.read(file, |r| &r.options, |source| Some(option_defs::in_file(source)))
    }

    /// The options the Python script `file` accepts, if its text settles them.
    pub(crate) fn option_table(&self, file: &ScanFile) -> Arc<Option<OptionTable>> {
        self.read(file, |r| &r.tables, option_table::of_script)
    }

    /// Whether it remembers: what a caller that must work out a key (an
    /// import graph's identity) asks first.
    pub(crate) fn remembers(&self) -> bool {
        self.remembered.is_some()
    }

    /// The nodes that `file`'s imports resolve to in the import graph whose
    /// identity is `graph` (its files and their project directories: the
    /// node numbers hold in that graph only), as `resolve` finds them.
    pub(crate) fn resolved_imports(
        &self,
        graph: u64,
        file: &ScanFile,
        resolve: impl FnOnce() -> Vec<usize>,
    ) -> Arc<Vec<usize>> {
        match &self.remembered {
            Some(r) => r.resolved.get_or(graph, file, resolve),
            None => Arc::new(resolve()),
        }
    }

    /// What `read` makes of `file`'s text (the default value when it cannot
    /// be read), remembered in `memo` when remembering.
    fn read<T: Default>(
        &self,
        file: &ScanFile,
        memo: impl Fn(&Remembered) -> &Memo<T>,
        read: impl Fn(&str) -> T,
    ) -> Arc<T> {
        let read = || read_file(file).map(|source| read(&source.text)).unwrap_or_default();
        match &self.remembered {
            Some(r) => memo(r).get_or(0, file, read),
            None => Arc::new(read()),
        }
    }
}

/// One value per file (by a scope, such as an import graph, and the file's
/// display path), with the buffer it was read from (`None`: the file on
/// disk). A value read from another buffer is read again and replaces it,
/// so a file holds one entry per scope however often it is edited.
struct Memo<T>(Mutex<HashMap<Key, Entry<T>>>);

/// A scope (0 for a file's own readings) and a display path.
type Key = (u64, Box<str>);

/// A remembered value and the buffer it was read from.
type Entry<T> = (Option<Arc<str>>, Arc<T>);

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo(Mutex::new(HashMap::new()))
    }
}

impl<T> Memo<T> {
    /// The value for `file`'s current content in `scope`, made by `make` unless remembered.
    fn get_or(&self, scope: u64, file: &ScanFile, make: impl FnOnce() -> T) -> Arc<T> {
        let key: Key = (scope, file.display().into());
        let same = |kept: &Option<Arc<str>>| match (kept, file.text()) {
            (Some(kept), Some(now)) => Arc::ptr_eq(kept, now) || kept == now,
            (None, None) => true,
            _ => false,
        };
        // A poisoned lock (a panic elsewhere) only costs reading again.
        if let Ok(entries) = self.0.lock() {
            if let Some((_, value)) = entries.get(&key).filter(|(kept, _)| same(kept)) {
                return value.clone();
            }
        }
        // Made outside the lock: files are read in parallel.
        let value = Arc::new(make());
        if let Ok(mut entries) = self.0.lock() {
            entries.insert(key, (file.text().cloned(), value.clone()));
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::FileKind;
    use std::path::PathBuf;

    fn buffer(text: &str) -> ScanFile {
        let file = ScanFile::new(PathBuf::from("/nowhere/train.py"), "train.py".into(), FileKind::Python, 0);
        file.with_text(Arc::from(text))
    }

    #[test]
    fn a_remembered_value_is_read_again_when_the_buffer_changes() {
        let rereads = Rereads::remembering();
        let first = rereads.imported_names(&buffer("import model\n"));
        assert_eq!(*first, ["model"]);
        // The same content in a new buffer: the value is re-used, not read again.
        assert!(Arc::ptr_eq(&first, &rereads.imported_names(&buffer("import model\n"))));
        assert_eq!(*rereads.imported_names(&buffer("import data\n")), ["data"]);
        let options = rereads.option_definitions(&buffer("p.add_argument('--amp', action='store_true')\n"));
        let defined = options.as_ref().as_ref().map(|d| d.defined.len());
        assert_eq!(defined, Some(1));
        assert_eq!(rereads.option_definitions(&buffer("x = 1\n")).as_ref().as_ref().map(|d| d.is_empty()), Some(true));
    }

    #[test]
    fn resolved_imports_are_kept_per_graph_and_text() {
        let rereads = Rereads::remembering();
        let file = buffer("import model\n");
        assert_eq!(*rereads.resolved_imports(1, &file, || vec![3]), [3]);
        // Another graph numbers its files otherwise: a value of its own.
        assert_eq!(*rereads.resolved_imports(2, &file, || vec![7]), [7]);
        // The same graph and text: remembered.
        assert_eq!(*rereads.resolved_imports(1, &buffer("import model\n"), Vec::new), [3]);
        // Another text: resolved again.
        assert_eq!(*rereads.resolved_imports(1, &buffer("import data\n"), || vec![4]), [4]);
    }

    #[test]
    fn without_remembering_every_read_is_new() {
        let rereads = Rereads::default();
        let file = buffer("import model\n");
        assert!(!Arc::ptr_eq(&rereads.imported_names(&file), &rereads.imported_names(&file)));
    }
}
