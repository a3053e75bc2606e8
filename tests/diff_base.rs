//! `--diff-base` whatever the file names and the user's git configuration:
//! names with spaces or non-ASCII letters, `diff.noprefix`,
//! `diff.mnemonicPrefix`, a bare file name, and a shallow clone.

mod common;

use common::{git, npu_mem_in, temp_dir};
use std::path::Path;

const BASE: &str = "import torch\nx = torch.ones(2).cuda()\n";
const ADDED: &str = "y = torch.zeros(2).cuda()\n";

/// A repository with `names` committed, then one finding line added to each.
fn repo(test: &str, names: &[&str], config: &[(&str, &str)]) -> common::TempDir {
    let dir = temp_dir(test);
    git(&dir, &["init", "-q"]);
    for (key, value) in config {
        git(&dir, &["config", key, value]);
    }
    for name in names {
        std::fs::write(dir.join(name), BASE).unwrap();
        git(&dir, &["add", "--", name]);
    }
    git(&dir, &["commit", "-q", "-m", "base"]);
    for name in names {
        std::fs::write(dir.join(name), format!("{BASE}{ADDED}")).unwrap();
    }
    dir
}

/// The `path:line` of every finding reported by `scan ARGS --diff-base HEAD` in `dir`.
fn changed_findings(dir: &Path, paths: &[&str]) -> Vec<String> {
    changed_with_warnings(dir, paths).0
}

#[test]
fn names_with_spaces_and_non_ascii_letters_are_matched() {
    let names = ["my model.py", "modéle.py", "it's \"q\".py"];
    let dir = repo("diff-names", &names, &[]);
    let found = changed_findings(&dir, &["."]);
    let mut want: Vec<String> = names.iter().map(|n| format!("{n}:3")).collect();
    want.sort();
    assert_eq!(found, want);
}

#[test]
fn prefix_settings_in_the_git_config_change_nothing() {
    for (key, test) in [("diff.noprefix", "diff-noprefix"), ("diff.mnemonicPrefix", "diff-mnemonic")] {
        let dir = repo(test, &["train.py"], &[(key, "true")]);
        assert_eq!(changed_findings(&dir, &["."]), ["train.py:3"], "with {key}=true");
    }
}

#[test]
fn a_bare_file_name_is_looked_up_from_the_current_directory() {
    let dir = repo("diff-plain", &["plain.py"], &[]);
    assert_eq!(changed_findings(&dir, &["plain.py"]), ["plain.py:3"]);
}

#[test]
fn a_missing_base_in_a_shallow_clone_says_how_to_fetch_it() {
    let origin = repo("diff-origin", &["train.py"], &[]);
    git(&origin, &["commit", "-q", "-am", "second"]);
    let clone = temp_dir("diff-shallow");
    let url = format!("file://{}", origin.display());
    git(&clone, &["clone", "-q", "--depth", "1", &url, "."]);
    let run = npu_mem_in(&clone, &["scan", ".", "--diff-base", "HEAD~1"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("shallow clone") && run.stderr.contains("fetch-depth: 0"), "{}", run.stderr);

    // A full repository with the same missing commit gets no such hint.
    let run = npu_mem_in(&origin, &["scan", ".", "--diff-base", "HEAD~5"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no such commit") && !run.stderr.contains("shallow"), "{}", run.stderr);
}

#[test]
fn lines_of_a_file_with_lone_cr_ends_are_matched_as_git_counts_them() {
    // Python and npu-mem end a line at a lone CR; git does not, so such a
    // file is one line for git: a change anywhere touches every finding.
    let dir = temp_dir("diff-lone-cr");
    git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("mac.py"), "import torch\rx = 1\r").unwrap();
    std::fs::write(dir.join("unix.py"), BASE).unwrap();
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    std::fs::write(dir.join("mac.py"), "import torch\rx = 1\ry = torch.zeros(2).cuda()\r").unwrap();
    assert_eq!(changed_findings(&dir, &["."]), ["mac.py:3"]);
}

/// The `path:line` of the findings of `scan ARGS --diff-base HEAD` in `dir`
/// (each line once: several rules may report a changed line), and its stderr.
fn changed_with_warnings(dir: &Path, paths: &[&str]) -> (Vec<String>, String) {
    let mut args = vec!["scan"];
    args.extend_from_slice(paths);
    args.extend(["--diff-base", "HEAD", "--format", "json", "--fail-on", "never", "--no-cache"]);
    let run = npu_mem_in(dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut found: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}:{}", f["path"].as_str().unwrap(), f["line"]))
        .collect();
    found.sort();
    found.dedup();
    (found, run.stderr)
}

#[test]
fn files_git_calls_binary_are_compared_as_text() {
    // `.gitattributes` marking them binary (or -diff) made git print "Binary
    // files differ": every finding of the file was dropped.
    for attribute in ["*.py binary", "*.py -diff"] {
        let dir = temp_dir("diff-binary");
        git(&dir, &["init", "-q"]);
        std::fs::write(dir.join(".gitattributes"), format!("{attribute}\n")).unwrap();
        std::fs::write(dir.join("a.py"), BASE).unwrap();
        git(&dir, &["add", "."]);
        git(&dir, &["commit", "-q", "-m", "base"]);
        std::fs::write(dir.join("a.py"), format!("{BASE}{ADDED}")).unwrap();
        assert_eq!(changed_with_warnings(&dir, &["."]).0, ["a.py:3"], "{attribute}");
    }
}

#[test]
fn a_file_moved_with_git_mv_brings_no_new_lines() {
    let dir = repo("diff-rename", &["old.py"], &[]);
    std::fs::write(dir.join("old.py"), BASE).unwrap();
    git(&dir, &["mv", "old.py", "new.py"]);
    assert!(changed_with_warnings(&dir, &["."]).0.is_empty(), "a pure rename re-reported the old findings");
    std::fs::write(dir.join("new.py"), format!("{BASE}{ADDED}")).unwrap();
    assert_eq!(changed_with_warnings(&dir, &["."]).0, ["new.py:3"], "a moved and edited file: its new line");
}

#[test]
fn what_the_diff_cannot_judge_keeps_its_findings_and_says_so() {
    let dir = repo("diff-undecided", &["a.py"], &[]);
    // An untracked nested repository: git lists only its directory.
    let nested = dir.join("nested");
    std::fs::create_dir(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    std::fs::write(nested.join("n.py"), BASE).unwrap();
    // A submodule with an edit inside it.
    let upstream = temp_dir("diff-undecided-upstream");
    git(&upstream, &["init", "-q"]);
    std::fs::write(upstream.join("s.py"), BASE).unwrap();
    git(&upstream, &["add", "."]);
    git(&upstream, &["commit", "-q", "-m", "sub"]);
    git(&dir, &["-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream.to_str().unwrap(), "sub"]);
    git(&dir, &["commit", "-q", "-m", "with the submodule"]);
    std::fs::write(dir.join("sub/s.py"), format!("{BASE}{ADDED}")).unwrap();
    // A file outside the repository, named beside the repository.
    let outside = temp_dir("diff-undecided-outside");
    std::fs::write(outside.join("o.py"), BASE).unwrap();
    let o = outside.join("o.py");
    let (found, stderr) = changed_with_warnings(&dir, &[".", o.to_str().unwrap()]);
    let shown_o = format!("{}:2", o.display());
    for expected in ["a.py:3", "nested/n.py:2", "sub/s.py:2", "sub/s.py:3", shown_o.as_str()] {
        assert!(found.iter().any(|f| f == expected), "{expected} kept: {found:?}");
    }
    assert!(!found.contains(&"a.py:2".to_string()), "an unchanged line of the repository is still left out");
    for said in ["nested/n.py: in", "sub/s.py: in", "o.py: outside the git repository"] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
}
