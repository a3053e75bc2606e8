//! The API tables compiled into the binary match the fact files read from the
//! torch_npu wheels (`../shared/facts`), and the binary applies them as written.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
#[ignore = "reads ../shared/facts, beside the development checkout only; .ci/run runs it with `cargo test -- --ignored`"]
fn embedded_tables_equal_the_fact_files() {
    let facts = Path::new(ROOT).join("../shared/facts");
    assert!(facts.is_dir(), "the fact files are expected at {} (shared/ beside the repository)", facts.display());
    for name in ["torch_npu_names.tsv", "torch_cuda_to_npu.tsv", "torch_npu_ops.tsv"] {
        let ours = read(&Path::new(ROOT).join("rules/data").join(name));
        let theirs = read(&facts.join(name));
        assert!(ours == theirs, "rules/data/{name} differs from ../shared/facts/{name}: copy it again");
    }
}

/// `(name, cells per version)` rows of the names table.
fn npu_names() -> Vec<(String, Vec<String>)> {
    read(&Path::new(ROOT).join("rules/data/torch_npu_names.tsv"))
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| {
            let cells: Vec<String> = l.split('\t').map(str::to_string).collect();
            (cells[0].clone(), cells[1..].to_vec())
        })
        .collect()
}

/// Scans one generated file using every public name at `target`; returns (code, line) pairs.
fn scan_names(target: &str, names: &[String]) -> Vec<(String, String)> {
    let dir = common::temp_dir(&format!("facts-{target}"));
    let mut src = String::from("import torch\nimport torch_npu\n");
    for n in names {
        src.push_str(&format!("x = torch.npu.{n}\n"));
    }
    std::fs::write(dir.join("uses.py"), &src).unwrap();
    let run =
        common::npu_mem_in(&dir, &["scan", "uses.py", "--format", "json", "--fail-on", "never", "--target", target]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let line = f["line"].as_u64().unwrap() as usize;
            (f["code"].as_str().unwrap().to_string(), names[line - 3].clone())
        })
        .collect()
}

#[test]
fn every_name_is_judged_by_the_table_for_each_target() {
    let rows: Vec<(String, Vec<String>)> = npu_names().into_iter().filter(|(n, _)| !n.starts_with('_')).collect();
    let names: Vec<String> = rows.iter().map(|(n, _)| n.clone()).collect();
    for (column, target) in [(0, "2.1"), (1, "2.6"), (2, "2.14")] {
        let found = scan_names(target, &names);
        let flagged: BTreeSet<String> = found.iter().filter(|(c, _)| c == "API004").map(|(_, n)| n.clone()).collect();
        let missing: BTreeSet<String> =
            rows.iter().filter(|(_, cells)| cells[column] == "-").map(|(n, _)| n.clone()).collect();
        assert_eq!(flagged, missing, "API004 at target {target} must flag exactly the names absent from that column");
        assert!(!found.iter().any(|(c, _)| c == "API003"), "no real name is unknown: {found:?}");
    }
}

#[test]
fn set_memory_strategy_does_not_exist() {
    let dir = common::temp_dir("sms");
    let text = "import torch\nimport torch_npu\ntorch.npu.set_memory_strategy('auto')\ntorch.npu.set_devcie(0)\n";
    std::fs::write(dir.join("tune.py"), text).unwrap();
    let run = common::npu_mem_in(&dir, &["scan", "tune.py", "--format", "concise"]);
    let line =
        |n: &str| run.stdout.lines().find(|l| l.starts_with(&format!("tune.py:{n}:1: API003 [error]"))).unwrap_or("");
    // No real name is near set_memory_strategy: naming the nearest would mislead.
    assert!(
        line("3")
            .ends_with("`torch.npu.set_memory_strategy` does not exist in any torch_npu release (2.1, 2.6 or 2.14)."),
        "{}",
        run.stdout
    );
    // A typo is one or two edits from what was meant.
    assert!(line("4").ends_with("the closest real name is `torch.npu.set_device`."), "{}", run.stdout);
}

/// Every torch_npu operator that rules/data/torchvision_ops_on_npu.tsv names as a
/// counterpart (API011's advice) exists in every torch_npu version of the ops
/// table, so the advice holds for each `--target`.
#[test]
fn vision_op_counterparts_exist_in_every_target() {
    let ops = read(&Path::new(ROOT).join("rules/data/torch_npu_ops.tsv"));
    let present: BTreeSet<&str> = ops
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            (cells.len() == 5 && cells[2..].iter().all(|c| *c == "yes")).then_some(cells[0])
        })
        .collect();
    let vision = read(&Path::new(ROOT).join("rules/data/torchvision_ops_on_npu.tsv"));
    let mut named = 0;
    for row in vision.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let cells: Vec<&str> = row.split('\t').collect();
        assert_eq!(cells.len(), 5, "row `{row}` should have 5 cells");
        let npu_op = cells[3];
        if npu_op != "-" {
            named += 1;
            assert!(
                present.contains(npu_op),
                "`{npu_op}` (for `{}`) is not present in all torch_npu versions",
                cells[0]
            );
            assert!(cells[4].contains(npu_op), "the remedy for `{}` should name `{npu_op}`", cells[0]);
        }
    }
    assert!(named >= 3, "expected the table to name torch_npu counterparts, found {named}");
}
