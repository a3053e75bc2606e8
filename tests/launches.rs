//! Scripts nothing starts (`src/launches.rs`): in a project whose shell
//! scripts start some of its entry scripts, the findings of entry scripts
//! that nothing in the project names, and of the modules only they import,
//! are advice (info, `unlaunched`, blocking nothing, not failing the default
//! gate); `--entries all` keeps their severity.
//!
//! `fixtures/launches`: `test/train_full_8p.sh` starts `train_8p.py`;
//! `modelarts/train_start.py` is a ModelArts boot file; the README names
//! `demo.py` and the Makefile `python3 -m tools.export`; `web_demo.py` is an
//! application (gradio) and `evaluate.py` was edited for the NPU. Nothing
//! starts `train.py` or `eval.py` (a script's own usage line does not
//! count), and only `train.py` imports `upstream_utils.py`; `common.py` is
//! imported by `train_8p.py` too, and its `dump_for_comparison` is called
//! by nothing. `tests/test_layers.py` is a test module, and no command runs
//! a test runner. `model_zoo.py` is imported by `train_8p.py` and started by
//! nothing: its `__main__` self-test runs nowhere.

mod common;

use common::{copy_dir, npu_mem_in, temp_dir};
use serde_json::Value;
use std::path::Path;

const LAUNCHES: &str = "fixtures/launches";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A JSON scan of `args` (never failing on findings).
fn json(args: &[&str]) -> Value {
    common::scan_json(&[&["--no-cache"], args].concat())
}

/// `(file, code, severity, unlaunched, blocker)` of every finding, the file
/// relative to the fixture.
fn findings(report: &Value) -> Vec<(String, String, String, bool, bool)> {
    let text = |f: &Value, key: &str| f[key].as_str().unwrap_or_default().to_string();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = text(f, "path");
            let file = path.rsplit_once("launches/").map_or(path.clone(), |(_, rest)| rest.to_string());
            let flag = |key: &str| f[key].as_bool().unwrap();
            (file, text(f, "code"), text(f, "severity"), flag("unlaunched"), flag("blocker"))
        })
        .collect()
}

fn row(
    file: &str,
    code: &str,
    severity: &str,
    unlaunched: bool,
    blocker: bool,
) -> (String, String, String, bool, bool) {
    (file.to_string(), code.to_string(), severity.to_string(), unlaunched, blocker)
}

#[test]
fn only_code_that_nothing_starts_becomes_advice() {
    let report = json(&[LAUNCHES]);
    let expected = vec![
        row("common.py", "TX001", "warning", false, false),
        // dump_for_comparison: a function nothing calls; a decorated one is left alone.
        row("common.py", "TX001", "info", true, false),
        row("common.py", "TX001", "warning", false, false),
        row("demo.py", "TX001", "warning", false, false),
        row("eval.py", "TX010", "info", true, false),
        row("eval.py", "TX001", "info", true, false),
        row("evaluate.py", "TX001", "warning", false, false),
        // A script without a `__main__` guard (options parsed at module level) that nothing starts.
        row("export_onnx.py", "TX001", "info", true, false),
        row("export_onnx.py", "TX001", "info", true, false),
        // Imported by the trainer: its module code runs, its `__main__` self-test does not.
        row("model_zoo.py", "TX001", "warning", false, false),
        row("model_zoo.py", "TX001", "info", true, false),
        row("model_zoo.py", "TX001", "info", true, false),
        row("modelarts/train_start.py", "TX001", "warning", false, false),
        // Parses options at module level too, but the trainer imports it: a module.
        row("options.py", "TX001", "warning", false, false),
        row("tests/test_layers.py", "TX001", "info", true, false),
        row("tools/export.py", "TX001", "warning", false, false),
        row("train.py", "TX008", "info", true, false),
        row("train.py", "TX011", "info", true, false),
        row("upstream_utils.py", "TX001", "info", true, false),
        row("web_demo.py", "TX001", "warning", false, false),
    ];
    assert_eq!(findings(&report), expected);
    let project = &report["projects"][0];
    assert_eq!(
        project["launched_entries"],
        serde_json::json!(["fixtures/launches/modelarts/train_start.py", "fixtures/launches/train_8p.py"])
    );
    assert_eq!(
        project["unlaunched_entries"],
        serde_json::json!([
            "fixtures/launches/eval.py",
            "fixtures/launches/export_onnx.py",
            "fixtures/launches/model_zoo.py",
            "fixtures/launches/tests/test_layers.py",
            "fixtures/launches/train.py"
        ])
    );
    assert_eq!(
        project["uncalled_functions"],
        serde_json::json!([{ "path": "fixtures/launches/common.py", "name": "dump_for_comparison", "line": 10 }])
    );
    // TX010 and TX011 are blockers where code runs; in code nothing starts they block nothing.
    assert_eq!(project["verdict"]["status"], "compatible");
}

#[test]
fn entries_all_keeps_every_severity() {
    let report = json(&[LAUNCHES, "--entries", "all"]);
    let found = findings(&report);
    assert!(found.iter().all(|(_, _, _, unlaunched, _)| !unlaunched), "{found:?}");
    assert!(found.contains(&row("train.py", "TX011", "error", false, true)), "{found:?}");
    assert!(found.contains(&row("upstream_utils.py", "TX001", "warning", false, false)), "{found:?}");
    assert_eq!(report["projects"][0]["unlaunched_entries"], serde_json::json!([]));
    assert_eq!(report["projects"][0]["verdict"]["status"], "blocked");
}

#[test]
fn the_configuration_can_keep_every_severity_too() {
    let dir = temp_dir("launches-config");
    copy_dir(&repo().join(LAUNCHES), &dir);
    std::fs::write(dir.join("npu-mem.toml"), "entries = \"all\"\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(findings(&report).iter().all(|(_, _, _, unlaunched, _)| !unlaunched));
    let settings = npu_mem_in(&dir, &["scan", ".", "--show-settings"]);
    assert!(settings.stdout.contains("entries = all"), "{}", settings.stdout);
}

#[test]
fn the_report_names_the_scripts_and_groups_their_findings() {
    let run = npu_mem_in(repo(), &["scan", LAUNCHES, "--no-cache", "--color", "never"]);
    assert_eq!(run.code, 1, "the started scripts' warnings still fail the default gate:\n{}", run.stdout);
    let out = run.stdout;
    assert!(
        out.contains(
            "Entry scripts: 2 started by the project's launch scripts; nothing in it starts 5 others \
             (fixtures/launches/eval.py, fixtures/launches/export_onnx.py, fixtures/launches/model_zoo.py, \
             fixtures/launches/tests/test_layers.py, fixtures/launches/train.py), so findings in code only they run and in their `__main__` blocks are \
             advice (`--entries all` keeps their severity)."
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "Functions: 1 function that holds findings is called by nothing in the project \
             (dump_for_comparison at fixtures/launches/common.py:10), so its findings are advice too"
        ),
        "{out}"
    );
    assert!(out.contains("TX001 [info] x8 cuda-call in 6 files: in code that nothing runs on the NPU"), "{out}");
    assert!(out.contains("11 findings are in code that nothing runs"), "{out}");
    assert!(!out.contains("fixtures/launches/train.py:14"), "grouped, not listed one by one:\n{out}");
    // The scripts nothing starts are not among those told to import transfer_to_npu.
    let turn_on = out.lines().find(|l| l.contains("Turn it on:")).unwrap_or_default();
    assert!(
        turn_on.contains("fixtures/launches/train_8p.py") && turn_on.contains("fixtures/launches/demo.py"),
        "{out}"
    );
    assert!(!turn_on.contains("launches/train.py") && !turn_on.contains("launches/eval.py"), "{turn_on}");
}

#[test]
fn the_markdown_report_names_the_scripts_too() {
    let run = npu_mem_in(repo(), &["scan", LAUNCHES, "--no-cache", "--format", "markdown", "--fail-on", "never"]);
    assert!(
        run.stdout.contains(
            "Entry scripts that nothing in the project starts (their findings are advice): \
             `fixtures/launches/eval.py`, `fixtures/launches/export_onnx.py`, `fixtures/launches/model_zoo.py`, \
             `fixtures/launches/tests/test_layers.py`, `fixtures/launches/train.py`."
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "Functions and classes that nothing in the project calls (their findings are advice): \
             `dump_for_comparison` (`fixtures/launches/common.py:10`)."
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn a_script_nothing_starts_is_not_told_to_import_transfer_to_npu() {
    let dir = temp_dir("launches-auto");
    copy_dir(&repo().join(LAUNCHES), &dir);
    let trainer = dir.join("train_8p.py");
    let text = std::fs::read_to_string(&trainer).unwrap();
    std::fs::write(
        &trainer,
        text.replace("import torch_npu\n", "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n"),
    )
    .unwrap();
    let report = {
        let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
        serde_json::from_str::<Value>(&run.stdout).unwrap()
    };
    let reason = report["projects"][0]["reason"].as_str().unwrap();
    // Started scripts that run without the import are named; train.py and eval.py, which nothing starts, are not.
    assert!(reason.starts_with("transfer_to_npu imported in train_8p.py:"), "{reason}");
    assert!(!reason.contains("train.py") && !reason.contains("eval.py"), "{reason}");
    assert!(reason.contains("demo.py"), "{reason}");
}

#[test]
fn tests_run_where_a_command_runs_the_test_runner() {
    let dir = temp_dir("launches-pytest");
    copy_dir(&repo().join(LAUNCHES), &dir);
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    // Naming the runner in prose is not running it; a command line is.
    std::fs::write(dir.join("README.md"), format!("{readme}\nWe test with pytest.\n")).unwrap();
    let unlaunched = |dir: &Path| {
        let run = npu_mem_in(dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        report["projects"][0]["unlaunched_entries"].clone()
    };
    assert_eq!(
        unlaunched(&dir),
        serde_json::json!(["eval.py", "export_onnx.py", "model_zoo.py", "tests/test_layers.py", "train.py"])
    );
    std::fs::write(dir.join("README.md"), format!("{readme}\nRun the tests:\n\n    pytest tests/ -x\n")).unwrap();
    assert_eq!(unlaunched(&dir), serde_json::json!(["eval.py", "export_onnx.py", "model_zoo.py", "train.py"]));
}

#[test]
fn a_project_whose_scripts_start_no_entry_script_is_left_alone() {
    // fixtures/processes has entry scripts and no shell script.
    let report = json(&["fixtures/processes"]);
    assert!(report["findings"].as_array().unwrap().iter().all(|f| f["unlaunched"] == false));
    assert_eq!(report["projects"][0]["unlaunched_entries"], serde_json::json!([]));
}

#[test]
fn documents_the_scan_leaves_out_start_nothing() {
    let dir = temp_dir("launches-excluded");
    copy_dir(&repo().join(LAUNCHES), &dir);
    // The README is the only text that names demo.py; move it where the scan is told not to look.
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::rename(dir.join("README.md"), dir.join("docs/README.md")).unwrap();
    let unlaunched = |extra: &[&str]| {
        let args = [&["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"], extra].concat();
        let run = npu_mem_in(&dir, &args);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        report["projects"][0]["unlaunched_entries"].clone()
    };
    assert_eq!(
        unlaunched(&[]),
        serde_json::json!(["eval.py", "export_onnx.py", "model_zoo.py", "tests/test_layers.py", "train.py"])
    );
    assert_eq!(
        unlaunched(&["--exclude", "docs/"]),
        serde_json::json!(["demo.py", "eval.py", "export_onnx.py", "model_zoo.py", "tests/test_layers.py", "train.py"])
    );
    // A .gitignore counts as it does for the files scanned, in a git repository or not.
    std::fs::write(dir.join(".gitignore"), "docs/\n").unwrap();
    assert_eq!(
        unlaunched(&[]),
        serde_json::json!(["demo.py", "eval.py", "export_onnx.py", "model_zoo.py", "tests/test_layers.py", "train.py"])
    );
}

#[test]
fn the_entry_points_of_a_hubconf_are_called_by_torch_hub() {
    // torch.hub.load(repo, "resnet_npu") calls hubconf.py's public functions by
    // name from outside the project: they counted as called by nothing.
    let dir = temp_dir("launches-hubconf");
    std::fs::create_dir(dir.join("test")).unwrap();
    std::fs::write(dir.join("setup.py"), "from setuptools import setup\nsetup(name='m')\n").unwrap();
    std::fs::write(dir.join("test/train.sh"), "python3 train.py --epochs 1\n").unwrap();
    let train = "import torch\n\n\ndef main():\n    print(1)\n\n\nif __name__ == '__main__':\n    main()\n";
    std::fs::write(dir.join("train.py"), train).unwrap();
    let hub = "import torch\n\n\ndef resnet_npu(pretrained=False):\n    return torch.nn.Linear(2, 2).cuda()\n\n\ndef _helper():\n    return torch.zeros(1).cuda()\n";
    std::fs::write(dir.join("hubconf.py"), hub).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let at = |line: u64| {
        let found =
            report["findings"].as_array().unwrap().iter().find(|f| f["path"] == "hubconf.py" && f["line"] == line);
        found.map(|f| f["unlaunched"].as_bool().unwrap())
    };
    assert_eq!(at(5), Some(false), "an entry point torch.hub calls: {run:?}", run = run.stdout);
    assert_eq!(at(9), Some(true), "a private helper nothing calls stays advice");
}

/// `fixtures/uncalled-methods`: the methods of a class without a base, or
/// based on `nn.Module`, are read as functions are, and an autograd
/// function as a whole. `SmoothedValue.synchronize_between_processes` is
/// called only by `MetricLogger`'s method of the same name, which nothing
/// calls; `Scale.forward_fused` and `FusedScale` by nothing (the trainer
/// builds `Scale`, so torch may call its `forward`). A module's
/// `extra_repr` (torch calls it), another library's subclass and Triton's
/// `TritonPythonModel` are left alone. `Settings.block_size`, a static
/// method, is read too; the lookups by computed names in `Settings.check`
/// and the trainer read values only, so they call nothing.
#[test]
fn methods_and_autograd_functions_that_nothing_calls_are_advice() {
    let fixture = repo().join("fixtures/uncalled-methods");
    let scan = |dir: &Path| -> Vec<(u64, String, bool)> {
        let run = npu_mem_in(dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let findings = report["findings"].as_array().unwrap().iter();
        let metrics = findings.filter(|f| f["path"] == "metrics.py");
        metrics
            .map(|f| (f["line"].as_u64().unwrap(), f["code"].as_str().unwrap().to_string(), f["unlaunched"] == true))
            .collect()
    };
    let row = |line: u64, code: &str, unlaunched: bool| (line, code.to_string(), unlaunched);
    assert_eq!(
        scan(&fixture),
        [
            row(14, "TX001", false),
            row(18, "TX002", true),
            row(38, "TX001", false),
            row(44, "TX002", false),
            row(53, "TX001", false),
            row(59, "TX001", true),
            row(66, "TX001", true),
            row(80, "TX001", true),
        ]
    );
    let report = common::scan_json(&["--no-cache", fixture.to_str().unwrap()]);
    let uncalled = report["projects"][0]["uncalled_functions"].as_array().unwrap().iter();
    let names: Vec<&str> = uncalled.map(|u| u["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["SmoothedValue.synchronize_between_processes", "Scale.forward_fused", "FusedScale", "Settings.block_size"]
    );
    // A module class that nothing builds is dead as a whole, its `forward` included.
    let dir = temp_dir("uncalled-methods-unbuilt");
    copy_dir(&fixture, &dir);
    let train = std::fs::read_to_string(dir.join("train.py")).unwrap();
    std::fs::write(dir.join("train.py"), train.replace("    scale = Scale()\n", "    scale = torch.nn.Identity()\n"))
        .unwrap();
    let report = common::scan_json(&["--no-cache", dir.to_str().unwrap()]);
    let uncalled = report["projects"][0]["uncalled_functions"].as_array().unwrap().iter();
    let names: Vec<&str> = uncalled.map(|u| u["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"Scale"), "{names:?}");
    // Once the trainer calls what its lookup by a computed name finds, any method may be called.
    let dir = temp_dir("uncalled-methods-looked-up");
    copy_dir(&fixture, &dir);
    let train = std::fs::read_to_string(dir.join("train.py")).unwrap();
    std::fs::write(dir.join("train.py"), train.replace("if getattr(args, name) is None:", "if getattr(args, name)():"))
        .unwrap();
    assert!(scan(&dir).iter().all(|(_, _, unlaunched)| !unlaunched), "{:?}", scan(&dir));
    // Once the trainer synchronises its logger, both methods are called.
    let dir = temp_dir("uncalled-methods-called");
    copy_dir(&fixture, &dir);
    let train = std::fs::read_to_string(dir.join("train.py")).unwrap();
    let train = train
        .replace("logger.update(loss=1.0)\n", "logger.update(loss=1.0)\n    logger.synchronize_between_processes()\n");
    std::fs::write(dir.join("train.py"), train).unwrap();
    assert_eq!(scan(&dir)[1], row(18, "TX002", false));
    // Once the trainer applies the autograd function, what it holds runs.
    let train = std::fs::read_to_string(dir.join("train.py")).unwrap();
    std::fs::write(
        dir.join("train.py"),
        train.replace("    return Head()", "    FusedScale.apply(1)\n    return Head()"),
    )
    .unwrap();
    assert_eq!(scan(&dir)[6], row(66, "TX001", false));
}

/// `fixtures/generated-source`: `modeling_toy.py` says it was generated from
/// `src/pkg/models/toy/modular_toy.py`, so the findings of `modular_toy.py`
/// (found by the end of that path) are advice: its generated copy runs and
/// carries them. `modular_other.py`, which no header names, keeps its own.
#[test]
fn the_source_a_generated_file_names_is_advice() {
    let fixture = repo().join("fixtures/generated-source");
    let scan = |dir: &Path| -> Vec<(String, Value)> {
        let run = npu_mem_in(dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let findings = report["findings"].as_array().unwrap().iter();
        findings.map(|f| (f["path"].as_str().unwrap().to_string(), f["advice"].clone())).collect()
    };
    let row = |path: &str, advice: Value| (path.to_string(), advice);
    assert_eq!(
        scan(&fixture),
        [
            row("pkg/models/other/modular_other.py", Value::Null),
            row("pkg/models/toy/modeling_toy.py", Value::Null),
            row("pkg/models/toy/modular_toy.py", Value::from("generator-source")),
        ]
    );
    // Without the header, nothing names the source.
    let dir = temp_dir("generated-source-no-header");
    copy_dir(&fixture, &dir);
    let generated = dir.join("pkg/models/toy/modeling_toy.py");
    let text = std::fs::read_to_string(&generated).unwrap();
    std::fs::write(&generated, text.replace("automatically generated from", "written after")).unwrap();
    assert_eq!(scan(&dir)[2], row("pkg/models/toy/modular_toy.py", Value::Null));
}

/// Issue 47, item 6: `fixtures/launch_forms` starts its runs from a launch
/// script without an extension (`#!/usr/bin/env bash`) and from a `.zsh`
/// script, as `python3 -m pkg.train` (a package's `__main__.py`) and
/// `PYTHONPATH=src python3 -m app.serve` (a module under `src/`). Nothing
/// starts `train.py`.
#[test]
fn launches_by_package_by_src_module_and_from_scripts_without_sh() {
    let report = json(&["fixtures/launch_forms"]);
    let project = &report["projects"][0];
    assert_eq!(
        project["launched_entries"],
        serde_json::json!([
            "fixtures/launch_forms/pkg/train/__main__.py",
            "fixtures/launch_forms/src/app/serve.py",
            "fixtures/launch_forms/tools/evaluate.py"
        ])
    );
    assert_eq!(project["unlaunched_entries"], serde_json::json!(["fixtures/launch_forms/train.py"]));
    // Each entry's `.cuda()` is reported; only the trainer nothing starts is advice.
    assert_eq!(
        findings(&report),
        [
            row("fixtures/launch_forms/pkg/train/__main__.py", "TX001", "warning", false, false),
            row("fixtures/launch_forms/src/app/serve.py", "TX001", "warning", false, false),
            row("fixtures/launch_forms/tools/evaluate.py", "TX001", "warning", false, false),
            row("fixtures/launch_forms/train.py", "TX001", "info", true, false),
        ]
    );
}

/// Issue 47, item 11 (b): a quoted string whose second line starts with `#`
/// hid the rest of that line, the launch of `train_8p.py`, as a comment.
#[test]
fn a_quoted_line_that_starts_with_a_hash_hides_no_launch() {
    let dir = temp_dir("launches-quoted-hash");
    copy_dir(&repo().join(LAUNCHES), &dir);
    let launcher = "#!/bin/bash\necho \"Eight processes,\n# one per NPU\"; python3 train_8p.py --device npu > train.log 2>&1 &\nwait\n";
    std::fs::write(dir.join("test/train_full_8p.sh"), launcher).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report["projects"][0]["launched_entries"],
        serde_json::json!(["modelarts/train_start.py", "train_8p.py"])
    );
}
