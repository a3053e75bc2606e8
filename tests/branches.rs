//! Branches no launch takes (`src/configurations.rs`): in a project whose
//! shell scripts start its scripts, a branch whose test fails with the
//! options of every run they start holds code no NPU process runs; its
//! findings are advice (info, `unlaunched`), and the project lists it.
//!
//! `fixtures/branches`: `test/train_full_1p.sh` and `test/train_full_8p.sh`
//! start `train.py` (which imports `tools/setup.py`) with `--device npu`
//! (`--dev`, abbreviated, in one), `--amp` in one, `--resume` and `--lr $lr`
//! in the other, through `torch.distributed.launch`; `test/finetune.sh` passes
//! `"$@"` on; `test/eval.sh` builds its command in a variable;
//! `test/finetune_1p.sh` starts the two timm-style scripts, passing
//! `--config` to one of them.

mod common;

use serde_json::Value;

const BRANCHES: &str = "fixtures/branches";

/// `(file:line, code, severity, unlaunched)` of every finding.
fn findings(report: &Value) -> Vec<(String, String, String, bool)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap().trim_start_matches("fixtures/branches/");
            (
                format!("{path}:{}", f["line"]),
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["unlaunched"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn row(at: &str, code: &str, severity: &str, unlaunched: bool) -> (String, String, String, bool) {
    (at.to_string(), code.to_string(), severity.to_string(), unlaunched)
}

#[test]
fn findings_in_branches_no_launch_takes_are_advice() {
    let report = common::scan_json(&["--no-cache", BRANCHES]);
    let expected = vec![
        // The command is built in a variable, or takes "$@": nothing is decided.
        row("evaluate.py:10", "TX011", "error", false),
        row("finetune.py:10", "TX011", "error", false),
        // --config replaces the defaults in the run that passes it.
        row("timm_finetune.py:18", "TX011", "error", false),
        row("timm_train.py:25", "TX011", "info", true),
        // A module the launched script imports.
        row("tools/setup.py:7", "TX011", "info", true),
        // TX014 on a resume or an else-arm load is info anyway; only the else arm is untaken.
        row("train.py:27", "TX014", "info", true),
        row("train.py:30", "TX011", "info", true),
        row("train.py:33", "AMP002", "warning", false),
        row("train.py:36", "TX014", "info", false),
        row("train.py:39", "TX001", "warning", false),
        row("train.py:42", "TX001", "info", true),
        row("train.py:45", "TX001", "warning", false),
        row("train.py:48", "TX001", "info", true),
        row("train.py:49", "API001", "info", false),
        row("train.py:51", "TX001", "warning", false),
    ];
    assert_eq!(findings(&report), expected);
    let branches: Vec<(String, u64, String)> = report["projects"][0]["untaken_branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let path = b["path"].as_str().unwrap().trim_start_matches("fixtures/branches/").to_string();
            (path, b["line"].as_u64().unwrap(), b["test"].as_str().unwrap().to_string())
        })
        .collect();
    let branch = |path: &str, line: u64, test: &str| (path.to_string(), line, test.to_string());
    assert_eq!(
        branches,
        vec![
            branch("timm_train.py", 23, "args.num_gpu > 1"),
            branch("tools/setup.py", 6, "opt.num_gpu > 1"),
            branch("train.py", 25, "not (args.device == \"npu\")"),
            branch("train.py", 28, "args.num_gpu > 1"),
            branch("train.py", 40, "args.workers not in (4, 8)"),
            branch("train.py", 46, "args.seed is not None and args.profile"),
        ]
    );
}

#[test]
fn entries_all_judges_no_branch() {
    let report = common::scan_json(&["--no-cache", BRANCHES, "--entries", "all"]);
    assert!(findings(&report).iter().all(|(_, _, _, unlaunched)| !unlaunched), "{:?}", findings(&report));
    assert_eq!(report["projects"][0]["untaken_branches"], serde_json::json!([]));
}

#[test]
fn the_text_report_names_the_branches() {
    let run = common::npu_mem(&["scan", BRANCHES, "--no-cache", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("Branches: 6 branch tests that guard findings fail with the options of every run"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("fixtures/branches/train.py:28 `args.num_gpu > 1`"), "{}", run.stdout);
}
