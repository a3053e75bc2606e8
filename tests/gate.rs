//! The CI gate over time: a baseline written today lets tomorrow's scan pass
//! after unrelated edits and fail on one new finding; `--diff-base` judges a
//! change only by the lines it adds.

mod common;

use common::{git, npu_mem_in, temp_dir};

/// Three findings: TX001 on line 2, TX001 and TX004 (an allocation in a loop) on line 3.
const TRAIN: &str = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nfor _ in range(2): x = torch.ones(2).cuda()\n";

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
        "import torch\nmodel = torch.nn.Linear(2, 2).npu()\nfor _ in range(2): x = torch.ones(2).cuda()\n",
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
fn a_baseline_saved_with_a_byte_order_mark_is_read() {
    // An editor on Windows may save the JSON with a BOM; it was rejected.
    let dir = temp_dir("baseline-bom");
    std::fs::write(dir.join("train.py"), TRAIN).unwrap();
    let run = npu_mem_in(&dir, &["scan", "train.py", "--write-baseline", "b.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(dir.join("b.json")).unwrap();
    std::fs::write(dir.join("b.json"), format!("\u{feff}{text}")).unwrap();
    let run = npu_mem_in(&dir, &["scan", "train.py", "--baseline", "b.json", "--format", "json"]);
    assert_eq!(run.code, 0, "every finding is baselined: {}", run.stderr);
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

#[test]
fn a_baseline_serves_every_directory_the_scan_runs_from() {
    let dir = temp_dir("baseline-dirs");
    let proj = dir.join("proj");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(proj.join("src/train.py"), TRAIN).unwrap();
    let scan = |cwd: &std::path::Path, path: &str, baseline: &str| {
        let args = ["scan", path, "--baseline", baseline, "--format", "json", "--no-cache"];
        let run = npu_mem_in(cwd, &args);
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        (run.code, v)
    };
    let runs =
        [(&dir.to_path_buf(), "proj", "proj/b.json"), (&proj, ".", "b.json"), (&proj.join("src"), ".", "../b.json")];
    for (writer, path, baseline) in runs {
        let run = npu_mem_in(writer, &["scan", path, "--write-baseline", baseline, "--no-cache"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        for (cwd, path, baseline) in runs {
            let (code, v) = scan(cwd, path, baseline);
            let at = format!("written in {}, used in {}", writer.display(), cwd.display());
            assert_eq!(code, 0, "{at}: {v}");
            assert_eq!(v["baselined"].as_array().unwrap().len(), 3, "{at}");
            assert_eq!(v["stale_baseline"], serde_json::json!([]), "{at}");
        }
    }
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(proj.join("b.json")).unwrap()).unwrap();
    assert_eq!(written["version"], 2);
    assert!(written["findings"].as_array().unwrap().iter().all(|e| e["path"] == "src/train.py"), "{written}");

    // A stale entry is shown with its path as reported from where the scan runs.
    std::fs::write(proj.join("src/train.py"), TRAIN.replace("Linear(2, 2).cuda()", "Linear(2, 2)")).unwrap();
    let (_, v) = scan(&dir, "proj", "proj/b.json");
    let stale = v["stale_baseline"].as_array().unwrap();
    assert!(!stale.is_empty() && stale.iter().all(|e| e["path"] == "proj/src/train.py"), "{v}");

    // A version 1 baseline (paths as reported where it was written) is still read.
    std::fs::write(proj.join("src/train.py"), TRAIN).unwrap();
    let v1 = std::fs::read_to_string(proj.join("b.json")).unwrap().replace("\"version\": 2", "\"version\": 1");
    std::fs::write(proj.join("b.json"), v1).unwrap();
    let (code, v) = scan(&proj, ".", "b.json");
    assert_eq!((code, v["baselined"].as_array().unwrap().len()), (0, 3), "{v}");
}
