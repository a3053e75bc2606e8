//! Per-backend files: a project that serves several accelerators often keeps
//! one module per backend and picks one by name at run time. DeepSpeed has
//! `accelerator/cuda_accelerator.py` beside `npu_accelerator.py`, and
//! `real_accelerator.py` builds the NPU's class on an Ascend host. The CUDA
//! module is then one arm of a dispatch written as files: its findings are
//! advice, as a CUDA arm of an `if` chain beside an NPU arm is.

use crate::source::read_file;
use crate::walk::{FileKind, WalkResult};
use std::collections::{HashMap, HashSet};

/// The display paths of the Python files whose path names CUDA as a word
/// (a directory `cuda/`, or a file name part split at `_`, `-` and `.`, as in
/// `cuda_accelerator.py`) and that have an NPU twin in the same project: the
/// same path with that word as `npu`. A twin whose text names the CUDA
/// module (`cuda_accelerator`) may import it, so then the CUDA file may run
/// on the NPU as well, and it is left out.
pub(super) fn cuda_files_with_npu_twin(walked: &WalkResult) -> HashSet<String> {
    let python = walked.files.iter().enumerate().filter(|(_, f)| f.kind == FileKind::Python);
    let by_path: HashMap<String, usize> = python.map(|(i, f)| (f.display().into_owned(), i)).collect();
    let mut found = HashSet::new();
    for (path, &i) in by_path.iter().filter(|(p, _)| names_cuda(p)) {
        let project = walked.files[i].project;
        let same_project = |t: &&usize| walked.files[**t].project == project;
        let Some(&twin) = npu_twins(path).iter().find_map(|t| by_path.get(t).filter(same_project)) else { continue };
        let stem = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".py");
        // Unreadable counts as naming it: the findings then stay.
        let twin_stands_alone = read_file(&walked.files[twin]).is_ok_and(|t| !t.text.contains(stem));
        if twin_stands_alone {
            found.insert(path.clone());
        }
    }
    found
}

/// Whether some word of `path` is `cuda`, in any case.
fn names_cuda(path: &str) -> bool {
    words(path).any(|w| w.eq_ignore_ascii_case("cuda"))
}

/// `path` with one of its `cuda` words as `npu` (in the same case), for each
/// such word: `accelerator/cuda_accelerator.py` gives
/// `accelerator/npu_accelerator.py`.
fn npu_twins(path: &str) -> Vec<String> {
    let mut twins = Vec::new();
    for word in words(path) {
        // `word` is a slice of `path`: its offset is where it starts.
        let at = word.as_ptr() as usize - path.as_ptr() as usize;
        if word.eq_ignore_ascii_case("cuda") {
            let npu = match word {
                "CUDA" => "NPU",
                "Cuda" => "Npu",
                _ => "npu",
            };
            twins.push(format!("{}{}{}", &path[..at], npu, &path[at + word.len()..]));
        }
    }
    twins
}

/// The words of a path: its directories and the parts of its file name.
fn words(path: &str) -> impl Iterator<Item = &str> {
    path.split(['/', '_', '-', '.']).filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::{names_cuda, npu_twins};

    #[test]
    fn twins_replace_one_cuda_word_at_a_time() {
        assert_eq!(npu_twins("accelerator/cuda_accelerator.py"), ["accelerator/npu_accelerator.py"]);
        assert_eq!(npu_twins("ops/cuda/fused.py"), ["ops/npu/fused.py"]);
        assert_eq!(npu_twins("CUDA_backend.py"), ["NPU_backend.py"]);
        assert_eq!(npu_twins("cuda/cuda_ops.py"), ["npu/cuda_ops.py", "cuda/npu_ops.py"]);
        // `cuda` inside a longer word is no backend name.
        assert!(!names_cuda("utils/cudagraph.py"));
        assert!(!names_cuda("nocuda_utils.py"));
        assert!(names_cuda("kernels/cuda.py"));
    }
}
