//! Helpers shared by the integration tests: running the built binary, git,
//! temporary directories, and Python virtualenvs with tools from PyPI.

// Each test crate includes this module (`mod common;`) and uses some of it:
// the rest is dead there, and `pub` is how the including crate sees it.
#![allow(dead_code, unreachable_pub)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

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

/// The text report with its scan time, the only part that varies, replaced.
pub fn without_timing(text: &str) -> String {
    let re = regex::Regex::new(r"scanned in \d+ ms").unwrap();
    re.replace(text, "scanned in <time> ms").into_owned()
}

/// Runs a JSON scan and parses the report.
pub fn scan_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["scan", "--format", "json", "--fail-on", "never"];
    all.extend_from_slice(args);
    let run = npu_mem(&all);
    assert_eq!(run.code, 0, "scan failed: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{}", run.stdout))
}

/// One finding as `(file, code, severity, advice)`; `-` for no advice.
pub type AdviceRow = (String, String, String, String);

/// The [`AdviceRow`] of every finding of a JSON scan of the fixture
/// directory `fixture` (relative to the crate), run inside it with `args`.
pub fn advice_rows(fixture: &str, args: &[&str]) -> Vec<AdviceRow> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
    let out = npu_mem_in(&dir, &[&["scan", ".", "--no-cache", "--format", "json"], args].concat());
    let report: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("a JSON report ({e}): {}", out.stderr));
    let text = |f: &Value, key: &str| f[key].as_str().unwrap_or("-").to_string();
    let all = report["findings"].as_array().unwrap().iter();
    all.map(|f| (text(f, "path"), text(f, "code"), text(f, "severity"), text(f, "advice"))).collect()
}

/// An [`AdviceRow`] from its parts.
pub fn advice_row(file: &str, code: &str, severity: &str, advice: &str) -> AdviceRow {
    (file.to_string(), code.to_string(), severity.to_string(), advice.to_string())
}

/// Scans `code`, written as `t.py` in a fresh directory `name`, with the rule
/// pack `pack_text` (as `p.toml`) and only the rules whose codes start with
/// `select`, as JSON; the directory is removed afterwards.
pub fn scan_with_pack(name: &str, pack_text: &str, code: &str, select: &str) -> Run {
    let dir = temp_dir(name);
    std::fs::write(dir.join("p.toml"), pack_text).unwrap();
    std::fs::write(dir.join("t.py"), code).unwrap();
    let run =
        npu_mem_in(&dir, &["scan", "t.py", "--rules", "p.toml", "--select", select, "--format", "json", "--no-cache"]);
    let _ = std::fs::remove_dir_all(&dir);
    run
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

/// A fresh, empty directory under the system's temporary directory,
/// removed with everything in it when the value is dropped (at the end of
/// the test that made it, whether it passed or not).
pub fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("npu-mem-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// A directory that [`temp_dir`] made; it reads as its path.
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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

/// A command's exit status, standard output and standard error, for a failure message.
pub fn output_text(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd` and returns its output; panics with that output if it fails.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?} did not start: {e}"));
    assert!(out.status.success(), "{cmd:?} failed: {}", output_text(&out));
    out
}

/// Makes a virtualenv at `dir` with the machine's `python3` and returns its
/// `bin` directory.
pub fn new_venv(dir: &Path) -> PathBuf {
    run_ok(Command::new("python3").args(["-m", "venv"]).arg(dir));
    dir.join("bin")
}

/// Held while a virtualenv is made, so that tests running in parallel in one
/// test binary do not install into the same one at once.
static VENV_LOCK: Mutex<()> = Mutex::new(());

/// The `bin` directory of the virtualenv `name` under the cargo target
/// directory with `packages` installed from PyPI. It is made once and kept for
/// later runs; a marker written after the install tells it is complete.
pub fn venv_with(name: &str, packages: &[&str]) -> PathBuf {
    let _guard = VENV_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let bin = venv.join("bin");
    let marker = venv.join("npu-mem-test-installed");
    let wanted = packages.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str()) {
        return bin;
    }
    if !bin.join("python").exists() {
        new_venv(&venv);
    }
    run_ok(
        Command::new(bin.join("python"))
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .args(packages),
    );
    std::fs::write(&marker, wanted).unwrap();
    bin
}

/// The PATH with `dir` in front.
pub fn path_with(dir: &Path) -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path)))
        .unwrap_or_else(|e| panic!("{} cannot go on PATH: {e}", dir.display()))
}
