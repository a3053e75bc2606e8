//! `--format gitlab`: every issue passes the schema GitLab validates Code
//! Quality issues with (`tests/data/gitlab-codeclimate.json`; checked here by
//! the tests' own validator, and by the `jsonschema` package from PyPI in an
//! ignored test) and what GitLab's documentation asks beyond it, with
//! fingerprints that are unique and the same as SARIF's.

mod common;

use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gitlab-codeclimate.json");

fn schema() -> Value {
    serde_json::from_str(&std::fs::read_to_string(SCHEMA).unwrap()).unwrap()
}

/// The Code Quality report of `npu-mem scan ARGS`, run from the repository root.
fn gitlab(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["scan", "--format", "gitlab", "--fail-on", "never"];
    all.extend_from_slice(args);
    let run = common::npu_mem(&all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not a JSON array ({e}):\n{}", run.stdout))
}

/// Every keyword of `schema` and of the schemas inside it.
fn keywords(schema: &Value, out: &mut HashSet<String>) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map {
        out.insert(key.clone());
        match (key.as_str(), value) {
            ("properties" | "$defs", Value::Object(schemas)) => schemas.values().for_each(|s| keywords(s, out)),
            ("items" | "additionalProperties", s) => keywords(s, out),
            _ => {}
        }
    }
}

/// What GitLab's documentation asks of issue `i` beyond the schema: a check
/// name, one of its five severities, a relative path and a line.
fn documented_problems(i: usize, issue: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if issue["check_name"].as_str().is_none_or(str::is_empty) {
        problems.push(format!("[{i}] no check_name"));
    }
    let severity = &issue["severity"];
    if !["info", "minor", "major", "critical", "blocker"].iter().any(|s| severity == s) {
        problems.push(format!("[{i}] severity {severity} is not one of GitLab's"));
    }
    let path = issue["location"]["path"].as_str().unwrap_or("");
    if path.is_empty() || path.starts_with('/') || path.starts_with("./") || path.contains('\\') {
        problems.push(format!("[{i}] path {path:?} is not relative to the repository"));
    }
    if issue["location"]["lines"]["begin"].as_u64().is_none_or(|l| l == 0) {
        problems.push(format!("[{i}] no line: {}", issue["location"]));
    }
    problems
}

/// Everything wrong with `issues`: schema violations, departures from the
/// documentation, and repeated fingerprints (GitLab keeps one issue per fingerprint).
fn problems(issues: &[Value]) -> Vec<String> {
    let schema = schema();
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    for (i, issue) in issues.iter().enumerate() {
        common::validate(&schema, &schema, issue, &format!("[{i}]"), &mut problems);
        problems.extend(documented_problems(i, issue));
        if let Some(fp) = issue["fingerprint"].as_str() {
            if !seen.insert(fp) {
                problems.push(format!("[{i}] fingerprint {fp} repeated"));
            }
        }
    }
    problems
}

#[test]
fn demo_report_meets_gitlabs_schema_and_documentation() {
    let mut used = HashSet::new();
    keywords(&schema(), &mut used);
    let unchecked: Vec<&String> = used.iter().filter(|k| !common::SCHEMA_KEYWORDS.contains(&k.as_str())).collect();
    assert!(unchecked.is_empty(), "the tests' validator does not check {unchecked:?}");

    let issues = gitlab(&["fixtures/demo"]);
    let problems = problems(&issues);
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // One issue per finding, in report order, with the documented severity mapping.
    let findings = common::scan_json(&["fixtures/demo"])["findings"].as_array().unwrap().clone();
    assert_eq!(issues.len(), findings.len());
    for (issue, finding) in issues.iter().zip(&findings) {
        assert_eq!(issue["check_name"], finding["code"]);
        assert_eq!(issue["location"]["path"], finding["path"]);
        assert_eq!(issue["location"]["lines"]["begin"], finding["line"]);
        assert_eq!(issue["location"]["lines"]["end"], finding["end_line"]);
        let expected = match finding["severity"].as_str().unwrap() {
            "error" => "critical",
            "warning" => "major",
            _ => "info",
        };
        assert_eq!(issue["severity"], expected, "{issue}");
        let description = issue["description"].as_str().unwrap();
        assert!(description.contains(finding["message"].as_str().unwrap()), "{description}");
        let path = issue["location"]["path"].as_str().unwrap();
        assert!(Path::new(ROOT).join(path).is_file(), "{path} is a file of the repository");
    }
    let severities: HashSet<&str> = issues.iter().filter_map(|i| i["severity"].as_str()).collect();
    assert_eq!(severities.len(), 3, "the demo has errors, warnings and info: {severities:?}");
}

#[test]
fn the_checks_reject_what_gitlab_would_drop_or_misplace() {
    let mut issues = gitlab(&["fixtures/demo"]);
    assert!(issues.len() >= 6);
    issues[0].as_object_mut().unwrap().remove("fingerprint");
    issues[1]["severity"] = Value::from("warning");
    issues[2]["location"]["lines"]["begin"] = Value::from("12");
    issues[3]["location"]["path"] = Value::from("/abs/train.py");
    issues[4]["fingerprint"] = issues[5]["fingerprint"].clone();
    issues[5].as_object_mut().unwrap().remove("check_name");
    let problems = problems(&issues);
    // The line given as a string breaks both the schema and the documentation.
    assert_eq!(problems.len(), 7, "{}", problems.join("\n"));
}

#[test]
fn fingerprints_are_unique_and_the_same_as_sarifs() {
    let dir = common::temp_dir("gitlab-sarif");
    let (sarif, gitlab) = (dir.join("r.sarif"), dir.join("r.json"));
    let run = common::npu_mem(&[
        "scan",
        "fixtures",
        "--fail-on",
        "never",
        "--output-sarif",
        sarif.to_str().unwrap(),
        "--output-gitlab",
        gitlab.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let issues: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(gitlab).unwrap()).unwrap();
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(sarif).unwrap()).unwrap();
    let problems = problems(&issues);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // SARIF lists the findings that count first, then baselined and suppressed ones.
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let active: Vec<&Value> = results.iter().filter(|r| r.get("suppressions").is_none()).collect();
    assert!(issues.len() > 300, "the fixtures give many findings, some on identical lines: {}", issues.len());
    assert_eq!(issues.len(), active.len());
    for (issue, result) in issues.iter().zip(active) {
        assert_eq!(issue["check_name"], result["ruleId"]);
        assert_eq!(issue["fingerprint"], result["partialFingerprints"]["npuMemFindingHash/v1"]);
    }
}

#[test]
fn notebook_issues_point_into_the_notebook_file_and_name_the_cell() {
    let issues = gitlab(&["fixtures/notebooks/train.ipynb"]);
    let findings = common::scan_json(&["fixtures/notebooks/train.ipynb"])["findings"].as_array().unwrap().clone();
    assert!(!issues.is_empty());
    assert_eq!(issues.len(), findings.len());
    let raw = std::fs::read_to_string(Path::new(ROOT).join("fixtures/notebooks/train.ipynb")).unwrap();
    let raw_lines: Vec<&str> = raw.lines().collect();
    for (issue, finding) in issues.iter().zip(&findings) {
        let (cell, line) = (finding["cell"].as_u64().unwrap(), finding["line"].as_u64().unwrap());
        let description = issue["description"].as_str().unwrap();
        assert!(description.ends_with(&format!("(cell {cell}, line {line})")), "{description}");
        // The line is the notebook file's: the JSON string holding the cell's source line.
        let begin = issue["location"]["lines"]["begin"].as_u64().unwrap() as usize;
        let source_line = raw_lines[begin - 1].trim_start();
        assert!(source_line.starts_with('"'), "line {begin} of the notebook is a source string: {source_line}");
        assert!(begin > line as usize, "{begin} is a line of the file, not of cell {cell}");
    }
}

#[test]
fn a_clean_project_gives_an_empty_array() {
    let dir = common::temp_dir("gitlab-clean");
    std::fs::write(dir.join("ok.py"), "import math\nprint(math.pi)\n").unwrap();
    let run = common::npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "gitlab"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "[]\n");
}

/// Validates every issue with the `jsonschema` package's Draft 7 validator
/// (the schema's draft); prints the problems and the number of issues checked.
const JSONSCHEMA_CHECK: &str = r#"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
issues = json.load(open(sys.argv[2]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
problems = [f"[{i}] {e.json_path}: {e.message}" for i, issue in enumerate(issues) for e in validator.iter_errors(issue)]
broken = dict(issues[0], severity=3)
if validator.is_valid(broken):
    problems.append("a numeric severity passed: the validator checks nothing")
print("\n".join(problems) if problems else f"{len(issues)} issues valid")
sys.exit(1 if problems else 0)
"#;

#[test]
#[ignore = "installs jsonschema from PyPI; .ci/run runs it with `cargo test -- --ignored`"]
fn demo_report_passes_jsonschema_with_gitlabs_schema() {
    let python = common::venv_with("jsonschema-venv", &["jsonschema"]).join("python");
    let dir = common::temp_dir("gitlab-jsonschema");
    let report = dir.join("gl-code-quality-report.json");
    let run =
        common::npu_mem(&["scan", "fixtures/demo", "--fail-on", "never", "--output-gitlab", report.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let count = gitlab(&["fixtures/demo"]).len();
    let out = Command::new(python).args(["-c", JSONSCHEMA_CHECK, SCHEMA]).arg(&report).output().expect("python runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.trim(), format!("{count} issues valid"));
}

#[test]
fn categories_follow_the_section_and_speed_hints_are_performance() {
    let issues = gitlab(&["fixtures/demo"]);
    let category = |code: &str| -> Vec<&str> {
        let of_code: Vec<&Value> = issues.iter().filter(|i| i["check_name"] == code).collect();
        assert!(!of_code.is_empty(), "the demo has {code}");
        of_code.iter().flat_map(|i| i["categories"].as_array().unwrap()).filter_map(Value::as_str).collect()
    };
    // Speed hints of the torch_npu API section: a fused kernel for code that already runs.
    for code in ["API007", "API008", "API009", "API013", "DL001", "MEM001"] {
        assert!(category(code).iter().all(|c| *c == "Performance"), "{code}: {:?}", category(code));
    }
    // What does not run on an NPU as written, or needs its API renamed.
    for code in ["API001", "API003", "AMP001", "AMP002", "TX001", "TX012"] {
        assert!(category(code).iter().all(|c| *c == "Compatibility"), "{code}: {:?}", category(code));
    }
}

#[test]
fn descriptions_say_why_a_finding_is_advice_or_a_blocker() {
    let issues = gitlab(&["--no-cache", "fixtures/launches"]);
    let findings = common::scan_json(&["--no-cache", "fixtures/launches"])["findings"].as_array().unwrap().clone();
    assert_eq!(issues.len(), findings.len());
    let mut advice = 0;
    for (issue, finding) in issues.iter().zip(&findings) {
        let description = issue["description"].as_str().unwrap();
        assert_eq!(description.contains("(advice: "), finding["advice"].is_string(), "{description}");
        if finding["advice"] == "uncalled-function" {
            assert!(description.ends_with("(advice: in a function nothing in the project calls)"), "{description}");
            advice += 1;
        }
        assert_eq!(description.contains("[blocker]"), finding["blocker"] == true, "{description}");
    }
    assert_eq!(advice, 1, "fixtures/launches has one finding in an uncalled function");
}
