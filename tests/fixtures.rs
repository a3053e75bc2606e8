//! Walks `fixtures/rules/`: each file or directory there is scanned as its own
//! project. A line ending in `# expect: CODE[, CODE]` must produce exactly
//! those codes of the fixture's pack; every other line must produce none.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `DL001-target-2.14.py` -> `DL001`; `TX010.cu` -> `TX010`.
fn code_of(name: &str) -> &str {
    let end = name.find(['-', '.']).unwrap_or(name.len());
    &name[..end]
}

fn pack_of(code: &str) -> String {
    code.chars().take_while(|c| c.is_ascii_alphabetic()).collect()
}

fn files_under(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        out.extend(files_under(&entry.unwrap().path()));
    }
    out.sort();
    out
}

/// `(relative path, line) -> codes` from the `expect:` annotations.
fn expectations(files: &[PathBuf]) -> BTreeMap<(String, u64), BTreeSet<String>> {
    let mut map = BTreeMap::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let rel = file.strip_prefix(ROOT).unwrap().to_string_lossy().replace('\\', "/");
        for (i, line) in text.lines().enumerate() {
            if let Some((_, codes)) = line.rsplit_once("expect:") {
                let codes: BTreeSet<String> =
                    codes.split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
                map.insert((rel.clone(), i as u64 + 1), codes);
            }
        }
    }
    map
}

/// `--target X` from a first line `# fixture: --target X` of any file.
fn directives(files: &[PathBuf]) -> Vec<String> {
    for file in files {
        if let Some(first) = std::fs::read_to_string(file).ok().and_then(|t| t.lines().next().map(str::to_string)) {
            if let Some(rest) = first.strip_prefix("# fixture:") {
                return rest.split_whitespace().map(str::to_string).collect();
            }
        }
    }
    Vec::new()
}

fn check_entry(entry: &Path) -> Vec<String> {
    let name = entry.file_name().unwrap().to_string_lossy().to_string();
    let pack = pack_of(code_of(&name));
    let files = files_under(entry);
    let want = expectations(&files);
    let rel = entry.strip_prefix(ROOT).unwrap().to_string_lossy().to_string();
    let mut args: Vec<String> = directives(&files);
    args.push(rel);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let report = common::scan_json(&args);
    let mut got: BTreeMap<(String, u64), BTreeSet<String>> = BTreeMap::new();
    for f in report["findings"].as_array().unwrap() {
        let code = f["code"].as_str().unwrap().to_string();
        if pack_of(&code) != pack {
            continue;
        }
        let key = (f["path"].as_str().unwrap().to_string(), f["line"].as_u64().unwrap());
        got.entry(key).or_default().insert(code);
    }
    let mut problems = Vec::new();
    for (key, codes) in &want {
        let actual = got.get(key).cloned().unwrap_or_default();
        if &actual != codes {
            problems.push(format!("{}:{}: expected {:?}, got {:?}", key.0, key.1, codes, actual));
        }
    }
    for (key, codes) in &got {
        if !want.contains_key(key) {
            let messages: Vec<&str> = report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["path"] == key.0.as_str() && f["line"] == key.1)
                .filter_map(|f| f["message"].as_str())
                .collect();
            problems.push(format!("{}:{}: unexpected {:?} ({})", key.0, key.1, codes, messages.join(" | ")));
        }
    }
    problems
}

#[test]
fn every_fixture_produces_exactly_its_annotations() {
    let dir = Path::new(ROOT).join("fixtures/rules");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    assert!(!entries.is_empty());
    let problems: Vec<String> = entries.iter().flat_map(|e| check_entry(e)).collect();
    assert!(problems.is_empty(), "{} fixture mismatches:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_rule_has_a_positive_fixture() {
    let listing = common::npu_mem(&["rules"]).stdout;
    let dir = Path::new(ROOT).join("fixtures/rules");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    let mut missing = Vec::new();
    for code in listing.lines().filter_map(|l| l.split_whitespace().next()) {
        let positive = entries
            .iter()
            .filter(|e| code_of(&e.file_name().unwrap().to_string_lossy()) == code)
            .flat_map(|e| files_under(e))
            .any(|f| expectations(&[f]).values().any(|codes| codes.contains(code)));
        if !positive {
            missing.push(code.to_string());
        }
    }
    assert!(missing.is_empty(), "rules without a positive fixture: {missing:?}");
}
