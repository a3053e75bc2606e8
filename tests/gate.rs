//! The CI gate over time: a baseline written today lets tomorrow's scan pass
//! after unrelated edits and fail on one new finding; `--diff-base` judges a
//! change only by the lines it adds.

mod common;

use common::{git, npu_mem_in, temp_dir};

const TRAIN: &str = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nx = torch.ones(2).cuda()\n";

#[test]
fn baseline_survives_unrelated_edits_and_catches_new_findings() {
    let dir = temp_dir("baseline");
    std::fs::write(dir.join("train.py"), TRAIN).unwrap();
    let run = npu_mem_in(&dir, &["scan", "train.py", "--write-baseline", "npu-mem-baseline.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    std::fs::write(dir.join("train.py"), format!("\"\"\"Training.\"\"\"\nimport os\n\n{TRAIN}")).unwrap();
    let run = npu_mem_in(&dir, &["scan", "train.py", "--baseline", "npu-mem-baseline.json", "--format", "json"]);
    assert_eq!(run.code, 0, "only baselined findings: the gate passes\n{}", run.stdout);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
    assert_eq!(v["baselined"].as_array().unwrap().len(), 3);
    assert_eq!(v["baselined"][0]["line"], 5, "shown at their new lines");

    std::fs::write(dir.join("train.py"), format!("\"\"\"Training.\"\"\"\nimport os\n\n{TRAIN}y = x.cpu().cuda()\n"))
        .unwrap();
    let run = npu_mem_in(&dir, &["scan", "train.py", "--baseline", "npu-mem-baseline.json", "--format", "concise"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.lines().all(|l| l.starts_with("train.py:7:")), "only the new line is reported:\n{}", run.stdout);

    std::fs::write(
        dir.join("train.py"),
        "import torch\nmodel = torch.nn.Linear(2, 2).npu()\nx = torch.ones(2).cuda()\n",
    )
    .unwrap();
    let run = npu_mem_in(&dir, &["scan", "train.py", "--baseline", "npu-mem-baseline.json", "--color", "never"]);
    assert!(run.stdout.contains("1 baseline entry no longer found"), "{}", run.stdout);
    assert!(run.stdout.contains("train.py:2 TX001"), "{}", run.stdout);
}

#[test]
fn a_broken_baseline_is_a_clear_error() {
    let dir = temp_dir("badbase");
    std::fs::write(dir.join("train.py"), TRAIN).unwrap();
    std::fs::write(dir.join("b.json"), "{\"version\": 1, \"findings\": [\n{\"code\": 3}]}").unwrap();
    let run = npu_mem_in(&dir, &["scan", "train.py", "--baseline", "b.json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("b.json:2:") && run.stderr.contains("--write-baseline"), "{}", run.stderr);
}

#[test]
fn diff_base_keeps_only_changed_lines_and_untracked_files() {
    let dir = temp_dir("diff");
    git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("train.py"), TRAIN).unwrap();
    git(&dir, &["add", "train.py"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    std::fs::write(dir.join("train.py"), format!("{TRAIN}y = x.cpu().cuda()\n")).unwrap();
    std::fs::write(dir.join("new.py"), "import torch\nz = torch.zeros(1).cuda()\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--diff-base", "HEAD", "--format", "concise"]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        !lines.is_empty() && lines.iter().all(|l| l.starts_with("train.py:4:") || l.starts_with("new.py:")),
        "{}",
        run.stdout
    );
    assert!(lines.iter().any(|l| l.starts_with("new.py:2:")), "untracked files count as changed");

    let outside = temp_dir("nogit");
    std::fs::write(outside.join("train.py"), TRAIN).unwrap();
    let run = npu_mem_in(&outside, &["scan", ".", "--diff-base", "HEAD"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("needs a git repository"), "{}", run.stderr);
}
