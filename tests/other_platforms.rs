//! Directories for another platform (`src/project/other_platforms.rs`).
//!
//! `fixtures/other-platforms`: `scripts/train.sh` starts `train.py`, which
//! imports `device/mlu/helpers.py`; `docs/usage.md` runs `tools/convert.py`.
//! The TensorRT deployment's README (`deploy/tensorrt/`) runs
//! `tools/export_trt.py` and the deployment's own `run.sh`, which starts
//! `trt_infer.py`; a Triton model (`serving/triton/`) is loaded by its
//! server, and `runtime/gpu/server/` is a project of its own.

mod common;

use common::{advice_row as row, advice_rows, AdviceRow};

const FIXTURE: &str = "fixtures/other-platforms";

fn findings(args: &[&str]) -> Vec<AdviceRow> {
    advice_rows(FIXTURE, args)
}

#[test]
fn another_platforms_code_and_steps_are_advice() {
    assert_eq!(
        findings(&[]),
        [
            // The deployment's own shell script, and the script only it starts.
            row("deploy/tensorrt/run.sh", "TX009", "info", "other-platform"),
            row("deploy/tensorrt/trt_infer.py", "TX001", "info", "unlaunched-file"),
            // Imported by the training run: still a warning.
            row("device/mlu/helpers.py", "TX014", "warning", "-"),
            // A nested project in `runtime/gpu/`, and a module only the Triton server loads.
            row("runtime/gpu/server/server.py", "TX001", "info", "other-platform"),
            row("serving/triton/detector/1/model.py", "TX001", "info", "other-platform"),
            // A document outside such a directory still runs a script.
            row("tools/convert.py", "TX014", "warning", "-"),
            // Only the TensorRT README runs it.
            row("tools/export_trt.py", "TX014", "info", "unlaunched-file"),
            row("train.py", "TX001", "warning", "-"),
        ]
    );
}

#[test]
fn every_finding_keeps_its_severity_with_every_entry_script() {
    let all = findings(&["--entries", "all"]);
    assert_eq!(all.len(), 8, "{all:?}");
    assert!(all.iter().all(|(_, _, severity, advice)| severity == "warning" && advice == "-"), "{all:?}");
}

#[test]
fn named_runs_decide_by_reach_alone() {
    let named = findings(&["--entry", "bash scripts/train.sh"]);
    let advice: Vec<(&str, &str)> = named.iter().map(|(file, _, _, advice)| (file.as_str(), advice.as_str())).collect();
    assert_eq!(
        advice,
        [
            ("deploy/tensorrt/run.sh", "unreached"),
            ("deploy/tensorrt/trt_infer.py", "unreached"),
            ("device/mlu/helpers.py", "-"),
            ("runtime/gpu/server/server.py", "unreached"),
            ("serving/triton/detector/1/model.py", "unreached"),
            ("tools/convert.py", "unreached"),
            ("tools/export_trt.py", "unreached"),
            ("train.py", "-"),
        ]
    );
}
