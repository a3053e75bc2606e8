//! Which files a project names: the names its files spell out (see
//! [`crate::semantic::named_files`]), compiled for lookups. A CUDA source that
//! no build script, `load(sources=...)` or `nvcc` line of its project names is
//! not compiled (ported projects keep the kernels of the original and comment
//! out their build), so a rule can ask for it (`named_in_project`).

use crate::semantic::named_files::Names;

/// The file names one project spells out, compiled for lookups.
#[derive(Debug, Clone, Default)]
pub struct NamedFiles {
    /// Every name.
    all: NameIndex,
    /// The names that some file spells out other than a build that compiles
    /// CUDA code only when it finds CUDA.
    unconditional: NameIndex,
}

impl NamedFiles {
    /// Compiles the names collected from a project's files.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a Names>) -> Self {
        let names: Vec<&Names> = names.into_iter().collect();
        let all = NameIndex::new(names.iter().flat_map(|n| &n.files));
        let unconditional = NameIndex::new(names.iter().filter(|n| !n.only_with_cuda).flat_map(|n| &n.files));
        NamedFiles { all, unconditional }
    }

    /// Whether the file at `path` (its last component) is named.
    pub fn names(&self, path: &str) -> bool {
        self.all.names(path)
    }

    /// Whether a file names the file at `path` other than a build that
    /// compiles CUDA code only when it finds CUDA.
    pub fn names_unconditionally(&self, path: &str) -> bool {
        self.unconditional.names(path)
    }
}

/// A set of names and patterns.
#[derive(Debug, Clone, Default)]
struct NameIndex {
    exact: std::collections::HashSet<String>,
    patterns: Option<globset::GlobSet>,
}

impl NameIndex {
    fn new<'a>(names: impl IntoIterator<Item = &'a String>) -> Self {
        let mut exact = std::collections::HashSet::new();
        let mut patterns = globset::GlobSetBuilder::new();
        let mut any_pattern = false;
        for name in names {
            match as_pattern(name) {
                None => {
                    exact.insert(name.clone());
                }
                // Made of name characters and `*` only, so it always compiles.
                Some(p) => match globset::Glob::new(&p) {
                    Ok(glob) => {
                        patterns.add(glob);
                        any_pattern = true;
                    }
                    Err(_) => continue,
                },
            }
        }
        let patterns = any_pattern.then(|| patterns.build().ok()).flatten();
        NameIndex { exact, patterns }
    }

    fn names(&self, path: &str) -> bool {
        let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
        self.exact.contains(file) || self.patterns.as_ref().is_some_and(|p| p.is_match(file))
    }
}

/// A name that stands for several files, as a glob: `*` and the placeholders
/// `{...}` and `%s` stand for anything, and a name that starts with neither a
/// letter nor a digit (`_kernel.cu`, the tail of a concatenation) may have
/// anything before it. `None` for a plain file name.
fn as_pattern(name: &str) -> Option<String> {
    let mut glob = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' => {
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                glob.push('*');
            }
            '%' => {
                chars.next();
                glob.push('*');
            }
            '}' => {}
            c => glob.push(c),
        }
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '*' || c == '{' || c == '%') {
        glob.insert(0, '*');
    }
    glob.contains('*').then_some(glob)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_of(files: &[&str]) -> Names {
        Names { files: files.iter().map(|s| s.to_string()).collect(), only_with_cuda: false }
    }

    #[test]
    fn patterns_match_what_they_stand_for() {
        let named = NamedFiles::new([&names_of(&["nms_kernel.cu", "_pool.cu", "{op}_cuda.cu", "%s_ext.cu"])]);
        assert!(named.names("mmdet/ops/nms/src/nms_kernel.cu"));
        assert!(!named.names("mmdet/ops/nms/src/nms_cpu_kernel.cu"));
        assert!(named.names("ops/roi_pool.cu"));
        assert!(named.names("ops/deform_cuda.cu"));
        assert!(named.names("ops/sigmoid_ext.cu"));
        assert!(!named.names("ops/roi_align_kernel.cu"));
        let globbed = NamedFiles::new([&names_of(&["*.cu"])]);
        assert!(globbed.names("any/thing.cu"));
        assert!(!NamedFiles::new([]).names("a.cu"));
    }

    #[test]
    fn names_only_a_build_that_tests_for_cuda_spells_out_are_told_apart() {
        let cuda_only = Names { only_with_cuda: true, ..names_of(&["*.cu"]) };
        let both = NamedFiles::new([&cuda_only, &names_of(&["nms_kernel.cu"])]);
        assert!(both.names("a/roi_kernel.cu") && !both.names_unconditionally("a/roi_kernel.cu"));
        assert!(both.names_unconditionally("b/nms_kernel.cu"));
    }
}
