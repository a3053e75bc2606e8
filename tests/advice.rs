//! Every finding that is advice says why (`advice` in JSON), with the reason
//! the project layer decided it for: automatic migration, a file nothing
//! starts, a `__main__` block nothing starts, a function nothing calls, a
//! branch no launch takes, a test an NPU host skips.

mod common;

use common::{npu_mem_in, temp_dir};
use serde_json::Value;

/// `(file name, line, advice)` of every finding that is advice, and checks
/// that the others carry none.
fn reasons(report: &Value) -> Vec<(String, u64, String)> {
    let mut out = Vec::new();
    for f in report["findings"].as_array().expect("findings") {
        let is_advice = f["advisory"] == true || f["unlaunched"] == true;
        assert_eq!(f["advice"].is_string(), is_advice, "advice given exactly when the finding is advice: {f}");
        if let Some(reason) = f["advice"].as_str() {
            let path = f["path"].as_str().unwrap();
            let name = path.rsplit_once("fixtures/").map_or(path, |(_, rest)| rest);
            out.push((name.to_string(), f["line"].as_u64().unwrap(), reason.to_string()));
        }
    }
    out
}

fn row(file: &str, line: u64, reason: &str) -> (String, u64, String) {
    (file.to_string(), line, reason.to_string())
}

#[test]
fn code_that_nothing_runs_says_which_kind() {
    let report = common::scan_json(&["--no-cache", "fixtures/launches"]);
    let expected = [
        row("launches/common.py", 12, "uncalled-function"),
        row("launches/eval.py", 5, "unlaunched-file"),
        row("launches/eval.py", 9, "unlaunched-file"),
        row("launches/export_onnx.py", 12, "unlaunched-file"),
        row("launches/export_onnx.py", 13, "unlaunched-file"),
        row("launches/model_zoo.py", 14, "unlaunched-main"),
        row("launches/model_zoo.py", 15, "unlaunched-main"),
        row("launches/tests/test_layers.py", 9, "unlaunched-file"),
        row("launches/train.py", 18, "unlaunched-file"),
        row("launches/train.py", 19, "unlaunched-file"),
        row("launches/upstream_utils.py", 6, "unlaunched-file"),
    ];
    assert_eq!(reasons(&report), expected);
}

#[test]
fn untaken_branches_and_skipped_tests_say_so() {
    let branches = reasons(&common::scan_json(&["--no-cache", "fixtures/branches"]));
    assert!(!branches.is_empty());
    assert!(branches.iter().all(|(_, _, r)| r == "untaken-branch"), "{branches:?}");
    let tests = reasons(&common::scan_json(&["--no-cache", "fixtures/cuda_only_tests"]));
    let expected = [
        row("cuda_only_tests/tests/test_kernels.py", 17, "cuda-only-test"),
        row("cuda_only_tests/tests/test_kernels.py", 30, "cuda-only-test"),
        row("cuda_only_tests/tests/test_kernels.py", 36, "cuda-only-test"),
    ];
    assert_eq!(tests, expected);
}

#[test]
fn automatic_migration_says_transfer_to_npu_handles_it() {
    let dir = temp_dir("advice-auto");
    let source = "import torch\nimport torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n\
                  model = torch.nn.Linear(2, 2).cuda()\n";
    std::fs::write(dir.join("train.py"), source).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(reasons(&report), [row("train.py", 4, "transfer-to-npu")]);
    let manual = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--migration", "manual"]);
    let report: Value = serde_json::from_str(&manual.stdout).unwrap();
    assert_eq!(reasons(&report), []);
}
