//! The pre-commit hooks, run by the real `pre-commit` (installed from PyPI into
//! the cargo target directory) with `try-repo` against temporary repositories:
//! the rust hooks built from this repository, and the system hooks with the
//! test's `npu-mem` on PATH.

mod common;

use common::{git, npu_mem_in, output_text, path_with, venv_with};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

const BAD: &str = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n";
const FIXED: &str = "import torch\nimport torch_npu\nmodel = torch.nn.Linear(2, 2).npu()\n";

/// A `pre-commit` command in `dir`.
fn pre_commit(dir: &Path) -> Command {
    let shared = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let mut cmd = Command::new(venv_with("pre-commit-venv", &["pre-commit"]).join("pre-commit"));
    cmd.current_dir(dir)
        // One pre-commit home and one cargo target directory for all runs, so
        // the hook's `cargo install` compiles the dependencies only once.
        .env("PRE_COMMIT_HOME", shared.join("pre-commit-home"))
        .env("CARGO_TARGET_DIR", shared.join("pre-commit-cargo-target"))
        // The hook's `cargo install` builds the release profile, whose fat LTO
        // takes minutes per build on a 2-core machine; these tests check what
        // the hook does, not how fast it runs (tests/wheel.rs builds the
        // release binary as shipped), so they build it unoptimised.
        .env("CARGO_PROFILE_RELEASE_LTO", "off")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0");
    cmd
}

/// Runs `pre-commit ARGS` in `dir`.
fn pre_commit_in(dir: &Path, args: &[&str]) -> Output {
    pre_commit(dir).args(args).output().expect("pre-commit runs")
}

/// Runs `pre-commit ARGS` in `dir` with `bin` first on PATH.
fn pre_commit_with_path(dir: &Path, bin: &Path, args: &[&str]) -> Output {
    pre_commit(dir).args(args).env("PATH", path_with(bin)).output().expect("pre-commit runs")
}

/// A fresh git repository under the target directory.
fn repo(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pre-commit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    dir
}

/// A fresh repository with an unstaged `bad.py` (one finding) and `good.py`
/// (none), and the concise line `npu-mem` prints for `bad.py`: what the hooks
/// must print.
fn bad_and_good(name: &str) -> (PathBuf, String) {
    let dir = repo(name);
    std::fs::write(dir.join("bad.py"), BAD).unwrap();
    std::fs::write(dir.join("good.py"), "import math\nprint(math.pi)\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", "--format", "concise", "--no-cache", "bad.py"]);
    assert_eq!(run.code, 1, "bad.py has a finding: {}", run.stderr);
    assert!(run.stdout.starts_with("bad.py:2:") && run.stdout.contains(": TX001 [warning] "), "{}", run.stdout);
    let line = run.stdout.trim_end().to_string();
    (dir, line)
}

/// Asserts that a hook run failed and printed `line` as the concise report does,
/// not the sectioned text report.
fn assert_concise_failure(out: &Output, line: &str) {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "a finding fails the hook: {}", output_text(out));
    assert!(text.lines().any(|l| l == line), "the concise line {line:?} is printed: {}", output_text(out));
    assert!(!text.contains("== Host-Device Transfer"), "no sectioned report: {}", output_text(out));
}

fn head() -> String {
    let out = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(ROOT).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
#[ignore = "installs pre-commit from PyPI; .ci/run runs it with `cargo test -- --ignored`"]
fn hook_fails_on_a_finding_and_passes_clean_files_and_empty_commits() {
    let (dir, line) = bad_and_good("rust");

    // try-repo: the hook as this checkout defines it, on a file with a finding.
    git(&dir, &["add", "bad.py"]);
    let out = pre_commit_in(&dir, &["try-repo", ROOT, "npu-mem", "--files", "bad.py"]);
    assert_concise_failure(&out, &line);

    // The same hook from a config pinned to this commit (installed once for both runs).
    let config = format!(
        "repos:\n-   repo: {ROOT}\n    rev: {}\n    hooks:\n    -   id: npu-mem\n    -   id: npu-mem-fix\n",
        head()
    );
    std::fs::write(dir.join(".pre-commit-config.yaml"), config).unwrap();
    git(&dir, &["reset", "-q"]);
    let out = pre_commit_in(&dir, &["run"]);
    assert!(out.status.success(), "nothing staged: the hook passes\n{}", String::from_utf8_lossy(&out.stdout));
    git(&dir, &["add", "good.py"]);
    let out = pre_commit_in(&dir, &["run", "--files", "good.py"]);
    assert!(out.status.success(), "a clean file passes:\n{}", String::from_utf8_lossy(&out.stdout));

    // The fixing hook rewrites the file and fails the commit so the fix can be reviewed.
    let out = pre_commit_in(&dir, &["run", "npu-mem-fix", "--files", "bad.py"]);
    assert!(!out.status.success(), "a fixed file fails the commit:\n{}", String::from_utf8_lossy(&out.stdout));
    let fixed = std::fs::read_to_string(dir.join("bad.py")).unwrap();
    assert_eq!(fixed, FIXED);
    let out = pre_commit_in(&dir, &["run", "npu-mem-fix", "--files", "bad.py"]);
    assert!(out.status.success(), "and passes once fixed:\n{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
#[ignore = "installs pre-commit from PyPI; .ci/run runs it with `cargo test -- --ignored`"]
fn system_hooks_run_the_npu_mem_on_path() {
    let (dir, line) = bad_and_good("system");
    git(&dir, &["add", "bad.py", "good.py"]);
    let bin = Path::new(env!("CARGO_BIN_EXE_npu-mem")).parent().unwrap();

    let out = pre_commit_with_path(&dir, bin, &["try-repo", ROOT, "npu-mem-system", "--files", "bad.py"]);
    assert_concise_failure(&out, &line);
    let out = pre_commit_with_path(&dir, bin, &["try-repo", ROOT, "npu-mem-system", "--files", "good.py"]);
    assert!(out.status.success(), "a clean file passes: {}", output_text(&out));

    let out = pre_commit_with_path(&dir, bin, &["try-repo", ROOT, "npu-mem-fix-system", "--files", "bad.py"]);
    assert!(!out.status.success(), "a fixed file fails the commit: {}", output_text(&out));
    let fixed = std::fs::read_to_string(dir.join("bad.py")).unwrap();
    assert_eq!(fixed, FIXED);
}

/// Writes an `npu-mem` script into `dir` that appends its argument count to
/// `log`, then runs the test's binary with its arguments.
fn counting_npu_mem(dir: &Path, log: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let script =
        format!("#!/bin/sh\necho \"$#\" >> '{}'\nexec '{}' \"$@\"\n", log.display(), env!("CARGO_BIN_EXE_npu-mem"));
    let path = dir.join("npu-mem");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The argument counts of the runs `counting_npu_mem` logged, the log emptied.
fn take_runs(log: &Path) -> Vec<usize> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
#[ignore = "installs pre-commit from PyPI; .ci/run runs it with `cargo test -- --ignored`"]
fn one_scan_and_one_list_for_files_pre_commit_would_split() {
    const FILES: usize = 300;
    let dir = repo("batches");
    let names: Vec<String> = (0..FILES).map(|i| format!("module_{i:03}_{}.py", "long_name_".repeat(12))).collect();
    for name in &names {
        std::fs::write(dir.join(name), BAD).unwrap();
    }
    git(&dir, &["add", "."]);
    let wrapper = dir.join(".wrapper");
    let log = dir.join(".runs");
    counting_npu_mem(&wrapper, &log);

    // The same hook without require_serial, as a local hook: with more than one
    // CPU pre-commit splits these files into batches and starts one scan each.
    let local = "repos:\n-   repo: local\n    hooks:\n    -   id: split\n        name: split\n        \
                 entry: npu-mem scan --format concise --no-cache\n        language: system\n        \
                 types: [python]\n";
    std::fs::write(dir.join(".pre-commit-config.yaml"), local).unwrap();
    let out = pre_commit_with_path(&dir, &wrapper, &["run", "--all-files"]);
    assert!(!out.status.success(), "{}", output_text(&out));
    let runs = take_runs(&log);
    eprintln!("not serial: {} scans with {runs:?} arguments", runs.len());
    assert_eq!(runs.iter().sum::<usize>(), FILES + 4 * runs.len(), "every file went to a scan: {runs:?}");
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        assert!(runs.len() > 1, "pre-commit splits these files when the hook is not serial: {runs:?}");
    }

    // The hook this repository defines: one scan of every file, one finding line per file.
    let out = pre_commit_with_path(&dir, &wrapper, &["try-repo", ROOT, "npu-mem-system", "--all-files"]);
    let runs = take_runs(&log);
    assert_eq!(runs, vec![FILES + 3], "one scan with every file: {}", output_text(&out));
    assert!(!out.status.success(), "{}", output_text(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let findings: Vec<&str> = text.lines().filter(|l| l.contains(": TX001 [warning] ")).collect();
    let mut sorted = names.clone();
    sorted.sort();
    let listed: Vec<&str> = findings.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(listed, sorted, "one sorted list, each file once: {}", output_text(&out));
}
