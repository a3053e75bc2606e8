//! Options passed through `xargs` (issue 47, item 5): `ls cfg/*.txt | xargs
//! python train.py` adds words the launch analysis cannot read, so no option
//! of `train.py` can be ruled out and no branch counts as untaken.

mod common;

use serde_json::Value;

/// `train.py` moves its model to CUDA only under `if opt.amp:`; `run.sh`,
/// the only shell script, starts it with `launch`.
fn project(name: &str, launch: &str) -> common::TempDir {
    let dir = common::temp_dir(name);
    let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).unwrap();
    write("requirements.txt", "torch\n");
    write(
        "train.py",
        "import argparse\n\nimport torch\n\n\ndef main(opt):\n    model = torch.nn.Linear(4, 4)\n    \
         if opt.amp:\n        model = model.cuda()\n    return model\n\n\n\
         if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n    \
         parser.add_argument(\"--amp\", action=\"store_true\")\n    \
         main(parser.parse_args())\n",
    );
    write("run.sh", &format!("#!/bin/bash\n{launch}\n"));
    dir
}

/// The branches the scan of `dir` reports as taken by no launch.
fn untaken_branches(dir: &std::path::Path) -> Value {
    let run = common::npu_mem_in(dir, &["scan", ".", "--no-cache", "--fail-on", "never", "--format", "json"]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    report["projects"][0]["untaken_branches"].clone()
}

#[test]
fn a_plain_launch_without_the_option_leaves_its_branch_untaken() {
    let dir = project("xargs-plain", "python3 train.py");
    let branches = untaken_branches(&dir);
    assert_eq!(branches.as_array().map(Vec::len), Some(1), "{branches}");
}

#[test]
fn options_passed_through_xargs_leave_every_branch_possible() {
    let dir = project("xargs-options", "ls configs/*.txt | xargs python3 train.py");
    assert_eq!(untaken_branches(&dir), serde_json::json!([]));
}
