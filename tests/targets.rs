//! `--target` changes exactly the version-dependent rules: DL007, TX025, API004,
//! API005, API010, API012, API016, API017 and the MEM009 key check.

mod common;

use std::collections::BTreeSet;

fn findings(target: &str) -> BTreeSet<(String, u64, String)> {
    let report = common::scan_json(&["fixtures", "--target", target]);
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn targets_differ_only_in_version_dependent_rules() {
    let old = findings("2.1");
    let new = findings("2.14");
    let changed: BTreeSet<String> = old.symmetric_difference(&new).map(|(_, _, code)| code.clone()).collect();
    let expected: BTreeSet<String> =
        ["API004", "API005", "API010", "API012", "API016", "API017", "DL007", "MEM009", "TX025"]
            .map(String::from)
            .into();
    assert_eq!(changed, expected, "codes whose findings differ between --target 2.1 and 2.14");
    let only_old: BTreeSet<&String> = old.difference(&new).map(|(_, _, c)| c).collect();
    for code in ["DL007", "TX025", "API005", "API010", "API012", "API016", "API017"] {
        assert!(only_old.contains(&code.to_string()), "{code} reports less at 2.14");
    }
}

#[test]
fn report_header_names_the_target() {
    let run = common::npu_mem(&["scan", "fixtures/demo", "--target", "2.14", "--color", "never"]);
    assert!(
        run.stdout.starts_with("npu-mem ") && run.stdout.lines().next().unwrap().contains("advice for torch_npu 2.14")
    );
    let report = common::scan_json(&["fixtures/demo", "--target", "2.6"]);
    assert_eq!(report["target"], "2.6");
}

/// The message of the one finding of `code` in the fixture `file`, scanned at `target`.
fn message(file: &str, target: &str, code: &str) -> String {
    let report = common::scan_json(&[file, "--target", target]);
    let found: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(found.len(), 1, "{file} at {target}: {found:?}");
    found[0].clone()
}

#[test]
fn unfused_attention_names_sdpa_only_where_huawei_documents_it() {
    for target in ["2.1", "2.6", "2.14"] {
        let file = format!("fixtures/rules/MEM011-target-{target}.py");
        let text = message(&file, target, "MEM011");
        assert!(text.contains(&format!("`torch_npu.npu_fusion_attention` (torch_npu {target};")), "{text}");
        let documented = text.contains("which Huawei documents as running the same kernel with this torch_npu version");
        let not_found = text.contains("we found no such statement for this version");
        assert_eq!((documented, not_found), (target == "2.1", target != "2.1"), "{target}: {text}");
    }
}

#[test]
fn cuda_only_library_advice_names_the_op_of_each_target() {
    for (file, target) in
        [("fixtures/rules/API014-target-2.6.py", "2.6"), ("fixtures/rules/API014-target-2.14.py", "2.14")]
    {
        let text = message(file, target, "API014");
        assert!(text.contains("Instead, use `torch_npu.npu_fusion_attention`"), "{target}: {text}");
    }
}
