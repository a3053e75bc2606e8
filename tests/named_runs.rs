//! Runs the user names (`--entry`, `entry = [...]`, `src/project/named_runs.rs`):
//! the files no named run reaches are advice (`advice: "unreached"`,
//! `reached: false`), the named commands' options decide the branches, and
//! an entry that starts nothing is an error (exit 2).
//!
//! `fixtures/named_runs`: `scripts/train.sh` runs `python train.py --amp`;
//! `train.py` imports `models` and `data`, loads `plugins.amp_hooks` and `datasets.<name>`
//! with `importlib.import_module`; its `if args.profile:` branch holds a
//! `.cuda()`. `export.py` (with `scripts/export.sh`), `tools/benchmark_trt.py`
//! and `serve/app.py` are not part of the training run.

mod common;

use common::{copy_dir, npu_mem_in, temp_dir};
use serde_json::Value;
use std::path::Path;

const FIXTURE: &str = "fixtures/named_runs";

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)
}

/// A JSON scan of the fixture from its own directory, with `args`.
fn json_in(dir: &Path, args: &[&str]) -> Value {
    let all = [&["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"], args].concat();
    let run = npu_mem_in(dir, &all);
    assert_eq!(run.code, 0, "scan failed: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// `(path, line, code, severity, advice, reached)` of every finding.
fn findings(report: &Value) -> Vec<(String, u64, String, String, String, Option<bool>)> {
    let text = |f: &Value, key: &str| f[key].as_str().unwrap_or("-").to_string();
    let all = report["findings"].as_array().unwrap().iter();
    all.map(|f| {
        let line = f["line"].as_u64().unwrap();
        (text(f, "path"), line, text(f, "code"), text(f, "severity"), text(f, "advice"), f["reached"].as_bool())
    })
    .collect()
}

/// The advice reason of each finding in `path`, as `(line, code, advice)`.
fn in_file(report: &Value, path: &str) -> Vec<(u64, String, String)> {
    findings(report).into_iter().filter(|f| f.0 == path).map(|f| (f.1, f.2, f.4)).collect()
}

fn row(line: u64, code: &str, advice: &str) -> (u64, String, String) {
    (line, code.to_string(), advice.to_string())
}

#[test]
fn files_no_named_run_reaches_are_advice_and_the_rest_keep_their_severity() {
    let report = json_in(&fixture(), &["--entry", "bash scripts/train.sh"]);
    for (path, line, code, severity, advice, reached) in findings(&report) {
        let outside = ["export.py", "tools/benchmark_trt.py", "serve/app.py"].contains(&path.as_str());
        assert_eq!(reached, Some(!outside), "{path}:{line} {code}");
        if outside {
            assert_eq!((severity.as_str(), advice.as_str()), ("info", "unreached"), "{path}:{line} {code}");
        }
    }
    // Reached through an import, a package's `__init__`, `importlib.import_module("plugins.amp_hooks")`
    // and `import_module(f"datasets.{args.dataset}")` (every module of `datasets`).
    let kept = |path: &str| findings(&report).into_iter().filter(|f| f.0 == path).all(|f| f.4 != "unreached");
    assert!(["data.py", "models/net.py", "plugins/amp_hooks.py", "train.py"].into_iter().all(kept));
    assert_eq!(in_file(&report, "plugins/amp_hooks.py"), [row(6, "TX001", "-")]);
    assert_eq!(in_file(&report, "datasets/toy.py"), [row(4, "TX001", "-")]);
    assert_eq!(report["run"]["undecided"], serde_json::json!([]));
    // `--amp` is the only option the run passes: the `--profile` branch is not taken.
    let train = in_file(&report, "train.py");
    assert!(train.contains(&row(20, "TX001", "untaken-branch")), "{train:?}");
    assert!(train.contains(&row(17, "TX001", "-")), "{train:?}");
    let schema: Value = serde_json::from_str(include_str!("../docs/report.schema.json")).unwrap();
    let mut errors = Vec::new();
    common::validate(&schema, &schema, &report, "$", &mut errors);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let run = &report["run"];
    assert_eq!((run["runs"].as_u64(), run["modules"].as_u64(), run["reached"].as_u64()), (Some(1), Some(11), Some(8)));
    assert_eq!(run["scripts"], serde_json::json!(["train.py"]));
}

#[test]
fn a_script_or_module_named_alone_leaves_its_options_open() {
    for entry in ["train.py", "-m train"] {
        let report = json_in(&fixture(), &["--entry", entry]);
        assert!(in_file(&report, "train.py").contains(&row(20, "TX001", "-")), "{entry}");
        assert_eq!(in_file(&report, "export.py"), [row(7, "TX001", "unreached"), row(8, "TX001", "unreached")]);
    }
    // A command line gives its options: here the branch runs.
    let report = json_in(&fixture(), &["--entry", "python train.py --amp --profile"]);
    assert!(in_file(&report, "train.py").contains(&row(20, "TX001", "-")));
}

#[test]
fn several_runs_reach_what_each_reaches() {
    let report = json_in(&fixture(), &["--entry", "bash scripts/train.sh", "--entry", "bash scripts/export.sh"]);
    assert_eq!(in_file(&report, "export.py"), [row(7, "TX001", "-"), row(8, "TX001", "-")]);
    assert!(in_file(&report, "serve/app.py").iter().all(|f| f.2 == "unreached"));
    assert_eq!(report["run"]["scripts"], serde_json::json!(["export.py", "train.py"]));
}

#[test]
fn without_named_runs_nothing_says_reached() {
    let report = json_in(&fixture(), &[]);
    assert!(report.get("run").is_none());
    assert!(findings(&report).iter().all(|f| f.5.is_none() && f.4 != "unreached"));
}

#[test]
fn entries_in_the_configuration_file_are_relative_to_it() {
    let dir = temp_dir("named-runs-config");
    let project = dir.as_path().join("proj");
    copy_dir(&fixture(), &project);
    std::fs::write(project.join("pyproject.toml"), "[tool.npu-mem]\nentry = [\"bash scripts/train.sh\"]\n").unwrap();
    // Scanned from above the project: the entry is still found beside the configuration file.
    let run = npu_mem_in(dir.as_path(), &["scan", "proj", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["run"]["scripts"], serde_json::json!(["proj/train.py"]));
    assert!(in_file(&report, "proj/export.py").iter().all(|f| f.2 == "unreached"));
    let shown = npu_mem_in(dir.as_path(), &["scan", "proj", "--show-settings"]);
    assert!(shown.stdout.contains("entry = [bash scripts/train.sh]"), "{}", shown.stdout);
}

#[test]
fn an_entry_that_starts_nothing_is_an_error_naming_it() {
    let cases = [
        ("missing.py", "which does not exist"),
        ("python -m nosuch.train", "runs module `nosuch.train`, which is no Python file of the scan"),
        ("echo hello", "starts no script"),
        ("bash scripts/missing.sh", "which does not exist"),
    ];
    for (entry, says) in cases {
        let run = npu_mem_in(&fixture(), &["scan", ".", "--no-cache", "--entry", entry]);
        assert_eq!(run.code, 2, "{entry}: {}", run.stderr);
        assert!(run.stderr.contains(&format!("entry `{entry}`")) && run.stderr.contains(says), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "no report after the error: {}", run.stdout);
    }
}

#[test]
fn the_text_report_says_what_the_runs_reach_and_counts_the_rest_by_directory() {
    let run = npu_mem_in(&fixture(), &["scan", ".", "--no-cache", "--entry", "bash scripts/train.sh"]);
    assert!(run.stdout.contains("Run: 1 entry script, 8 of 11 modules reached"), "{}", run.stdout);
    let section = run.stdout.split("== Not reached by the named runs (6 findings, advice) ==").nth(1);
    let rows: Vec<&str> = section.expect("the section").lines().skip(1).take_while(|l| l.starts_with("  ")).collect();
    assert_eq!(rows, ["  .      2", "  serve  1", "  tools  3"]);
}

/// `fixtures/run_configs`: `tools/train.py` builds the backbone that the
/// configuration file it is given selects (`configs/det.py`, whose
/// `_base_` says `type="ResNet"`) from an mmdet-style registry that also
/// holds `SwinTransformer`; `hydra_app/run.py` instantiates the
/// `_target_` of `hydra_app/conf/config.yaml`, a module nothing imports.
fn run_configs(entry: &str) -> Value {
    json_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/run_configs"), &["--entry", entry])
}

#[test]
fn a_registered_class_no_configuration_selects_is_advice() {
    let report = run_configs("python tools/train.py configs/det.py");
    let backbones = in_file(&report, "mmdet_lite/models/backbones.py");
    // ResNet (selected) keeps its finding, SwinTransformer's is advice; a plain function is judged as before.
    assert_eq!(
        backbones,
        [row(12, "TX001", "-"), row(21, "TX001", "unselected-class"), row(25, "TX001", "uncalled-function")]
    );
    let reached: Vec<Option<bool>> =
        findings(&report).into_iter().filter(|f| f.0.ends_with("backbones.py")).map(|f| f.5).collect();
    assert_eq!(reached, [Some(true), Some(false), Some(true)]);
    // Without a configuration file the run may build any registered class.
    let report = run_configs("tools/train.py");
    assert!(in_file(&report, "mmdet_lite/models/backbones.py").contains(&row(21, "TX001", "-")));
}

#[test]
fn a_hydra_target_is_reached_though_nothing_imports_it() {
    let report = run_configs("python hydra_app/run.py");
    assert_eq!(in_file(&report, "hydra_app/nets/custom.py"), [row(6, "TX001", "-")]);
    assert_eq!(in_file(&report, "hydra_app/nets/unused.py"), [row(6, "TX001", "unreached")]);
    assert!(in_file(&report, "mmdet_lite/models/backbones.py").iter().all(|f| f.2 == "unreached"));
}

#[test]
fn named_runs_need_whole_directories() {
    // `--entry` with a file to scan: an error, as the run's imports could not be followed.
    let run = npu_mem_in(&fixture(), &["scan", "train.py", "--no-cache", "--entry", "train.py"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--entry needs the scan of whole directories, and train.py is a file"),
        "{}",
        run.stderr
    );
    // The configuration's runs are left out of a scan of files (a pre-commit hook), with a warning.
    let dir = temp_dir("named-runs-files");
    copy_dir(&fixture(), &dir);
    std::fs::write(dir.join("npu-mem.toml"), "entry = [\"bash scripts/train.sh\"]\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", "export.py", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("`entry` in the configuration is left out: export.py is a file"), "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(report.get("run").is_none());
    assert_eq!(in_file(&report, "export.py"), [row(7, "TX001", "-"), row(8, "TX001", "-")]);
    // ... and of a scan that does not hold what they name.
    let run = npu_mem_in(&dir, &["scan", "tools", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("which is not among the scanned files")
            && run.stderr.contains("scanned without the named runs"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_module_loaded_by_a_name_computed_from_nothing_literal_leaves_its_project_reached() {
    let dir = temp_dir("named-runs-computed");
    std::fs::write(dir.join("requirements.txt"), "").unwrap();
    std::fs::write(dir.join("run.py"), "import importlib, sys\nimportlib.import_module(sys.argv[1])\n").unwrap();
    std::fs::write(dir.join("plugin.py"), "import torch\nX = torch.zeros(1).cuda()\n").unwrap();
    let report = json_in(&dir, &["--entry", "run.py"]);
    assert_eq!(in_file(&report, "plugin.py"), [row(2, "TX001", "-")]);
    let undecided = &report["run"]["undecided"];
    assert_eq!(undecided[0]["project"], ".");
    assert_eq!(undecided[0]["reason"], "run.py loads a module by a name it computes");
    let text = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--entry", "run.py"]).stdout;
    assert!(
        text.contains("every module of . counts as reached: run.py loads a module by a name it computes"),
        "{text}"
    );
}

#[test]
fn verbose_says_which_run_imports_each_reached_module_with_findings() {
    let runs = ["--entry", "bash scripts/train.sh", "--entry", "export.py"];
    let report = json_in(&fixture(), &runs);
    let by = &report["run"]["reached_by"];
    assert_eq!(by["models/net.py"], serde_json::json!(["bash scripts/train.sh", "export.py"]));
    assert_eq!(by["export.py"], serde_json::json!(["export.py"]));
    // Loaded by a computed name in a package: no run imports it.
    assert_eq!(by["datasets/toy.py"], serde_json::json!([]));
    // Files no run reaches are not listed.
    assert!(by.get("serve/app.py").is_none());
    let text =
        |extra: &[&str]| npu_mem_in(&fixture(), &[&["scan", ".", "--no-cache"], &runs[..], extra].concat()).stdout;
    let verbose = text(&["--verbose"]);
    assert!(verbose.contains("    models/net.py: `bash scripts/train.sh`, `export.py`\n"), "{verbose}");
    assert!(verbose.contains("    datasets/toy.py: a configuration's target, or a module loaded by a computed name\n"));
    assert!(!text(&[]).contains("Reached modules that hold findings"));
}

#[test]
fn a_command_a_launch_script_builds_leaves_the_branches_undecided() {
    let dir = temp_dir("named-runs-unknown-command");
    copy_dir(&fixture(), &dir);
    // `$LAUNCH` may run train.py with `--profile`: the branch that tests it stays as it is.
    std::fs::write(dir.join("scripts/run.sh"), "python train.py --amp\n$LAUNCH\n").unwrap();
    let report = json_in(&dir, &["--entry", "bash scripts/run.sh"]);
    assert!(in_file(&report, "train.py").contains(&row(20, "TX001", "-")), "{:?}", in_file(&report, "train.py"));
    assert_eq!(report["run"]["undecided"][0]["reason"], "a launch script runs a command npu-mem cannot read");
}

#[test]
fn fix_edits_only_the_files_the_named_runs_reach() {
    let dir = temp_dir("named-runs-fix");
    copy_dir(&fixture(), &dir);
    let export_before = std::fs::read_to_string(dir.join("export.py")).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--entry", "bash scripts/train.sh", "--fix"]);
    assert!(run.code <= 1, "{}", run.stderr);
    let train = std::fs::read_to_string(dir.join("train.py")).unwrap();
    assert!(train.contains("build().npu()"), "the run's own script is fixed:\n{train}");
    assert_eq!(
        std::fs::read_to_string(dir.join("export.py")).unwrap(),
        export_before,
        "export.py is no part of the run"
    );
    // Without named runs, every file with a fix is fixed, as before.
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--fix"]);
    assert!(run.code <= 1, "{}", run.stderr);
    assert!(std::fs::read_to_string(dir.join("export.py")).unwrap().contains("build().npu()"));
}

#[test]
fn a_launch_after_the_scripts_own_cd_starts_the_script_under_that_directory() {
    let dir = temp_dir("named-runs-cd");
    for sub in ["nested/tools", "tools", "scripts"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("pyproject.toml"), "").unwrap();
    let script = "import torch\nif __name__ == \"__main__\":\n    x = torch.ones(2).cuda()\n";
    std::fs::write(dir.join("nested/tools/train.py"), script).unwrap();
    std::fs::write(dir.join("tools/train.py"), script).unwrap();
    let started = |launch: &str| -> Vec<String> {
        std::fs::write(dir.join("scripts/run.sh"), format!("#!/bin/bash\n{launch}\n")).unwrap();
        let report = json_in(&dir, &["--entry", "bash scripts/run.sh"]);
        report["run"]["scripts"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
    };
    assert_eq!(started("cd nested; python tools/train.py --epochs 1"), ["nested/tools/train.py"]);
    // Where the order does not settle the directory, both may be the one started.
    let both = ["nested/tools/train.py", "tools/train.py"];
    assert_eq!(started("(cd nested; true)\npython tools/train.py"), both);
    assert_eq!(started("python tools/train.py\ncd nested"), both);
    // ModelZoo's test scripts: `cd ..` in a branch, then the port's own
    // directory by a variable with a literal end, and the launch in a loop.
    let modelzoo =
        "cur_path=`pwd`\nif [ x\"${cur_path##*/}\" == x\"scripts\" ]; then\n    cd ..\n    cur_path=`pwd`\nfi\n\
                    cd $cur_path/nested\nfor i in 0 1; do\n    nohup python3 tools/train.py > log_$i 2>&1 &\ndone";
    assert_eq!(started(modelzoo), ["nested/tools/train.py"]);
    // A change in the loop may come before any turn but the first.
    assert_eq!(started(&modelzoo.replace("2>&1 &\n", "2>&1 &\n    cd ..\n")), both);
    // A directory with its own project marker is still where the launch is.
    std::fs::write(dir.join("nested/requirements.txt"), "torch\n").unwrap();
    assert_eq!(started(modelzoo), ["nested/tools/train.py"]);
}

/// A shell script that the named command runs with no arguments has empty
/// positional parameters, so the options its launches pass are known; with
/// arguments they are not read, and nothing is decided by them.
#[test]
fn a_script_run_without_arguments_passes_no_positional_ones() {
    let dir = temp_dir("positional");
    std::fs::write(dir.join("requirements.txt"), "torch\n").unwrap();
    std::fs::write(
        dir.join("train.py"),
        "import argparse\nimport torch\n\np = argparse.ArgumentParser()\np.add_argument(\"--fast\", action=\"store_true\")\n\
         args = p.parse_args()\nif args.fast:\n    x = torch.zeros(1).cuda()\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("test")).unwrap();
    let script = "if [[ $# == 1 ]]; then\n    extra=$1\nelse\n    extra=\"\"\nfi\nPY=\"python train.py\"\n$PY --lr 1 $extra \"$@\"\n";
    std::fs::write(dir.join("test/run.sh"), script).unwrap();
    let advice = |entry: &str| in_file(&json_in(&dir, &["--entry", entry]), "train.py");
    assert_eq!(advice("bash test/run.sh"), [row(8, "TX001", "untaken-branch")]);
    assert_eq!(advice("bash test/run.sh --fast"), [row(8, "TX001", "-")], "its arguments may be any");
}
