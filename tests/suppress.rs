//! Suppression comments silence exactly their codes, on their line or file,
//! and stale or misspelt ones are reported.

mod common;

use serde_json::Value;

fn scan(name: &str, text: &str) -> (Value, i32) {
    let dir = std::env::temp_dir().join(format!("npu-mem-sup-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
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

#[test]
fn a_line_suppression_silences_exactly_its_code() {
    let (v, code) = scan("line", "import torch\nx = torch.ones(2).cuda()  # npu-mem: ignore[TX004] -- warm-up only\n");
    assert_eq!(codes(&v, "findings"), vec![(2, "TX001".to_string())], "TX001 on the same line stays");
    assert_eq!(codes(&v, "suppressed"), vec![(2, "TX004".to_string())]);
    assert_eq!(v["suppressed"][0]["reason"], "warm-up only");
    assert_eq!(code, 1, "the remaining warning still fails the gate");
    let (v, code) = scan("both", "import torch\nx = torch.ones(2).cuda()  # npu-mem: ignore[TX001, TX004]\n");
    assert!(codes(&v, "findings").is_empty());
    assert_eq!(code, 0, "suppressed findings do not count for the gate");
}

#[test]
fn file_suppressions_and_prefixes() {
    let (v, _) = scan("file", "# npu-mem: ignore-file[TX]\nimport torch\nx = torch.ones(2).cuda()\ny = x.cuda()\n");
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
