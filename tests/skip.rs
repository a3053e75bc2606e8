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
