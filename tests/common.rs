//! Helpers shared by the integration tests: running the built binary.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Output of one run of `npu-mem`.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// Runs `npu-mem` with `args` from the repository root.
pub fn npu_mem(args: &[&str]) -> Run {
    npu_mem_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Runs `npu-mem` with `args` from `dir`.
pub fn npu_mem_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_npu-mem"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .expect("the npu-mem binary runs");
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// Runs a JSON scan and parses the report.
pub fn scan_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["scan", "--format", "json", "--fail-on", "never"];
    all.extend_from_slice(args);
    let run = npu_mem(&all);
    assert_eq!(run.code, 0, "scan failed: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{}", run.stdout))
}

/// Runs git in `dir` with a throwaway identity; panics if it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs")
        .status
        .success();
    assert!(ok, "git {args:?} failed in {}", dir.display());
}

/// A fresh, empty directory under the system's temporary directory.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("npu-mem-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Copies the files of `from` (recursively) into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
