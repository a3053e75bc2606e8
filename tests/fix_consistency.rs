//! A fixed program stays consistent: when `--fix` migrates a device or
//! backend string held in a name, the comparisons that test that name are
//! migrated with it, and the fix counts match what the report promised.

mod common;

use common::{copy_dir, npu_mem_in, temp_dir};
use serde_json::Value;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A copy of `fixtures/fix-consistency` in a fresh directory.
fn project(name: &str) -> common::TempDir {
    let dir = temp_dir(name);
    copy_dir(&Path::new(ROOT).join("fixtures/fix-consistency"), &dir);
    dir
}

fn findings(dir: &Path, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["scan", ".", "--format", "json", "--fail-on", "never"];
    args.extend_from_slice(extra);
    let run = npu_mem_in(dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    report["findings"].as_array().unwrap().clone()
}

fn codes(findings: &[Value]) -> Vec<String> {
    findings.iter().map(|f| format!("{}:{}", f["code"].as_str().unwrap(), f["line"])).collect()
}

/// Runs the safe `--fix` (with `extra` options) in `dir` and reads back its `train.py`.
fn fixed_train_py(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["scan", ".", "--fix", "--fail-on", "never"];
    args.extend_from_slice(extra);
    let run = npu_mem_in(dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::read_to_string(dir.join("train.py")).unwrap()
}

/// Lines of the fixed file that still compare with, or test for, `needle`.
fn lines_testing(text: &str, needle: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(needle))
        .filter(|l| l.contains("==") || l.contains(" in ") || l.contains("startswith"))
        .map(str::to_string)
        .collect()
}

#[test]
fn comparisons_move_with_the_values_the_fix_migrates() {
    let dir = project("consistency-fix");
    let before = findings(&dir, &[]);
    for code in ["TX002:11", "TX002:17", "TX003:18", "TX003:25", "TX003:41", "TX008:10", "TX008:34"] {
        assert!(codes(&before).iter().any(|c| c == code), "{code} missing before the fix: {:?}", codes(&before));
    }
    let text = fixed_train_py(&dir, &[]);

    // The invariant: no comparison with "cuda" or "nccl" is left on a migrated value ...
    assert!(text.contains("device_type = 'npu' if 'npu' in device else 'cpu'"), "{text}");
    assert!(text.contains("if device_type == 'npu':"), "{text}");
    assert!(text.contains("if args.dist_backend == 'hccl':"), "{text}");
    assert!(text.contains("if args.device.startswith('npu'):"), "{text}");
    assert_eq!(lines_testing(&text, "'nccl'"), Vec::<String>::new());
    // ... except in the dispatch whose NPU arm already exists: there the
    // migrated value now selects that arm, as it should.
    assert_eq!(lines_testing(&text, "'cuda'"), vec!["    if args.device == 'cuda':"]);
    assert!(text.contains("elif args.device == 'npu':"), "{text}");

    let after = findings(&dir, &[]);
    let left: Vec<String> =
        codes(&after).into_iter().filter(|c| ["TX002", "TX003", "TX008"].iter().any(|p| c.starts_with(p))).collect();
    assert!(left.is_empty(), "still reported after --fix: {left:?}");
}

#[test]
fn comparisons_move_even_when_tx003_is_not_selected() {
    // The comparisons belong to the value's fix, not to TX003's own (unsafe) fix.
    let dir = project("consistency-ignore");
    let text = fixed_train_py(&dir, &["--ignore", "TX003"]);
    assert!(text.contains("device = 'npu'"), "{text}");
    assert!(text.contains("if device_type == 'npu':"), "{text}");
    assert_eq!(lines_testing(&text, "'nccl'"), Vec::<String>::new());
}

#[test]
fn a_device_built_by_concatenation_migrates_with_its_comparisons() {
    // The shape of the model-parallel `parallelize()` of older Hugging Face models.
    let dir = temp_dir("consistency-concatenation");
    let source = "import torch\n\n\nclass Stack(torch.nn.Module):\n    def parallelize(self, device_map):\n        \
                  self.device_map = device_map\n        self.last_device = \"cuda:\" + str(max(device_map))\n\n    \
                  def forward(self, h):\n        for k in self.device_map:\n            \
                  if \"cuda:\" + str(k) != self.last_device:\n                \
                  h = h.to(\"cuda:%d\" % (k + 1))\n        return h\n";
    std::fs::write(dir.join("m.py"), source).unwrap();
    let found = findings(&dir, &[]);
    let tx002: Vec<u64> = found.iter().filter(|f| f["code"] == "TX002").map(|f| f["line"].as_u64().unwrap()).collect();
    assert_eq!(tx002, [7, 12], "{found:?}");
    let run = npu_mem_in(&dir, &["scan", ".", "--fix", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fixed = std::fs::read_to_string(dir.join("m.py")).unwrap();
    assert!(fixed.contains("self.last_device = \"npu:\" + str(max(device_map))"), "{fixed}");
    assert!(fixed.contains("if \"npu:\" + str(k) != self.last_device:"), "{fixed}");
    assert!(fixed.contains("h = h.to(\"npu:%d\" % (k + 1))"), "{fixed}");
    assert!(!fixed.contains("cuda"), "{fixed}");
}

#[test]
fn a_comparison_on_a_value_no_fix_touches_has_an_unsafe_fix_only() {
    let dir = temp_dir("consistency-unsafe");
    let source = "import torch\n\ndef f(x):\n    if x.device.type == 'cuda':\n        return 1\n    return 0\n";
    std::fs::write(dir.join("m.py"), source).unwrap();
    let found = findings(&dir, &[]);
    let tx003: Vec<&Value> = found.iter().filter(|f| f["code"] == "TX003").collect();
    assert_eq!(tx003.len(), 1, "{found:?}");
    assert_eq!(tx003[0]["fix"]["applicability"], "unsafe");
    let safe = npu_mem_in(&dir, &["scan", ".", "--fix", "--fail-on", "never"]);
    assert_eq!(safe.code, 0, "{}", safe.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("m.py")).unwrap(), source, "a safe --fix leaves it alone");
    let unsafe_ = npu_mem_in(&dir, &["scan", ".", "--fix", "--unsafe-fixes", "--fail-on", "never"]);
    assert_eq!(unsafe_.code, 0, "{}", unsafe_.stderr);
    assert!(std::fs::read_to_string(dir.join("m.py")).unwrap().contains("if x.device.type == 'npu':"));
}

#[test]
fn fix_counts_match_the_report() {
    let dir = project("consistency-counts");
    let promised = findings(&dir, &[]).iter().filter(|f| f["fix"]["applicability"] == "safe").count();
    let text = npu_mem_in(&dir, &["scan", ".", "--fail-on", "never"]).stdout;
    // The project is compatible with transfer_to_npu, so the closing line
    // offers the fixes as the way to migrate by hand instead.
    let closing = text.lines().last().unwrap_or_default();
    let offered =
        format!("{promised} safe fixes and 2 unsafe fixes to migrate by hand instead of turning on transfer_to_npu");
    assert!(closing.starts_with(&offered), "{text}");
    let manual = npu_mem_in(&dir, &["scan", ".", "--fail-on", "never", "--migration", "manual"]).stdout;
    assert!(manual.contains(&format!("{promised} findings have a safe fix")), "{manual}");
    let diff = npu_mem_in(&dir, &["scan", ".", "--diff"]);
    let fix = npu_mem_in(&dir, &["scan", ".", "--fix", "--fail-on", "never"]);
    // The fixes add `import torch_npu`, which the new "npu" strings need:
    // that follow-up is counted apart from what the report promised.
    let wording = format!("{} findings ({promised} reported, and 1 that those fixes create: API005)", promised + 1);
    assert!(diff.stderr.contains(&format!("--fix would fix {wording} in 1 file")), "{}", diff.stderr);
    assert!(fix.stdout.contains(&format!("Fixed {wording} in 1 file.")), "{}", fix.stdout);
}

/// The applicability of the API001 fix on each line of `fixtures/guarded-tests/train.py` (`None`: no fix).
fn api001_fixes(dir: &Path, extra: &[&str]) -> Vec<(u64, Option<String>)> {
    let found = findings(dir, extra);
    let api001 = found.iter().filter(|f| f["code"] == "API001");
    api001.map(|f| (f["line"].as_u64().unwrap(), f["fix"]["applicability"].as_str().map(str::to_string))).collect()
}

#[test]
fn a_cuda_test_is_not_migrated_while_the_code_it_guards_breaks_on_the_npu() {
    let dir = temp_dir("guarded-tests");
    copy_dir(&Path::new(ROOT).join("fixtures/guarded-tests"), &dir);
    let safe = || Some("safe".to_string());
    let expected: Vec<(u64, Option<String>)> =
        vec![(8, None), (16, None), (23, safe()), (24, safe()), (32, safe()), (33, safe())];
    assert_eq!(api001_fixes(&dir, &[]), expected);
    // The rules that decide it run even when only API001 is selected.
    assert_eq!(api001_fixes(&dir, &["--select", "API001"]), expected);
    let text = npu_mem_in(&dir, &["scan", ".", "--select", "API001", "--fail-on", "never"]).stdout;
    let withheld = |test_line: u32, code: &str, line: u32| {
        format!(
            "= no fix here: migrating the CUDA test `torch.cuda.is_available()` (line {test_line}) would run {code} \
             (line {line}) on the NPU, which no fix changes"
        )
    };
    assert!(text.contains(&withheld(8, "TX017", 9)), "{text}");
    assert!(text.contains(&withheld(16, "API002", 17)), "{text}");
    assert!(!text.contains("TX017 ["), "a rule that is not selected reports nothing: {text}");
    let json = findings(&dir, &["--select", "API001"]);
    let reason =
        json.iter().find(|f| f["line"] == 8).map(|f| f["fix_withheld"].as_str().unwrap_or_default().to_string());
    assert!(reason.is_some_and(|r| r.contains("would run TX017 (line 9) on the NPU")), "{json:?}");

    let run = npu_mem_in(&dir, &["scan", ".", "--select", "API001", "--fix", "--unsafe-fixes", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fixed = std::fs::read_to_string(dir.join("train.py")).unwrap();
    let lines: Vec<&str> = fixed.lines().collect();
    assert_eq!(lines[7], "    if torch.cuda.is_available():", "{fixed}");
    assert_eq!(lines[15], "    if torch.cuda.is_available():", "{fixed}");
    assert_eq!(lines[22], "    if torch.npu.is_available():", "{fixed}");
    assert_eq!(lines[23], "        torch.npu.synchronize()", "{fixed}");
    assert_eq!(lines[31], "    elif torch.npu.is_available():", "{fixed}");
}

#[test]
fn an_option_default_and_its_choices_migrate_together() {
    // argparse does not check a default against `choices`, but rejects any
    // value given for the option that is not among them: after migrating
    // `default="nccl"` alone, `--dist-backend hccl` would be refused.
    let dir = temp_dir("consistency-choices");
    let source = "\
import argparse
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument('--dist-backend', default='nccl', choices=['nccl', 'gloo'])
parser.add_argument('--device', default='cuda:0', choices=('cuda:0', 'cpu'))
parser.add_argument('--backend2', default='nccl', choices=['nccl', 'hccl'])
parser.add_argument('--other', choices=['nccl', 'gloo'])
args = parser.parse_args()
dist.init_process_group(backend=args.dist_backend)
dist.new_group(backend=args.backend2)
model = torch.nn.Linear(2, 2).to(args.device)
";
    std::fs::write(dir.join("train.py"), source).unwrap();
    let text = fixed_train_py(&dir, &[]);
    assert!(text.contains("default='hccl', choices=['hccl', 'gloo']"), "{text}");
    assert!(text.contains("default='npu:0', choices=('npu:0', 'cpu')"), "{text}");
    // Choices that already offer the new value stay as they are ...
    assert!(text.contains("default='hccl', choices=['nccl', 'hccl']"), "{text}");
    // ... and so do the choices of an option whose default no fix touched.
    assert!(text.contains("'--other', choices=['nccl', 'gloo']"), "{text}");
    let left: Vec<String> =
        codes(&findings(&dir, &[])).into_iter().filter(|c| c.starts_with("TX002") || c.starts_with("TX008")).collect();
    assert!(left.is_empty(), "still reported after --fix: {left:?}");
}

/// `(code, line, fix applicability or None, fix_withheld)` of a finding.
type FixOf = (String, u64, Option<String>, String);

/// A copy of `fixtures/NAME` in a fresh directory named after `test`, and
/// the [`FixOf`] of each of its findings.
fn fixes_of(name: &str, test: &str) -> (common::TempDir, Vec<FixOf>) {
    let dir = temp_dir(test);
    copy_dir(&Path::new(ROOT).join("fixtures").join(name), &dir);
    let found = findings(&dir, &[])
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_string(),
                f["line"].as_u64().unwrap_or_default(),
                f["fix"]["applicability"].as_str().map(str::to_string),
                f["fix_withheld"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (dir, found)
}

/// The finding of `code` on `line` among `found`.
fn fix_at<'a>(found: &'a [FixOf], code: &str, line: u64) -> &'a FixOf {
    let at = found.iter().find(|(c, l, ..)| c == code && *l == line);
    at.unwrap_or_else(|| panic!("{code}:{line} in {found:?}"))
}

#[test]
fn code_under_a_cuda_test_migrates_with_the_test_or_not_at_all() {
    let (_dir, found) = fixes_of("guarded-branches", "guarded-branches");
    let fix_of = |code: &str, line: u64| fix_at(&found, code, line);
    // The branch holding DataParallel: neither its test nor its `.cuda()` is fixed, and both say why.
    for (code, line) in [("TX003", 9), ("TX001", 10)] {
        let (_, _, fix, why) = fix_of(code, line);
        assert_eq!(fix, &None, "{code}:{line}");
        assert!(why.contains("would run TX011 (line 11) on the NPU"), "{code}:{line}: {why}");
    }
    // A test and the move it guards: one fix, unsafe when a part is.
    assert_eq!(fix_of("TX003", 17).2.as_deref(), Some("unsafe"));
    assert_eq!(fix_of("TX001", 18).2.as_deref(), Some("unsafe"));
    assert_eq!(fix_of("API001", 24).2.as_deref(), Some("safe"));
    assert_eq!(fix_of("TX001", 25).2.as_deref(), Some("safe"));
    // The scaler's fix waits for the autocast's.
    let (_, _, fix, why) = fix_of("AMP002", 31);
    assert_eq!(fix, &None);
    assert!(why.contains("AMP001 (line 32) has no fix"), "{why}");

    // The body of each function after the fix, without its comment (the fix may add `import torch_npu` above).
    let bodies_after = |extra: &[&str]| -> Vec<Vec<String>> {
        let copy = temp_dir("guarded-branches-fixed");
        copy_dir(&Path::new(ROOT).join("fixtures/guarded-branches"), &copy);
        let text = fixed_train_py(&copy, extra);
        let lines: Vec<&str> = text.lines().collect();
        ["def setup(", "def place(", "def spread(", "def train("]
            .iter()
            .map(|def| {
                let at = lines.iter().position(|l| l.starts_with(def)).unwrap_or_else(|| panic!("{def} in {text}"));
                lines[at + 2..at + 5].iter().map(|l| l.to_string()).collect()
            })
            .collect()
    };
    // Safe fixes only: the CUDA branches keep their CUDA test and their CUDA code.
    let safe = bodies_after(&[]);
    assert_eq!(
        safe[0],
        ["    if device.type == \"cuda\":", "        model = model.cuda()", "        model = nn.DataParallel(model)"]
    );
    assert_eq!(safe[1], ["    if device.type == \"cuda\":", "        x = x.cuda()", "    return x"]);
    assert_eq!(safe[2], ["    if torch.npu.device_count() > 1:", "        x = x.npu()", "    return x"]);
    assert_eq!(
        safe[3],
        [
            "    scaler = torch.cuda.amp.GradScaler()",
            "    with torch.cuda.amp.autocast(*amp_args):",
            "        loss = model(x)"
        ]
    );
    // With unsafe fixes: the guarded move migrates with its test, and nothing else changes.
    let all = bodies_after(&["--unsafe-fixes"]);
    assert_eq!(all[0], safe[0]);
    assert_eq!(all[1], ["    if device.type == \"npu\":", "        x = x.npu()", "    return x"]);
    assert_eq!(all[2..], safe[2..]);
}

#[test]
fn a_renamed_cuda_test_is_safe_only_when_its_branch_names_no_other_device() {
    let (dir, found) = fixes_of("fix-safety", "fix-safety-renames");
    let fix_of = |code: &str, line: u64| fix_at(&found, code, line).2.clone();
    // The exporter's branch sets device "0", and `move` passes a device no fix migrates.
    assert_eq!(fix_of("API001", 19).as_deref(), Some("unsafe"));
    assert_eq!(fix_of("API001", 27).as_deref(), Some("unsafe"));
    // A branch that names no device, and one whose device code migrates with the test.
    assert_eq!(fix_of("API001", 34).as_deref(), Some("safe"));
    assert_eq!(fix_of("API001", 40).as_deref(), Some("safe"));
    assert_eq!(fix_of("API001", 41).as_deref(), Some("safe"));
    // A device number: fine for a call the fix migrates, not for the project's own picker.
    assert_eq!(fix_of("API001", 84).as_deref(), Some("safe"));
    assert_eq!(fix_of("API001", 85).as_deref(), Some("safe"));
    assert_eq!(fix_of("API001", 90).as_deref(), Some("unsafe"));
    // An index assigned under the test (DINO's `args.gpu = 0`): fine when only a
    // migrated call reads it, not when `torch.device` does; a port string is no index.
    assert_eq!(fix_of("API001", 99).as_deref(), Some("safe"));
    assert_eq!(fix_of("API001", 109).as_deref(), Some("unsafe"));

    let text = npu_mem_in(&dir, &["scan", ".", "--fail-on", "never"]).stdout;
    assert!(
        text.contains(
            "unsafe: the renamed test runs line 21 on the NPU, where `\"0\"` names a device that no fix here migrates"
        ),
        "{text}"
    );
    assert!(text.contains("runs line 28 on the NPU, where `device` names a device"), "{text}");
    assert!(text.contains("runs line 110 on the NPU, where `gpu_id` names a device"), "{text}");

    // The safe --fix renames only the tests whose branches stay correct.
    let run = npu_mem_in(&dir, &["scan", ".", "--fix", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fixed = std::fs::read_to_string(dir.join("export.py")).unwrap();
    let lines: Vec<&str> = fixed.lines().collect();
    let line = |needle: &str| lines.iter().find(|l| l.contains(needle)).map(|l| l.trim().to_string());
    assert_eq!(
        line("self.args.device is None and").unwrap(),
        "if fmt == \"imx\" and self.args.device is None and torch.cuda.is_available():"
    );
    assert!(fixed.contains("    if torch.cuda.is_available():\n        model.to(device)"), "{fixed}");
    assert!(fixed.contains("    if torch.npu.is_available():\n        print(\"seeding\", seed_value)"), "{fixed}");
    assert!(fixed.contains("    if torch.npu.is_available():\n        torch.npu.synchronize()"), "{fixed}");
    assert!(fixed.contains("    elif torch.npu.is_available():\n        args.rank, args.gpu"), "{fixed}");
    assert!(fixed.contains("    torch.npu.set_device(args.gpu)"), "{fixed}");
}

#[test]
fn a_device_comparison_beside_npu_handling_keeps_its_finding_without_a_fix() {
    let (dir, found) = fixes_of("fix-safety", "fix-safety-tx003");
    let tx003: Vec<(u64, Option<String>, bool)> =
        found.iter().filter(|f| f.0 == "TX003").map(|f| (f.1, f.2.clone(), !f.3.is_empty())).collect();
    let unsafe_ = Some("unsafe".to_string());
    // `pick` tests `device == "npu"`; `Runner` does in another method; `plain` and the backend test do not.
    assert_eq!(tx003, [(49, None, true), (57, None, true), (67, unsafe_.clone(), false), (77, unsafe_, false)]);
    let why = &fix_at(&found, "TX003", 49).3;
    assert!(why.starts_with("its function or class already tests for the NPU"), "{why}");
    let run = npu_mem_in(&dir, &["scan", ".", "--fix", "--unsafe-fixes", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fixed = std::fs::read_to_string(dir.join("export.py")).unwrap();
    assert!(fixed.contains("    if device == \"npu\":\n        device = \"0\"\n    print(\"device\", device)\n    if device.type == \"cuda\":"), "{fixed}");
    assert!(fixed.contains("self.use_cuda = device.type == \"cuda\""), "{fixed}");
    assert!(fixed.contains("def plain(device):\n    # No NPU handling anywhere near: TX003 keeps its unsafe fix.\n    if device.type == \"npu\":"), "{fixed}");
}

#[test]
fn a_backend_default_is_fixed_only_as_unsafe_in_a_script_that_picks_its_accelerator_at_run_time() {
    let (dir, found) = fixes_of("fix-portable", "fix-portable");
    let (_, _, fix, _) = fix_at(&found, "TX008", 9);
    assert_eq!(fix.as_deref(), Some("unsafe"), "hccl would break the script's CUDA runs");
    let report = npu_mem_in(&dir, &["scan", ".", "--select", "TX008"]).stdout;
    assert!(report.contains("unsafe: the file picks its accelerator at run time (`torch.accelerator`)"), "{report}");
    assert!(fixed_train_py(&dir, &[]).contains("default=\"nccl\""), "the safe --fix leaves it");
    assert!(fixed_train_py(&dir, &["--unsafe-fixes"]).contains("default=\"hccl\""), "--unsafe-fixes migrates it");
}

#[test]
fn an_autocast_with_a_positional_enabled_migrates_with_its_scaler() {
    let (dir, found) = fixes_of("fix-amp-pair", "fix-amp-pair");
    for (code, line) in [("AMP002", 7), ("AMP001", 11)] {
        let (_, _, fix, why) = fix_at(&found, code, line);
        assert_eq!(fix.as_deref(), Some("safe"), "{code}:{line} {why}");
    }
    let fixed = fixed_train_py(&dir, &[]);
    assert!(fixed.contains("with torch.autocast(\"npu\", enabled=scaler is not None):"), "{fixed}");
    assert!(fixed.contains("scaler = torch.npu.amp.GradScaler()"), "{fixed}");
    assert!(!fixed.contains("torch.cuda"), "{fixed}");
}
