//! Per-backend files (`src/project/backend_files.rs`).
//!
//! `fixtures/backend-files`: `accelerator/real_accelerator.py` builds the
//! class of `npu_accelerator.py` or of `cuda_accelerator.py` by name; the
//! NPU twin stands alone. `kernels/npu_ops.py` imports its CUDA twin's
//! helper, so `kernels/cuda_ops.py` runs on the NPU too.

mod common;

use common::{advice_row as row, advice_rows, AdviceRow};

fn findings(args: &[&str]) -> Vec<AdviceRow> {
    advice_rows("fixtures/backend-files", args)
}

#[test]
fn a_cuda_backend_with_an_npu_twin_is_advice() {
    assert_eq!(
        findings(&[]),
        [
            row("accelerator/cuda_accelerator.py", "TX009", "info", "cuda-backend-file"),
            row("accelerator/cuda_accelerator.py", "API002", "info", "cuda-backend-file"),
            // Its twin imports it: it runs on the NPU as well.
            row("kernels/cuda_ops.py", "TX009", "warning", "-"),
        ]
    );
}

#[test]
fn every_entry_script_and_named_runs_keep_the_findings() {
    for args in [&["--entries", "all"][..], &["--entry", "train.py"][..]] {
        let all = findings(args);
        assert_eq!(all.len(), 3, "{args:?}: {all:?}");
        assert!(all.iter().all(|(_, _, _, advice)| advice == "-"), "{args:?}: {all:?}");
    }
}

#[test]
fn the_next_steps_say_why_nothing_runs_that_code() {
    let run = common::npu_mem(&["scan", "fixtures/backend-files", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("2 findings are in code that nothing runs (it is a CUDA backend with an NPU twin): advice"),
        "{}",
        run.stdout
    );
}
