//! File names that are not plain UTF-8 text: a `\` in a name, bytes that
//! are not UTF-8, a tab or a newline. Reports show them so that two
//! different files never show alike (a baseline entry of one never silences
//! the other), and `--diff` names them as git does, so the patch applies.

#![cfg(unix)]

mod common;

use common::{git, npu_mem_in, temp_dir};
use npu_mem::shown_path::unshown;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const CUDA: &str = "import torch\nx = torch.ones(2).cuda()\n";

/// The findings' paths of a JSON scan of `.` in `dir` with `extra` arguments.
fn paths(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["scan", ".", "--format", "json", "--no-cache", "--fail-on", "never"];
    args.extend_from_slice(extra);
    let run = npu_mem_in(dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut paths: Vec<String> =
        report["findings"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
    paths.dedup();
    paths
}

#[test]
fn a_baseline_entry_of_one_name_never_silences_another() {
    // `back\slash.py` was shown as `back/slash.py`, and the bytes
    // `bad\xff.py` and `bad\xfe.py` both as `bad\u{fffd}.py`.
    let pairs: [(&[u8], &[u8]); 2] = [(b"back\\slash.py", b"back/slash.py"), (b"bad\xff.py", b"bad\xfe.py")];
    for (first, second) in pairs {
        let dir = temp_dir("names-baseline");
        let write = |name: &[u8]| {
            let path = dir.join(OsStr::from_bytes(name));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, CUDA).unwrap();
        };
        write(first);
        let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--write-baseline", "b.json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        write(second);
        let new = paths(&dir, &["--baseline", "b.json"]);
        assert_eq!(new.len(), 1, "only the second file's findings are new: {new:?}");
        assert_eq!(dir.join(unshown(&new[0])), dir.join(OsStr::from_bytes(second)), "{new:?}");
        std::fs::remove_dir_all(&*dir).unwrap();
    }
}

#[test]
fn the_diff_applies_with_git_apply_whatever_the_names() {
    let names: [&[u8]; 5] = [b"back\\slash.py", b"ta\tb.py", b"new\nline.py", b"bad\xff.py", b"mod\xc3\xa8le.py"];
    let dir = temp_dir("names-diff");
    git(&dir, &["init", "-q"]);
    for name in names {
        std::fs::write(dir.join(OsStr::from_bytes(name)), CUDA).unwrap();
    }
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    let run = npu_mem_in(&dir, &["scan", ".", "--diff", "--no-cache"]);
    assert_eq!(run.code, 1, "there is something to fix: {}", run.stderr);
    std::fs::write(dir.join("fix.patch"), &run.stdout).unwrap();
    git(&dir, &["apply", "--check", "fix.patch"]);
    git(&dir, &["apply", "fix.patch"]);
    let read = |name: &[u8]| std::fs::read_to_string(dir.join(OsStr::from_bytes(name))).unwrap();
    let patched: Vec<String> = names.iter().map(|n| read(n)).collect();
    for (name, text) in names.iter().zip(&patched) {
        assert!(text.contains(".npu()") && !text.contains(".cuda()"), "{:?}: {text}", OsStr::from_bytes(name));
    }
    // --fix writes what the patch does.
    git(&dir, &["checkout", "-q", "--", "."]);
    let run = npu_mem_in(&dir, &["scan", ".", "--fix", "--no-cache", "--fail-on", "never", "--exclude", "fix.patch"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for (name, by_patch) in names.iter().zip(patched) {
        assert_eq!(read(name), by_patch, "{:?}", OsStr::from_bytes(name));
    }
}
