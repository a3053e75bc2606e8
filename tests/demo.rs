//! Snapshots of the demo project's reports (`fixtures/demo`).

mod common;

/// The scan time is the only part of the text report that varies.
fn without_timing(text: &str) -> String {
    let re = regex::Regex::new(r"scanned in \d+ ms").unwrap();
    re.replace(text, "scanned in <time> ms").into_owned()
}

#[test]
fn demo_text_report() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--color", "never"]);
    assert_eq!(run.code, 1, "the demo has warnings: {}", run.stderr);
    insta::assert_snapshot!("demo_text", without_timing(&run.stdout));
}

#[test]
fn demo_json_report() {
    let report = common::scan_json(&["fixtures/demo"]);
    insta::assert_json_snapshot!("demo_json", report);
}

#[test]
fn demo_concise_report() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--format", "concise"]);
    insta::assert_snapshot!("demo_concise", run.stdout);
}

#[test]
fn colour_only_when_asked() {
    let plain = common::npu_mem(&["scan", "fixtures/demo"]).stdout;
    assert!(!plain.contains('\u{1b}'), "no colour when stdout is not a terminal");
    let coloured = common::npu_mem(&["scan", "fixtures/demo", "--color", "always"]).stdout;
    assert!(coloured.contains('\u{1b}'));
}
