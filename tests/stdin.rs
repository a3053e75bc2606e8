//! `scan --stdin-filename PATH -`: a buffer piped in is reported as if it
//! were the file at PATH, whatever the file on disk holds (or if there is none).

mod common;

use common::{npu_mem_in, temp_dir};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const BAD: &str = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n";

/// Runs `npu-mem ARGS` in `dir` with `input` on standard input: (stdout, stderr, exit code).
fn with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> (String, String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_npu-mem"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("npu-mem starts");
    // A usage error ends npu-mem before it reads: the pipe may close under the write.
    let _ = child.stdin.take().unwrap().write_all(input);
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr), out.status.code().unwrap_or(-1))
}

#[test]
fn standard_input_is_reported_as_the_named_file_and_not_the_file_on_disk() {
    let dir = temp_dir("stdin-report");
    std::fs::write(dir.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::write(dir.join("train.py"), BAD).unwrap();
    let scan = ["scan", "--no-cache", "--format", "concise", "train.py"];
    let on_disk = npu_mem_in(&dir, &scan);
    assert_eq!(on_disk.code, 1, "{}", on_disk.stderr);
    assert!(on_disk.stdout.contains("train.py:2:"), "{}", on_disk.stdout);

    let piped = ["scan", "--no-cache", "--format", "concise", "--stdin-filename", "train.py", "-"];
    let (stdout, stderr, code) = with_stdin(&dir, &piped, BAD.as_bytes());
    assert_eq!((stdout.as_str(), code), (on_disk.stdout.as_str(), 1), "{stderr}");

    // The buffer, not the file: one line more moves the finding down, and a clean buffer has none.
    let (stdout, _, _) = with_stdin(&dir, &piped, format!("# a comment\n{BAD}").as_bytes());
    assert!(stdout.contains("train.py:3:") && !stdout.contains("train.py:2:"), "{stdout}");
    let (stdout, stderr, code) = with_stdin(&dir, &piped, b"import math\n");
    assert_eq!((stdout.as_str(), code), ("", 0), "{stderr}");
}

#[test]
fn a_file_that_is_not_on_disk_yet_is_scanned_from_standard_input() {
    let dir = temp_dir("stdin-new");
    let args = ["scan", "--no-cache", "--format", "json", "--stdin-filename", "new/unsaved.py", "-"];
    let (stdout, stderr, code) = with_stdin(&dir, &args, BAD.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["path"] == "new/unsaved.py" && f["code"] == "TX001"), "{stdout}");
    assert!(!dir.join("new").exists(), "nothing is written");
}

#[test]
fn fix_prints_the_fixed_buffer_and_leaves_the_file_alone() {
    let dir = temp_dir("stdin-fix");
    std::fs::write(dir.join("train.py"), "# on disk\n").unwrap();
    let args = ["scan", "--no-cache", "--fix", "--stdin-filename", "train.py", "-"];
    let (stdout, stderr, code) = with_stdin(&dir, &args, BAD.as_bytes());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "import torch\nimport torch_npu\nmodel = torch.nn.Linear(2, 2).npu()\n");
    assert!(stderr.contains("fixed 2 findings"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.join("train.py")).unwrap(), "# on disk\n");

    // --fix of what needs none prints it as it was.
    let (stdout, _, code) = with_stdin(&dir, &args, b"import math\n");
    assert_eq!((stdout.as_str(), code), ("import math\n", 0));
    let strict = ["scan", "--no-cache", "--fix", "--exit-non-zero-on-fix", "--stdin-filename", "train.py", "-"];
    assert_eq!(with_stdin(&dir, &strict, BAD.as_bytes()).2, 1, "changed, and asked to say so");
}

#[test]
fn the_dash_and_the_name_go_together_and_binary_input_is_refused() {
    let dir = temp_dir("stdin-usage");
    let cases: [(&[&str], &str); 4] = [
        (&["scan", "--stdin-filename", "a.py"], "give `-` as the only path"),
        (&["scan", "--stdin-filename", "a.py", "-", "b.py"], "give `-` as the only path"),
        (&["scan", "-"], "name the file it stands for with --stdin-filename"),
        (&["scan", "--fix", "--format", "json", "--stdin-filename", "a.py", "-"], "in place of the report"),
    ];
    for (args, message) in cases {
        let (stdout, stderr, code) = with_stdin(&dir, args, BAD.as_bytes());
        assert_eq!((stdout.as_str(), code), ("", 2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    let (_, stderr, code) = with_stdin(&dir, &["scan", "--stdin-filename", "a.py", "-"], b"x = 1\0\n");
    assert_eq!(code, 2);
    assert!(stderr.contains("a.py (standard input): binary file"), "{stderr}");
}
