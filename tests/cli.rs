//! The command line: exit codes, errors for bad input, robustness on hostile files.

mod common;

use common::{npu_mem, npu_mem_in, temp_dir};
use std::path::Path;

#[test]
fn exit_codes_follow_fail_on() {
    let dir = temp_dir("exit");
    std::fs::write(dir.join("a.py"), "import torch\nx = torch.ones(2)\ny = x.cuda()\n").unwrap();
    let d = dir.to_str().unwrap();
    assert_eq!(npu_mem(&["scan", d]).code, 1, "a warning fails the default gate");
    assert_eq!(npu_mem(&["scan", d, "--fail-on", "error"]).code, 0);
    assert_eq!(npu_mem(&["scan", d, "--fail-on", "never"]).code, 0);
    std::fs::write(dir.join("a.py"), "import torch\nx = torch.ones(2)\n").unwrap();
    assert_eq!(npu_mem(&["scan", d]).code, 0, "a clean file passes");
}

#[test]
fn usage_errors_exit_2_and_say_what_is_wrong() {
    let run = npu_mem(&["scan", "fixtures/demo", "--format", "xml"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("text") && run.stderr.contains("json") && run.stderr.contains("concise"),
        "{}",
        run.stderr
    );

    let run = npu_mem(&["scan", "does/not/exist"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("does/not/exist") && run.stderr.contains("no such file"), "{}", run.stderr);

    let run = npu_mem(&["scan", "fixtures/demo", "--target", "3.0"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("2.14"), "{}", run.stderr);
}

#[test]
fn the_last_format_wins() {
    // A pre-commit hook's `args` come after its entry's `--format concise`.
    let run = npu_mem(&["scan", "fixtures/demo", "--no-cache", "--format", "concise", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("a JSON report");
    assert!(!report["findings"].as_array().unwrap().is_empty(), "{report}");
}

#[test]
fn malformed_pack_names_file_line_column_and_field() {
    let dir = temp_dir("pack");
    let pack = dir.join("bad.toml");
    std::fs::write(&pack, "[pack]\nname = \"x\"\n\n[[rule]]\ncode = \"ORG001\"\nname = \"n\"\nsection = \"transfer\"\nseverity = \"loud\"\n").unwrap();
    let run = npu_mem(&["scan", "fixtures/demo", "--rules", pack.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("bad.toml:8:12"), "{}", run.stderr);
    assert!(run.stderr.contains("loud"), "{}", run.stderr);

    std::fs::write(&pack, "[pack]\nname = \"x\"\n\n[[rule]]\ncode = \"ORG001\"\nname = \"n\"\nsection = \"transfer\"\nseverity = \"info\"\nmessage = \"m\"\ndocs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }\nmatch = { string = \"(unclosed\" }\n").unwrap();
    let run = npu_mem(&["scan", "fixtures/demo", "--rules", pack.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("bad.toml:5") && run.stderr.contains("ORG001") && run.stderr.contains("match.string"),
        "{}",
        run.stderr
    );
}

/// A user's pack is checked as a user's even where its path is a built-in
/// pack's name (`rules/amp.toml` in the user's own project): its regexes are
/// compiled, and refused, when it loads.
#[test]
fn a_user_pack_at_a_builtin_packs_path_is_checked_as_a_users() {
    let dir = temp_dir("builtin-path");
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    std::fs::write(dir.join("rules/amp.toml"), "[pack]\nname = \"x\"\n\n[[rule]]\ncode = \"ORG001\"\nname = \"n\"\nsection = \"transfer\"\nseverity = \"info\"\nmessage = \"m\"\ndocs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }\nmatch = { string = \"(unclosed\" }\n").unwrap();
    std::fs::write(dir.join("t.py"), "import torch\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", "t.py", "--rules", "rules/amp.toml", "--no-cache"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("rules/amp.toml:5") && run.stderr.contains("match.string"), "{}", run.stderr);
}

/// A shell script whose `bash -c` quote is never closed before a
/// two-byte character aborted the whole scan (its script was cut inside
/// the character).
#[test]
fn an_unclosed_quote_in_a_shell_script_ends_no_scan() {
    let dir = temp_dir("unclosed-quote");
    std::fs::write(dir.join("run.sh"), "bash -c \"python train.py é\n").unwrap();
    std::fs::write(dir.join("train.py"), "import torch\ny = torch.ones(1).cuda()\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--format", "json", "--fail-on", "never", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(report["findings"].as_array().unwrap().iter().any(|f| f["path"] == "train.py"), "{report}");
}

#[test]
fn hostile_files_are_reported_and_the_scan_goes_on() {
    let dir = temp_dir("hostile");
    std::fs::write(dir.join("latin1.py"), b"import torch\nx = 'caf\xe9'\n").unwrap();
    std::fs::write(dir.join("nul.py"), b"import torch\x00\n").unwrap();
    std::fs::write(dir.join("empty.py"), b"").unwrap();
    std::fs::write(dir.join("broken.py"), "import torch\ndef f(:\n    y = x.cuda()\n").unwrap();
    // A symbolic link that an upload saved as a file holding its target.
    std::fs::write(dir.join("link.py"), "../../asr1/local/data_prep.py\n").unwrap();
    std::fs::write(dir.join("division.py"), "import torch\nx = 1/2\n").unwrap();
    let deep = format!("import torch\nx = {}1{}\ny = torch.ones(1).cuda()\n", "(".repeat(5000), ")".repeat(5000));
    std::fs::write(dir.join("deep.py"), deep).unwrap();
    let lists = format!(
        "import torch\nl = torch.utils.data.DataLoader(d, num_workers={}{})\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    std::fs::write(dir.join("deep_lists.py"), lists).unwrap();
    std::fs::create_dir_all(dir.join("pkg.py")).unwrap();
    std::fs::create_dir_all(dir.join("loop")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("..", dir.join("loop/up")).unwrap();

    let run = npu_mem_in(&dir, &["scan", ".", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let errors = report["errors"].as_array().unwrap();
    let find = |path: &str| {
        errors.iter().find(|e| e["path"] == path).unwrap_or_else(|| panic!("no error for {path}: {errors:?}"))
    };
    assert_eq!(find("latin1.py")["kind"], "skipped");
    assert!(find("latin1.py")["message"].as_str().unwrap().contains("UTF-8"));
    assert!(find("nul.py")["message"].as_str().unwrap().contains("binary"));
    assert_eq!(find("broken.py")["kind"], "partial");
    assert_eq!(find("link.py")["kind"], "skipped");
    assert!(find("link.py")["message"].as_str().unwrap().contains("symbolic link saved as a regular file"));
    assert!(!errors.iter().any(|e| e["path"] == "division.py"), "{errors:?}");
    for deep in ["deep.py", "deep_lists.py"] {
        assert_eq!(find(deep)["kind"], "partial", "nesting beyond the analysed depth is reported");
    }
    assert_eq!(errors.len(), 6, "{errors:?}");
    let codes: Vec<(String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (format!("{}:{}", f["path"].as_str().unwrap(), f["code"].as_str().unwrap()), f["line"].as_u64().unwrap())
        })
        .collect();
    assert!(
        codes.contains(&("broken.py:TX001".to_string(), 3)),
        "sound parts of a broken file are analysed: {codes:?}"
    );
    assert!(codes.contains(&("deep.py:TX001".to_string(), 3)), "{codes:?}");
    // Lists of lists of an empty list are a literal however deep: the
    // literal test has no depth bound (DL003 is for a non-literal count).
    assert!(codes.contains(&("deep_lists.py:DL002".to_string(), 2)), "{codes:?}");
    assert!(!codes.iter().any(|(c, _)| c == "deep_lists.py:DL003"), "a deep literal is a literal: {codes:?}");
    assert_eq!(report["files_scanned"], 5, "empty, division, broken, deep and deep_lists are scanned");
    assert!(run.stderr.contains("latin1.py") && run.stderr.contains("nul.py"), "{}", run.stderr);
}

#[test]
fn explicit_files_are_scanned_even_when_excluded_or_ignored() {
    let dir = temp_dir("explicit");
    std::fs::write(dir.join(".ignore"), "skipped.py\n").unwrap();
    std::fs::write(dir.join("skipped.py"), "import torch\ny = torch.ones(1).cuda()\n").unwrap();
    std::fs::write(dir.join("kept.py"), "import torch\ny = torch.ones(1).cuda()\n").unwrap();
    let count = |args: &[&str]| {
        let mut all = vec!["scan", "--format", "json", "--fail-on", "never"];
        all.extend_from_slice(args);
        let run = npu_mem_in(&dir, &all);
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        v["files_scanned"].as_u64().unwrap()
    };
    assert_eq!(count(&["."]), 1, ".ignore is honoured");
    assert_eq!(count(&[".", "--exclude", "kept.py"]), 0);
    assert_eq!(count(&["skipped.py"]), 1);
}

#[test]
fn rule_docs_come_from_the_packs() {
    let run = npu_mem(&["rule", "TX013"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("cuda-memory-submodule") && run.stdout.contains("torch.npu.memory.memory_allocated()"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Blocks automatic migration: yes"));
    // The sections in their documented order.
    let run = npu_mem(&["rule", "TX014"]);
    let titles = [
        "\nWhat it finds\n",
        "\nNot reported when\n",
        "\nWhy it matters on an Ascend NPU\n",
        "\nExample\n",
        "\nUse instead\n",
        "\nFix\n",
        "\nSources\n",
    ];
    let at: Vec<usize> =
        titles.iter().map(|t| run.stdout.find(t).unwrap_or_else(|| panic!("no {t:?} in\n{}", run.stdout))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "sections out of order:\n{}", run.stdout);
    assert!(run.stdout.contains("  - Info rather than a warning: a load that resumes a run"), "{}", run.stdout);
    assert!(run.stdout.contains("Unsafe fix: load to the CPU with `map_location=\"cpu\"`."), "{}", run.stdout);
    let run = npu_mem(&["rule", "XX999"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("npu-mem rules"));
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/transfer.toml").exists());
}

#[test]
fn rules_list_as_json_for_tools() {
    let run = npu_mem(&["rules", "--format", "json"]);
    assert_eq!(run.code, 0);
    let rules: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let rules = rules.as_array().unwrap();
    assert_eq!(rules.len(), npu_mem(&["rules"]).stdout.lines().count());
    let tx013 = rules.iter().find(|r| r["code"] == "TX013").unwrap();
    assert_eq!(tx013["blocker"], true);
    assert_eq!(tx013["fix"]["applicability"], "safe");
    assert!(tx013["docs"]["why"].as_str().unwrap().contains("transfer_to_npu"));
    let dl007 = rules.iter().find(|r| r["code"] == "DL007").unwrap();
    assert_eq!(dl007["target"], "<=2.6");
    assert!(dl007["docs"]["not_reported"][0].as_str().unwrap().contains("transfer_to_npu"));
    assert!(dl007["docs"]["sources"].as_array().is_some_and(|s| !s.is_empty()));
    let api007 = rules.iter().find(|r| r["code"] == "API007").unwrap();
    assert!(api007["docs"]["fix_note"].as_str().unwrap().contains("set_to_none"));
    assert_eq!(tx013["docs"]["fix_note"], serde_json::Value::Null);
}

/// A user pack may give only `what`, `why`, `example` and `instead`: it loads,
/// and `npu-mem rule` leaves out the sections it did not write.
#[test]
fn user_pack_docs_need_not_list_exceptions_or_sources() {
    let dir = temp_dir("user-docs");
    let pack = dir.join("p.toml");
    let rule = |docs: &str| {
        format!("[pack]\nname = \"x\"\n\n[[rule]]\ncode = \"ORG001\"\nname = \"n\"\nsection = \"transfer\"\nseverity = \"info\"\nmessage = \"m\"\ndocs = {{ {docs} }}\nmatch = {{ call = \"os.system\" }}\n")
    };
    std::fs::write(&pack, rule(r#"what = "w", why = "y", example = "e", instead = "i""#)).unwrap();
    let run = npu_mem(&["rule", "ORG001", "--rules", pack.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("What it finds\n  w") && run.stdout.contains("Fix\n  No automatic fix."),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("Not reported when") && !run.stdout.contains("Sources"), "{}", run.stdout);
    std::fs::write(
        &pack,
        rule(r#"what = "w", not_reported = ["under a guard"], why = "y", example = "e", instead = "i", fix_note = "none needed", sources = ["https://example.org"]"#),
    )
    .unwrap();
    let run = npu_mem(&["rule", "ORG001", "--rules", pack.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for part in
        ["Not reported when\n  - under a guard", "No automatic fix. none needed", "Sources\n  - https://example.org"]
    {
        assert!(run.stdout.contains(part), "no {part:?} in\n{}", run.stdout);
    }
}

/// A 100,000-level nested expression and a long single line with thousands of
/// findings are scanned without a stack overflow; findings on a line longer
/// than 1,000 bytes carry no source excerpt (the fix for a 10 MB line whose
/// 450,000 findings each copied it, which ran out of memory).
#[test]
fn extreme_nesting_and_long_lines_are_scanned() {
    let dir = temp_dir("extreme");
    let deep = format!("import torch\nx = {}1{}\ny = torch.ones(1).cuda()\n", "(".repeat(100_000), ")".repeat(100_000));
    std::fs::write(dir.join("deep.py"), deep).unwrap();
    let long = format!("import torch\nx = [{}]\n", "m.cuda(), ".repeat(20_000));
    std::fs::write(dir.join("long.py"), long).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let on = |path: &str| findings.iter().filter(|f| f["path"] == path && f["code"] == "TX001").count();
    assert_eq!((on("deep.py"), on("long.py")), (1, 20_000));
    let partial: Vec<&str> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "partial" && e["message"].as_str().unwrap().contains("nested more than 1000 levels"))
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(partial, ["deep.py"], "only the deep file says what it left out");
    let text = npu_mem_in(&dir, &["scan", "long.py", "--no-cache", "--select", "TX001", "--color", "never"]).stdout;
    assert!(!text.contains("m.cuda(), m.cuda()"), "no excerpt of the long line");
}

/// Version tests and CUDA-toolkit tests are read through the same bounded
/// walk as the rest: a 100,000-level `not` chain or parenthesised test in a
/// file that reads `torch.__version__` overflowed the stack, and a deeply
/// nested `x if CUDA_HOME else (...)` in a build script was scanned once per
/// level.
#[test]
fn deeply_nested_version_and_toolkit_tests_are_scanned() {
    let dir = temp_dir("deep-tests");
    let tail = "print(torch.__version__)\ny = torch.ones(1).cuda()\n";
    let nots = format!("import torch\nif {}x:\n    pass\n{tail}", "not ".repeat(100_000));
    std::fs::write(dir.join("nots.py"), nots).unwrap();
    let parens = format!("import torch\nif {}x{}:\n    pass\n{tail}", "(".repeat(100_000), ")".repeat(100_000));
    std::fs::write(dir.join("parens.py"), parens).unwrap();
    let build = format!("src = ['k.cu']\ns = {}0{}\n", "(1 if CUDA_HOME else ".repeat(20_000), ")".repeat(20_000));
    std::fs::write(dir.join("setup.py"), build).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let lines = |path: &str| -> Vec<u64> {
        findings
            .iter()
            .filter(|f| f["path"] == path && f["code"] == "TX001")
            .map(|f| f["line"].as_u64().unwrap())
            .collect()
    };
    assert_eq!((lines("nots.py"), lines("parens.py")), (vec![5], vec![5]));
}

/// Found by the fuzzer: each call of a long chain inspected the whole chain
/// below it, so 13,679 chained `.cuda()` calls took 74 s. The analysis now
/// stops at a fixed depth and says so.
#[test]
fn long_call_chains_are_analysed_to_a_bounded_depth() {
    let dir = temp_dir("chain");
    let chain = format!("import torch\nx = m{}\ny = torch.ones(1).cuda()\n", ".cuda()".repeat(3_000));
    std::fs::write(dir.join("chain.py"), chain).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let lines: Vec<u64> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "TX001")
        .map(|f| f["line"].as_u64().unwrap())
        .collect();
    // The chain (one finding: TX001 reports the first `.cuda()` of a chain) and line 3.
    assert_eq!(lines, [2, 3]);
    assert!(run.stderr.contains("chain.py: code near line 2 is nested more than 1000 levels deep"), "{}", run.stderr);
    // The fixer re-analyses after every pass (the fuzzer's second find: 81 s
    // with an ancestor walk that asked tree-sitter for each parent). One
    // `.cuda()` of the chain is fixed per pass, so it cannot settle.
    let diff = npu_mem_in(&dir, &["scan", "chain.py", "--no-cache", "--diff"]);
    assert_eq!(diff.code, 0, "nothing it could write: {}", diff.stderr);
    assert!(diff.stderr.contains("chain.py: fixes did not settle after 8 passes"), "{}", diff.stderr);
}

/// tree-sitter's error recovery can take minutes on long broken lines (the
/// fuzzer found 52 s for one 827 KB file); parsing stops at a time limit and
/// the file is reported as skipped. The limit is shortened here to 0 ms.
#[test]
fn a_parse_over_the_time_limit_skips_the_file_and_says_why() {
    let dir = temp_dir("parse-limit");
    std::fs::write(dir.join("big.py"), "import torch\nx = torch.ones(1).cuda()\n".repeat(500)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_npu-mem"))
        .args(["scan", ".", "--no-cache", "--format", "json", "--fail-on", "never"])
        .env("NPU_MEM_PARSE_LIMIT_MS", "0")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["errors"][0]["path"], "big.py");
    assert_eq!(report["errors"][0]["kind"], "skipped");
    assert!(report["errors"][0]["message"].as_str().unwrap().contains("parsing stops after 20 s"));
    assert_eq!(report["findings"].as_array().unwrap().len(), 0);
}

/// A user pack can match shell commands; without `triggers` such a rule is a
/// pack error that says what to add.
#[test]
fn shell_command_rules_in_user_packs() {
    let dir = temp_dir("shell-command");
    std::fs::write(
        dir.join("launch.sh"),
        "export X=1\nmpirun -np 8 python train.py\nif mpirun --version; then :; fi\n",
    )
    .unwrap();
    let pack = dir.join("org.toml");
    let rule = "[pack]\nname = \"org\"\n\n[[rule]]\ncode = \"ORG001\"\nname = \"no-mpirun\"\nsection = \"transfer\"\nseverity = \"info\"\nmessage = \"`{text}`\"\n{triggers}docs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }\nmatch = { shell_command = '^mpirun\\s' }\n";
    std::fs::write(&pack, rule.replace("{triggers}", "triggers = [\"mpirun\"]\n")).unwrap();
    let run = npu_mem(&[
        "scan",
        dir.to_str().unwrap(),
        "--rules",
        pack.to_str().unwrap(),
        "--select",
        "ORG001",
        "--format",
        "concise",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().filter(|l| l.contains("ORG001")).collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    assert!(lines[0].contains("launch.sh:2:1") && lines[0].contains("`mpirun -np 8 python train.py`"), "{}", lines[0]);

    std::fs::write(&pack, rule.replace("{triggers}", "")).unwrap();
    let run = npu_mem(&["scan", dir.to_str().unwrap(), "--rules", pack.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("ORG001") && run.stderr.contains("needs `triggers`"), "{}", run.stderr);
}

#[test]
fn gbk_files_are_scanned_where_python_or_the_shell_would_run_them() {
    let dir = temp_dir("gbk");
    // "中文" in GBK, in a string on the line of a finding: columns count characters.
    let module = b"# coding: gbk\nimport torch\nx = '\xd6\xd0\xce\xc4'; y = torch.ones(2).cuda()\nif __name__ == '__main__':\n    pass\n";
    std::fs::write(dir.join("train.py"), module).unwrap();
    std::fs::write(dir.join("undeclared.py"), b"import torch\nx = '\xd6\xd0\xce\xc4'\n").unwrap();
    std::fs::write(dir.join("other.py"), "import torch\nif __name__ == '__main__':\n    y = torch.ones(2).cuda()\n")
        .unwrap();
    // The only launch script has a GBK comment: it still starts train.py, so
    // other.py is a script nothing starts.
    std::fs::write(dir.join("run.sh"), b"#!/bin/bash\n# \xd6\xd0\xce\xc4\npython train.py\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--format", "json", "--fail-on", "never", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let tx001 = |path: &str| {
        report["findings"].as_array().unwrap().iter().find(|f| f["path"] == path && f["code"] == "TX001").cloned()
    };
    let in_gbk = tx001("train.py").expect("the GBK module is scanned");
    assert_eq!((in_gbk["line"].as_u64(), in_gbk["column"].as_u64()), (Some(3), Some(15)), "{in_gbk}");
    assert_eq!(in_gbk["unlaunched"], false, "started by run.sh: {in_gbk}");
    assert_eq!(tx001("other.py").expect("other.py is scanned")["unlaunched"], true, "the GBK script was read");
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "only the undeclared module is skipped: {errors:?}");
    assert_eq!(errors[0]["path"], "undeclared.py");
    assert!(errors[0]["message"].as_str().unwrap().contains("coding: gbk"), "{errors:?}");
}

#[test]
fn a_fix_paired_with_an_unknown_rule_is_refused() {
    let dir = temp_dir("pack-together");
    let pack = dir.join("pair.toml");
    let rule = "[pack]\nname = \"x\"\n\n[[rule]]\ncode = \"ORG001\"\nname = \"n\"\nsection = \"transfer\"\nseverity = \"info\"\nmessage = \"m\"\ndocs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }\nmatch = { method = \"cuda\" }\n[rule.fix]\napplicability = \"safe\"\ndescription = \"d\"\nedits = [{ on = \"node\", replace = \"x\" }]\n";
    std::fs::write(&pack, format!("{rule}together = {{ codes = [\"ORG404\"], why = \"w\" }}\n")).unwrap();
    let run = npu_mem(&["scan", "fixtures/demo", "--no-cache", "--rules", pack.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("ORG001") && run.stderr.contains("ORG404 in `together`"), "{}", run.stderr);
    // Naming a defined rule is accepted.
    std::fs::write(&pack, format!("{rule}together = {{ codes = [\"TX001\"], why = \"w\" }}\n")).unwrap();
    let run =
        npu_mem(&["scan", "fixtures/demo", "--no-cache", "--rules", pack.to_str().unwrap(), "--fail-on", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn an_edit_needs_exactly_one_action() {
    let dir = temp_dir("pack-edit-actions");
    let pack = dir.join("edit.toml");
    let rule = |edit: &str| {
        format!(
            "[pack]\nname = \"x\"\n\n[[rule]]\ncode = \"ORG001\"\nname = \"n\"\nsection = \"transfer\"\n\
             severity = \"info\"\nmessage = \"m\"\ndocs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n\
             match = {{ method = \"cuda\" }}\n[rule.fix]\napplicability = \"safe\"\ndescription = \"d\"\nedits = [{edit}]\n"
        )
    };
    let scan = |edit: &str| {
        std::fs::write(&pack, rule(edit)).unwrap();
        npu_mem(&["scan", "fixtures/demo", "--no-cache", "--rules", pack.to_str().unwrap(), "--fail-on", "never"])
    };
    for edit in ["{ on = \"node\" }", "{ on = \"node\", replace = \"x\", remove_arg = true }"] {
        let run = scan(edit);
        assert_eq!(run.code, 2, "{edit}: {}", run.stderr);
        assert!(run.stderr.contains("edits[0]") && run.stderr.contains("replace, sub, sub_all"), "{}", run.stderr);
    }
    assert_eq!(scan("{ on = \"node\", remove_arg = true }").code, 0);
}
