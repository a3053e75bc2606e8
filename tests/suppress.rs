//! Suppression comments silence exactly their codes, on their line or file,
//! and stale or misspelt ones are reported.

mod common;

use serde_json::Value;

fn scan(name: &str, text: &str) -> (Value, i32) {
    let dir = common::temp_dir(&format!("sup-{name}"));
    std::fs::write(dir.join("t.py"), text).unwrap();
    let run = common::npu_mem_in(&dir, &["scan", "t.py", "--format", "json"]);
    (serde_json::from_str(&run.stdout).unwrap(), run.code)
}

fn codes(v: &Value, key: &str) -> Vec<(u64, String)> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["line"].as_u64().unwrap(), f["code"].as_str().unwrap().to_string()))
        .collect()
}

// The examples allocate in a loop, where TX004 reports a host allocation.
#[test]
fn a_line_suppression_silences_exactly_its_code() {
    let (v, code) = scan(
        "line",
        "import torch\nfor _ in range(2): x = torch.ones(2).cuda()  # npu-mem: ignore[TX004] -- warm-up only\n",
    );
    assert_eq!(codes(&v, "findings"), vec![(2, "TX001".to_string())], "TX001 on the same line stays");
    assert_eq!(codes(&v, "suppressed"), vec![(2, "TX004".to_string())]);
    assert_eq!(v["suppressed"][0]["reason"], "warm-up only");
    assert_eq!(code, 1, "the remaining warning still fails the gate");
    let (v, code) =
        scan("both", "import torch\nfor _ in range(2): x = torch.ones(2).cuda()  # npu-mem: ignore[TX001, TX004]\n");
    assert!(codes(&v, "findings").is_empty());
    assert_eq!(code, 0, "suppressed findings do not count for the gate");
}

// Kept and silenced findings interleave: each silenced one keeps the reason of
// its own line's comment, and the kept ones stay in line order.
#[test]
fn interleaved_suppressions_keep_their_own_reasons() {
    let text = "import torch\n\
        a = torch.ones(2).cuda()  # npu-mem: ignore[TX001] -- first\n\
        b = torch.ones(2).cuda()\n\
        c = torch.ones(2).cuda()  # npu-mem: ignore[TX001] -- second\n\
        d = torch.ones(2).cuda()\n";
    let (v, _) = scan("interleaved", text);
    let tx001 =
        |key: &str| codes(&v, key).into_iter().filter(|(_, c)| c == "TX001").map(|(l, _)| l).collect::<Vec<_>>();
    assert_eq!(tx001("findings"), [3, 5]);
    assert_eq!(tx001("suppressed"), [2, 4]);
    let reasons: Vec<(u64, &str)> = v["suppressed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "TX001")
        .map(|f| (f["line"].as_u64().unwrap(), f["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(reasons, [(2, "first"), (4, "second")]);
}

#[test]
fn file_suppressions_and_prefixes() {
    let (v, _) = scan(
        "file",
        "# npu-mem: ignore-file[TX]\nimport torch\nfor _ in range(2): x = torch.ones(2).cuda()\ny = x.cuda()\n",
    );
    assert!(codes(&v, "findings").is_empty(), "{:?}", codes(&v, "findings"));
    assert_eq!(codes(&v, "suppressed").len(), 3);
}

#[test]
fn unused_and_unknown_suppressions_are_reported() {
    let (v, code) = scan("stale", "import torch\nx = torch.ones(2)  # npu-mem: ignore[TX001]\ny = x.cuda()  # npu-mem: ignore[XX123, TX001]\ns = '# npu-mem: ignore[TX002]'\n");
    assert_eq!(codes(&v, "findings"), vec![(2, "NPM001".to_string()), (3, "NPM002".to_string())]);
    assert!(v["findings"][1]["message"].as_str().unwrap().contains("`XX123`"));
    assert_eq!(code, 1, "an unknown code is a warning");
}

#[test]
fn suppressed_results_stay_in_sarif() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--format", "sarif", "--fail-on", "never"]);
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    let suppressed: Vec<&Value> =
        log["runs"][0]["results"].as_array().unwrap().iter().filter(|r| r.get("suppressions").is_some()).collect();
    assert_eq!(suppressed.len(), 1);
    assert_eq!(suppressed[0]["ruleId"], "DL001");
    assert_eq!(suppressed[0]["suppressions"][0]["kind"], "inSource");
}

#[test]
fn a_directive_in_a_docstring_or_string_silences_nothing() {
    let text = "\"\"\"Usage:\n# npu-mem: ignore-file[TX]\n\"\"\"\nimport torch\ns = \"# npu-mem: ignore-file[TX]\"\nfor _ in range(2): x = torch.ones(2).cuda()\n";
    let (v, code) = scan("docstring", text);
    assert_eq!(codes(&v, "findings"), vec![(6, "TX001".to_string()), (6, "TX004".to_string())]);
    assert!(codes(&v, "suppressed").is_empty());
    assert_eq!(code, 1);
}

#[test]
fn a_directive_after_an_unbalanced_quote_or_a_string_that_began_above_counts() {
    let text = "import torch\nm = torch.ones(2)\nprint(\"it's\", m.cuda())  # npu-mem: ignore[TX001]\ns = \"\"\"a\nit's\"\"\"; m.cuda()  # npu-mem: ignore[TX001]\n";
    let (v, code) = scan("quotes", text);
    assert!(codes(&v, "findings").is_empty(), "{:?}", codes(&v, "findings"));
    assert_eq!(codes(&v, "suppressed"), vec![(3, "TX001".to_string()), (5, "TX001".to_string())]);
    assert_eq!(code, 0);
}

#[test]
fn a_directive_in_a_notebook_cell_comment_counts_and_one_in_a_cell_docstring_does_not() {
    let cell = |src: &str| serde_json::json!({"cell_type": "code", "metadata": {}, "outputs": [], "source": src});
    let nb = serde_json::json!({
        "cells": [
            cell("\"\"\"Run it.\n# npu-mem: ignore-file[TX]\n\"\"\"\nimport torch\n"),
            cell("for _ in range(2): x = torch.ones(2).cuda()  # npu-mem: ignore[TX001, TX004]\ny = x.cuda()\n"),
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    let dir = common::temp_dir("sup-notebook");
    std::fs::write(dir.join("t.ipynb"), nb.to_string()).unwrap();
    let run = common::npu_mem_in(&dir, &["scan", "t.ipynb", "--format", "json"]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(codes(&v, "suppressed").len(), 2, "{}", run.stdout);
    assert!(codes(&v, "findings").iter().any(|(_, c)| c == "TX001"), "y = x.cuda() is not silenced");
}

#[test]
fn shell_directives_after_quotes_count_and_quoted_ones_do_not() {
    let dir = common::temp_dir("sup-shell");
    let script = "#!/bin/sh\necho 'npu-mem: ignore-file[TX] # npu-mem: ignore-file[TX]'\necho \"it's\"; export CUDA_VISIBLE_DEVICES=0  # npu-mem: ignore[TX009]\nexport CUDA_VISIBLE_DEVICES=1\n";
    std::fs::write(dir.join("run.sh"), script).unwrap();
    let run = common::npu_mem_in(&dir, &["scan", "run.sh", "--format", "json"]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(codes(&v, "suppressed"), vec![(3, "TX009".to_string())], "{}", run.stdout);
    assert_eq!(codes(&v, "findings"), vec![(4, "TX009".to_string())]);
}
