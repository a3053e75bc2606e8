//! The text report opens with what to do (verdict, blockers, next steps);
//! `--statistics`, `--min-severity` and FORCE_COLOR.

mod common;

use common::{npu_mem, npu_mem_in, scan_json, temp_dir};
use std::process::Command;

/// The report's lines before the first checklist section.
fn opening(stdout: &str) -> Vec<&str> {
    stdout.lines().take_while(|l| !l.starts_with("== ")).collect()
}

/// Each rule's rank in a run (`breaks_at`: import, device, process group,
/// step), from `npu-mem rules --format json`.
fn breaks_at_by_code() -> std::collections::HashMap<String, usize> {
    let run = npu_mem(&["rules", "--format", "json"]);
    let rules: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let order = ["import", "device", "process_group", "step"];
    let rank = |r: &serde_json::Value| order.iter().position(|s| r["breaks_at"] == *s).expect("a known stage");
    rules.as_array().unwrap().iter().map(|r| (r["code"].as_str().unwrap().to_string(), rank(r))).collect()
}

#[test]
fn blockers_and_errors_are_listed_in_the_order_a_run_meets_them() {
    let dir = temp_dir("run-order");
    let code = "\
import os
import torch
def main(model):
    torch.npu.set_memory_strategy()
    model = torch.nn.DataParallel(model)
    torch.set_default_tensor_type('torch.cuda.FloatTensor')
    os.environ['CUDA_VISIBLE_DEVICES'] = '0'
    return model
torch.npu.set_memory_strategy()
";
    std::fs::write(dir.join("train.py"), code).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--color", "never", "--no-cache"]);
    let head = opening(&run.stdout);
    let listed = |after: &str| -> Vec<String> {
        let at =
            head.iter().position(|l| l.trim_start().starts_with(after)).unwrap_or_else(|| panic!("{}", run.stdout));
        let item = |l: &&&str| l.starts_with("  ") && !l.trim_start().starts_with("- ");
        head[at + 1..].iter().take_while(item).map(|l| l.trim().to_string()).collect()
    };
    // The environment picks the device before the process group's wrapper is built.
    assert_eq!(listed("Automatic migration"), ["train.py:7:16 TX009", "train.py:5:13 TX011"], "{}", run.stdout);
    // The default tensor type is set at start-up; an unknown API fails where
    // it is called: at the top level when the module loads, before any call
    // of the function above it.
    assert_eq!(
        listed("- Fix 3 errors first"),
        ["train.py:6:5 TX017", "train.py:9:1 API003", "train.py:4:5 API003"],
        "{}",
        run.stdout
    );
}

#[test]
fn the_demo_report_opens_with_the_verdict_its_blockers_and_the_next_steps() {
    let run = npu_mem(&["scan", "fixtures/demo", "--color", "never", "--no-cache"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let head = opening(&run.stdout);
    let json = scan_json(&["fixtures/demo"]);
    let findings = json["findings"].as_array().unwrap();
    // Listed in the order a run meets them: by their rules' `breaks_at`, then in report order.
    let mut blockers: Vec<&serde_json::Value> = findings.iter().filter(|f| f["blocker"] == true).collect();
    let stages = breaks_at_by_code();
    blockers.sort_by_key(|f| stages[f["code"].as_str().unwrap()]);
    let blockers: Vec<String> = blockers
        .iter()
        .map(|f| {
            format!("  {}:{}:{} {}", f["path"].as_str().unwrap(), f["line"], f["column"], f["code"].as_str().unwrap())
        })
        .collect();
    assert!(blockers.len() >= 2, "the demo has blockers");
    let verdict =
        head.iter().position(|l| l.starts_with("Automatic migration (transfer_to_npu): blocked by ")).unwrap();
    assert!(head[verdict].contains(&format!("by {} findings", blockers.len())), "{}", head[verdict]);
    // The opening names at most 8 blockers, then says how many more there are.
    let mut listed: Vec<String> = blockers.iter().take(8).cloned().collect();
    if blockers.len() > 8 {
        listed.push(format!("  ... and {} more, marked [blocker] below", blockers.len() - 8));
    }
    assert_eq!(&head[verdict + 1..verdict + 1 + listed.len()], &listed[..]);
    let steps = &head[head.iter().position(|l| *l == "Next steps:").unwrap()..];
    let safe = findings.iter().filter(|f| f["fix"]["applicability"] == "safe").count();
    let unsafe_ = findings.iter().filter(|f| f["fix"]["applicability"] == "unsafe").count();
    assert!(
        steps
            .contains(&format!("  - {safe} safe fixes: `npu-mem scan --fix` (see them first with `--diff`).").as_str()),
        "{steps:#?}"
    );
    assert!(steps.iter().any(|l| l.starts_with(&format!("  - {unsafe_} more have an unsafe fix"))), "{steps:#?}");
    // Errors that are not blockers are named under their step.
    let error = findings.iter().find(|f| f["severity"] == "error" && f["blocker"] == false).unwrap();
    let at = format!(
        "      {}:{}:{} {}",
        error["path"].as_str().unwrap(),
        error["line"],
        error["column"],
        error["code"].as_str().unwrap()
    );
    assert!(steps.contains(&at.as_str()), "{steps:#?}");
}

#[test]
fn a_compatible_project_is_told_where_transfer_to_npu_goes_and_an_adopter_that_it_is_on() {
    let dir = temp_dir("next-steps");
    std::fs::write(
        dir.join("train.py"),
        "import torch\n\ndef main():\n    print(torch.ones(2).cuda())\n\nif __name__ == \"__main__\":\n    main()\n",
    )
    .unwrap();
    std::fs::write(dir.join("lib.py"), "import torch\n\ndef f(x):\n    return x.cuda()\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache"]);
    let head = opening(&run.stdout).join("\n");
    assert!(head.contains("Automatic migration (transfer_to_npu): compatible"), "{head}");
    assert!(head.contains("at the top of each script you run (train.py)"), "{head}");

    std::fs::write(
        dir.join("run.py"),
        "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\nimport train\n",
    )
    .unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache"]);
    let head = opening(&run.stdout).join("\n");
    assert!(head.contains("Automatic migration (transfer_to_npu): in use (imported at run.py:2)"), "{head}");
    assert!(!head.contains("Turn it on"), "{head}");

    // Nothing found: nothing to do, and no advice to turn anything on.
    let clean = temp_dir("next-steps-clean");
    std::fs::write(clean.join("a.py"), "import math\nprint(math.pi)\n").unwrap();
    let run = npu_mem_in(&clean, &["scan", ".", "--no-cache"]);
    assert_eq!(run.code, 0);
    let head = opening(&run.stdout).join("\n");
    assert!(head.contains("  - Nothing to change.") && !head.contains("Turn it on"), "{head}");
}

/// One plan (issue 48 item 2): where the plan is transfer_to_npu, the fixes
/// of what it handles are the other way to migrate, not one more step, in
/// the next steps and in the report's closing line alike.
#[test]
fn the_next_steps_read_as_one_plan() {
    let dir = temp_dir("one-plan");
    std::fs::write(
        dir.join("train.py"),
        "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nx = torch.ones(2).cuda()\n",
    )
    .unwrap();
    let steps = |args: &[&str]| {
        let run = npu_mem_in(&dir, args);
        let head: Vec<String> = opening(&run.stdout).iter().map(|l| l.to_string()).collect();
        head[head.iter().position(|l| l == "Next steps:").expect("next steps")..].to_vec()
    };
    let by_hand = "  - 2 safe fixes: `npu-mem scan --fix` (see them first with `--diff`).";
    let closing = |args: &[&str]| npu_mem_in(&dir, args).stdout.lines().last().unwrap_or_default().to_string();
    let to_apply = "2 findings have a safe fix: `npu-mem scan --fix` applies them.";

    // Compatible, transfer_to_npu not imported: turn it on, or else fix by hand.
    let plan = steps(&["scan", ".", "--no-cache"]);
    assert!(plan[1].starts_with("  - Turn it on:"), "{plan:#?}");
    let instead =
        "  - Or, instead of turning it on, migrate by hand: 2 safe fixes (`npu-mem scan --fix`; `--diff` shows the changes first).";
    assert_eq!(plan[2], instead, "{plan:#?}");
    assert!(!plan.iter().any(|l| l == by_hand), "{plan:#?}");
    let last = closing(&["scan", ".", "--no-cache"]);
    assert_eq!(last, "2 safe fixes to migrate by hand instead of turning on transfer_to_npu (see Next steps).");

    // Manual migration chosen: the fixes are the plan, and nothing is said of transfer_to_npu.
    let plan = steps(&["scan", ".", "--no-cache", "--migration", "manual"]);
    assert_eq!(plan[1], by_hand, "{plan:#?}");
    assert!(!plan.iter().any(|l| l.contains("Turn it on") || l.contains("instead")), "{plan:#?}");
    assert_eq!(closing(&["scan", ".", "--no-cache", "--migration", "manual"]), to_apply);

    // transfer_to_npu on: the fixes of what it handles are not needed.
    std::fs::write(
        dir.join("run.py"),
        "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\nimport train\n",
    )
    .unwrap();
    let plan = steps(&["scan", ".", "--no-cache"]);
    assert!(!plan.iter().any(|l| l == by_hand || l.contains("Turn it on")), "{plan:#?}");
    let not_needed =
        "  - Not needed while transfer_to_npu is on: 2 safe fixes (`npu-mem scan --fix`; `--diff` shows the changes \
                      first) for findings it handles, if you would rather migrate by hand.";
    assert!(plan.iter().any(|l| l == not_needed), "{plan:#?}");
    assert_eq!(
        closing(&["scan", ".", "--no-cache"]),
        "2 safe fixes not needed while transfer_to_npu is on (see Next steps)."
    );
}

#[test]
fn statistics_count_every_code_with_its_fixes_and_agree_with_the_json() {
    let run = npu_mem(&["scan", "fixtures/demo", "--statistics", "--no-cache"]);
    assert_eq!(run.code, 1, "the exit code is the scan's: {}", run.stderr);
    let json = scan_json(&["fixtures/demo"]);
    let findings = json["findings"].as_array().unwrap();
    let mut lines = run.stdout.lines();
    assert!(lines.next().unwrap().split_whitespace().eq(["count", "code", "fixable", "severity", "name"]));
    let rows: Vec<&str> = lines.clone().take_while(|l| !l.contains(" findings in ")).collect();
    let mut previous = usize::MAX;
    let mut total = 0;
    for row in &rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        let (count, code): (usize, &str) = (cells[0].parse().unwrap(), cells[1]);
        let of_code: Vec<_> = findings.iter().filter(|f| f["code"] == code).collect();
        assert_eq!(count, of_code.len(), "{row}");
        assert!(count <= previous, "most frequent first: {row}");
        previous = count;
        total += count;
        let safe = of_code.iter().filter(|f| f["fix"]["applicability"] == "safe").count();
        assert_eq!(safe > 0, row.contains(&format!("{safe} safe")), "{row}");
        assert!(row.ends_with(of_code[0]["name"].as_str().unwrap()), "{row}");
    }
    assert_eq!(total, findings.len());
    let codes: std::collections::BTreeSet<&str> = findings.iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert_eq!(rows.len(), codes.len());

    let json_too = npu_mem(&["scan", "fixtures/demo", "--statistics", "--format", "json"]);
    assert_eq!(json_too.code, 2);
    assert!(json_too.stderr.contains("--statistics prints a table in place of the report"), "{}", json_too.stderr);
}

#[test]
fn min_severity_hides_findings_from_text_and_concise_but_not_from_the_gate_or_json() {
    let all = npu_mem(&["scan", "fixtures/demo", "--format", "concise"]);
    let warn = npu_mem(&["scan", "fixtures/demo", "--format", "concise", "--min-severity", "warning"]);
    let info_lines = all.stdout.lines().filter(|l| l.contains(" [info] ")).count();
    assert!(info_lines > 0);
    assert_eq!(warn.stdout.lines().count(), all.stdout.lines().count() - info_lines);
    assert!(!warn.stdout.contains(" [info] "));
    let errors = npu_mem(&["scan", "fixtures/demo", "--format", "concise", "--min-severity", "error"]);
    assert!(errors.stdout.lines().all(|l| l.contains(" [error] ")) && !errors.stdout.is_empty());

    let text = npu_mem(&["scan", "fixtures/demo", "--min-severity", "warning", "--color", "never"]);
    assert!(!text.stdout.contains("[info]"));
    assert!(text.stdout.contains(&format!("({info_lines} below --min-severity warning not shown)")), "{}", text.stdout);
    // Only what is shown changes: `--fail-on info` still fails on the hidden info findings.
    let dir = temp_dir("min-severity");
    std::fs::write(dir.join("a.py"), "import torch\nif torch.cuda.is_available():\n    pass\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--fail-on", "info", "--min-severity", "warning", "--no-cache"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = npu_mem_in(&dir, &["scan", ".", "--min-severity", "error", "--format", "json", "--no-cache"]);
    assert!(json.stdout.contains("\"API001\""), "JSON keeps every finding");
}

#[test]
fn force_color_colours_piped_output_and_force_color_0_and_no_color_do_not() {
    let run = |env: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_npu-mem"));
        command.args(["scan", "fixtures/demo", "--no-cache"]).current_dir(env!("CARGO_MANIFEST_DIR"));
        command.env_remove("FORCE_COLOR").env_remove("NO_COLOR");
        for (k, v) in env {
            command.env(k, v);
        }
        String::from_utf8_lossy(&command.output().unwrap().stdout).into_owned()
    };
    assert!(!run(&[]).contains('\x1b'), "a pipe is not a terminal");
    assert!(run(&[("FORCE_COLOR", "1")]).contains("\x1b["));
    assert!(run(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]).contains("\x1b["), "FORCE_COLOR wins");
    assert!(!run(&[("FORCE_COLOR", "0")]).contains('\x1b'));
    assert!(!run(&[("FORCE_COLOR", "")]).contains('\x1b'), "empty counts as unset");
}
