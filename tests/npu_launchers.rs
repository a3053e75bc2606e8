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

/// A project whose NPU launcher `test/train_full_8p.sh` runs `bash run.sh`
/// after changing into `legacy/` by `launcher`: `legacy/run.sh` starts
/// `legacy_train.py`; another `run.sh` beside the launcher starts `train_top.py`.
fn cd_project(name: &str, launcher: &str) -> common::TempDir {
    let dir = common::temp_dir(name);
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let entry = "import torch\n\n\ndef main():\n    return torch.nn.Linear(4, 4).cuda()\n\n\nif __name__ == \"__main__\":\n    main()\n";
    write("requirements.txt", "torch\n");
    write("test/env_npu.sh", "export ASCEND_GLOBAL_LOG_LEVEL=3\n");
    write("test/train_full_8p.sh", &format!("source test/env_npu.sh\n{launcher}"));
    write("test/run.sh", "python3 train_top.py --epochs 1\n");
    write("legacy/run.sh", "python3 legacy_train.py --epochs 1\n");
    write("train_top.py", entry);
    write("legacy_train.py", entry);
    dir
}

/// The JSON report of a scan of `dir`.
fn scan_in(dir: &std::path::Path) -> serde_json::Value {
    let run = common::npu_mem_in(dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    serde_json::from_str(&run.stdout).unwrap()
}

/// The project's launched and unlaunched entry scripts, by file name.
fn entries(dir: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let report = scan_in(dir);
    let list = |key: &str| names(&report["projects"][0][key]);
    (list("launched_entries"), list("unlaunched_entries"))
}

/// The findings in `file` of a scan of `dir`: code, severity, and whether
/// they are marked as in code nothing starts.
fn findings_in(dir: &std::path::Path, file: &str) -> Vec<(String, String, bool)> {
    let report = scan_in(dir);
    let findings = report["findings"].as_array().unwrap().iter().filter(|f| f["path"] == file);
    findings
        .map(|f| (f["code"].as_str().unwrap().into(), f["severity"].as_str().unwrap().into(), f["unlaunched"] == true))
        .collect()
}

/// Issue 47, item 4: each of these `cd`s was read as no `cd`, so `bash
/// run.sh` was taken for `test/run.sh` alone and `legacy_train.py` for
/// started by nothing.
#[test]
fn every_way_to_change_directory_is_followed() {
    for (i, launcher) in [
        "pushd legacy\nbash run.sh\npopd\n",
        "(cd legacy; bash run.sh)\n",
        "{ cd legacy; }\nbash run.sh\n",
        "builtin cd legacy\nbash run.sh\n",
        "D=legacy\ncd $D\nbash run.sh\n",
        "sh -c \"cd legacy; bash run.sh\"\n",
    ]
    .iter()
    .enumerate()
    {
        let dir = cd_project(&format!("cd-{i}"), launcher);
        let (launched, unlaunched) = entries(&dir);
        assert_eq!(launched, ["legacy_train.py", "train_top.py"], "{launcher}");
        assert!(unlaunched.is_empty(), "{launcher}: {unlaunched:?}");
        // The script the `cd` leads to keeps its findings as they are: the same as the other's.
        let legacy = findings_in(&dir, "legacy_train.py");
        assert!(!legacy.is_empty() && legacy.iter().all(|(_, _, unlaunched)| !unlaunched), "{launcher}: {legacy:?}");
        assert_eq!(legacy, findings_in(&dir, "train_top.py"), "{launcher}");
    }
}

/// Where the launcher changes into a directory it does not spell out, every
/// `run.sh` may be the one it runs.
#[test]
fn a_directory_the_launcher_does_not_spell_out_may_hold_any_script() {
    let dir = cd_project("cd-unknown", "cd \"$1\"\nbash run.sh\n");
    assert_eq!(entries(&dir), (vec!["legacy_train.py".to_string(), "train_top.py".to_string()], vec![]));
    // The control: without the `cd`, `bash run.sh` is the one beside the launcher.
    let dir = cd_project("cd-none", "bash run.sh\n");
    assert_eq!(entries(&dir), (vec!["train_top.py".to_string()], vec!["legacy_train.py".to_string()]));
}

/// Issue 47, item 11 (a): a script that only names the NPU (`RUN_ON_NPU=0`,
/// an `echo`) made itself "the NPU launcher", and every other shell script
/// of the project a recipe that starts nothing.
#[test]
fn a_script_that_only_names_the_npu_is_no_npu_launcher() {
    let dir = cd_project("mention", "");
    std::fs::remove_dir_all(dir.join("test")).unwrap();
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("scripts/gpu.sh"), "RUN_ON_NPU=0\necho \"not on the NPU\"\npython3 train_top.py\n")
        .unwrap();
    assert_eq!(entries(&dir), (vec!["legacy_train.py".to_string(), "train_top.py".to_string()], vec![]));
    let legacy = findings_in(&dir, "legacy_train.py");
    assert!(!legacy.is_empty() && legacy.iter().all(|(_, severity, unlaunched)| severity != "info" && !unlaunched));
    // The control: a script that sets the NPU up is a launcher (with the one
    // that names the NPU), and the original's recipe in `legacy/` starts nothing.
    std::fs::create_dir_all(dir.join("test")).unwrap();
    std::fs::write(dir.join("test/train.sh"), "export ASCEND_DEVICE_ID=0\npython3 train_top.py\n").unwrap();
    assert_eq!(entries(&dir), (vec!["train_top.py".to_string()], vec!["legacy_train.py".to_string()]));
    assert!(findings_in(&dir, "legacy_train.py")
        .iter()
        .all(|(_, severity, unlaunched)| severity == "info" && *unlaunched));
}

/// A launcher whose only NPU sign is a variable HCCL reads (`RANK_SIZE`),
/// with no NPU word in it, is an NPU launcher all the same: the original's
/// recipe in `legacy/` starts nothing, and its findings are advice.
#[test]
fn a_launcher_that_only_sets_rank_size_is_an_npu_launcher() {
    let dir = cd_project("rank-size", "");
    std::fs::remove_file(dir.join("test/env_npu.sh")).unwrap();
    std::fs::write(dir.join("test/train_full_8p.sh"), "RANK_SIZE=8\nbash run.sh\n").unwrap();
    assert_eq!(entries(&dir), (vec!["train_top.py".to_string()], vec!["legacy_train.py".to_string()]));
    let legacy = findings_in(&dir, "legacy_train.py");
    assert!(!legacy.is_empty() && legacy.iter().all(|(_, severity, unlaunched)| severity == "info" && *unlaunched));
}
