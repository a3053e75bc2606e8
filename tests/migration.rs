//! Projects and the two migration styles: each file belongs to the nearest
//! project directory at or below the scan root, project facts and the
//! migration style are decided per project, and in a project that imports
//! `transfer_to_npu` what it handles is advice (info, grouped, not failing
//! the default gate) while its blockers keep their severity.

mod common;

use common::{npu_mem, npu_mem_in, temp_dir};
use serde_json::Value;
use std::path::Path;

const MONOREPO: &str = "fixtures/monorepo";
const AUTO_APP: &str = "fixtures/monorepo/auto_app";
const MANUAL_APP: &str = "fixtures/monorepo/manual_app";

/// A JSON scan of `args` (never failing on findings).
fn json(args: &[&str]) -> Value {
    common::scan_json(&[&["--no-cache"], args].concat())
}

/// `(path, code, severity, advisory)` of every finding of a JSON report.
fn findings(report: &Value) -> Vec<(String, String, String, bool)> {
    let text = |f: &Value, key: &str| f[key].as_str().unwrap_or_default().to_string();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (text(f, "path"), text(f, "code"), text(f, "severity"), f["advisory"].as_bool().unwrap()))
        .collect()
}

/// The text report, without the scan time.
fn text(dir: &Path, args: &[&str]) -> (String, i32) {
    let run = npu_mem_in(dir, &[&["scan", "--no-cache", "--color", "never"], args].concat());
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let re = regex::Regex::new(r"scanned in \d+ ms").unwrap();
    (re.replace(&run.stdout, "scanned in <time> ms").into_owned(), run.code)
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn each_project_gets_its_own_style_and_facts() {
    let report = json(&[MONOREPO]);
    let projects = report["projects"].as_array().unwrap();
    let summary: Vec<(&str, &str, &str)> = projects
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p["marker"].as_str().unwrap(), p["migration"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [(AUTO_APP, "pyproject.toml", "automatic"), (MANUAL_APP, "setup.py", "manual")],
        "{projects:?}"
    );
    assert_eq!(projects[0]["transfer_to_npu"]["path"], "fixtures/monorepo/auto_app/train.py");
    assert_eq!(projects[0]["transfer_to_npu"]["line"], 4);
    assert_eq!(projects[0]["verdict"]["status"], "blocked");
    assert_eq!(projects[1]["transfer_to_npu"], Value::Null);
    assert_eq!(projects[1]["verdict"]["status"], "compatible");
    let found = findings(&report);
    let of = |dir: &str, code: &str| -> Vec<(String, bool)> {
        found.iter().filter(|f| f.0.starts_with(dir) && f.1 == code).map(|f| (f.2.clone(), f.3)).collect()
    };
    // automatic migration: `.cuda()` is advice; the `"cuda" in name` test still blocks it.
    assert_eq!(of(AUTO_APP, "TX001"), vec![("info".to_string(), true); 3]);
    assert_eq!(of(AUTO_APP, "TX003"), [("error".to_string(), false)]);
    // pinning asks torch.cuda.is_available(), which transfer_to_npu (imported by another file) answers.
    assert_eq!(of(AUTO_APP, "DL007"), [("info".to_string(), true)]);
    // manual migration: `.cuda()` stays a warning.
    assert_eq!(of(MANUAL_APP, "TX001"), vec![("warning".to_string(), false); 2]);
    // TX015 needs the project to import transfer_to_npu: the other project's import does not count.
    assert_eq!(of(MANUAL_APP, "TX015"), []);
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/report.schema.json")).unwrap()).unwrap();
    let mut errors = Vec::new();
    common::validate(&schema, &schema, &report, "$", &mut errors);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn a_fact_of_one_project_holds_there_only() {
    // The same TorchScript export in a project that imports transfer_to_npu is TX015.
    let dir = temp_dir("facts-per-project");
    common::copy_dir(&repo().join(MONOREPO), &dir);
    std::fs::copy(dir.join("manual_app/export.py"), dir.join("auto_app/export.py")).unwrap();
    let report = common::scan_json(&["--no-cache", dir.to_str().unwrap()]);
    let tx015: Vec<String> = findings(&report).into_iter().filter(|f| f.1 == "TX015").map(|f| f.0).collect();
    assert_eq!(tx015.len(), 1, "{tx015:?}");
    assert!(tx015[0].ends_with("auto_app/export.py"), "{tx015:?}");
}

#[test]
fn text_report_gives_style_and_verdict_per_project() {
    let (out, code) = text(repo(), &[MONOREPO]);
    assert_eq!(code, 1);
    insta::assert_snapshot!("monorepo_text", out);
}

#[test]
fn one_project_says_its_style_in_the_header() {
    let (out, _) = text(repo(), &[AUTO_APP]);
    let header: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(
        header[2],
        "Migration style: automatic (transfer_to_npu imported in fixtures/monorepo/auto_app/train.py:4)"
    );
    // The `.cuda()` calls are one line, not three findings with excerpts.
    let grouped: Vec<&str> = out.lines().filter(|l| l.starts_with("TX001")).collect();
    assert_eq!(grouped, ["TX001 [info] x3 cuda-call in 1 file: handled by transfer_to_npu at run time"]);
    assert!(!out.contains("TX001 [info] `.cuda()`"), "{out}");
    assert!(out.contains("auto_app/model.py:16:8 TX003 [error] [blocker]"), "{out}");
    assert!(out.contains("  - 4 findings are handled by transfer_to_npu at run time"), "{out}");
    let (out, _) = text(repo(), &[MANUAL_APP]);
    assert_eq!(out.lines().nth(2), Some("Migration style: manual (no transfer_to_npu import found)"));
    assert!(out.contains("manual_app/infer.py:6:11 TX001 [warning]"), "{out}");
    assert!(out.contains("Turn it on: add `import torch_npu`"), "{out}");
}

#[test]
fn only_the_blocker_fails_the_gate_under_automatic_migration() {
    let code = |args: &[&str]| npu_mem(&[&["scan", "--no-cache", "--format", "concise"], args].concat()).code;
    assert_eq!(code(&[AUTO_APP]), 1, "TX003 is a blocker and an error");
    assert_eq!(code(&[AUTO_APP, "--ignore", "TX003"]), 0, "the `.cuda()` calls are advice");
    assert_eq!(code(&[AUTO_APP, "--ignore", "TX003", "--fail-on", "info"]), 1, "advice is still info");
    assert_eq!(code(&[AUTO_APP, "--ignore", "TX003", "--migration", "manual"]), 1, "manual: warnings again");
    assert_eq!(code(&[MANUAL_APP]), 1, "no transfer_to_npu: `.cuda()` warns");
    assert_eq!(code(&[MANUAL_APP, "--migration", "auto"]), 0);
    assert_eq!(code(&[MONOREPO, "--ignore", "TX003"]), 1, "the manual project still warns");
    assert_eq!(code(&[MONOREPO, "--ignore", "TX003", "--migration", "auto"]), 0);
}

#[test]
fn the_flag_overrides_detection_both_ways() {
    let report = json(&[MONOREPO, "--migration", "manual"]);
    assert!(findings(&report).iter().all(|f| !f.3), "manual: nothing is advice");
    let styles: Vec<(&str, &str)> = report["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["migration"].as_str().unwrap(), p["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(styles, [("manual", "set by --migration"); 2]);
    let report = json(&[MONOREPO, "--migration", "auto"]);
    let tx001: Vec<(String, String, String, bool)> = findings(&report).into_iter().filter(|f| f.1 == "TX001").collect();
    assert_eq!(tx001.len(), 5);
    assert!(tx001.iter().all(|f| f.2 == "info" && f.3), "{tx001:?}");
    let (out, _) = text(repo(), &[MANUAL_APP, "--migration", "auto"]);
    assert_eq!(out.lines().nth(2), Some("Migration style: automatic (set by --migration)"));
    let (out, _) = text(repo(), &[AUTO_APP, "--migration", "manual"]);
    assert_eq!(out.lines().nth(2), Some("Migration style: manual (set by --migration)"));
    assert!(!out.contains("Turn it on"), "manual was chosen: {out}");
}

#[test]
fn the_configuration_sets_the_style_and_the_flag_wins() {
    let dir = temp_dir("migration-config");
    common::copy_dir(&repo().join(AUTO_APP), &dir);
    std::fs::write(dir.join("npu-mem.toml"), "migration = \"manual\"\n").unwrap();
    let (out, code) = text(&dir, &[".", "--ignore", "TX003"]);
    assert_eq!(out.lines().nth(2), Some("Migration style: manual (set by `migration` in npu-mem.toml)"));
    assert_eq!(code, 1, "manual: the `.cuda()` calls warn");
    let (out, code) = text(&dir, &[".", "--ignore", "TX003", "--migration", "detect"]);
    assert_eq!(out.lines().nth(2), Some("Migration style: automatic (transfer_to_npu imported in train.py:4)"));
    assert_eq!(code, 0);
    let run = npu_mem_in(&dir, &["scan", "--show-settings"]);
    assert!(run.stdout.contains("migration = manual  ("), "{}", run.stdout);
    assert!(run.stdout.contains("npu-mem.toml:1)"), "{}", run.stdout);
    // A severity override does not turn advice back into a warning.
    std::fs::write(dir.join("npu-mem.toml"), "severity = { TX001 = \"error\" }\n").unwrap();
    let report = common::scan_json(&["--no-cache", dir.to_str().unwrap()]);
    let tx001: Vec<_> = findings(&report).into_iter().filter(|f| f.1 == "TX001").map(|f| (f.2, f.3)).collect();
    assert_eq!(tx001, vec![("info".to_string(), true); 3]);
    std::fs::write(dir.join("npu-mem.toml"), "migration = \"sometimes\"\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", "--no-cache"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("npu-mem.toml:1"), "{}", run.stderr);
}

#[test]
fn projects_are_the_nearest_marked_directories_at_or_below_the_root() {
    let dir = temp_dir("project-markers");
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let cuda = "import torch\nx = torch.ones(2).cuda()\n";
    // Above the scan root: not a project of this scan.
    write("pyproject.toml", "[project]\nname = \"outer\"\n");
    write("scan/loose.py", cuda);
    write("scan/worktree/.git", "gitdir: /elsewhere\n");
    write("scan/worktree/pkg/train.py", cuda);
    write("scan/reqs/requirements-dev.txt", "torch\n");
    write("scan/reqs/nested/cfg/setup.cfg", "[metadata]\nname = inner\n");
    write("scan/reqs/nested/cfg/a.py", cuda);
    write("scan/reqs/b.py", cuda);
    // A module named setup.py inside a package does not make a project.
    write("scan/pkg/__init__.py", "");
    write("scan/pkg/setup.py", cuda);
    let report = common::scan_json(&["--no-cache", dir.join("scan").to_str().unwrap()]);
    let shown = |p: &Value| {
        let path = p["path"].as_str().unwrap().to_string();
        let rel = path.rsplit_once("/scan").map_or(path.clone(), |(_, rest)| format!("scan{rest}"));
        (rel, p["marker"].as_str().map(str::to_string), p["files_scanned"].as_u64().unwrap())
    };
    let projects: Vec<(String, Option<String>, u64)> =
        report["projects"].as_array().unwrap().iter().map(shown).collect();
    let expected = [
        ("scan", None, 3),
        ("scan/reqs", Some("requirements-dev.txt"), 1),
        ("scan/reqs/nested/cfg", Some("setup.cfg"), 1),
        ("scan/worktree", Some(".git"), 1),
    ];
    let expected: Vec<(String, Option<String>, u64)> =
        expected.iter().map(|(p, m, n)| (p.to_string(), m.map(str::to_string), *n)).collect();
    assert_eq!(projects, expected);
}

#[test]
fn files_named_on_the_command_line_find_their_project_up_to_the_current_directory() {
    // As pre-commit runs it: from the repository root, with the staged files.
    let monorepo = repo().join(MONOREPO);
    let run = npu_mem_in(
        &monorepo,
        &["scan", "--no-cache", "--format", "json", "auto_app/train.py", "auto_app/model.py", "manual_app/infer.py"],
    );
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let paths: Vec<&str> = report["projects"].as_array().unwrap().iter().map(|p| p["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["auto_app", "manual_app"]);
    assert!(findings(&report).iter().filter(|f| f.1 == "TX001").all(|f| f.3 == f.0.starts_with("auto_app")));
}

#[test]
fn advisory_findings_keep_their_fix_and_baseline() {
    let run = npu_mem(&["scan", "--no-cache", "--diff", AUTO_APP]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("+    net = TinyNet().npu()"), "{}", run.stdout);
    let dir = temp_dir("advisory-baseline");
    common::copy_dir(&repo().join(AUTO_APP), &dir);
    let run = npu_mem_in(&dir, &["scan", "--no-cache", "--write-baseline", "b.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = npu_mem_in(&dir, &["scan", "--no-cache", "--baseline", "b.json", "--format", "json"]);
    assert_eq!(run.code, 0, "everything is baselined: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let baselined = report["baselined"].as_array().unwrap();
    // 4 advisory findings, TX003's blocker and API007's advice (automatic migration does not change optimizers).
    assert_eq!(baselined.len(), 6);
    assert_eq!(baselined.iter().filter(|f| f["advisory"] == true && f["severity"] == "info").count(), 4);
}

#[test]
fn sarif_carries_the_severity_assigned() {
    let run = npu_mem(&["scan", "--no-cache", "--format", "sarif", MONOREPO]);
    let sarif: Value = serde_json::from_str(&run.stdout).unwrap();
    let levels: Vec<(String, &str)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "TX001")
        .map(|r| {
            let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
            (uri.rsplit('/').nth(1).unwrap().to_string(), r["level"].as_str().unwrap())
        })
        .collect();
    let expected = [("auto_app", "note"); 3].into_iter().chain([("manual_app", "warning"); 2]);
    assert_eq!(levels, expected.map(|(d, l)| (d.to_string(), l)).collect::<Vec<_>>());
}

const PROCESSES: &str = "fixtures/processes";

#[test]
fn entry_scripts_without_transfer_to_npu_keep_their_findings() {
    let report = json(&[PROCESSES]);
    let cuda_calls: Vec<(String, String, bool)> = findings(&report)
        .into_iter()
        .filter(|(_, code, _, _)| code == "TX001")
        .map(|(path, _, severity, advisory)| {
            (path.trim_start_matches("fixtures/processes/").to_string(), severity, advisory)
        })
        .collect();
    let expected = [
        // Reached by train.py (through a relative import in app/model.py) or by serve.py.
        ("app/layers.py", "info", true),
        ("app/model.py", "info", true),
        // Only demo.py, which runs without transfer_to_npu, imports it.
        ("app/viz.py", "warning", false),
        ("demo.py", "warning", false),
        // Its process imports transfer_to_npu through app/npu_setup.py.
        ("serve.py", "info", true),
        ("train.py", "info", true),
        ("train.py", "info", true),
    ]
    .map(|(path, severity, advisory)| (path.to_string(), severity.to_string(), advisory));
    assert_eq!(cuda_calls, expected);
    let project = &report["projects"][0];
    assert_eq!(project["migration"], "automatic");
    assert_eq!(
        project["reason"],
        "transfer_to_npu imported in fixtures/processes/app/npu_setup.py:3; 1 entry script runs without it: \
         fixtures/processes/demo.py"
    );
}

#[test]
fn the_report_says_where_transfer_to_npu_is_off() {
    let (out, code) = text(repo(), &[PROCESSES]);
    assert_eq!(code, 1, "demo.py's CUDA calls are warnings that fail the default gate:\n{out}");
    assert!(out.contains("it handles every pattern found in the code that imports it."), "{out}");
    assert!(
        out.contains(
            "Turn it on where it is off: add `import torch_npu` and `from torch_npu.contrib import transfer_to_npu` \
             at the top of each entry script that runs without it (fixtures/processes/demo.py)."
        ),
        "{out}"
    );
}

#[test]
fn a_style_set_by_the_flag_applies_to_every_file() {
    let report = json(&[PROCESSES, "--migration", "auto"]);
    let cuda_calls: Vec<_> = findings(&report).into_iter().filter(|(_, code, _, _)| code == "TX001").collect();
    assert_eq!(cuda_calls.len(), 7);
    assert!(cuda_calls.iter().all(|(_, _, severity, advisory)| *advisory && severity == "info"), "{cuda_calls:?}");
    assert_eq!(report["projects"][0]["reason"], "set by --migration");
}

#[test]
fn a_comparison_on_a_plain_string_is_advice_and_one_on_a_device_type_blocks() {
    let report = json(&["fixtures/rules/TX003-auto"]);
    let compares: Vec<(u64, bool, bool)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "TX003")
        .map(|f| (f["line"].as_u64().unwrap(), f["advisory"].as_bool().unwrap(), f["blocker"].as_bool().unwrap()))
        .collect();
    // (line, advisory, blocker): the command-line strings, then what torch reports.
    assert_eq!(
        compares,
        [
            (17, true, false),
            (19, true, false),
            (22, false, true),
            (25, false, true),
            (27, false, true),
            (35, true, false)
        ]
    );
    // Under manual migration the plain-string comparisons keep their severity but block nothing.
    let manual = json(&["fixtures/rules/TX003-auto", "--migration", "manual"]);
    let errors =
        manual["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "TX003" && f["severity"] == "error");
    assert_eq!(errors.count(), 6);
}

#[test]
fn a_load_without_map_location_is_advice_under_automatic_migration_and_a_cuda_one_is_not() {
    // transfer_to_npu answers torch.cuda's questions for the NPU and builds
    // the storages of a CUDA checkpoint there; a CUDA `map_location` still
    // puts the whole checkpoint in device memory.
    let tx014 = |report: &serde_json::Value| -> Vec<(u64, bool)> {
        let all = report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "TX014");
        all.map(|f| (f["line"].as_u64().unwrap(), f["advisory"].as_bool().unwrap())).collect()
    };
    let auto = tx014(&json(&["fixtures/rules/TX014.py", "--migration", "auto"]));
    let cuda_map_location = [20, 22, 24, 30];
    assert_eq!(auto.len(), 15, "{auto:?}");
    for (line, advisory) in &auto {
        assert_eq!(*advisory, !cuda_map_location.contains(line), "line {line}: {auto:?}");
    }
    let manual = tx014(&json(&["fixtures/rules/TX014.py", "--migration", "manual"]));
    assert!(manual.iter().all(|(_, advisory)| !advisory), "{manual:?}");
}

#[test]
fn a_scripted_function_that_only_runs_eagerly_blocks_nothing() {
    // transfer_to_npu turns torch.jit.script into the identity: the code runs
    // eagerly and gives the same results, unless the file needs a real
    // ScriptModule (here train.py saves what it scripted).
    let report = json(&["fixtures/rules/TX015-project"]);
    let mut tx015: Vec<(String, u64, String, bool)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "TX015")
        .map(|f| {
            let path = f["path"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
            (path, f["line"].as_u64().unwrap(), f["severity"].as_str().unwrap().to_string(), f["blocker"] == true)
        })
        .collect();
    tx015.sort();
    let info = |line| ("ops.py".to_string(), line, "info".to_string(), false);
    assert_eq!(tx015, [info(7), info(13), info(30), ("train.py".to_string(), 27, "warning".to_string(), true)]);
}

#[test]
fn a_project_vendored_inside_another_shares_its_facts() {
    // SOLO's shape: the port keeps a copy of mmcv with its own setup.py and
    // uses Huawei's apex (combine_grad) in its own training code.
    let dir = temp_dir("vendored-project");
    let files: &[(&str, &str)] = &[
        ("setup.py", "from setuptools import setup\nsetup(name='solo')\n"),
        (
            "solo/train.py",
            "import torch\nfrom apex import amp\nfrom vendorlib.hooks import step\n\n\
             def build(model, opt):\n    return amp.initialize(model, opt, opt_level='O1', combine_grad=True)\n",
        ),
        ("vendorlib/setup.py", "from setuptools import setup\nsetup(name='vendorlib')\n"),
        ("vendorlib/vendorlib/__init__.py", ""),
        (
            "vendorlib/vendorlib/hooks.py",
            "from apex import amp\n\n\ndef step(loss, opt):\n    return amp.scale_loss(loss, opt)\n",
        ),
        // A sibling that the project does not import keeps its own facts; a
        // usage example in a docstring imports nothing.
        ("solo/notes.py", "\"\"\"How to compare:\n\nimport otherlib\nfrom otherlib import hooks\n\"\"\"\n"),
        ("otherlib/setup.py", "from setuptools import setup\nsetup(name='otherlib')\n"),
        ("otherlib/otherlib/__init__.py", ""),
        ("otherlib/otherlib/hooks.py", "from apex import amp\n"),
    ];
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let run =
        npu_mem_in(&dir, &["scan", ".", "--no-cache", "--select", "AMP007", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let paths: Vec<String> = findings(&report).into_iter().map(|(path, ..)| path).collect();
    assert_eq!(paths, ["otherlib/otherlib/hooks.py"], "the vendored copy runs with the project's Ascend apex");
}

#[test]
fn a_pattern_only_automatic_migration_breaks_is_info_without_it_and_still_blocks_it() {
    let dir = temp_dir("migration-jit-save");
    let export =
        "import torch\n\n\ndef export(model, path):\n    scripted = torch.jit.script(model)\n    scripted.save(path)\n";
    std::fs::write(dir.join("export.py"), export).unwrap();
    let tx015 = |args: &[&str]| {
        let run =
            npu_mem_in(&dir, &[&["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"], args].concat());
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let f = report["findings"].as_array().unwrap().iter().find(|f| f["code"] == "TX015").cloned();
        f.map(|f| (f["severity"].as_str().unwrap().to_string(), f["blocker"].as_bool().unwrap()))
    };
    assert_eq!(tx015(&[]), Some(("info".to_string(), true)), "manual: scripting works, advice that blocks");
    assert_eq!(tx015(&["--migration", "auto"]), Some(("warning".to_string(), true)), "automatic: the save fails");
    let (out, code) = text(&dir, &["."]);
    assert_eq!(code, 0, "info does not fail the default gate: {out}");
    assert!(out.contains("Automatic migration (transfer_to_npu): blocked by 1 finding (TX015 x1)"), "{out}");
}

/// `(line, advisory)` of each TX001 finding of a JSON scan of `train.py`
/// written with `source` alone in a fresh project.
fn tx001_advice(name: &str, source: &str) -> (Vec<(u64, bool)>, String) {
    let dir = temp_dir(name);
    std::fs::write(dir.join("train.py"), source).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let found = report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "TX001");
    let lines = found.map(|f| (f["line"].as_u64().unwrap(), f["advisory"].as_bool().unwrap())).collect();
    (lines, report["projects"][0]["migration"].as_str().unwrap_or_default().to_string())
}

#[test]
fn code_that_runs_before_transfer_to_npu_is_not_migrated_by_it() {
    // Module-level code above the import runs before torch is patched.
    let above = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nfrom torch_npu.contrib import transfer_to_npu\nx = torch.nn.Linear(2, 2).cuda()\n";
    assert_eq!(tx001_advice("late-above", above).0, [(2, false), (4, true)]);
    // Imported only inside main(): code at import time runs before it.
    let in_main = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n\n\ndef main():\n    from torch_npu.contrib import transfer_to_npu\n    return torch.nn.Linear(2, 2).cuda()\n\n\nif __name__ == \"__main__\":\n    torch.nn.Linear(2, 2).cuda()\n    main()\n";
    let (lines, style) = tx001_advice("late-main", in_main);
    assert_eq!(lines, [(2, false), (7, true), (11, false)]);
    assert_eq!(style, "automatic");
    // Imported only for type checkers: it never runs.
    let typing = "import torch\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from torch_npu.contrib import transfer_to_npu\nx = torch.nn.Linear(2, 2).cuda()\n";
    let (lines, style) = tx001_advice("late-typing", typing);
    assert_eq!((lines, style.as_str()), (vec![(5, false)], "manual"));
}

#[test]
fn projects_past_the_listed_ones_still_plan_their_fixes() {
    // Ten projects, eight of them listed: each is compatible, so each plan is
    // to turn transfer_to_npu on, and the fixes of all ten, the two unlisted
    // ones included, are the other way to migrate, not one more step.
    let dir = temp_dir("many-projects");
    for i in 0..10 {
        let project = dir.join(format!("p{i}"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("pyproject.toml"), format!("[project]\nname = \"p{i}\"\n")).unwrap();
        std::fs::write(project.join("train.py"), "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n").unwrap();
    }
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--fail-on", "never", "--color", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("... and 2 projects more"), "{}", run.stdout);
    assert!(run.stdout.contains("Or, instead of turning it on, migrate by hand: 10 safe fixes"), "{}", run.stdout);
    assert!(!run.stdout.contains("safe fixes: `npu-mem scan --fix`"), "{}", run.stdout);
}
