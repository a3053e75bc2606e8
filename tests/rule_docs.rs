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

/// Limits on a built-in rule's documentation, in words.
const WHAT_WORDS: usize = 60;
/// One "Not reported when" bullet.
const BULLET_WORDS: usize = 45;
/// All prose of one rule: what, the bullets, why and the fix note (not the
/// example, the code to use instead or the sources).
const PROSE_WORDS: usize = 320;

/// Text no doc may hold: where it points, only the team can follow.
const INTERNAL: &[(&str, &str)] = &[
    (r"bench/", "a path into bench/"),
    (r"(?i)verdicts", "a verdicts file"),
    (r"(^|[^.])\.\./|shared/facts", "a path outside the repository"),
    (r"(?i)held-out|development set|false alarms?|\bports? read\b|\bread for issue", "an internal reading of ports"),
];

/// Text only `sources` may hold: a public issue or pull request, and
/// Huawei's ports, are named there, with their repository.
const SOURCES_ONLY: &[(&str, &str)] = &[
    (r"(?i)\b(issue|pull request|PR)\s*#?\d+|#\d{2,}\b", "an issue or pull request number (name it in `sources`)"),
    (r"(?i)modelzoo", "ModelZoo (name the port in `sources`)"),
];

/// A count of things read in a corpus (`110 files`, `20 such copies`): evidence
/// that belongs in bench/RESULTS.md, not in a user's documentation.
const COUNTS: &str = r"(?i)\b\d+ (\w+ )?(of the|files|ports|models|copies|loaders|alarms|findings|kernels)\b";

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The keys whose presence in a rule's TOML means it has exceptions: the
/// matcher's `unless`, a `downgrade`, or `auto_migrated_when`; followed into
/// the pack's named matchers (`use = "NAME"`).
fn has_exceptions(rule: &toml::Table, matchers: &toml::Table) -> bool {
    fn holds_unless(v: &toml::Value, matchers: &toml::Table, depth: usize) -> bool {
        match v {
            toml::Value::Table(t) => t.iter().any(|(k, v)| {
                k == "unless"
                    || (k == "use"
                        && depth < 8
                        && v.as_str()
                            .and_then(|n| matchers.get(n))
                            .is_some_and(|m| holds_unless(m, matchers, depth + 1)))
                    || holds_unless(v, matchers, depth)
            }),
            toml::Value::Array(a) => a.iter().any(|v| holds_unless(v, matchers, depth)),
            _ => false,
        }
    }
    rule.contains_key("downgrade")
        || rule.contains_key("auto_migrated_when")
        || rule.get("match").is_some_and(|m| holds_unless(m, matchers, 0))
}

/// Every `[[rule]]` of the built-in packs with its pack's named matchers.
fn builtin_rule_tables() -> Vec<(toml::Table, toml::Table)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let pack: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
            let matchers = pack.get("matchers").and_then(|m| m.as_table()).cloned().unwrap_or_default();
            for rule in pack.get("rule").and_then(|r| r.as_array()).into_iter().flatten() {
                out.push((rule.as_table().unwrap().clone(), matchers.clone()));
            }
        }
    }
    out
}

/// What is wrong with one rule's documentation, one line per violated limit.
fn shape_problems(code: &str, docs: &Value, has_exceptions: bool) -> Vec<String> {
    let text = |k: &str| docs[k].as_str().unwrap_or("").to_string();
    let list = |k: &str| -> Vec<String> {
        docs[k].as_array().map(|a| a.iter().map(|v| v.as_str().unwrap_or("").to_string()).collect()).unwrap_or_default()
    };
    let (what, why, fix_note) = (text("what"), text("why"), text("fix_note"));
    let (bullets, sources) = (list("not_reported"), list("sources"));
    let mut problems = Vec::new();
    if words(&what) > WHAT_WORDS {
        problems.push(format!("{code}: `what` has {} words, more than {WHAT_WORDS}", words(&what)));
    }
    if has_exceptions && bullets.is_empty() {
        problems.push(format!(
            "{code}: its matcher has `unless`, `downgrade` or `auto_migrated_when`, but `not_reported` is empty"
        ));
    }
    for b in &bullets {
        if words(b) > BULLET_WORDS {
            problems
                .push(format!("{code}: a `not_reported` bullet has {} words, more than {BULLET_WORDS}: {b}", words(b)));
        }
    }
    let prose = words(&what) + words(&why) + words(&fix_note) + bullets.iter().map(|b| words(b)).sum::<usize>();
    if prose > PROSE_WORDS {
        problems
            .push(format!("{code}: what, not_reported, why and fix_note have {prose} words, more than {PROSE_WORDS}"));
    }
    if sources.is_empty() {
        problems.push(format!("{code}: `sources` is empty"));
    }
    let prose_fields: Vec<(&str, String)> = [("what", what), ("why", why), ("fix_note", fix_note)]
        .into_iter()
        .chain(bullets.into_iter().map(|b| ("not_reported", b)))
        .collect();
    let all_fields = prose_fields
        .iter()
        .cloned()
        .chain([("example", text("example")), ("instead", text("instead"))])
        .chain(sources.iter().map(|s| ("sources", s.clone())));
    for (field, value) in all_fields {
        for (pattern, what) in INTERNAL.iter().chain([(COUNTS, "a count of what was read in ports")].iter()) {
            if let Some(m) = regex::Regex::new(pattern).unwrap().find(&value) {
                problems.push(format!("{code}: `{field}` names {what}: `{}`", m.as_str()));
            }
        }
    }
    for (field, value) in &prose_fields {
        for (pattern, what) in SOURCES_ONLY {
            if let Some(m) = regex::Regex::new(pattern).unwrap().find(value) {
                problems.push(format!("{code}: `{field}` names {what}: `{}`", m.as_str()));
            }
        }
    }
    problems
}

#[test]
fn each_builtin_rule_doc_has_the_user_facing_shape() {
    let listing = common::npu_mem(&["rules", "--format", "json"]);
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    let rules: Vec<Value> = serde_json::from_str(&listing.stdout).unwrap();
    let tables = builtin_rule_tables();
    assert_eq!(tables.len(), rules.len(), "every listed rule comes from rules/*.toml");
    let mut problems = Vec::new();
    for rule in &rules {
        let code = rule["code"].as_str().unwrap();
        let (table, matchers) = tables.iter().find(|(t, _)| t["code"].as_str() == Some(code)).unwrap();
        problems.extend(shape_problems(code, &rule["docs"], has_exceptions(table, matchers)));
    }
    assert!(problems.is_empty(), "rule docs to fix ({}):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_shape_check_catches_each_violation() {
    let long = "word ".repeat(WHAT_WORDS + 1);
    let docs = serde_json::json!({
        "what": long, "why": "see bench/RESULTS.md and issue 13", "not_reported": [],
        "example": "", "instead": "", "fix_note": null, "sources": ["110 files of the ModelZoo tree"],
    });
    let problems = shape_problems("XX001", &docs, true).join("\n");
    for expected in [
        "more than 60",
        "`not_reported` is empty",
        "a path into bench/",
        "an issue or pull request number",
        "a count of what was read",
    ] {
        assert!(problems.contains(expected), "not caught: {expected}\n{problems}");
    }
    let fine = serde_json::json!({
        "what": "A call.", "why": "It fails.", "not_reported": ["Under an NPU test."],
        "example": "", "instead": "", "fix_note": null, "sources": ["Ascend/pytorch issue 25 (github.com/Ascend/pytorch/issues/25)"],
    });
    assert_eq!(shape_problems("XX002", &fine, true), Vec::<String>::new());
}

#[test]
fn exceptions_are_found_in_unless_downgrade_and_named_matchers() {
    let none = toml::Table::new();
    let table = |text: &str| -> toml::Table { text.parse().unwrap() };
    let matchers = table("[x]\nunless = { call = \"f\" }\n");
    assert!(has_exceptions(&table("match = { call = \"g\", use = \"x\" }"), &matchers));
    assert!(has_exceptions(&table("match = { any = [{ call = \"g\", unless = { call = \"h\" } }] }"), &none));
    assert!(has_exceptions(
        &table("match = { call = \"g\" }\ndowngrade = { to = \"info\", when = { call = \"h\" } }"),
        &none
    ));
    assert!(has_exceptions(&table("match = { call = \"g\" }\nauto_migrated_when = { text = \"x\" }"), &none));
    // A fix's `when` limits the fix, not the findings.
    assert!(!has_exceptions(&table("match = { call = \"g\" }\nfix = { when = { unless = { call = \"h\" } } }"), &none));
}

/// docs/rules.md is `npu-mem rules --format markdown`: the packs are the one
/// place the docs are written, and the page is regenerated from them.
#[test]
fn docs_rules_md_is_generated_from_the_packs() {
    let run = common::npu_mem(&["rules", "--format", "markdown"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != run.stdout {
        let line = committed
            .lines()
            .zip(run.stdout.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| committed.lines().count().min(run.stdout.lines().count()) + 1, |i| i + 1);
        panic!(
            "docs/rules.md is stale (first difference at line {line}); regenerate it with\n  \
             cargo run --release -- rules --format markdown > docs/rules.md"
        );
    }
}
