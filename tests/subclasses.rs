//! `subclasses` beside a `call` anchor: a call of a class of the same file
//! derived from the matched class counts as a call of that class, either only
//! where its constructor passes its arguments on (`"passing_arguments"`) or
//! always (`"all"`). Beside any other anchor it is a pack error. A class
//! that another file of the project derives counts where a file imports it,
//! with and without the cache, and after `--fix`.

mod common;

use serde_json::Value;

/// A pack of one rule `SC001` whose `[rule.match]` is `matcher`.
fn pack(matcher: &str) -> String {
    format!(
        "[pack]\nname = \"subclasses\"\n\n[[rule]]\ncode = \"SC001\"\nname = \"s\"\nsection = \"transfer\"\n\
         severity = \"warning\"\nmessage = \"{{callee}} builds {{qualname}}\"\n\
         docs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n[rule.match]\n{matcher}\n"
    )
}

/// Scans `CODE` with `pack_text`: the exit code, stderr and `(line, message)` of each finding.
fn scan(name: &str, pack_text: &str) -> (i32, String, Vec<(u64, String)>) {
    let run = common::scan_with_pack(name, pack_text, CODE, "SC");
    let found = serde_json::from_str::<Value>(&run.stdout).map_or(Vec::new(), |report| {
        let findings = report["findings"].as_array().unwrap().iter();
        findings.map(|f| (f["line"].as_u64().unwrap(), f["message"].as_str().unwrap().to_string())).collect()
    });
    (run.code, run.stderr, found)
}

const CODE: &str = "\
import torch.nn as nn
class Forwarding(nn.DataParallel):
    pass
class OwnArguments(nn.DataParallel):
    def __init__(self, first, *args, **kwargs):
        super().__init__(*args, **kwargs)
a = Forwarding(model)
b = OwnArguments(0, model)
c = nn.DataParallel(model)
";

#[test]
fn passing_arguments_takes_only_forwarding_classes_and_all_takes_every_one() {
    let call = "call = \"torch.nn.DataParallel\"";
    let (_, stderr, plain) = scan("subclasses-none", &pack(call));
    assert_eq!(plain, [(9, "nn.DataParallel builds torch.nn.DataParallel".to_string())], "{stderr}");

    let (_, stderr, passing) =
        scan("subclasses-passing", &pack(&format!("{call}\nsubclasses = \"passing_arguments\"")));
    let lines: Vec<u64> = passing.iter().map(|(line, _)| *line).collect();
    assert_eq!(lines, [7, 9], "{stderr}");
    assert_eq!(passing[0].1, "Forwarding builds torch.nn.DataParallel");

    let (_, stderr, all) = scan("subclasses-all", &pack(&format!("{call}\nsubclasses = \"all\"")));
    let lines: Vec<u64> = all.iter().map(|(line, _)| *line).collect();
    assert_eq!(lines, [7, 8, 9], "{stderr}");
}

#[test]
fn subclasses_without_a_call_anchor_is_a_pack_error() {
    let (code, stderr, _) = scan("subclasses-method", &pack("method = \"cuda\"\nsubclasses = \"all\""));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("SC001") && stderr.contains("`subclasses` widens a `call` anchor"), "{stderr}");

    let (code, stderr, _) = scan("subclasses-value", &pack("call = \"x\"\nsubclasses = \"some\""));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("passing_arguments") && stderr.contains("all"), "the accepted values are named: {stderr}");
}

/// The `(file, line, code)` of each finding of a JSON scan of `dir` with `extra` arguments.
fn findings_in(dir: &std::path::Path, extra: &[&str]) -> Vec<(String, u64, String)> {
    let mut args = vec!["scan", ".", "--format", "json", "--fail-on", "never", "--select", "DL"];
    args.extend_from_slice(extra);
    let run = common::npu_mem_in(dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap().iter();
    findings
        .map(|f| {
            let path = f["path"].as_str().unwrap().to_string();
            (path, f["line"].as_u64().unwrap(), f["code"].as_str().unwrap().to_string())
        })
        .collect()
}

const LOADERS: &str = "\
from torch.utils.data import DataLoader
class InfiniteDataLoader(DataLoader):
    pass
";

const TRAIN: &str = "\
from loaders import InfiniteDataLoader
def build(ds):
    return InfiniteDataLoader(ds, batch_size=16, num_workers=4)
";

#[test]
fn a_subclass_of_another_file_counts_warm_and_cold_and_stops_counting_when_it_changes() {
    let dir = common::temp_dir("imported-subclass-cache");
    std::fs::write(dir.join("loaders.py"), LOADERS).unwrap();
    std::fs::write(dir.join("train.py"), TRAIN).unwrap();
    let expected = [("train.py".to_string(), 3, "DL002".to_string())];
    assert_eq!(findings_in(&dir, &["--no-cache"]), expected);
    assert_eq!(findings_in(&dir, &[]), expected, "cold, with a cache");
    assert_eq!(findings_in(&dir, &[]), expected, "warm: train.py's analysis depends on loaders.py");
    // Now the class names its own parameters: its call no longer shows what DataLoader gets.
    let own =
        LOADERS.replace("    pass", "    def __init__(self, ds, **kwargs):\n        super().__init__(ds, **kwargs)");
    std::fs::write(dir.join("loaders.py"), own).unwrap();
    assert_eq!(findings_in(&dir, &[]), [], "warm, after the base file changed: no stale finding");
}

#[test]
fn fix_applies_to_calls_of_a_subclass_of_another_file() {
    let dir = common::temp_dir("imported-subclass-fix");
    std::fs::write(dir.join("loaders.py"), LOADERS).unwrap();
    std::fs::write(dir.join("train.py"), TRAIN).unwrap();
    let run = common::npu_mem_in(&dir, &["scan", ".", "--select", "DL002", "--fix", "--unsafe-fixes", "--no-cache"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let fixed = std::fs::read_to_string(dir.join("train.py")).unwrap();
    assert!(fixed.contains("InfiniteDataLoader(ds, batch_size=16, num_workers=4, pin_memory=True)"), "{fixed}");
    assert_eq!(std::fs::read_to_string(dir.join("loaders.py")).unwrap(), LOADERS, "the base file is untouched");
}
