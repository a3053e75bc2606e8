//! The pre-commit hook, run by the real `pre-commit` (installed from PyPI into
//! the cargo target directory) with `try-repo` against temporary repositories.

mod common;

use common::git;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `pre-commit` in a virtualenv under the target directory, installed once.
fn pre_commit() -> PathBuf {
    common::python_venv("pre-commit-venv", &["pre-commit"]).join("bin/pre-commit")
}

/// Runs `pre-commit ARGS` in `dir`.
fn pre_commit_in(dir: &Path, args: &[&str]) -> Output {
    let shared = Path::new(env!("CARGO_TARGET_TMPDIR"));
    Command::new(pre_commit())
        .args(args)
        .current_dir(dir)
        // One pre-commit home and one cargo target directory for all runs, so
        // the hook's `cargo install` compiles the dependencies only once.
        .env("PRE_COMMIT_HOME", shared.join("pre-commit-home"))
        .env("CARGO_TARGET_DIR", shared.join("pre-commit-cargo-target"))
        .output()
        .expect("pre-commit runs")
}

fn head() -> String {
    let out = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(ROOT).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
#[ignore = "installs pre-commit from PyPI; .ci/run runs it with `cargo test -- --ignored`"]
fn hook_fails_on_a_finding_and_passes_clean_files_and_empty_commits() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pre-commit-repo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("bad.py"), "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n").unwrap();
    std::fs::write(dir.join("good.py"), "import math\nprint(math.pi)\n").unwrap();

    // try-repo: the hook as this checkout defines it, on a file with a finding.
    git(&dir, &["add", "bad.py"]);
    let out = pre_commit_in(&dir, &["try-repo", ROOT, "npu-mem", "--files", "bad.py"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "a finding fails the hook:\n{text}");
    assert!(text.contains("bad.py:2:") && text.contains("TX001"), "{text}");

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
    assert_eq!(fixed, "import torch\nimport torch_npu\nmodel = torch.nn.Linear(2, 2).npu()\n");
    let out = pre_commit_in(&dir, &["run", "npu-mem-fix", "--files", "bad.py"]);
    assert!(out.status.success(), "and passes once fixed:\n{}", String::from_utf8_lossy(&out.stdout));
}
