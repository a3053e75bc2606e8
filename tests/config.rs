//! Configuration files: discovery, precedence, validation and --show-settings.

mod common;

use common::{npu_mem_in, temp_dir};

fn project(name: &str, config_name: &str, config: &str) -> common::TempDir {
    let dir = common::temp_dir(&format!("cfg-{name}"));
    std::fs::create_dir_all(dir.join("src/tests")).unwrap();
    std::fs::write(dir.join(config_name), config).unwrap();
    // In a loop, where TX004 reports the host allocation.
    let code = "import torch\nfor _ in range(2): x = torch.ones(2).cuda()\nl = torch.utils.data.DataLoader(x)\n";
    std::fs::write(dir.join("src/train.py"), code).unwrap();
    std::fs::write(dir.join("src/tests/test_train.py"), code).unwrap();
    dir
}

fn codes(dir: &std::path::Path, args: &[&str]) -> (Vec<String>, serde_json::Value, i32) {
    let mut all = vec!["scan", "src", "--format", "json"];
    all.extend_from_slice(args);
    let run = npu_mem_in(dir, &all);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let codes = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}:{}", f["path"].as_str().unwrap(), f["code"].as_str().unwrap()))
        .collect();
    (codes, v, run.code)
}

#[test]
fn pyproject_settings_apply_and_flags_override_them() {
    let dir = project(
        "py",
        "pyproject.toml",
        "[project]\nname = \"demo\"\n\n[tool.npu-mem]\nignore = [\"DL\"]\ntarget = \"2.14\"\nper-file-ignores = { \"test_*.py\" = [\"TX004\"] }\nseverity = { TX001 = \"info\" }\nfail-on = \"warning\"\n",
    );
    let (found, v, code) = codes(&dir, &[]);
    assert_eq!(v["target"], "2.14");
    assert!(!found.iter().any(|c| c.contains(":DL")), "{found:?}");
    assert!(
        found.contains(&"src/train.py:TX004".to_string())
            && !found.contains(&"src/tests/test_train.py:TX004".to_string())
    );
    assert!(v["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "TX001").all(|f| f["severity"] == "info"));
    assert_eq!(code, 1, "TX004 is still a warning");
    let (found, v, _) = codes(&dir, &["--target", "2.6", "--ignore", "TX", "--select", "TX,DL"]);
    assert_eq!(v["target"], "2.6", "the command line wins");
    assert!(found.iter().all(|c| c.contains(":DL")), "{found:?}");
}

#[test]
fn npu_mem_toml_is_found_above_the_scanned_path() {
    let dir = project("toml", "npu-mem.toml", "select = [\"TX001\"]\n");
    let run = npu_mem_in(&dir.join("src"), &["scan", ".", "--format", "concise", "--fail-on", "never"]);
    assert!(run.stdout.lines().all(|l| l.contains(" TX001 ")) && !run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn invalid_configuration_names_file_line_and_key() {
    let dir = project("bad", ".npu-mem.toml", "select = [\"TX001\"]\nignroe = [\"DL\"]\n");
    let run = npu_mem_in(&dir, &["scan", "src"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains(".npu-mem.toml:2") && run.stderr.contains("ignroe"), "{}", run.stderr);

    std::fs::write(dir.join(".npu-mem.toml"), "target = 2.14\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", "src"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains(".npu-mem.toml:1") && run.stderr.contains("string"), "{}", run.stderr);

    std::fs::write(dir.join(".npu-mem.toml"), "select = [\"TX001\"]\nignore = [\"XYZ9\"]\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", "src"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains(".npu-mem.toml:2") && run.stderr.contains("`ignore` names `XYZ9`"), "{}", run.stderr);
}

#[test]
fn show_settings_says_where_each_value_came_from() {
    let dir = project("show", "npu-mem.toml", "# project rules\n\ntarget = \"2.6\"\nignore = [\"API\"]\n");
    let run = npu_mem_in(&dir, &["scan", "src", "--show-settings", "--fail-on", "error"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("target = 2.6  (") && run.stdout.contains("npu-mem.toml:3)"), "{}", run.stdout);
    assert!(run.stdout.contains("ignore = [API]  (") && run.stdout.contains("npu-mem.toml:4)"), "{}", run.stdout);
    assert!(run.stdout.contains("fail-on = error  (command line)"), "{}", run.stdout);
    assert!(run.stdout.contains("select = []  (default)"), "{}", run.stdout);
}

#[test]
fn an_empty_code_is_an_error_not_a_match_for_every_rule() {
    let dir = project("empty", ".npu-mem.toml", "");
    let cases = [
        ("select = [\"TX\"]\nignore = [\"\"]\n", ":2:", "`ignore`"),
        ("# all\nselect = [\"\"]\n", ":2:", "`select`"),
        ("per-file-ignores = { \"test_*.py\" = [\"TX004\"], \"*.py\" = [\n  \"\",\n] }\n", ":2:", "`per-file-ignores`"),
        ("severity = { \"\" = \"info\" }\n", ":1:", "`severity`"),
    ];
    for (config, line, key) in cases {
        std::fs::write(dir.join(".npu-mem.toml"), config).unwrap();
        let run = npu_mem_in(&dir, &["scan", "src"]);
        assert_eq!(run.code, 2, "{config}: {}", run.stdout);
        let at = format!(".npu-mem.toml{line} {key} names an empty code");
        assert!(run.stderr.contains(&at), "{config}: {}", run.stderr);
    }
    std::fs::write(dir.join(".npu-mem.toml"), "ignore = [\"DL\"]\n").unwrap();
    for flag in ["--select", "--ignore"] {
        for value in ["", "TX,"] {
            let run = npu_mem_in(&dir, &["scan", "src", flag, value]);
            assert_eq!(run.code, 2, "{flag} {value:?}: {}", run.stdout);
            let said = format!("error: `{flag}` names an empty code");
            assert!(run.stderr.contains(&said) && !run.stderr.contains(".npu-mem.toml"), "{}", run.stderr);
        }
    }
}

#[test]
fn severity_overrides_apply_by_prefix_and_the_most_specific_wins() {
    let dir = project("sevprefix", "npu-mem.toml", "severity = { TX = \"info\", TX004 = \"error\" }\n");
    let (_, v, code) = codes(&dir, &["--select", "TX"]);
    let findings = v["findings"].as_array().unwrap();
    let severity = |code: &str| -> Vec<&str> {
        findings.iter().filter(|f| f["code"] == code).map(|f| f["severity"].as_str().unwrap()).collect()
    };
    assert!(!severity("TX001").is_empty() && severity("TX001").iter().all(|s| *s == "info"), "{findings:?}");
    assert!(!severity("TX004").is_empty() && severity("TX004").iter().all(|s| *s == "error"), "{findings:?}");
    assert_eq!(code, 1);
    std::fs::write(dir.join("npu-mem.toml"), "severity = { TX = \"info\" }\n").unwrap();
    let (_, v, code) = codes(&dir, &["--select", "TX"]);
    assert!(v["findings"].as_array().unwrap().iter().all(|f| f["severity"] == "info"), "{v}");
    assert_eq!(code, 0, "every TX finding is info: the gate passes");
}

#[test]
fn an_invalid_per_file_ignores_glob_names_file_and_line() {
    let config = "target = \"2.6\"\n[per-file-ignores]\n\"src/{tests\" = [\"TX004\"]\n";
    let dir = project("badglob", ".npu-mem.toml", config);
    let run = npu_mem_in(&dir, &["scan", "src"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains(".npu-mem.toml:3: `per-file-ignores` glob `src/{tests`"), "{}", run.stderr);
}

#[test]
fn paths_in_the_configuration_are_relative_to_its_directory() {
    let config = "per-file-ignores = { \"src/tests/*\" = [\"TX\", \"DL\"] }\nexclude = [\"src/vendor\"]\n";
    let root = project("relative", "npu-mem.toml", config);
    std::fs::create_dir_all(root.join("src/vendor")).unwrap();
    std::fs::copy(root.join("src/train.py"), root.join("src/vendor/lib.py")).unwrap();
    std::fs::write(root.join("src/train.py"), "import os\n").unwrap();
    let parent = root.parent().unwrap();
    let name = root.file_name().unwrap().to_str().unwrap();
    let (from_parent, from_parent_src) = (name.to_string(), format!("{name}/src"));
    let runs = [
        (parent, from_parent.as_str(), 2),
        (parent, from_parent_src.as_str(), 2),
        (root.as_path(), ".", 2),
        (root.as_path(), "src", 2),
        (&root.join("src"), ".", 2),
        (&root.join("src/tests"), ".", 1),
    ];
    for (cwd, path, files) in runs {
        let run = npu_mem_in(cwd, &["scan", path, "--format", "json", "--fail-on", "info", "--no-cache"]);
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let at = format!("`scan {path}` in {}", cwd.display());
        assert_eq!(v["findings"], serde_json::json!([]), "{at}: per-file-ignores apply");
        assert_eq!(v["files_scanned"], files, "{at}: src/vendor is excluded");
        assert_eq!(run.code, 0, "{at}: {}", run.stderr);
    }

    // `--exclude` (which replaces the file's `exclude`) stays relative to the current directory.
    let run = npu_mem_in(parent, &["scan", name, "--format", "json", "--no-cache", "--exclude", "src/tests"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["files_scanned"], 3, "not relative to the configuration file: {}", run.stdout);
    let excluded = format!("{name}/src/tests");
    let run = npu_mem_in(parent, &["scan", name, "--format", "json", "--no-cache", "--exclude", &excluded]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["files_scanned"], 2, "relative to the current directory: {}", run.stdout);
}

#[test]
fn an_invalid_exclude_glob_names_file_and_line() {
    let dir =
        project("badexclude", ".npu-mem.toml", "target = \"2.6\"\nextend-exclude = [\n  \"build\",\n  \"a/{b\",\n]\n");
    let run = npu_mem_in(&dir, &["scan", "src"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains(".npu-mem.toml:4: `extend-exclude` glob `a/{b`"), "{}", run.stderr);
    assert!(!run.stderr.contains("--exclude"), "{}", run.stderr);
    let run = npu_mem_in(&dir, &["scan", "src", "--exclude", "c/{d"]);
    assert!(run.stderr.contains("`--exclude` glob `c/{d`"), "{}", run.stderr);
}

#[test]
fn per_file_ignores_star_stays_in_one_directory_and_double_star_crosses() {
    let root = temp_dir("per-file-star");
    for dir in ["tests", "tests/unit"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        std::fs::write(root.join(dir).join("t.py"), "import torch\nx = torch.ones(2).cuda()\n").unwrap();
    }
    let flagged = |table: &str| -> Vec<String> {
        std::fs::write(root.join(".npu-mem.toml"), format!("per-file-ignores = {{ {table} }}\n")).unwrap();
        let run = npu_mem_in(&root, &["scan", ".", "--format", "json", "--select", "TX001", "--no-cache"]);
        let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr));
        let mut paths: Vec<String> =
            v["findings"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
        paths.dedup();
        paths
    };
    assert_eq!(flagged(r#""tests/*" = ["TX001"]"#), ["tests/unit/t.py"], "`*` does not cross `/`");
    assert_eq!(flagged(r#""tests/**" = ["TX001"]"#), Vec::<String>::new(), "`**` does");
    assert_eq!(flagged(r#""t.py" = ["TX001"]"#), Vec::<String>::new(), "a glob without `/` matches names anywhere");
    assert_eq!(flagged(r#""tests/{unit,x}/*.py" = ["TX001"]"#), ["tests/t.py"]);
}
