//! Snapshots of the demo project's reports (`fixtures/demo`).

mod common;

#[test]
fn demo_text_report() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--color", "never"]);
    assert_eq!(run.code, 1, "the demo has warnings: {}", run.stderr);
    insta::assert_snapshot!("demo_text", common::without_timing(&run.stdout));
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

#[test]
fn demo_github_annotations() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--format", "github"]);
    assert!(run
        .stdout
        .lines()
        .all(|l| l.starts_with("::error ") || l.starts_with("::warning ") || l.starts_with("::notice ")));
    insta::assert_snapshot!("demo_github", run.stdout);
}

#[test]
fn demo_gitlab_code_quality_report() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--format", "gitlab"]);
    assert_eq!(run.code, 1, "the demo has warnings: {}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("the report is JSON");
    assert!(report.as_array().is_some_and(|issues| !issues.is_empty()), "{report}");
    insta::assert_snapshot!("demo_gitlab", run.stdout);
}

#[test]
fn demo_markdown_report() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--format", "markdown"]);
    insta::assert_snapshot!("demo_markdown", run.stdout);
}

#[test]
fn several_outputs_in_one_run() {
    let dir = common::temp_dir("outputs");
    let (sarif, json, md) = (dir.join("r.sarif"), dir.join("r.json"), dir.join("r.md"));
    let run = common::npu_mem(&[
        "scan",
        "fixtures/demo",
        "--format",
        "concise",
        "--output-sarif",
        sarif.to_str().unwrap(),
        "--output-json",
        json.to_str().unwrap(),
        "--output-markdown",
        md.to_str().unwrap(),
    ]);
    let findings = run.stdout.lines().count();
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let sarif: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(sarif).unwrap()).unwrap();
    assert_eq!(json["findings"].as_array().unwrap().len(), findings);
    let active =
        sarif["runs"][0]["results"].as_array().unwrap().iter().filter(|r| r.get("suppressions").is_none()).count();
    assert_eq!(active, findings, "suppressed results are kept in SARIF but marked");
    assert!(std::fs::read_to_string(md).unwrap().starts_with("## npu-mem"));
}

#[cfg(unix)]
#[test]
fn a_report_can_go_to_a_pipe() {
    // Under the test harness stdout is a pipe: it cannot be emptied or
    // replaced, only written to.
    let run = common::npu_mem(&["scan", "fixtures/demo", "--format", "concise", "--output-json", "/dev/stdout"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json_start = run.stdout.find('{').expect("the JSON report is on stdout");
    let report = serde_json::Deserializer::from_str(&run.stdout[json_start..])
        .into_iter::<serde_json::Value>()
        .next()
        .expect("a JSON value")
        .unwrap();
    let concise = run.stdout.lines().filter(|l| l.starts_with("fixtures/demo/")).count();
    assert!(concise > 0, "{}", run.stdout);
    assert_eq!(report["findings"].as_array().unwrap().len(), concise);
}
