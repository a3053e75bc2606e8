//! What `--fix` and `--add-ignore` do to the files they write: links kept,
//! owners and modes kept, line endings kept, no file written twice.

#![cfg(unix)]

mod common;

use common::{npu_mem_in, temp_dir};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

const CUDA: &str = "import torch\nm = torch.nn.Linear(2, 2)\ny = m.cuda()\n";

fn fix(dir: &Path, paths: &[&str]) -> common::Run {
    let mut args = vec!["scan", "--fix", "--no-cache", "--fail-on", "never", "--format", "json"];
    args.extend_from_slice(paths);
    npu_mem_in(dir, &args)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn fix_and_add_ignore_write_through_a_symlink_and_keep_it() {
    for (name, flags) in [("fix", &["--fix"][..]), ("add-ignore", &["--add-ignore", "--fail-on", "never"][..])] {
        let dir = temp_dir(&format!("symlink-{name}"));
        std::fs::create_dir(dir.join("real")).unwrap();
        std::fs::write(dir.join("real/model.py"), CUDA).unwrap();
        std::os::unix::fs::symlink("real/model.py", dir.join("link.py")).unwrap();
        let mut args = vec!["scan", "--no-cache", "link.py"];
        args.extend_from_slice(flags);
        let run = npu_mem_in(&dir, &args);
        assert!(run.code == 0 || run.code == 1, "{name}: {}", run.stderr);
        let link = std::fs::symlink_metadata(dir.join("link.py")).unwrap();
        assert!(link.file_type().is_symlink(), "{name}: link.py is still a link");
        assert_eq!(std::fs::read_link(dir.join("link.py")).unwrap(), Path::new("real/model.py"));
        let fixed = read(&dir.join("real/model.py"));
        assert_ne!(fixed, CUDA, "{name}: the link's target was written");
        assert!(fixed.contains(if name == "fix" { "m.npu()" } else { "# npu-mem: ignore[TX001]" }), "{fixed}");
        let names: Vec<_> = std::fs::read_dir(dir.join("real")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["model.py"], "{name}: no temporary file is left beside the target");
    }
}

#[test]
fn a_file_with_hard_links_is_refused_and_both_names_keep_one_file() {
    let dir = temp_dir("hardlink");
    std::fs::write(dir.join("a.py"), CUDA).unwrap();
    std::fs::hard_link(dir.join("a.py"), dir.join("b.py")).unwrap();
    let run = fix(&dir, &["a.py"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["errors"][0]["kind"], "not_fixed", "{report}");
    assert!(report["errors"][0]["message"].as_str().unwrap().contains("2 hard links"), "{report}");
    assert_eq!(report["findings"][0]["code"], "TX001", "the finding is still reported");
    assert_eq!(read(&dir.join("a.py")), CUDA);
    assert_eq!(std::fs::metadata(dir.join("a.py")).unwrap().nlink(), 2, "the link is not split");
    let add = npu_mem_in(&dir, &["scan", "--no-cache", "--add-ignore", "a.py"]);
    assert_eq!(add.code, 1, "--add-ignore says it skipped the file: {}", add.stderr);
    assert!(add.stderr.contains("hard links"), "{}", add.stderr);
    assert_eq!(read(&dir.join("b.py")), CUDA);
}

/// The effective user id of this process.
fn euid() -> u32 {
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX)
}

#[test]
fn owner_group_and_mode_are_kept() {
    let dir = temp_dir("owner");
    let file = dir.join("a.py");
    std::fs::write(&file, CUDA).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    // Only root can give a file away; others check that their own ids stay.
    let owner = if euid() == 0 { (65534, 65534) } else { (euid(), std::fs::metadata(&file).unwrap().gid()) };
    std::os::unix::fs::chown(&file, Some(owner.0), Some(owner.1)).unwrap();
    let run = fix(&dir, &["a.py"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(read(&file).contains("m.npu()"));
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!((meta.uid(), meta.gid()), owner);
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
}

#[test]
fn a_file_with_cr_only_line_endings_gets_no_lf() {
    let dir = temp_dir("cr-only");
    std::fs::write(dir.join("a.py"), CUDA.replace('\n', "\r")).unwrap();
    let run = fix(&dir, &["a.py"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fixed = read(&dir.join("a.py"));
    assert!(fixed.contains("import torch_npu"), "{fixed:?}");
    assert!(!fixed.contains('\n'), "{fixed:?}");
}

#[test]
fn one_file_named_twice_is_scanned_and_fixed_once() {
    let dir = temp_dir("named-twice");
    std::fs::create_dir(dir.join("d")).unwrap();
    std::fs::write(dir.join("d/a.py"), CUDA).unwrap();
    let run = fix(&dir.join("d"), &["a.py", "../d/a.py", "."]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("changed on disk"), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["fixed"].as_array().unwrap().len(), 2, "TX001 and its import, once: {report}");
    assert_eq!(report["errors"], serde_json::json!([]));
    assert_eq!(read(&dir.join("d/a.py")).matches("import torch_npu").count(), 1);
}

#[test]
fn an_interrupt_while_fixing_leaves_no_temporary_file_and_no_half_file() {
    // The fixer writes each file through a temporary file beside it; Ctrl-C
    // (SIGINT) arriving while one exists once left `.NAME.npu-mem-PID-N.tmp` behind.
    let dir = temp_dir("fix-interrupted");
    let original = "import torch\n\nx = torch.zeros(3).cuda()\ny = torch.ones(2).cuda()\n";
    let count = 3000;
    for i in 0..count {
        std::fs::write(dir.join(format!("m{i:04}.py")), original).unwrap();
    }
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_npu-mem"))
        .args(["scan", ".", "--fix", "--no-cache", "--quiet", "--fail-on", "never", "--format", "json"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let temporaries = || {
        let names = std::fs::read_dir(&*dir).unwrap().map(|e| e.unwrap().file_name());
        names.filter(|n| n.to_string_lossy().ends_with(".tmp")).count()
    };
    // Interrupt as soon as a temporary file exists (fixes are being written).
    let started = std::time::Instant::now();
    while temporaries() == 0 && child.try_wait().unwrap().is_none() && started.elapsed().as_secs() < 60 {
        std::thread::yield_now();
    }
    let interrupted = child.try_wait().unwrap().is_none();
    // SAFETY: kill only sends a signal to the child this test started.
    unsafe {
        kill(child.id() as i32, 2);
    }
    let status = child.wait().unwrap();
    assert!(interrupted, "the run ended before any file was written: make the test tree larger");
    assert_eq!(status.code(), Some(130), "exits as interrupted: {status:?}");
    assert_eq!(temporaries(), 0, "no temporary file is left behind");
    let fixed_tail = "x = torch.zeros(3).npu()\ny = torch.ones(2).npu()\n";
    let mut changed = 0;
    for i in 0..count {
        let text = read(&dir.join(format!("m{i:04}.py")));
        assert!(text == original || text.ends_with(fixed_tail), "m{i:04}.py is whole: {text}");
        changed += usize::from(text != original);
    }
    assert!(changed < count, "interrupted before the end ({changed} of {count} fixed)");
}

extern "C" {
    fn kill(pid: i32, signal: i32) -> i32;
}
