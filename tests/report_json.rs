//! The JSON report validates against the schema documented in
//! `docs/report.schema.json`, and is identical whatever the thread count.

mod common;

use serde_json::Value;

fn schema() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn demo_report_validates_against_the_documented_schema() {
    let schema = schema();
    let report = common::scan_json(&["fixtures/demo"]);
    let mut errors = Vec::new();
    common::validate(&schema, &schema, &report, "$", &mut errors);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(report["findings"].as_array().unwrap().iter().any(|f| !f["fix"].is_null()), "the demo exercises fixes");
}

#[test]
fn validator_rejects_what_the_schema_forbids() {
    let schema = schema();
    let mut report = common::scan_json(&["fixtures/demo"]);
    report["findings"][0]["severity"] = Value::from("fatal");
    report["findings"][0]["extra"] = Value::from(1);
    report.as_object_mut().unwrap().remove("errors");
    let mut errors = Vec::new();
    common::validate(&schema, &schema, &report, "$", &mut errors);
    assert_eq!(errors.len(), 3, "{errors:?}");
}

#[test]
fn output_is_identical_across_thread_counts_and_runs() {
    let one = common::npu_mem(&["scan", "fixtures", "--format", "json", "--threads", "1", "--fail-on", "never"]).stdout;
    let two = common::npu_mem(&["scan", "fixtures", "--format", "json", "--threads", "2", "--fail-on", "never"]).stdout;
    let again =
        common::npu_mem(&["scan", "fixtures", "--format", "json", "--threads", "2", "--fail-on", "never"]).stdout;
    assert!(one.len() > 1000);
    assert_eq!(one, two);
    assert_eq!(two, again);
}
