//! Tests that run only where CUDA is (`src/semantic/cuda_only.rs`): a test
//! a skip decorator limits to CUDA hosts is skipped on an NPU host that does
//! not run `transfer_to_npu`, so its findings are advice (`unlaunched`), and
//! the project's report names the test; the decorator's own finding stays.
//!
//! `fixtures/cuda_only_tests/tests/test_kernels.py` has a plain test, a
//! `skipIf(not torch.cuda.is_available())` test, a `skipIf(torch.cuda.
//! is_available())` one (which runs on the NPU host), a class under
//! `skipUnless(torch.cuda.is_available())` and a pytest test under
//! `skipif(torch.cuda.device_count() < 2)`. A copy whose `conftest.py`
//! imports `transfer_to_npu` runs every test: CUDA is available there.

mod common;

use serde_json::Value;
use std::path::Path;

const FIXTURE: &str = "fixtures/cuda_only_tests";

/// `(line, code, severity, unlaunched)` of every finding.
fn findings(report: &Value) -> Vec<(u64, String, String, bool)> {
    let list = report["findings"].as_array().expect("findings");
    let text = |f: &Value, key: &str| f[key].as_str().unwrap_or_default().to_string();
    list.iter()
        .map(|f| (f["line"].as_u64().unwrap(), text(f, "code"), text(f, "severity"), f["unlaunched"] == true))
        .collect()
}

fn row(line: u64, code: &str, severity: &str, unlaunched: bool) -> (u64, String, String, bool) {
    (line, code.to_string(), severity.to_string(), unlaunched)
}

/// `(file name, line)` of the project's `cuda_only_tests`.
fn named_tests(report: &Value) -> Vec<(String, u64)> {
    let tests = report["projects"][0]["cuda_only_tests"].as_array().expect("cuda_only_tests");
    let name = |t: &Value| t["path"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    tests.iter().map(|t| (name(t), t["line"].as_u64().unwrap())).collect()
}

#[test]
fn findings_in_tests_an_npu_host_skips_are_advice() {
    let report = common::scan_json(&["--no-cache", FIXTURE]);
    assert_eq!(
        findings(&report),
        [
            row(11, "TX001", "warning", false),
            row(14, "API001", "info", false),
            row(17, "TX001", "info", true),
            row(20, "API001", "info", false),
            row(23, "TX002", "warning", false),
            row(27, "API001", "info", false),
            row(30, "TX001", "info", true),
            row(34, "API001", "info", false),
            row(36, "TX002", "info", true),
        ]
    );
    let file = || "test_kernels.py".to_string();
    assert_eq!(named_tests(&report), [(file(), 15), (file(), 28), (file(), 35)]);
    let out = common::npu_mem(&["scan", "--no-cache", FIXTURE]);
    assert!(
        out.stdout.contains("Tests: 3 tests that hold findings run only where CUDA is available"),
        "{}",
        out.stdout
    );
}

#[test]
fn under_transfer_to_npu_the_tests_run() {
    let dir = common::temp_dir("cuda-only-auto");
    common::copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &dir);
    let conftest = "import torch_npu  # noqa: F401\nfrom torch_npu.contrib import transfer_to_npu  # noqa: F401\n";
    std::fs::write(dir.join("tests/conftest.py"), conftest).unwrap();
    let report = common::scan_json(&["--no-cache", dir.to_str().unwrap()]);
    let found = findings(&report);
    assert_eq!(found.len(), 9, "{found:?}");
    assert!(found.iter().all(|f| !f.3), "none is taken as skipped: {found:?}");
    assert_eq!(named_tests(&report), []);
}

#[test]
fn entries_all_keeps_their_severity() {
    let report = common::scan_json(&["--no-cache", "--entries", "all", FIXTURE]);
    assert!(findings(&report).iter().all(|f| !f.3));
    assert_eq!(named_tests(&report), []);
}
