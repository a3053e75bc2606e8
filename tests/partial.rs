//! No silent limits: where the analysis of a file stops at one of its bounds,
//! the file is reported as partly analysed, in the text report (a warning on
//! stderr) and in the JSON report (`errors`, kind `partial`), with the bound
//! and what it means.

mod common;

use common::{npu_mem_in, temp_dir};

/// Scans `name` holding `text` in a fresh directory, as text and as JSON:
/// the text run's stdout and stderr, and the JSON report's `partial` messages for it.
fn partial_notices(dir_name: &str, name: &str, text: &str) -> (String, String, Vec<String>) {
    let dir = temp_dir(dir_name);
    std::fs::write(dir.join(name), text).unwrap();
    let run = npu_mem_in(&dir, &["scan", name, "--no-cache", "--format", "concise", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = npu_mem_in(&dir, &["scan", name, "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let messages = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "partial" && e["path"] == name)
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    (run.stdout, run.stderr, messages)
}

#[test]
fn nesting_deeper_than_the_walk_goes_is_reported() {
    let text = format!("import torch\nx = {}torch.ones(1).cuda(){}\n", "(".repeat(1_500), ")".repeat(1_500));
    let (_, stderr, messages) = partial_notices("partial-depth", "deep.py", &text);
    let notice = "code near line 2 is nested more than 1000 levels deep; the deeper part was not analysed";
    assert!(stderr.contains(&format!("warning: deep.py: {notice}")), "{stderr}");
    assert_eq!(messages, [notice]);
}

#[test]
fn a_scope_search_that_stops_at_its_bound_is_reported() {
    // MEM004 looks through the module after `model.eval()` for a loop that
    // calls the model; a list of 250,000 numbers lies in between.
    let loop_after = "for x in data:\n    y = model(x)\n";
    let head = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\n";
    let small = format!("{head}filler = [0, 0]\n{loop_after}");
    let (stdout, stderr, messages) = partial_notices("partial-scope-small", "small.py", &small);
    assert!(messages.is_empty() && !stderr.contains("small.py"), "{stderr}");
    assert!(stdout.contains("small.py:5:1: MEM004"), "the search finds the loop: {stdout}");
    let huge = format!("{head}filler = [{}]\n{loop_after}", "0, ".repeat(250_000));
    let (stdout, stderr, messages) = partial_notices("partial-scope", "huge.py", &huge);
    assert!(!stdout.contains("MEM004"), "the loop lies past the bound: {stdout}");
    let notice = "the search of the function (or module) around line 3 stopped after 200000 nodes; rules that look \
                  through a whole function (function_has, preceded_in_function, followed_in_function) may miss \
                  findings in it";
    assert!(stderr.contains(&format!("warning: huge.py: {notice}")), "{stderr}");
    assert_eq!(messages, [notice]);
}

#[test]
fn ordinary_files_are_not_reported_as_partial() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(report["files_scanned"].as_u64().unwrap() > 1);
    assert_eq!(report["errors"], serde_json::json!([]), "no file is skipped or partly analysed");
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
}

#[test]
fn a_loop_over_a_long_chain_of_aliases_is_followed_to_its_loader() {
    // DL008 needs the loop to iterate over a pinned DataLoader; the search
    // through the bindings once gave up after 15 values.
    let mut lines = vec![
        "import torch".to_string(),
        "loader = torch.utils.data.DataLoader(ds, pin_memory=True)".to_string(),
        "l0 = loader".to_string(),
    ];
    lines.extend((1..=20).map(|i| format!("l{i} = l{}", i - 1)));
    lines.extend(["for batch in l20:".to_string(), "    x = batch.to(device)".to_string()]);
    let text = lines.join("\n") + "\n";
    let (stdout, stderr, messages) = partial_notices("alias-chain", "alias.py", &text);
    assert!(stdout.contains("alias.py:25:9: DL008"), "{stdout}\n{stderr}");
    assert!(messages.is_empty(), "{messages:?}");
}
