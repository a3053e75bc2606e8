//! The result cache: a warm scan reports exactly what a cold one does, edits
//! and rule changes are seen, and a damaged or contended cache costs nothing
//! but time.

mod common;

use common::{copy_dir, npu_mem_in, temp_dir};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn project(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    copy_dir(&Path::new(ROOT).join("fixtures/demo"), &dir.join("demo"));
    dir
}

fn json(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["scan", "demo", "--format", "json", "--fail-on", "never"];
    args.extend_from_slice(extra);
    let run = npu_mem_in(dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn a_warm_scan_reports_what_a_cold_one_does() {
    let dir = project("cache-warm");
    let cold = json(&dir, &["--no-cache"]);
    assert!(!dir.join(".npu-mem-cache").exists(), "--no-cache writes nothing");
    assert_eq!(json(&dir, &[]), cold, "first run, filling the cache");
    let cache = dir.join(".npu-mem-cache");
    assert_eq!(std::fs::read_to_string(cache.join(".gitignore")).unwrap().lines().last(), Some("*"));
    assert_eq!(cache_files(&cache).len(), 1);
    assert_eq!(json(&dir, &[]), cold, "second run, from the cache");
    let text = |extra: &[&str]| {
        let mut args = vec!["scan", "demo", "--color", "never"];
        args.extend_from_slice(extra);
        regex::Regex::new(r"in \d+ ms").unwrap().replace(&npu_mem_in(&dir, &args).stdout, "").into_owned()
    };
    assert_eq!(text(&[]), text(&["--no-cache"]), "the text report too");

    // The cache is really used: an entry is trusted while the content matches...
    let file = &cache_files(&cache)[0];
    let stored = std::fs::read_to_string(file).unwrap();
    let marked = stored.replace("moves it to a CUDA device", "MARKED BY THE TEST");
    assert_ne!(marked, stored);
    std::fs::write(file, marked).unwrap();
    let marked_in = |report: &str, path: &str| {
        let report: serde_json::Value = serde_json::from_str(report).unwrap();
        let findings = report["findings"].as_array().unwrap().clone();
        findings.iter().any(|f| f["path"] == path && f["message"].as_str().unwrap().contains("MARKED BY THE TEST"))
    };
    let warm = json(&dir, &[]);
    assert!(marked_in(&warm, "demo/train.py") && marked_in(&warm, "demo/utils.py"));
    // ...and not once the file changes.
    let train = dir.join("demo/train.py");
    let source = std::fs::read_to_string(&train).unwrap();
    std::fs::write(&train, source.replace("model.cuda()", "model.cuda()  # edited")).unwrap();
    let edited = json(&dir, &[]);
    assert!(!marked_in(&edited, "demo/train.py"), "train.py is analysed again after the edit");
    assert!(marked_in(&edited, "demo/utils.py"), "utils.py still comes from the cache");
}

#[test]
fn rule_packs_target_and_selection_get_their_own_cache() {
    let dir = project("cache-keys");
    json(&dir, &[]);
    json(&dir, &["--target", "2.14"]);
    json(&dir, &["--select", "TX"]);
    let pack = "[pack]\nname = \"extra\"\ndescription = \"d\"\n\n[[rule]]\ncode = \"EXT001\"\nname = \"gpu-call\"\nsection = \"transfer\"\nseverity = \"info\"\nmessage = \"m\"\n[rule.docs]\nwhat = \"w\"\nwhy = \"w\"\nexample = \"x.gpu()\"\ninstead = \"x.npu()\"\n[rule.match]\nmethod = \"gpu\"\n";
    std::fs::write(dir.join("extra.toml"), pack).unwrap();
    json(&dir, &["--rules", "extra.toml"]);
    std::fs::write(dir.join("extra.toml"), pack.replace("severity = \"info\"", "severity = \"error\"")).unwrap();
    json(&dir, &["--rules", "extra.toml"]);
    assert_eq!(cache_files(&dir.join(".npu-mem-cache")).len(), 5, "a changed pack is a new key");
    let elsewhere = dir.join("elsewhere");
    json(&dir, &["--cache-dir", elsewhere.to_str().unwrap()]);
    assert_eq!(cache_files(&elsewhere).len(), 1, "--cache-dir moves it");
}

#[test]
fn a_damaged_cache_is_ignored_and_rebuilt() {
    let dir = project("cache-damaged");
    let cold = json(&dir, &["--no-cache"]);
    json(&dir, &[]);
    let file = cache_files(&dir.join(".npu-mem-cache"))[0].clone();
    let stored = std::fs::read(&file).unwrap();
    for damaged in [stored[..stored.len() / 2].to_vec(), b"\x00\xffnot json".to_vec(), Vec::new()] {
        std::fs::write(&file, &damaged).unwrap();
        let run = npu_mem_in(&dir, &["scan", "demo", "--format", "json", "--fail-on", "never"]);
        assert_eq!(run.stdout, cold);
        assert!(run.stderr.contains("ignored a damaged cache file"), "{}", run.stderr);
        let rebuilt = std::fs::read(&file).unwrap();
        assert!(serde_json::from_slice::<serde_json::Value>(&rebuilt).is_ok(), "rewritten whole");
    }
}

#[test]
fn concurrent_runs_never_corrupt_the_cache() {
    let dir = project("cache-concurrent");
    let cold = json(&dir, &["--no-cache"]);
    let runs: Vec<std::process::Child> = (0..6)
        .map(|_| {
            std::process::Command::new(env!("CARGO_BIN_EXE_npu-mem"))
                .args(["scan", "demo", "--format", "json", "--fail-on", "never"])
                .current_dir(&dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in runs {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(!String::from_utf8_lossy(&out.stderr).contains("damaged"));
        assert_eq!(String::from_utf8_lossy(&out.stdout), cold);
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.join(".npu-mem-cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(json(&dir, &[]), cold);
}
