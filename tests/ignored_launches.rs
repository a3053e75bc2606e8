//! Launch lines the started script rejects (issue 47, item 7): a stale
//! helper (YOLOv4's `utils/evolve.sh`) passes `train.py` an option its
//! parser does not define, so argparse stops before anything runs. Such a
//! line starts nothing and gives no options, and the report says so.

mod common;

use serde_json::Value;

/// `train.py` parses `--epochs` and `--batch-size` with argparse and moves
/// its model to CUDA under `if opt.epochs > 100:`; `detect.py` moves its
/// model unconditionally; `utils/evolve.sh`, the only shell script, runs
/// `train.py` with `options`.
fn project(name: &str, options: &str) -> common::TempDir {
    let dir = common::temp_dir(name);
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("requirements.txt", "torch\n");
    write(
        "train.py",
        "import argparse\n\nimport torch\n\n\ndef main(opt):\n    model = torch.nn.Linear(4, 4)\n    \
         if opt.epochs > 100:\n        model = model.cuda()\n    return model\n\n\n\
         if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n    \
         parser.add_argument(\"--epochs\", type=int, default=300)\n    \
         parser.add_argument(\"--batch-size\", type=int, default=16)\n    \
         opt = parser.parse_args()\n    main(opt)\n",
    );
    write(
        "detect.py",
        "import torch\n\n\ndef main():\n    return torch.nn.Linear(4, 4).cuda()\n\n\n\
         if __name__ == \"__main__\":\n    main()\n",
    );
    write("utils/evolve.sh", &format!("#!/bin/bash\nwhile true; do\n  python3 train.py {options}\ndone\n"));
    dir
}

/// The JSON report of a scan of `dir`, and its text report.
fn scan(dir: &std::path::Path) -> (Value, String) {
    let args = ["scan", ".", "--no-cache", "--fail-on", "never"];
    let json = common::npu_mem_in(dir, &[&args[..], &["--format", "json"]].concat());
    let text = common::npu_mem_in(dir, &args);
    (serde_json::from_str(&json.stdout).unwrap(), text.stdout)
}

/// `(file, line, severity, unlaunched)` of each finding.
fn findings(report: &Value) -> Vec<(String, u64, String, bool)> {
    let all = report["findings"].as_array().unwrap();
    let row = |f: &Value| {
        let text = |k: &str| f[k].as_str().unwrap().to_string();
        (text("path"), f["line"].as_u64().unwrap(), text("severity"), f["unlaunched"].as_bool().unwrap())
    };
    all.iter().map(row).collect()
}

#[test]
fn a_launch_line_the_script_rejects_starts_nothing_and_gives_no_options() {
    let dir = project("ignored-launch", "--epochs 27 --batch 8 --accum 8");
    let (report, text) = scan(&dir);
    let found = findings(&report);
    assert!(!found.is_empty(), "the fixture has findings");
    // Nothing else starts a script: every entry is left alone, and no option decides a branch.
    for (path, line, severity, unlaunched) in &found {
        assert!(!unlaunched && severity != "info", "{path}:{line} is {severity}, unlaunched: {unlaunched}");
    }
    assert!(found.iter().any(|(path, line, ..)| path == "detect.py" && *line == 5), "{found:?}");
    assert!(found.iter().any(|(path, line, ..)| path == "train.py" && *line == 9), "{found:?}");
    let project = &report["projects"][0];
    assert_eq!(project["launched_entries"], serde_json::json!([]));
    assert_eq!(
        project["ignored_launches"],
        serde_json::json!([{ "path": "utils/evolve.sh", "line": 3, "script": "train.py", "option": "--accum" }])
    );
    assert!(text.contains("utils/evolve.sh:3 (train.py defines no option --accum)"), "{text}");
}

#[test]
fn a_launch_line_whose_options_the_script_accepts_still_starts_it() {
    // `--batch` is a prefix argparse accepts for `--batch-size`.
    let dir = project("accepted-launch", "--epochs 27 --batch 8");
    let (report, text) = scan(&dir);
    let found = findings(&report);
    let detect: Vec<_> = found.iter().filter(|(path, ..)| path == "detect.py").collect();
    assert!(!detect.is_empty() && detect.iter().all(|(.., severity, unlaunched)| *unlaunched && severity == "info"));
    // The run's 27 epochs never take `if opt.epochs > 100:`.
    assert!(found.iter().any(|(path, line, severity, _)| path == "train.py" && *line == 9 && severity == "info"));
    assert_eq!(report["projects"][0]["ignored_launches"], serde_json::json!([]));
    assert!(!text.contains("Launch lines:"), "{text}");
}
