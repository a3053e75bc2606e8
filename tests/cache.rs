//! The result cache: a warm scan reports exactly what a cold one does, edits,
//! rule changes and rebuilds are seen, a partial scan keeps the rest of the
//! cache, and a damaged or contended cache costs nothing but time.

mod common;

use common::{copy_dir, npu_mem_in, temp_dir};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn project(name: &str) -> common::TempDir {
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

/// The one cache file under `dir`'s default cache directory, parsed.
fn stored(dir: &Path) -> (PathBuf, serde_json::Value) {
    let files = cache_files(&dir.join(".npu-mem-cache"));
    assert_eq!(files.len(), 1, "{files:?}");
    let value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    (files[0].clone(), value)
}

/// Writes `value` to `file`, with every entry's checksum recomputed when
/// `reseal`. Checksums cover the entry's JSON text as stored, and this
/// writes it anew (keys in another order), so without `reseal` every entry
/// fails its checksum.
fn store(file: &Path, mut value: serde_json::Value, reseal: bool) {
    for (path, entry) in value["entries"].as_object_mut().unwrap() {
        if reseal {
            entry["check"] = npu_mem::cache::checksum(path, &entry["outcome"].to_string()).into();
        }
    }
    std::fs::write(file, value.to_string()).unwrap();
}

/// Rewrites the stored messages of `dir`'s cache, resealed, so that a report
/// shows which findings came from the cache ([`marked_in`]).
fn mark_stored_findings(dir: &Path) {
    let (file, value) = stored(dir);
    let marked = value.to_string().replace("moves it to a CUDA device", "MARKED BY THE TEST");
    assert_ne!(marked, value.to_string());
    store(&file, serde_json::from_str(&marked).unwrap(), true);
}

/// Whether the JSON `report` has a finding in `path` taken from the cache
/// that [`mark_stored_findings`] marked.
fn marked_in(report: &str, path: &str) -> bool {
    let report: serde_json::Value = serde_json::from_str(report).unwrap();
    let findings = report["findings"].as_array().unwrap().clone();
    findings.iter().any(|f| f["path"] == path && f["message"].as_str().unwrap().contains("MARKED BY THE TEST"))
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
    mark_stored_findings(&dir);
    let warm = json(&dir, &[]);
    assert!(marked_in(&warm, "demo/train.py") && marked_in(&warm, "demo/utils.py"));
    // ...and not once the file changes.
    let train = dir.join("demo/train.py");
    let source = std::fs::read_to_string(&train).unwrap();
    std::fs::write(&train, source.replace("model.to(local_rank)", "model.to(local_rank)  # edited")).unwrap();
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

#[test]
fn an_entry_edited_by_hand_fails_its_checksum_and_is_rebuilt() {
    let dir = project("cache-checksum");
    let cold = npu_mem_in(&dir, &["scan", "demo", "--format", "json", "--no-cache"]);
    assert_eq!(cold.code, 1, "the demo project fails the gate");
    npu_mem_in(&dir, &["scan", "demo"]);
    let (file, mut value) = stored(&dir);
    let mut emptied = 0;
    for entry in value["entries"].as_object_mut().unwrap().values_mut() {
        let findings = entry["outcome"]["facts"]["findings"].as_array_mut().unwrap();
        emptied += usize::from(!findings.is_empty());
        findings.clear();
    }
    assert!(emptied > 0);
    store(&file, value, false);
    let run = npu_mem_in(&dir, &["scan", "demo", "--format", "json"]);
    assert_eq!((run.code, &run.stdout), (1, &cold.stdout), "the emptied entries are not trusted");
    assert!(run.stderr.contains(&format!("ignored {emptied} of")) && run.stderr.contains("checksum"), "{}", run.stderr);
    let (_, rebuilt) = stored(&dir);
    let entries = rebuilt["entries"].as_object().unwrap();
    let with_findings =
        entries.values().filter(|e| !e["outcome"]["facts"]["findings"].as_array().unwrap().is_empty()).count();
    assert_eq!(with_findings, emptied, "rebuilt in the cache file too");
    assert!(!npu_mem_in(&dir, &["scan", "demo"]).stderr.contains("checksum"));
}

#[test]
fn a_sealed_entry_that_cannot_be_read_is_rebuilt_and_said_so() {
    let dir = project("cache-unreadable");
    let cold = npu_mem_in(&dir, &["scan", "demo", "--format", "json", "--no-cache"]);
    npu_mem_in(&dir, &["scan", "demo"]);
    let (file, mut value) = stored(&dir);
    let entry = value["entries"].as_object_mut().unwrap().values_mut().next().unwrap();
    // Sealed, so the checksum holds, but not the layout: a list is a string.
    // (A missing field reads as empty: a file with nothing to report stores
    // only what it adds to its project.)
    entry["outcome"]["facts"]["findings"] = "not a list".into();
    store(&file, value, true);
    let run = npu_mem_in(&dir, &["scan", "demo", "--format", "json"]);
    assert_eq!(run.stdout, cold.stdout, "the entry is analysed again");
    assert!(run.stderr.contains("ignored 1 of") && run.stderr.contains("could not be read"), "{}", run.stderr);
}

#[test]
fn scanning_one_file_keeps_the_other_entries_and_old_ones_expire() {
    let dir = project("cache-merge");
    json(&dir, &[]);
    let (file, mut value) = stored(&dir);
    let paths: Vec<String> = value["entries"].as_object().unwrap().keys().cloned().collect();
    assert!(paths.len() > 2 && paths.contains(&"demo/train.py".to_string()), "{paths:?}");
    let run = npu_mem_in(&dir, &["scan", "demo/train.py", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (_, after) = stored(&dir);
    let kept: Vec<String> = after["entries"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(kept, paths, "merged, not replaced");

    // An entry no run has used for longer than the maximum age is dropped on the next save.
    let stale = paths.iter().find(|p| *p != "demo/train.py").unwrap().clone();
    value["entries"][&stale]["seen"] = 1.into();
    store(&file, value, true);
    npu_mem_in(&dir, &["scan", "demo/train.py", "--fail-on", "never"]);
    let (_, after) = stored(&dir);
    let kept: Vec<&String> = after["entries"].as_object().unwrap().keys().collect();
    assert_eq!(kept.len(), paths.len() - 1, "{kept:?}");
    assert!(!kept.contains(&&stale), "{stale} expired: {kept:?}");
}

/// Waits until the files just written are older than the time a file must
/// have been left alone for its stamp to be kept (two seconds).
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(3100));
}

#[test]
fn an_unchanged_file_is_taken_by_its_stamp_and_any_write_is_seen() {
    let dir = project("cache-stamps");
    settle();
    let cold = json(&dir, &[]);
    let (_, value) = stored(&dir);
    let stamped = |v: &serde_json::Value, path: &str| v["entries"][path]["outcome"].to_string().contains("\"stamp\":");
    assert!(stamped(&value, "demo/train.py") && stamped(&value, "demo/utils.py"), "settled files are stamped");
    mark_stored_findings(&dir);
    assert!(marked_in(&json(&dir, &[]), "demo/utils.py"), "the stored analysis is used");
    // A rewrite of the same length whose modification time is set back, as
    // `cp -p` or a careless tool would leave it: its change time still moved.
    let utils = dir.join("demo/utils.py");
    let before = std::fs::metadata(&utils).unwrap().modified().unwrap();
    let source = std::fs::read_to_string(&utils).unwrap();
    let edited = source.replacen("Device setup", "Device set-up", 1).replacen("helpers.", "helper.", 1);
    assert_eq!(edited.len(), source.len());
    std::fs::write(&utils, &edited).unwrap();
    std::fs::File::options().write(true).open(&utils).unwrap().set_modified(before).unwrap();
    // Settled again, so that only the change time tells.
    settle();
    let warm = json(&dir, &[]);
    assert!(!marked_in(&warm, "demo/utils.py"), "utils.py is read and analysed again");
    assert!(marked_in(&warm, "demo/train.py"), "train.py is still taken from the cache");
    std::fs::write(&utils, &source).unwrap();
    assert_eq!(json(&dir, &["--no-cache"]), cold);
}

#[test]
fn a_warm_scan_of_an_unchanged_tree_writes_nothing() {
    let dir = project("cache-unchanged");
    // Stamps settled before the first run: the second has none to add.
    settle();
    let cold = json(&dir, &[]);
    let (file, before) = stored(&dir);
    let bytes = std::fs::read(&file).unwrap();
    // A marker that a rewrite would lose: the run must leave the file as it is.
    std::fs::write(&file, [&bytes[..], b"\n"].concat()).unwrap();
    assert_eq!(json(&dir, &[]), cold);
    assert_eq!(std::fs::read(&file).unwrap(), [&bytes[..], b"\n"].concat(), "rewritten though nothing changed");

    // An entry last used more than a day ago is recorded as used again.
    let seen = |v: &serde_json::Value| v["entries"]["demo/train.py"]["seen"].as_u64().unwrap();
    let mut old = before.clone();
    old["entries"]["demo/train.py"]["seen"] = (seen(&before) - 2 * 86_400).into();
    store(&file, old, true);
    assert_eq!(json(&dir, &[]), cold);
    assert!(seen(&stored(&dir).1) >= seen(&before), "the use is recorded");

    // A changed file is analysed and stored.
    let train = dir.join("demo/train.py");
    std::fs::write(&train, std::fs::read_to_string(&train).unwrap() + "\nx = 1\n").unwrap();
    json(&dir, &[]);
    let (_, changed) = stored(&dir);
    assert_ne!(changed["entries"]["demo/train.py"]["outcome"], before["entries"]["demo/train.py"]["outcome"]);
}

#[test]
fn a_rebuilt_binary_does_not_reuse_the_old_results() {
    let dir = project("cache-build");
    let exe = dir.join("npu-mem");
    std::fs::copy(env!("CARGO_BIN_EXE_npu-mem"), &exe).unwrap();
    let run = |exe: &Path| {
        let args = ["scan", "demo", "--fail-on", "never"];
        // Another test thread forking while the copy was open for writing can
        // hold it open in its child until that child execs: "text file busy".
        let spawn = || std::process::Command::new(exe).args(args).current_dir(&dir).output();
        let busy = |r: &std::io::Result<std::process::Output>| {
            r.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::ExecutableFileBusy)
        };
        let mut out = spawn();
        for _ in 0..50 {
            if !busy(&out) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            out = spawn();
        }
        let out = out.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    run(&exe);
    run(&exe);
    assert_eq!(cache_files(&dir.join(".npu-mem-cache")).len(), 1, "the same binary shares its cache");
    // Same version, same size, new modification time: what a rebuild looks like.
    let a_day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
    std::fs::File::options().write(true).open(&exe).unwrap().set_modified(a_day_ago).unwrap();
    run(&exe);
    assert_eq!(cache_files(&dir.join(".npu-mem-cache")).len(), 2, "the rebuilt binary has its own cache");
    // The copy is as large as the binary: do not leave it in the temporary directory.
    let _ = std::fs::remove_file(&exe);
}

#[test]
fn a_project_fact_from_another_file_applies_cold_and_warm() {
    // MEM007 needs "nothing in this project uses activation checkpointing".
    // A cold scan drops the finding as soon as it has seen the file that does
    // (before or after the stack, by name); the cache keeps it, for the scan
    // after that file changes.
    let dir = temp_dir("cache-project-fact");
    let stack = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.blocks = nn.ModuleList([Block() for _ in range(32)])\n";
    let uses = "from torch.utils.checkpoint import checkpoint\n\n\ndef run(block, x):\n    return checkpoint(block, x, use_reentrant=False)\n";
    std::fs::write(dir.join("m.py"), stack).unwrap();
    let mem007 = |extra: &[&str]| {
        let mut args = vec!["scan", ".", "--format", "json", "--fail-on", "never", "--threads", "1"];
        args.extend_from_slice(extra);
        let run = npu_mem_in(&dir, &args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "MEM007").count()
    };
    assert_eq!(mem007(&["--no-cache"]), 1, "no checkpointing anywhere");
    for name in ["a.py", "z.py"] {
        std::fs::write(dir.join(name), uses).unwrap();
        assert_eq!(mem007(&["--no-cache"]), 0, "checkpointing in {name}");
        assert_eq!(mem007(&[]), 0, "checkpointing in {name}, filling the cache");
        // The file that checkpoints reports nothing: the cache keeps only
        // the facts it adds, and they still apply when read back.
        assert_eq!(mem007(&[]), 0, "checkpointing in {name}, from the cache");
        std::fs::remove_file(dir.join(name)).unwrap();
        assert_eq!(mem007(&[]), 1, "{name} removed: m.py's finding comes back from the cache");
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn a_cache_dir_npu_mem_did_not_create_is_not_written_and_the_scan_goes_on() {
    // `--cache-dir .` (or `src`, or `..`) once wrote a `.gitignore` of `*` into
    // the scanned tree: every later scan saw no file and passed.
    let dir = project("cache-dir-not-ours");
    let cold = json(&dir, &["--no-cache"]);
    let before = names(&dir.join("demo"));
    for named in [".", "demo", "demo/..", "./demo/"] {
        let run = npu_mem_in(&dir, &["scan", "demo", "--format", "json", "--fail-on", "never", "--cache-dir", named]);
        assert_eq!((run.code, &run.stdout), (0, &cold), "{named}: the scan is unchanged: {}", run.stderr);
        assert!(run.stderr.contains(&format!("not using {named} as the cache")), "{named}: {}", run.stderr);
        assert!(!dir.join(".gitignore").exists() && !dir.join("CACHEDIR.TAG").exists(), "{named}");
        assert_eq!(names(&dir.join("demo")), before, "{named}: nothing written among the sources");
    }
    // The scanned directory itself: refused because it is scanned, whatever else.
    let run = npu_mem_in(&dir, &["scan", "demo", "--fail-on", "never", "--cache-dir", "demo"]);
    assert!(run.stderr.contains("which is being scanned"), "{}", run.stderr);
    // An existing directory outside the scan that npu-mem did not make: refused too.
    std::fs::create_dir(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), "keep").unwrap();
    let run = npu_mem_in(&dir, &["scan", "demo", "--fail-on", "never", "--cache-dir", "mine"]);
    assert!(run.stderr.contains("did not create it"), "{}", run.stderr);
    assert_eq!(names(&dir.join("mine")), ["notes.txt"]);
    // A directory that does not exist is created, tagged, and used from then on.
    json(&dir, &["--cache-dir", "new/cache"]);
    let cache = dir.join("new/cache");
    assert_eq!(cache_files(&cache).len(), 1);
    let tag = std::fs::read_to_string(cache.join("CACHEDIR.TAG")).unwrap();
    assert!(tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55\n"), "{tag}");
    let run = npu_mem_in(&dir, &["scan", "demo", "--format", "json", "--fail-on", "never", "--cache-dir", "new/cache"]);
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), (cold.as_str(), ""), "a warm run, without a note");
}

#[test]
fn a_cache_dir_of_an_earlier_version_is_still_used() {
    // Earlier versions wrote no tag, only the `.gitignore`.
    let dir = project("cache-dir-legacy");
    let cache = dir.join(".npu-mem-cache");
    std::fs::create_dir(&cache).unwrap();
    std::fs::write(cache.join(".gitignore"), "# Written by npu-mem: the whole cache directory stays out of git.\n*\n")
        .unwrap();
    let run = npu_mem_in(&dir, &["scan", "demo", "--fail-on", "never"]);
    assert!(!run.stderr.contains("not using"), "{}", run.stderr);
    assert_eq!(cache_files(&cache).len(), 1);
    assert!(cache.join("CACHEDIR.TAG").exists(), "tagged now");
}

#[cfg(unix)]
#[test]
fn nothing_is_written_through_a_link_in_the_cache_directory() {
    let dir = project("cache-links");
    json(&dir, &[]);
    let (file, _) = stored(&dir);
    // The cache file is a link to a file of the user's: it is replaced, not written through.
    let precious = dir.join("precious.txt");
    std::fs::write(&precious, "the user's").unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&precious, &file).unwrap();
    let run = npu_mem_in(&dir, &["scan", "demo", "--fail-on", "never"]);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "the user's");
    assert!(std::fs::symlink_metadata(&file).unwrap().file_type().is_file(), "the link became the cache file");
    // A dangling link where the tag or `.gitignore` would go is not followed either.
    let fresh = dir.join("fresh");
    let ignore_target = dir.join("ignore-target");
    std::fs::create_dir(&fresh).unwrap();
    std::fs::write(
        fresh.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by npu-mem.\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&ignore_target, fresh.join(".gitignore")).unwrap();
    let run = npu_mem_in(&dir, &["scan", "demo", "--fail-on", "never", "--cache-dir", "fresh"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!ignore_target.exists(), "the dangling link's target is not created");
    assert_eq!(cache_files(&fresh).len(), 1);
}
