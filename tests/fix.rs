//! `--fix`, `--diff` and `--unsafe-fixes`: the diffs they produce, what a
//! fixed project reports afterwards, and that no fix ever damages a file.

mod common;

use common::{copy_dir, npu_mem_in, temp_dir};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A copy of the demo project in a fresh directory.
fn demo_copy(name: &str) -> common::TempDir {
    let dir = temp_dir(name);
    copy_dir(&Path::new(ROOT).join("fixtures/demo"), &dir);
    dir
}

fn json_in(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["scan", ".", "--format", "json", "--fail-on", "never"];
    args.extend_from_slice(extra);
    let run = npu_mem_in(dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// `(path, code) -> count` of a report's findings.
fn tally(findings: &Value) -> BTreeMap<(String, String), i64> {
    let mut map = BTreeMap::new();
    for f in findings.as_array().unwrap() {
        *map.entry((f["path"].as_str().unwrap().to_string(), f["code"].as_str().unwrap().to_string())).or_insert(0) +=
            1;
    }
    map
}

fn has_fix(f: &Value, applicability: &str) -> bool {
    f["fix"]["applicability"] == applicability
}

#[test]
fn demo_diffs() {
    let dir = demo_copy("demo-diff");
    let safe = npu_mem_in(&dir, &["scan", ".", "--diff"]);
    assert_eq!(safe.code, 1, "--diff exits 1 when there is something to fix: {}", safe.stderr);
    assert!(
        safe.stderr
            .contains("--fix would fix 22 findings (21 reported, and 1 that those fixes create: API005) in 4 files"),
        "{}",
        safe.stderr
    );
    insta::assert_snapshot!("demo_diff_safe", safe.stdout);
    let all = npu_mem_in(&dir, &["scan", ".", "--diff", "--unsafe-fixes"]);
    insta::assert_snapshot!("demo_diff_unsafe", all.stdout);
    let untouched = demo_copy("demo-pristine");
    for name in ["train.py", "data.py", "model.py", "utils.py", "launch.sh"] {
        assert_eq!(std::fs::read(dir.join(name)).unwrap(), std::fs::read(untouched.join(name)).unwrap(), "{name}");
    }
}

#[test]
fn demo_round_trip() {
    let dir = demo_copy("demo-fix");
    let before = json_in(&dir, &[]);
    let fixed_run = json_in(&dir, &["--fix"]);
    let fixed = &fixed_run["fixed"];
    // Safe fixes, plus API005's import where a fix made a file use the NPU.
    let companion = |f: &Value| f["code"] == "API005";
    assert!(fixed.as_array().unwrap().iter().all(|f| has_fix(f, "safe") || companion(f)), "{fixed}");
    assert_eq!(fixed.as_array().unwrap().iter().filter(|f| has_fix(f, "safe")).count(), 21);
    // The fixed findings are gone and nothing else changed.
    let mut expected = tally(&before["findings"]);
    for (key, n) in tally(fixed) {
        *expected.entry(key).or_insert(0) -= n;
    }
    assert!(expected.iter().all(|((_, code), n)| *n >= 0 || code == "API005"), "{expected:?}");
    // API005 is project-wide: once the entry module train.py imports
    // torch_npu, utils.py is satisfied too. Every other count is exact.
    expected.retain(|(_, code), n| *n > 0 && code != "API005");
    let after = tally(&fixed_run["findings"]);
    assert!(!after.keys().any(|(_, code)| code == "API005"), "{after:?}");
    assert_eq!(after, expected);
    assert!(!fixed_run["findings"].as_array().unwrap().iter().any(|f| has_fix(f, "safe")));
    assert_eq!(fixed_run["findings"], json_in(&dir, &[])["findings"], "the report after --fix is a fresh scan's");
    // Every changed line is a line a fixed finding was on.
    let pristine = demo_copy("demo-fix-pristine");
    for f in fixed.as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        let old = std::fs::read_to_string(pristine.join(path)).unwrap();
        let new = std::fs::read_to_string(dir.join(path)).unwrap();
        // Drop the one line API005's fix may add, then compare line by line.
        let new: Vec<&str> = new.lines().filter(|l| *l != "import torch_npu").collect();
        assert_eq!(old.lines().count(), new.len(), "{path}: the fixes add no other lines");
        for (i, (a, b)) in old.lines().zip(new).enumerate().filter(|(_, (a, b))| a != b) {
            let on_fixed_line = fixed.as_array().unwrap().iter().any(|g| g["path"] == path && g["line"] == i + 1);
            assert!(on_fixed_line, "{path}:{}: changed line {a:?} -> {b:?} has no fixed finding", i + 1);
        }
    }
    // Idempotence: a second run changes nothing and finds nothing to fix.
    let snapshot = |d: &Path| -> Vec<Vec<u8>> {
        ["train.py", "data.py", "model.py", "utils.py", "launch.sh"].map(|n| std::fs::read(d.join(n)).unwrap()).into()
    };
    let after_first = snapshot(&dir);
    let again = json_in(&dir, &["--fix"]);
    assert_eq!(again["fixed"], serde_json::json!([]));
    assert_eq!(snapshot(&dir), after_first);
    let diff = npu_mem_in(&dir, &["scan", ".", "--diff"]);
    assert_eq!((diff.code, diff.stdout.as_str()), (0, ""), "{}", diff.stderr);
}

#[test]
fn exit_codes_after_fix() {
    let dir = temp_dir("fix-exit");
    std::fs::write(dir.join("a.py"), "import torch\nm = torch.nn.Linear(2, 2).cuda()\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", "a.py", "--fix", "--format", "concise"]);
    assert_eq!(run.code, 0, "nothing remains after the fix: {}{}", run.stdout, run.stderr);
    // At target 2.1, `.npu()` needs `import torch_npu`: TX001's fix brings API005's.
    // The report promised one fix; the import is counted as its follow-up.
    assert!(
        run.stderr.contains("fixed 2 findings (1 reported, and 1 that those fixes create: API005) in 1 file"),
        "{}",
        run.stderr
    );
    let fixed = std::fs::read_to_string(dir.join("a.py")).unwrap();
    assert_eq!(fixed, "import torch\nimport torch_npu\nm = torch.nn.Linear(2, 2).npu()\n");
    std::fs::write(dir.join("a.py"), "import torch\nm = torch.nn.Linear(2, 2).cuda()\n").unwrap();
    let later = npu_mem_in(&dir, &["scan", "a.py", "--fix", "--target", "2.6"]);
    assert_eq!(
        (later.code, std::fs::read_to_string(dir.join("a.py")).unwrap().as_str()),
        (0, "import torch\nm = torch.nn.Linear(2, 2).npu()\n")
    );
    std::fs::write(dir.join("a.py"), "import torch\nm = torch.nn.Linear(2, 2).cuda()\n").unwrap();
    let strict = npu_mem_in(&dir, &["scan", "a.py", "--fix", "--exit-non-zero-on-fix"]);
    assert_eq!(strict.code, 1, "--exit-non-zero-on-fix fails when a file changed");
    let clean = npu_mem_in(&dir, &["scan", "a.py", "--fix", "--exit-non-zero-on-fix"]);
    assert_eq!(clean.code, 0, "and passes once nothing changes");
    let alone = npu_mem_in(&dir, &["scan", "a.py", "--unsafe-fixes"]);
    assert_eq!(alone.code, 2);
    assert!(alone.stderr.contains("add one of them"), "{}", alone.stderr);
}

#[test]
fn text_report_counts_what_fix_would_fix() {
    let dir = demo_copy("demo-footer");
    let run = npu_mem_in(&dir, &["scan", ".", "--color", "never"]);
    assert!(run.stdout.contains("21 findings have a safe fix: `npu-mem scan --fix` applies them."), "{}", run.stdout);
    assert!(run.stdout.contains("12 findings have an unsafe fix"), "{}", run.stdout);
}

#[test]
fn line_endings_bom_and_final_newline_survive() {
    let dir = temp_dir("fix-bytes");
    // The last line allocates in a loop, where TX004's unsafe fix applies.
    let crlf = "# -*- coding: utf-8 -*-\r\nimport torch\r\nloader = torch.utils.data.DataLoader(\r\n    ds,\r\n    num_workers=2,\r\n    pin_memory=True,\r\n)\r\nfor _ in range(2): x = torch.ones(2).cuda()\r\n";
    std::fs::write(dir.join("crlf.py"), crlf).unwrap();
    std::fs::write(dir.join("no_newline.py"), "import torch\nx = torch.ones(2).cuda()").unwrap();
    std::fs::write(dir.join("bom.py"), "\u{feff}import torch\nx = torch.ones(2).cuda()\n").unwrap();
    let safe = npu_mem_in(&dir, &["scan", ".", "--fix", "--target", "2.1", "--fail-on", "never"]);
    assert_eq!(safe.code, 0, "{}", safe.stderr);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let head = "# -*- coding: utf-8 -*-\r\nimport torch\r\nimport torch_npu\r\nloader = torch.utils.data.DataLoader(\r\n    ds,\r\n    num_workers=2,\r\n    pin_memory=True,\r\n";
    assert_eq!(read("crlf.py"), format!("{head})\r\nfor _ in range(2): x = torch.ones(2).npu()\r\n"));
    assert_eq!(read("no_newline.py"), "import torch\nimport torch_npu\nx = torch.ones(2).npu()");
    assert_eq!(read("bom.py"), "\u{feff}import torch\nimport torch_npu\nx = torch.ones(2).npu()\n");
    // Unsafe fixes add lines inside the call: still CRLF, in the call's layout.
    let all =
        npu_mem_in(&dir, &["scan", "crlf.py", "--fix", "--unsafe-fixes", "--target", "2.1", "--fail-on", "never"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    let tail =
        "    persistent_workers=True,\r\n    pin_memory_device=\"npu\",\r\n)\r\nfor _ in range(2): x = torch.ones(2, device=\"npu\")\r\n";
    assert_eq!(read("crlf.py"), format!("{head}{tail}"));
}

#[cfg(unix)]
#[test]
fn read_only_file_is_reported_not_forced() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("fix-readonly");
    let file = dir.join("a.py");
    std::fs::write(&file, "import torch\nm = torch.nn.Linear(2, 2).cuda()\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let report = json_in(&dir, &["--fix"]);
    assert_eq!(report["fixed"], serde_json::json!([]));
    assert_eq!(report["errors"][0]["kind"], "not_fixed");
    assert!(report["errors"][0]["message"].as_str().unwrap().contains("read-only"), "{report}");
    assert_eq!(report["findings"][0]["code"], "TX001", "the finding is still reported");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "import torch\nm = torch.nn.Linear(2, 2).cuda()\n");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o444);
}

#[cfg(unix)]
#[test]
fn permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("fix-mode");
    let file = dir.join("run.py");
    std::fs::write(&file, "#!/usr/bin/env python\nimport torch\nx = torch.ones(2).cuda()\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o750)).unwrap();
    json_in(&dir, &["--fix"]);
    assert!(std::fs::read_to_string(&file).unwrap().contains(".npu()"));
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o750);
}

/// A user pack whose fixes are wrong on purpose: one breaks the syntax, one
/// produces a new match every pass.
const BAD_FIXES: &str = r#"
[pack]
name = "bad-fixes"
description = "fixes that must never be written"

[[rule]]
code = "BAD001"
name = "breaks-syntax"
section = "transfer"
severity = "warning"
message = "`.{name}()`"
[rule.docs]
what = "w"
why = "w"
example = "x.gpu()"
instead = "x.npu()"
[rule.match]
method = "gpu"
[rule.fix]
applicability = "safe"
description = "d"
edits = [{ on = "method_name", replace = "(" }]

[[rule]]
code = "BAD002"
name = "never-settles"
section = "transfer"
severity = "warning"
message = "grows"
[rule.docs]
what = "w"
why = "w"
example = "'a'"
instead = "'a'"
[rule.match]
string = '^a+$'
[rule.fix]
applicability = "safe"
description = "d"
edits = [{ on = "node", replace = "{text} + 'a'" }]
"#;

#[test]
fn a_fix_that_breaks_syntax_or_never_settles_leaves_the_file_alone() {
    let dir = temp_dir("fix-bad");
    std::fs::write(dir.join("bad.toml"), BAD_FIXES).unwrap();
    std::fs::write(dir.join("syntax.py"), "y = x.gpu()\n").unwrap();
    std::fs::write(dir.join("grows.py"), "s = 'a'\n").unwrap();
    let report = json_in(&dir, &["--rules", "bad.toml", "--select", "BAD", "--fix"]);
    let errors: Vec<(String, String)> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap().to_string(), e["message"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].0.ends_with("grows.py") && errors[0].1.contains("did not settle"), "{errors:?}");
    assert!(errors[1].0.ends_with("syntax.py") && errors[1].1.contains("syntax error"), "{errors:?}");
    assert_eq!(std::fs::read_to_string(dir.join("syntax.py")).unwrap(), "y = x.gpu()\n");
    assert_eq!(std::fs::read_to_string(dir.join("grows.py")).unwrap(), "s = 'a'\n");
    assert_eq!(report["findings"].as_array().unwrap().len(), 2, "both findings still reported");
}

/// The rules that carry a fix, from `npu-mem rules --format json`.
fn fixable_codes() -> Vec<String> {
    let run = common::npu_mem(&["rules", "--format", "json"]);
    let rules: Value = serde_json::from_str(&run.stdout).unwrap();
    let list = rules.as_array().or_else(|| rules["rules"].as_array()).unwrap().clone();
    list.iter().filter(|r| !r["fix"].is_null()).map(|r| r["code"].as_str().unwrap().to_string()).collect()
}

#[test]
fn every_fixable_rule_fixes_its_fixture() {
    let codes = fixable_codes();
    assert!(codes.len() >= 20, "{codes:?}");
    let rules_dir = Path::new(ROOT).join("fixtures/rules");
    for code in codes {
        let dir = temp_dir(&format!("fixture-{code}"));
        let mut names: Vec<String> = std::fs::read_dir(&rules_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.strip_prefix(code.as_str()).is_some_and(|rest| rest.starts_with('.')))
            .collect();
        names.sort();
        assert!(!names.is_empty(), "{code} has no fixture named {code}.py or {code}.sh");
        let mut diffs = String::new();
        for name in &names {
            std::fs::copy(rules_dir.join(name), dir.join(name)).unwrap();
            let first = std::fs::read_to_string(dir.join(name)).unwrap().lines().next().unwrap_or("").to_string();
            let mut args = vec!["scan", name.as_str(), "--diff", "--unsafe-fixes", "--select", code.as_str()];
            args.extend(first.strip_prefix("# fixture:").map_or(vec![], |rest| rest.split_whitespace().collect()));
            let run = npu_mem_in(&dir, &args);
            assert_eq!(run.code, 1, "{code}: {name} has nothing to fix: {}", run.stderr);
            diffs.push_str(&run.stdout);
        }
        insta::assert_snapshot!(format!("fixture_diff_{code}"), diffs);
    }
}

/// A small deterministic generator, so a failure names a reproducible seed.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// Random modules built from the Python fixtures that CPython accepts, fixed
/// with every fix, must still be accepted by CPython.
#[test]
fn fixed_random_modules_still_parse() {
    let python = |dir: &Path, files: &[String]| {
        let script = "import ast,sys\nfor p in sys.argv[1:]:\n    ast.parse(open(p, encoding='utf-8').read(), p)";
        std::process::Command::new("python3").arg("-c").arg(script).args(files).current_dir(dir).output()
    };
    let rules_dir = Path::new(ROOT).join("fixtures/rules");
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(&rules_dir).unwrap() {
        let path = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        if path.extension().is_some_and(|e| e == "py") && !text.contains("__future__") {
            sources.push(text);
        }
    }
    sources.sort();
    let dir = temp_dir("fix-random");
    let names: Vec<String> = (0..40).map(|i| format!("m{i:02}.py")).collect();
    let mut rng = Lcg(0x5eed);
    for name in &names {
        let parts: Vec<&str> = (0..1 + rng.below(3)).map(|_| sources[rng.below(sources.len())].as_str()).collect();
        std::fs::write(dir.join(name), parts.join("\n")).unwrap();
    }
    let valid: Vec<String> = names
        .iter()
        .filter(|n| python(&dir, std::slice::from_ref(n)).is_ok_and(|o| o.status.success()))
        .cloned()
        .collect();
    assert!(valid.len() >= 30, "most generated modules are valid Python: {}", valid.len());
    for n in names.iter().filter(|n| !valid.contains(n)) {
        std::fs::remove_file(dir.join(n)).unwrap();
    }
    let run = npu_mem_in(&dir, &["scan", ".", "--fix", "--unsafe-fixes", "--format", "json", "--fail-on", "never"]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(report["fixed"].as_array().unwrap().len() > 50, "the modules had plenty to fix");
    let out = python(&dir, &valid).unwrap();
    assert!(out.status.success(), "a fixed module no longer parses: {}", String::from_utf8_lossy(&out.stderr));
}

/// Found on the corpus: the import inserted after an indented `import torch`
/// was written at column 0, which CPython rejects (tree-sitter does not).
#[test]
fn inserted_lines_keep_the_block_indentation() {
    let dir = temp_dir("fix-indent");
    let src = "def f():\n    import torch\n\n    if torch.cuda.is_available():\n        return 1\n";
    std::fs::write(dir.join("a.py"), src).unwrap();
    json_in(&dir, &["--fix", "--unsafe-fixes"]);
    let fixed = std::fs::read_to_string(dir.join("a.py")).unwrap();
    assert_eq!(
        fixed,
        "def f():\n    import torch\n    import torch_npu\n\n    if torch.npu.is_available():\n        return 1\n"
    );
}

/// DL002's fix pins the loader; up to torch 2.6 a pinned loader also needs
/// `pin_memory_device` (DL007), so the fix brings that along there and only there.
#[test]
fn pinning_fix_sets_the_pin_memory_device_where_the_target_needs_it() {
    let source = "from torch.utils.data import DataLoader\n\n\ndef make(ds):\n    return DataLoader(ds, batch_size=8, num_workers=2, persistent_workers=True)\n";
    for (target, wants_device) in [("2.1", true), ("2.6", true), ("2.14", false)] {
        let dir = temp_dir(&format!("pin-fix-{target}"));
        std::fs::write(dir.join("data.py"), source).unwrap();
        let run = npu_mem_in(&dir, &["scan", "data.py", "--target", target, "--fix", "--unsafe-fixes"]);
        assert_eq!(run.code, 0, "{target}: {} {}", run.stdout, run.stderr);
        let fixed = std::fs::read_to_string(dir.join("data.py")).unwrap();
        assert!(fixed.contains("pin_memory=True"), "{target}: {fixed}");
        assert_eq!(fixed.contains("pin_memory_device=\"npu\""), wants_device, "{target}: {fixed}");
        let rescan = npu_mem_in(&dir, &["scan", "data.py", "--target", target, "--format", "concise"]);
        assert!(!rescan.stdout.contains("DL007") && !rescan.stdout.contains("DL002"), "{target}: {}", rescan.stdout);
    }
}

#[test]
fn a_gbk_module_is_fixed_in_gbk_and_keeps_its_other_bytes() {
    let dir = temp_dir("fix-gbk");
    // "# 中文注释" in GBK: a comment no UTF-8 reader could decode.
    let comment: &[u8] = b"# \xd6\xd0\xce\xc4\xd7\xa2\xca\xcd\n";
    let declared =
        [b"# -*- coding: gbk -*-\n" as &[u8], comment, b"import torch\nx = torch.ones(2).cuda()  ", comment].concat();
    std::fs::write(dir.join("gbk.py"), &declared).unwrap();
    let run = npu_mem_in(&dir, &["scan", "gbk.py", "--fix", "--target", "2.1", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let want = [
        b"# -*- coding: gbk -*-\n" as &[u8],
        comment,
        b"import torch\nimport torch_npu\nx = torch.ones(2).npu()  ",
        comment,
    ]
    .concat();
    assert_eq!(std::fs::read(dir.join("gbk.py")).unwrap(), want, "edited in GBK, the comments untouched");
}

#[test]
fn a_gbk_launch_script_is_fixed_unless_its_encoding_would_change_other_bytes() {
    let dir = temp_dir("fix-gbk-shell");
    let script = |comment: &[u8]| [b"#!/bin/bash\n# " as &[u8], comment, b"\nexport CUDA_VISIBLE_DEVICES=0\n"].concat();
    // "中文" in GBK: read as GB18030, written back the same.
    std::fs::write(dir.join("gbk.sh"), script(b"\xd6\xd0\xce\xc4")).unwrap();
    // 0x80 reads as the euro sign in GB18030, which writes it as 0xA2E3:
    // fixing would change a byte the fix never meant to touch.
    std::fs::write(dir.join("lossy.sh"), script(b"\x80")).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--fix", "--fail-on", "never"]);
    let fixed = [b"#!/bin/bash\n# \xd6\xd0\xce\xc4" as &[u8], b"\nexport ASCEND_RT_VISIBLE_DEVICES=0\n"].concat();
    assert_eq!(std::fs::read(dir.join("gbk.sh")).unwrap(), fixed, "{}", run.stderr);
    assert_eq!(std::fs::read(dir.join("lossy.sh")).unwrap(), script(b"\x80"), "{}", run.stderr);
    assert!(run.stderr.contains("lossy.sh") && run.stderr.contains("would not give the same bytes"), "{}", run.stderr);
}

#[test]
fn classic_mac_line_ends_are_lines_and_survive_a_fix() {
    // Python reads a lone CR as a line break; files saved so are common in real ports.
    let dir = temp_dir("fix-lone-cr");
    let text = "import torch\rx = torch.ones(2).cuda()  # npu-mem: ignore[TX001] -- kept\ry = torch.ones(3).cuda()\r";
    std::fs::write(dir.join("mac.py"), text).unwrap();
    let report = json_in(&dir, &["--target", "2.1"]);
    assert_eq!(report["errors"], serde_json::json!([]), "no syntax error: {report}");
    let tx001: Vec<&Value> = report["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "TX001").collect();
    assert_eq!(tx001.len(), 1, "the suppressed line stays quiet: {report}");
    assert_eq!((tx001[0]["line"].as_u64(), tx001[0]["column"].as_u64()), (Some(3), Some(5)));
    let fixed = npu_mem_in(&dir, &["scan", ".", "--fix", "--target", "2.1", "--fail-on", "never"]);
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    let expected = "import torch\rimport torch_npu\rx = torch.ones(2).cuda()  # npu-mem: ignore[TX001] -- kept\ry = torch.ones(3).npu()\r";
    assert_eq!(std::fs::read_to_string(dir.join("mac.py")).unwrap(), expected);
}
