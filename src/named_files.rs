//! Which files a project names: the file names with chosen extensions (`.cu`)
//! that its Python strings and shell scripts spell out, outside comments.
//! A CUDA source that no build script, `load(sources=...)` or `nvcc` line of
//! its project names is not compiled (ported projects keep the kernels of
//! the original and comment out their build), so a rule can ask for it
//! (`named_in_project`).
//!
//! A name may be a pattern: `*.cu` (a glob) names every such file, `"_kernel.cu"`
//! (the tail of a concatenation) every file ending so, and `f"{op}_cuda.cu"`
//! or `"%s_cuda.cu"` every file that fits with anything in the placeholder.

use crate::parse::KindOf;
use tree_sitter::Node;

/// The names with an extension in `extensions` (without the dot) that the
/// string literals of a parsed Python file spell out; comments do not count.
pub fn in_python(root: Node, text: &str, extensions: &[String]) -> Vec<String> {
    // The smallest node around the dot: inside a literal that is the string's
    // content. No walk up the tree: in tree-sitter a parent costs a descent
    // from the root, which on deeply nested code made this quadratic.
    names_in(text, extensions, |at| {
        let node = root.descendant_for_byte_range(at, at + 1);
        node.is_some_and(|n| matches!(n.kind_name(), "string_content" | "string"))
    })
}

/// The same for a shell script: every mention outside a `#` comment.
pub fn in_shell(text: &str, extensions: &[String]) -> Vec<String> {
    names_in(text, extensions, |at| {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        !shell_comment_before(&text[line_start..at])
    })
}

/// Whether a `#` that starts a comment (at the start of a word) comes before
/// the end of `line`; `$#` and `${#x}` do not start one.
fn shell_comment_before(line: &str) -> bool {
    let b = line.as_bytes();
    (0..b.len()).any(|i| b[i] == b'#' && (i == 0 || b[i - 1] == b' ' || b[i - 1] == b'\t' || b[i - 1] == b';'))
}

/// The characters a named file (or its pattern) is made of.
fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'*' | b'{' | b'}' | b'%')
}

/// Every `NAME.EXT` in `text` where `keep(byte offset)` holds, as written
/// after its last `/` (a path's directories do not matter).
fn names_in(text: &str, extensions: &[String], keep: impl Fn(usize) -> bool) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for ext in extensions {
        let dotted = format!(".{ext}");
        for (at, _) in text.match_indices(&dotted) {
            let end = at + dotted.len();
            // `.cu` in `.cuh` or `.cuda` is another word.
            if b.get(end).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_') {
                continue;
            }
            let start = (0..at).rev().take_while(|&i| is_name_char(b[i])).last().unwrap_or(at);
            if keep(at) {
                out.push(text[start..end].to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The file names one project spells out, compiled for lookups.
#[derive(Debug, Clone, Default)]
pub struct NamedFiles {
    exact: std::collections::HashSet<String>,
    patterns: Option<globset::GlobSet>,
}

impl NamedFiles {
    /// Compiles the names collected from a project's files.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a String>) -> Self {
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
        NamedFiles { exact, patterns }
    }

    /// Whether the file at `path` (its last component) is named.
    pub fn names(&self, path: &str) -> bool {
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

    fn exts() -> Vec<String> {
        vec!["cu".to_string()]
    }

    fn python_names(src: &str) -> Vec<String> {
        let tree = crate::parse::parse_python(src).unwrap();
        in_python(tree.root_node(), src, &exts())
    }

    #[test]
    fn python_strings_name_files_and_comments_do_not() {
        let src = "import glob\n\
                   # sources=['src/dead_kernel.cu']\n\
                   srcs = ['src/nms.cpp', 'src/nms_kernel.cu']\n\
                   more = glob.glob('csrc/*.cu')\n\
                   tail = name + '_kernel.cu'\n\
                   f = f'csrc/{op}_cuda.cu'\n\
                   h = 'x.cuh'\n";
        assert_eq!(python_names(src), ["*.cu", "_kernel.cu", "nms_kernel.cu", "{op}_cuda.cu"]);
    }

    #[test]
    fn shell_lines_name_files_outside_comments() {
        let src = "nvcc -c roi_kernel.cu -o roi.o\n# nvcc old_kernel.cu\necho $# a.cu # b.cu\n";
        assert_eq!(in_shell(src, &exts()), ["a.cu", "roi_kernel.cu"]);
    }

    #[test]
    fn patterns_match_what_they_stand_for() {
        let names: Vec<String> =
            ["nms_kernel.cu", "_pool.cu", "{op}_cuda.cu", "%s_ext.cu"].iter().map(|s| s.to_string()).collect();
        let named = NamedFiles::new(&names);
        assert!(named.names("mmdet/ops/nms/src/nms_kernel.cu"));
        assert!(!named.names("mmdet/ops/nms/src/nms_cpu_kernel.cu"));
        assert!(named.names("ops/roi_pool.cu"));
        assert!(named.names("ops/deform_cuda.cu"));
        assert!(named.names("ops/sigmoid_ext.cu"));
        assert!(!named.names("ops/roi_align_kernel.cu"));
        let globbed = NamedFiles::new(&["*.cu".to_string()]);
        assert!(globbed.names("any/thing.cu"));
        assert!(!NamedFiles::new(&[]).names("a.cu"));
    }
}
