//! NPU launchers (`src/npu_launchers.rs`): where some shell scripts of a
//! project name the NPU, only they, the scripts beside them and the scripts
//! they run start NPU runs; the original's other recipes start none, and
//! their findings, and those of the scripts only they start, are advice.
//!
//! `fixtures/npu_launchers`: `test/train_full_8p.sh` sources `env_npu.sh`,
//! `cd`s into `recipes/asr` and runs `run.sh` there, which starts
//! `tools.train_asr`; `test/eval_1p.sh`, beside it, starts `evaluate.py`.
//! `recipes/tts/run.sh` (another `run.sh`) starts `tools.train_tts` and
//! `scripts/dist_train.sh` starts `tools/train_cls.py` with
//! `CUDA_VISIBLE_DEVICES` set: neither is run by the port. A README step
//! (`cd $REPO/web`, `sh start.sh`) runs `web/start.sh`, which starts
//! `web/serve.py`: a launcher too.

mod common;

const FIXTURE: &str = "fixtures/npu_launchers";

fn names(list: &serde_json::Value) -> Vec<String> {
    let list = list.as_array().expect("a list");
    list.iter().map(|e| e.as_str().unwrap().trim_start_matches("fixtures/npu_launchers/").to_string()).collect()
}

#[test]
fn only_what_the_npu_launchers_run_is_started() {
    let report = common::scan_json(&["--no-cache", FIXTURE]);
    let project = &report["projects"][0];
    assert_eq!(names(&project["launched_entries"]), ["evaluate.py", "tools/train_asr.py", "web/serve.py"]);
    assert_eq!(names(&project["unlaunched_entries"]), ["tools/train_cls.py", "tools/train_tts.py"]);
    let findings: Vec<(String, String, bool)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap().trim_start_matches("fixtures/npu_launchers/").to_string();
            (path, f["severity"].as_str().unwrap().to_string(), f["unlaunched"] == true)
        })
        .collect();
    let row = |path: &str, severity: &str, unlaunched: bool| (path.to_string(), severity.to_string(), unlaunched);
    assert_eq!(
        findings,
        [
            row("evaluate.py", "warning", false),
            row("scripts/dist_train.sh", "info", true),
            row("tools/train_asr.py", "warning", false),
            row("tools/train_cls.py", "info", true),
            row("tools/train_tts.py", "info", true),
            row("web/serve.py", "warning", false),
        ]
    );
}

#[test]
fn without_a_script_that_names_the_npu_every_shell_script_launches() {
    let dir = common::temp_dir("npu-launchers-none");
    common::copy_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &dir);
    std::fs::remove_file(dir.join("test/env_npu.sh")).unwrap();
    let launcher = "#!/bin/bash\ncd $(pwd)/recipes/asr\nbash run.sh --ngpu 8\n";
    std::fs::write(dir.join("test/train_full_8p.sh"), launcher).unwrap();
    let report = common::scan_json(&["--no-cache", dir.to_str().unwrap()]);
    assert_eq!(report["projects"][0]["unlaunched_entries"], serde_json::json!([]));
    assert!(report["findings"].as_array().unwrap().iter().all(|f| f["unlaunched"] == false));
}

/// `fixtures/console_scripts`: the NPU launch script runs `tools/prepare.py`
/// and starts `toy-train`, a command that setup.py's `console_scripts`
/// declares for `toycli.train:cli_main` (a module without a `__main__`
/// guard, which the unit test imports too); nothing runs the unit tests.
#[test]
fn a_command_the_project_installs_starts_its_module() {
    let report = common::scan_json(&["--no-cache", "fixtures/console_scripts"]);
    let project = &report["projects"][0];
    let strip = |list: &serde_json::Value| -> Vec<String> {
        let list = list.as_array().expect("a list");
        list.iter().map(|e| e.as_str().unwrap().trim_start_matches("fixtures/console_scripts/").to_string()).collect()
    };
    assert_eq!(strip(&project["launched_entries"]), ["tools/prepare.py", "toycli/train.py"]);
    assert_eq!(strip(&project["unlaunched_entries"]), ["tests/test_train.py"]);
    let severity = |path: &str| {
        let findings = report["findings"].as_array().unwrap();
        let f = findings.iter().find(|f| f["path"].as_str().unwrap().ends_with(path)).expect("a finding");
        (f["severity"].as_str().unwrap().to_string(), f["unlaunched"] == true)
    };
    assert_eq!(severity("toycli/train.py"), ("warning".to_string(), false));
    assert_eq!(severity("tests/test_train.py"), ("info".to_string(), true));
}
