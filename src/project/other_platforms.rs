//! Directories that hold another platform's code. Projects keep deployment
//! trees for other hardware beside their training code: WeNet's
//! `runtime/gpu/` (Triton server models and their start scripts) and
//! `runtime/horizonbpu/`, Tacotron 2's `tensorrt/`, mmcv's `tensorrt/`
//! wrappers, NVIDIA's `triton/` clients. No NPU run starts them, and their
//! READMEs' commands are that platform's steps. In a project whose launch
//! scripts start some entry scripts ([`crate::project::launches`]), such a
//! directory's documents, shell scripts and Python files start nothing, and
//! its files that no started run imports are advice. Code there that an NPU
//! run does import (mmcv's `device/mlu/` through `mmcv.device`) keeps its
//! findings, and so does everything when the user names the runs (`--entry`).
//! A project nested in such a directory (with a marker of its own) is that
//! platform's deployment as a whole.

use crate::project::vendored::{enclosing_projects, inside};
use crate::walk::WalkResult;

/// Directory names (compared without case) that name another accelerator,
/// or a runtime or inference server built for one. `cuda` is left out: a
/// `cuda/` directory holds a project's own kernels, which a port must
/// replace (TX024, TX026).
const OTHER_PLATFORMS: &[&str] = &[
    "gpu",
    "tensorrt",
    "trt",
    "triton",
    "onnxruntime",
    "openvino",
    "horizonbpu",
    "bpu",
    "kunlun",
    "mlu",
    "xpu",
    "ipu",
    "hpu",
    "mps",
    "rocm",
    "tpu",
];

/// Whether the file at `path` (a display path) lies in a directory of
/// project `dir` (as displayed) that is named for another platform. Only
/// the directories below the project count: a project that itself sits in
/// a `gpu/` directory is not one.
pub(crate) fn holds(path: &str, dir: &str) -> bool {
    let parent = inside(dir, path).and_then(|r| r.rsplit_once('/')).map_or("", |(d, _)| d);
    names_another(parent)
}

/// For each project of `walked`, whether it is nested in a directory for
/// another platform of a project around it (WeNet's `runtime/gpu/tensorrt`,
/// a project of its own) whose launch scripts start some entry script
/// (`launching`, by project): its code is then that platform's deployment,
/// which none of those runs starts. Only a project with a marker of its own
/// counts as around another (a scan root of unrelated ports does not).
pub(crate) fn nested(walked: &WalkResult, launching: &[bool]) -> Vec<bool> {
    let enclosing = enclosing_projects(walked);
    let dirs: Vec<&str> = walked.projects.iter().map(|p| p.display.as_str()).collect();
    let marked = |q: usize| walked.projects[q].marker.is_some();
    (0..dirs.len())
        .map(|p| {
            let mut around = std::iter::successors(enclosing[p], |&q| enclosing[q]);
            around.any(|q| {
                marked(q) && launching.get(q) == Some(&true) && inside(dirs[q], dirs[p]).is_some_and(names_another)
            })
        })
        .collect()
}

/// Whether one of the `/`-separated directory names `dirs` names another platform.
fn names_another(dirs: &str) -> bool {
    dirs.split('/').any(|d| OTHER_PLATFORMS.iter().any(|p| d.eq_ignore_ascii_case(p)))
}

#[cfg(test)]
mod tests {
    use super::holds;

    #[test]
    fn only_directories_below_the_project_count() {
        assert!(holds("runtime/gpu/client/client.py", "."));
        assert!(holds("port/tensorrt/convert.py", "port"));
        assert!(holds("port/deploy/TensorRT/README.md", "port"));
        assert!(!holds("port/gpu.py", "port"), "a file's own name is no directory");
        assert!(!holds("gpu/port/train.py", "gpu/port"), "the project's own place does not count");
        assert!(!holds("port/csrc/cuda/kernel.cu", "port"), "a project's own kernels");
        assert!(!holds("port/gpu_utils/memory.py", "port"), "whole names only");
        assert!(!holds("other/triton/x.py", "port"), "outside the project");
    }
}
