//! The file names one file spells out: the names with chosen extensions
//! (`.cu`) in a Python file's string literals or a shell script's words,
//! outside comments; the project layer ([`crate::project::named_files`])
//! puts a project's together, for `named_in_project`.
//!
//! A name may be a pattern: `*.cu` (a glob) names every such file, `"_kernel.cu"`
//! (the tail of a concatenation) every file ending so, and `f"{op}_cuda.cu"`
//! or `"%s_cuda.cu"` every file that fits with anything in the placeholder.
//!
//! A build script that compiles its CUDA sources only when it finds the CUDA
//! toolkit (`if torch.cuda.is_available() or os.getenv("FORCE_CUDA")`, `if
//! CUDA_HOME is not None`, as detectron2, mmcv and maskrcnn-benchmark write
//! it) builds the C++ part alone on an NPU host; its names are marked, so
//! that a rule can tell such a kernel from one every build compiles
//! (`built_only_with_cuda`). The test must name `CUDA_HOME` or `FORCE_CUDA`:
//! `torch.cuda.is_available()` alone is true on an NPU host in a process that
//! imported `transfer_to_npu`.

use crate::parse::{Field, FieldOf, KindOf};
use crate::semantic::traverse::FlatTree;
use regex::Regex;
use std::sync::LazyLock;
use tree_sitter::Node;

/// The file names one file spells out, and whether it builds them only when
/// it finds CUDA.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Names {
    /// The names (or patterns), sorted, without duplicates.
    pub files: Vec<String>,
    /// The file is a Python build that tests for CUDA before it compiles
    /// CUDA sources (see the module docs).
    pub only_with_cuda: bool,
}

impl Names {
    /// Whether the file names nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// The names with an extension in `extensions` (without the dot) that the
/// string literals of a parsed Python file spell out; comments do not count.
pub(crate) fn in_python(root: Node, text: &str, extensions: &[String]) -> Names {
    // The smallest node around the dot: inside a literal that is the string's
    // content. No walk up the tree: in tree-sitter a parent costs a descent
    // from the root, which on deeply nested code made this quadratic.
    let files = names_in(text, extensions, |at| {
        let node = root.descendant_for_byte_range(at, at + 1);
        node.is_some_and(|n| matches!(n.kind_name(), "string_content" | "string"))
    });
    let only_with_cuda = !files.is_empty() && CUDA_TEST.is_match(text) && tests_cuda_to_build(root, text);
    Names { files, only_with_cuda }
}

/// The same for a shell script (whose comments are `comments`): every
/// mention outside a `#` comment.
pub(crate) fn in_shell(text: &str, comments: &crate::parse::shell::Comments, extensions: &[String]) -> Names {
    let files = names_in(text, extensions, |at| !comments.contain(at));
    Names { files, only_with_cuda: false }
}

/// A condition that asks whether the host has the CUDA toolkit.
static CUDA_TEST: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bCUDA_HOME\b|\bFORCE_CUDA\b").expect("valid regex"));

/// What a branch that builds CUDA code says.
static CUDA_BUILD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bCUDAExtension\b|\.cuh?\b|\bsources?\b|\bnvcc\b").expect("valid regex"));

/// A branch that stops the build: then CUDA is required, not optional.
static STOPS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\braise\b|\bexit\(|\bquit\(").expect("valid regex"));

/// Whether the file builds CUDA code only when it finds the CUDA toolkit:
/// some `if` (or `elif`, or conditional expression) tests for it and builds
/// CUDA code in its branches; no such test stops the build when CUDA is
/// missing (`if CUDA_HOME is None: raise ...` makes it required); and no
/// `CUDAExtension(...)` is called outside those tests (a second extension
/// that every build compiles).
/// The nodes are those the analysis reads ([`FlatTree`]: no deeper than
/// `MAX_DEPTH`), so that deeply nested conditions cannot make it quadratic.
fn tests_cuda_to_build(root: Node, text: &str) -> bool {
    let mut guarded: Vec<std::ops::Range<usize>> = Vec::new();
    for node in FlatTree::new(root).nodes() {
        let condition = match node.kind_name() {
            "if_statement" | "elif_clause" => node.field(Field::Condition),
            "conditional_expression" => crate::parse::conditional_test(node),
            _ => None,
        };
        if let Some(condition) = condition.filter(|c| CUDA_TEST.is_match(&text[c.byte_range()])) {
            // A conditional expression has its first branch before the condition.
            let branches =
                [&text[node.start_byte()..condition.start_byte()], &text[condition.end_byte()..node.end_byte()]];
            if branches.iter().any(|b| STOPS.is_match(b)) {
                return false;
            }
            if branches.iter().any(|b| CUDA_BUILD.is_match(b)) {
                guarded.push(node.byte_range());
            }
        }
    }
    let in_code = |at: usize| root.descendant_for_byte_range(at, at + 1).is_some_and(|n| n.kind_name() != "comment");
    let built_anyway = CUDA_EXTENSION_CALL
        .find_iter(text)
        .any(|m| in_code(m.start()) && !guarded.iter().any(|g| g.contains(&m.start())));
    !guarded.is_empty() && !built_anyway
}

/// A call of `CUDAExtension`.
static CUDA_EXTENSION_CALL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bCUDAExtension\s*\(").expect("valid regex"));

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

/// Whether the name found at `at..end` of `text` stands alone, not inside a
/// longer file or module name (`train.py` is not in `pretrain.py`,
/// `my-train.py`, `train.pyc` or `train.py-old`, `tools.train` not in
/// `tools.train_net`). A `.` before the name is allowed, for a module run
/// by a longer dotted path (`-m pkg.tools.train`); a sentence may end
/// after it (`run train.py.`).
pub(crate) fn whole_name(text: &[u8], at: usize, end: usize) -> bool {
    let name_byte = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let before = at.checked_sub(1).map(|i| text[i]);
    let after = text.get(end).copied();
    !before.is_some_and(|c| name_byte(c) || c == b'-')
        && !after.is_some_and(|c| {
            name_byte(c) || c == b'-' || (c == b'.' && text.get(end + 1).is_some_and(|&d| name_byte(d)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exts() -> Vec<String> {
        vec!["cu".to_string()]
    }

    fn python_names(src: &str) -> Names {
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
        let names = python_names(src);
        assert_eq!(names.files, ["*.cu", "_kernel.cu", "nms_kernel.cu", "{op}_cuda.cu"]);
        assert!(!names.only_with_cuda);
    }

    #[test]
    fn shell_lines_name_files_outside_comments() {
        let src = "nvcc -c roi_kernel.cu -o roi.o\n# nvcc old_kernel.cu\necho $# a.cu # b.cu\n";
        let comments = crate::parse::shell::read(src).comments;
        assert_eq!(in_shell(src, &comments, &exts()).files, ["a.cu", "roi_kernel.cu"]);
    }

    #[test]
    fn builds_that_test_for_cuda_first_are_told_apart() {
        let conditional = [
            // detectron2, maskrcnn-benchmark
            "src = glob.glob('csrc/*.cu')\nif torch.cuda.is_available() and CUDA_HOME is not None:\n    ext = CUDAExtension\n    sources += src\n",
            // fairseq
            "if 'CUDA_HOME' in os.environ:\n    exts.append(CppExtension('x', sources=['k.cu']))\n",
            // a conditional expression
            "ext = CUDAExtension('x', ['k.cu']) if os.getenv('FORCE_CUDA') == '1' else CppExtension('x', ['k.cpp'])\n",
        ];
        for src in conditional {
            assert!(python_names(src).only_with_cuda, "{src}");
        }
        let unconditional = [
            "setup(ext_modules=[CUDAExtension('x', ['k.cu'])])\n",
            // CUDA is required: the test stops the build.
            "if CUDA_HOME is None:\n    raise RuntimeError('set CUDA_HOME to build the sources')\nCUDAExtension('x', ['k.cu'])\n",
            // A test that builds nothing.
            "if CUDA_HOME:\n    print('gpu')\nCUDAExtension('x', ['k.cu'])\n",
            // True on an NPU host under transfer_to_npu.
            "if torch.cuda.is_available():\n    ext = CUDAExtension('x', ['k.cu'])\n",
            // One extension is optional, the other is built every time.
            "if os.getenv('FORCE_CUDA'):\n    exts = [CUDAExtension('a', ['a.cu'])]\nexts.append(CUDAExtension('b', ['b.cu']))\n",
            // Another test of the toolkit makes it required.
            "if CUDA_HOME is None:\n    sys.exit('CUDA needed')\nif FORCE_CUDA:\n    sources += ['k.cu']\n",
        ];
        for src in unconditional {
            assert!(!python_names(src).only_with_cuda, "{src}");
        }
    }
}
