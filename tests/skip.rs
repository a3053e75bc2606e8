//! The skip: a file none of whose rules, summaries or project facts can
//! match (by the words they need) is not parsed. It must never change what
//! a scan finds: `--no-skip`, which tries every rule on every file, is the
//! reference.

mod common;

use common::{npu_mem_in, temp_dir};
use std::path::Path;

/// The JSON report of `npu-mem scan DIR` in `cwd`, with `extra` arguments.
fn report(cwd: &Path, dir: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["scan", dir, "--no-cache", "--format", "json", "--fail-on", "never"];
    args.extend(extra);
    let run = npu_mem_in(cwd, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn every_fixture_gives_the_same_report_with_and_without_the_skip() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let skipped = report(root, "fixtures", &[]);
    let every_rule = report(root, "fixtures", &["--no-skip"]);
    assert!(skipped["findings"].as_array().unwrap().len() > 500, "the fixtures hold findings");
    assert_eq!(skipped, every_rule);
}

/// A project of `n` files that each move a tensor to CUDA, and a broken
/// file with no word any rule needs.
fn project_with_a_broken_file(name: &str, n: usize) -> common::TempDir {
    let dir = temp_dir(name);
    for i in 0..n {
        std::fs::write(dir.join(format!("m{i}.py")), "import torch\nx = torch.ones(1).cuda()\n").unwrap();
    }
    std::fs::write(dir.join("notes.py"), "def f(:\n    return 1\n").unwrap();
    dir
}

fn partial_paths(report: &serde_json::Value) -> Vec<&str> {
    let errors = report["errors"].as_array().unwrap();
    errors.iter().filter(|e| e["kind"] == "partial").map(|e| e["path"].as_str().unwrap()).collect()
}

#[test]
fn a_file_no_rule_can_match_is_not_parsed() {
    let dir = project_with_a_broken_file("skip-large", 40);
    let skipped = report(&dir, ".", &[]);
    let every_rule = report(&dir, ".", &["--no-skip"]);
    // The syntax error hides nothing, and only a parse would show it.
    assert!(partial_paths(&skipped).is_empty(), "{skipped}");
    assert_eq!(partial_paths(&every_rule), ["notes.py"]);
    assert_eq!(skipped["findings"], every_rule["findings"]);
    assert_eq!(skipped["findings"].as_array().unwrap().len(), 40);
}

#[test]
fn a_scan_of_a_few_files_parses_every_file() {
    let dir = project_with_a_broken_file("skip-small", 2);
    assert_eq!(partial_paths(&report(&dir, ".", &[])), ["notes.py"]);
}

/// The `parsed` report's broken files (only a parse shows their syntax
/// error), in a project of 40 quiet files and the broken `files`.
fn broken_files_parsed(name: &str, files: &[(&str, &str)], extra: &[&str]) -> Vec<String> {
    let dir = project_with_a_broken_file(name, 40);
    std::fs::remove_file(dir.join("notes.py")).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let skipped = report(&dir, ".", extra);
    let every_rule = report(&dir, ".", &[extra, &["--no-skip"]].concat());
    assert_eq!(skipped["findings"], every_rule["findings"]);
    assert_eq!(partial_paths(&every_rule).len(), files.len(), "{every_rule}");
    partial_paths(&skipped).into_iter().map(str::to_string).collect()
}

#[test]
fn words_inside_longer_names_do_not_make_a_file_worth_parsing() {
    // `input` holds `npu` (API005's trigger is the whole name `npu`), `model`
    // holds `mode`; `x.to_mkldnn()` is no fallback tensor method (API016
    // leaves it out), nor is a layer count under 24 MEM007's depth.
    let quiet =
        "import torch\ndef f(:\n    y = model(input).to_mkldnn()\n    return nn.Linear(8, 8), dict(num_layers=12)\n";
    // `.lgamma()` is a fallback tensor method, `torch.nn.HuberLoss` a
    // fallback module, `depth=32` a depth MEM007 reads in any file.
    let method = "import torch\ndef f(:\n    return x.lgamma()\n";
    let module = "import torch\ndef f(:\n    return torch.nn.HuberLoss()\n";
    let depth = "def f(:\n    return dict(depth=32)\n";
    let npu = "import torch\ndef f(:\n    return x.to('npu')\n";
    let files =
        [("quiet.py", quiet), ("method.py", method), ("module.py", module), ("depth.py", depth), ("npu.py", npu)];
    let parsed = broken_files_parsed("skip-words", &files, &[]);
    assert_eq!(parsed, ["depth.py", "method.py", "module.py", "npu.py"]);
}

#[test]
fn a_pack_trigger_can_require_a_whole_name() {
    let dir = common::temp_dir("skip-trigger-name");
    for i in 0..40 {
        std::fs::write(dir.join(format!("m{i}.py")), "x = 1\n").unwrap();
    }
    std::fs::write(dir.join("whole.py"), "run(device='gpu')\n").unwrap();
    std::fs::write(dir.join("dotted.py"), "import gpu.tools\n").unwrap();
    std::fs::write(dir.join("inside.py"), "gpus = gpu_count()\n").unwrap();
    let pack = "[pack]\nname = \"org\"\n\n[[rule]]\ncode = \"ORG001\"\nname = \"mentions-gpu\"\nsection = \"transfer\"\n\
                severity = \"info\"\nmessage = \"mentions the GPU\"\ntriggers = [{ name = \"gpu\" }]\n\
                docs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }\n[rule.match]\nkind = \"module\"\n";
    std::fs::write(dir.join("p.toml"), pack).unwrap();
    let run =
        npu_mem_in(&dir, &["scan", ".", "--rules", "p.toml", "--select", "ORG", "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut paths: Vec<&str> =
        report["findings"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    paths.sort();
    assert_eq!(paths, ["dotted.py", "whole.py"]);
    // A table that is not `{ name = ... }` is refused at its place, saying what a trigger is.
    std::fs::write(dir.join("p.toml"), pack.replace("{ name = ", "{ nme = ")).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--rules", "p.toml", "--no-cache"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("p.toml:10:") && run.stderr.contains("a whole name ({ name = \"npu\" })"),
        "{}",
        run.stderr
    );
}
