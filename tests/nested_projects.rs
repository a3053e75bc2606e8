//! A project nested in another (issue 47, item 8): the outer project's NPU
//! launcher starts an entry script of the nested one by path, and its
//! `nvcc` line compiles a kernel under the nested project's marker. The
//! script counts as started although the nested project's own launch
//! script starts another, and the kernel keeps its TX010.

mod common;

use serde_json::Value;

/// The outer project (`requirements.txt`) launches `nested/tools/train.py`
/// and compiles `nested/ops/nms_kernel.cu` from `test/train_full_8p.sh`;
/// `nested/` (`setup.py`) starts only `tools/test.py` from its own
/// `tools/dist_test.sh`. Both entry scripts move a model to CUDA. In a
/// fresh directory named `name`.
fn tree(name: &str) -> common::TempDir {
    let dir = common::temp_dir(name);
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let entry = "import torch\n\n\ndef main():\n    return torch.nn.Linear(4, 4).cuda()\n\n\n\
                 if __name__ == \"__main__\":\n    main()\n";
    write("requirements.txt", "torch\n");
    write("test/env_npu.sh", "export ASCEND_GLOBAL_LOG_LEVEL=3\n");
    write(
        "test/train_full_8p.sh",
        "source test/env_npu.sh\ncur_path=$(pwd)\nnvcc -c nested/ops/nms_kernel.cu -o nms.o\n\
         python3 ${cur_path}/nested/tools/train.py --epochs 1\n",
    );
    write("nested/setup.py", "from setuptools import setup\n\nsetup(name=\"nested\")\n");
    write("nested/tools/dist_test.sh", "python3 tools/test.py --checkpoint latest.pth\n");
    write("nested/tools/train.py", entry);
    write("nested/tools/test.py", entry);
    write("nested/ops/nms_kernel.cu", "__global__ void nms_kernel(float *boxes) {}\n");
    dir
}

/// `(path, line, code, severity, unlaunched)` of each finding of a JSON scan of `dir`.
fn findings(dir: &std::path::Path) -> Vec<(String, u64, String, String, bool)> {
    let run = common::npu_mem_in(dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let row = |f: &Value| {
        let text = |k: &str| f[k].as_str().unwrap().to_string();
        let line = f["line"].as_u64().unwrap();
        (text("path"), line, text("code"), text("severity"), f["unlaunched"].as_bool().unwrap())
    };
    report["findings"].as_array().unwrap().iter().map(row).collect()
}

#[test]
fn an_outer_launcher_starts_a_nested_script_and_compiles_its_kernel() {
    let dir = tree("nested-compiled");
    let found = findings(&dir);
    let of = |path: &str| found.iter().filter(|f| f.0 == path).collect::<Vec<_>>();
    let train = of("nested/tools/train.py");
    assert!(!train.is_empty(), "{found:?}");
    assert!(train.iter().all(|f| !f.4 && f.3 != "info"), "started by the outer launcher: {train:?}");
    assert!(of("nested/tools/test.py").iter().all(|f| !f.4), "started by the nested launcher: {found:?}");
    let kernel = of("nested/ops/nms_kernel.cu");
    assert!(
        kernel.iter().any(|f| f.1 == 1 && f.2 == "TX010" && f.3 == "error"),
        "compiled by the outer nvcc line: {found:?}"
    );
}

#[test]
fn a_nested_kernel_nothing_compiles_stays_silent() {
    let dir = tree("nested-not-compiled");
    std::fs::write(dir.join("test/train_full_8p.sh"), "source test/env_npu.sh\npython3 nested/tools/train.py\n")
        .unwrap();
    let found = findings(&dir);
    assert!(found.iter().all(|f| f.0 != "nested/ops/nms_kernel.cu"), "{found:?}");
    assert!(found.iter().any(|f| f.0 == "nested/tools/train.py" && !f.4), "{found:?}");
}

/// Only a comment of the outer launcher names the nested script: that
/// starts nothing. A comment after the launch on its line hides nothing.
#[test]
fn an_outer_comment_starts_no_nested_script() {
    let dir = tree("nested-commented");
    let launcher = "source test/env_npu.sh\n# python3 nested/tools/train.py --epochs 1\npython3 main.py\n";
    std::fs::write(dir.join("test/train_full_8p.sh"), launcher).unwrap();
    let found = findings(&dir);
    let train: Vec<_> = found.iter().filter(|f| f.0 == "nested/tools/train.py").collect();
    assert!(!train.is_empty() && train.iter().all(|f| f.4), "named in a comment only: {found:?}");

    let launcher = "source test/env_npu.sh\npython3 nested/tools/train.py --epochs 1 # nested/tools/train.py\n";
    std::fs::write(dir.join("test/train_full_8p.sh"), launcher).unwrap();
    let found = findings(&dir);
    assert!(found.iter().any(|f| f.0 == "nested/tools/train.py" && !f.4), "{found:?}");
}
