//! Every built-in rule's documented `example` triggers the rule, and its
//! `instead` does not: `npu-mem rule CODE`, the SARIF help and the JSON rule
//! list show these texts, so they must be true.

mod common;

use npu_mem::rules::compile::parse_version_req;
use npu_mem::rules::model::TARGETS;
use serde_json::Value;

/// Imports an example may use without writing them; each is put before the
/// example's code unless the example has that line itself.
const IMPORTS: &[&str] = &[
    "import os",
    "import torch",
    "import torch.nn as nn",
    "import torch.distributed as dist",
    "from torch.utils.data import DataLoader",
];

/// The files of a text that starts with `# file: NAME`: each such line (or
/// `// file: NAME`, for a C++ or CUDA file) starts the next file.
fn files_of(text: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let name = line.strip_prefix("# file: ").or_else(|| line.strip_prefix("// file: "));
        match (name, files.last_mut()) {
            (Some(name), _) => files.push((name.trim().to_string(), String::new())),
            (None, Some((_, body))) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    files
}

/// How many findings of `code` a scan of `text` has at `target`. A text that
/// starts with `# file: NAME` is a project of several files ([`files_of`]); a
/// text whose first line starts with `export ` or `#!` is a shell script; any
/// other is Python, after the [`IMPORTS`] it lacks.
fn findings_of(code: &str, which: &str, text: &str, target: &str) -> usize {
    let dir = common::temp_dir(&format!("rule-docs-{code}-{which}"));
    let file = if text.starts_with("# file: ") {
        for (name, body) in files_of(text) {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        "."
    } else if text.trim_start().starts_with("export ") || text.starts_with("#!") {
        std::fs::write(dir.join("run.sh"), text).unwrap();
        "run.sh"
    } else {
        let mut source: String =
            IMPORTS.iter().filter(|i| !text.lines().any(|l| l.trim() == **i)).map(|i| format!("{i}\n")).collect();
        source.push_str(text);
        std::fs::write(dir.join("train.py"), source).unwrap();
        "train.py"
    };
    let args =
        ["scan", file, "--select", code, "--format", "json", "--no-cache", "--fail-on", "never", "--target", target];
    let run = common::npu_mem_in(&dir, &args);
    assert_eq!(run.code, 0, "{code} {which}: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == code).count()
}

#[test]
fn each_rule_example_triggers_it_and_its_instead_does_not() {
    let listing = common::npu_mem(&["rules", "--format", "json"]);
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    let rules: Vec<Value> = serde_json::from_str(&listing.stdout).unwrap();
    assert!(rules.len() > 40, "every built-in rule is listed");
    let mut wrong = Vec::new();
    for rule in &rules {
        let code = rule["code"].as_str().unwrap();
        // The default target (the first) unless the rule is for other versions.
        let requirement = rule["target"].as_str().map(|t| parse_version_req(t).unwrap());
        let Some((target, _)) = TARGETS.iter().find(|(_, v)| requirement.as_ref().is_none_or(|r| r.allows(*v))) else {
            wrong.push(format!("{code}: no --target satisfies `{}`", rule["target"]));
            continue;
        };
        let example = findings_of(code, "example", rule["docs"]["example"].as_str().unwrap(), target);
        if example == 0 {
            wrong.push(format!("{code}: the example does not trigger it (--target {target})"));
        }
        let instead = findings_of(code, "instead", rule["docs"]["instead"].as_str().unwrap(), target);
        if instead > 0 {
            wrong.push(format!("{code}: `instead` still triggers it (--target {target})"));
        }
    }
    assert!(wrong.is_empty(), "rule docs to fix:\n{}", wrong.join("\n"));
}
