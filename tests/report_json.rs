//! The JSON report validates against the schema documented in
//! `docs/report.schema.json`, and is identical whatever the thread count.

mod common;

use serde_json::Value;

/// Validates `value` against the JSON-Schema subset the documented schema uses:
/// type, enum, required, properties, additionalProperties, items, $ref, minimum.
fn validate(schema: &Value, root: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return validate(&root["$defs"][name], root, value, path, errors);
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_u64() || value.is_i64(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => false,
        });
        if !ok {
            errors.push(format!("{path}: expected {types:?}, got {value}"));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            errors.push(format!("{path}: {value} not in {allowed:?}"));
        }
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_i64), value.as_i64()) {
        if n < min {
            errors.push(format!("{path}: {n} < {min}"));
        }
    }
    if let Value::Object(map) = value {
        for req in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !map.contains_key(req.as_str().unwrap()) {
                errors.push(format!("{path}: missing {req}"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, v) in map {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(s, root, v, &format!("{path}.{k}"), errors),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{path}: unexpected property {k}"))
                }
                None => {}
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            validate(item_schema, root, item, &format!("{path}[{i}]"), errors);
        }
    }
}

fn schema() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn demo_report_validates_against_the_documented_schema() {
    let schema = schema();
    let report = common::scan_json(&["fixtures/demo"]);
    let mut errors = Vec::new();
    validate(&schema, &schema, &report, "$", &mut errors);
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
    validate(&schema, &schema, &report, "$", &mut errors);
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
