//! Exit codes that tell the truth: a failed write is never a success, a
//! closed pipe is not an error, nothing is written before every input and
//! output has been checked, and flags that cannot work together are refused.

#![cfg(unix)]

mod common;

use common::{npu_mem_in, temp_dir};
use std::path::Path;
use std::process::{Command, Stdio};

const CUDA: &str = "import torch\nm = torch.nn.Linear(2, 2)\ny = m.cuda()\n";
const CLEAN: &str = "import torch\nm = torch.nn.Linear(2, 2)\n";

/// Runs npu-mem in `dir` with stdout (or stderr, with `to_stderr`) going to /dev/full.
fn into_full_disk(dir: &Path, args: &[&str], to_stderr: bool) -> (i32, String) {
    let full = || Stdio::from(std::fs::File::create("/dev/full").unwrap());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_npu-mem"));
    cmd.args(args).current_dir(dir);
    if to_stderr {
        cmd.stderr(full()).stdout(Stdio::null());
    } else {
        cmd.stdout(full()).stderr(Stdio::piped());
    }
    let out = cmd.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_failed_write_to_stdout_is_exit_2_with_one_message() {
    let dir = temp_dir("dev-full");
    std::fs::write(dir.join("clean.py"), CLEAN).unwrap();
    let runs: [&[&str]; 6] = [
        &["scan", "--no-cache", "clean.py"],
        &["scan", "--no-cache", "clean.py", "--format", "json"],
        &["rules"],
        &["rule", "TX001"],
        &["scan", "--show-settings"],
        &["--help"],
    ];
    for args in runs {
        let (code, stderr) = into_full_disk(&dir, args, false);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        if args != ["--help"] {
            assert_eq!(stderr.matches("cannot write to stdout").count(), 1, "{args:?}: {stderr}");
        }
    }
}

#[test]
fn a_failed_write_to_stderr_is_exit_2() {
    let dir = temp_dir("dev-full-stderr");
    std::fs::write(dir.join("a.py"), CUDA).unwrap();
    // --fix --format json says on stderr what it fixed: that line is lost.
    let (code, _) = into_full_disk(&dir, &["scan", "--no-cache", "--fix", "--format", "json", "a.py"], true);
    assert_eq!(code, 2);
}

#[test]
fn a_closed_pipe_ends_output_quietly() {
    let dir = temp_dir("closed-pipe");
    for (args, code) in [(&["rules"][..], 0), (&["scan", "--no-cache", "."][..], 1)] {
        std::fs::write(dir.join("a.py"), CUDA.repeat(200)).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_npu-mem"))
            .args(args)
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before npu-mem writes, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// A project with a file `--fix` would change.
fn fixable(name: &str) -> common::TempDir {
    let dir = temp_dir(name);
    std::fs::write(dir.join("a.py"), CUDA).unwrap();
    dir
}

#[test]
fn fix_checks_the_baseline_and_the_outputs_before_writing_anything() {
    let dir = fixable("validate-first");
    std::fs::write(dir.join("bad.json"), "{ not json").unwrap();
    let cases: [&[&str]; 4] = [
        &["--baseline", "bad.json"],
        &["--baseline", "missing.json"],
        &["-o", "no/such/dir/report.txt"],
        &["--output-sarif", "no/such/dir/report.sarif"],
    ];
    for extra in cases {
        let mut args = vec!["scan", "--no-cache", "--fix", "a.py"];
        args.extend_from_slice(extra);
        let run = npu_mem_in(&dir, &args);
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
        assert_eq!(std::fs::read_to_string(dir.join("a.py")).unwrap(), CUDA, "{extra:?}: nothing was written");
    }
}

/// Runs npu-mem in `dir` as a user without root's power to read anything:
/// as nobody when the tests run as root.
fn run_unprivileged(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let binary = env!("CARGO_BIN_EXE_npu-mem");
    let is_root = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).ok() == Some(0);
    let mut cmd = if is_root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", binary]);
        c
    } else {
        Command::new(binary)
    };
    let out = cmd.args(args).current_dir(dir).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_unreadable_file_named_on_the_command_line_is_exit_2() {
    let dir = temp_dir("unreadable");
    let file = dir.join("secret.py");
    std::fs::write(&file, CLEAN).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let (code, stderr) = run_unprivileged(&dir, &["scan", "--no-cache", "secret.py"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("secret.py: permission denied"), "{stderr}");
}

#[test]
fn an_unreadable_directory_named_on_the_command_line_is_exit_2() {
    // It once gave a warning, 0 files and exit 0: a passing gate.
    let dir = temp_dir("unreadable-dir");
    let secret = dir.join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("train.py"), CUDA).unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let (code, stderr) = run_unprivileged(&dir, &["scan", "--no-cache", "secret"]);
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("secret: permission denied"), "{stderr}");
}

#[test]
fn flags_that_cannot_work_together_are_usage_errors() {
    let dir = fixable("conflicts");
    std::fs::write(dir.join("base.json"), "{\"version\": 1, \"findings\": []}").unwrap();
    let cases: [&[&str]; 12] = [
        &["--add-ignore", "--write-baseline", "new.json"],
        // --diff prints no report: --statistics was silently dropped.
        &["--diff", "--statistics"],
        &["--add-ignore", "--statistics"],
        &["--write-baseline", "new.json", "--statistics"],
        &["--add-ignore", "--format", "json"],
        &["--add-ignore", "--output-gitlab", "out.txt"],
        &["--diff", "-o", "out.txt"],
        &["--diff", "--format", "json"],
        &["--diff", "--output-json", "out.json"],
        &["--write-baseline", "new.json", "--baseline", "base.json"],
        &["--write-baseline", "new.json", "--format", "sarif"],
        &["--threads", "100000"],
    ];
    for extra in cases {
        let mut args = vec!["scan", "--no-cache", "a.py"];
        args.extend_from_slice(extra);
        let run = npu_mem_in(&dir, &args);
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
        assert!(run.stderr.contains("cannot be used with") || run.stderr.contains("not in 1..=256"), "{}", run.stderr);
        assert_eq!(std::fs::read_to_string(dir.join("a.py")).unwrap(), CUDA, "{extra:?}");
        assert!(!dir.join("new.json").exists() && !dir.join("out.txt").exists(), "{extra:?}");
    }
    let ok = npu_mem_in(&dir, &["scan", "--no-cache", "a.py", "--threads", "256"]);
    assert_eq!(ok.code, 1, "{}", ok.stderr);
}

#[test]
fn an_exclude_glob_with_an_unclosed_bracket_is_a_usage_error() {
    // It was accepted as a literal `[` and excluded nothing.
    let dir = fixable("unclosed-bracket");
    let run = npu_mem_in(&dir, &["scan", "--no-cache", ".", "--exclude", "build/[0-9"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("unclosed character class"), "{}", run.stderr);
    let run = npu_mem_in(&dir, &["scan", "--no-cache", ".", "--exclude", "build/[0-9]", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "a closed class is fine: {}", run.stderr);
}
