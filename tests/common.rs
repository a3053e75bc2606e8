//! Helpers shared by the integration tests: running the built binary.

#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Output of one run of `npu-mem`.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// Runs `npu-mem` with `args` from the repository root.
pub fn npu_mem(args: &[&str]) -> Run {
    npu_mem_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Runs `npu-mem` with `args` from `dir`.
pub fn npu_mem_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_npu-mem"))
        .args(args)
        .current_dir(dir)
        // Colour depends on these; tests that check it set them themselves.
        .env_remove("NO_COLOR")
        .env_remove("FORCE_COLOR")
        .output()
        .expect("the npu-mem binary runs");
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// Runs a JSON scan and parses the report.
pub fn scan_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["scan", "--format", "json", "--fail-on", "never"];
    all.extend_from_slice(args);
    let run = npu_mem(&all);
    assert_eq!(run.code, 0, "scan failed: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{}", run.stdout))
}

/// Runs git in `dir` with a throwaway identity; panics if it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs")
        .status
        .success();
    assert!(ok, "git {args:?} failed in {}", dir.display());
}

/// A fresh, empty directory under the system's temporary directory.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("npu-mem-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Copies the files of `from` (recursively) into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The JSON Schema keywords [`validate`] checks, and the annotations it may
/// ignore; a schema with any other keyword needs a real validator.
pub const SCHEMA_KEYWORDS: [&str; 12] = [
    "type",
    "enum",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "$ref",
    "minimum",
    "$schema",
    "$defs",
    "description",
    "title",
];

/// Validates `value` against `schema` (whose root is `root`) with the subset of
/// JSON Schema in [`SCHEMA_KEYWORDS`], adding one message per violation to `errors`.
pub fn validate(schema: &Value, root: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
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

/// A Python virtual environment under the cargo target directory with
/// `packages` installed from PyPI; made once, and again when the list changes.
pub fn python_venv(name: &str, packages: &[&str]) -> std::path::PathBuf {
    // Tests of one binary run in parallel: one of them installs, the others wait.
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = INSTALLING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let marker = venv.join("installed-for-npu-mem-tests");
    let wanted = packages.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str()) {
        return venv;
    }
    let ok =
        Command::new("python3").args(["-m", "venv", "--clear"]).arg(&venv).status().expect("python3 runs").success();
    assert!(ok, "python3 -m venv {} failed", venv.display());
    let ok = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(packages)
        .status()
        .expect("pip runs")
        .success();
    assert!(ok, "pip install {packages:?} failed (these tests need PyPI)");
    std::fs::write(&marker, wanted).unwrap();
    venv
}
