//! SARIF output: GitHub code scanning's requirements (checked with Microsoft's
//! SARIF Multitool from the npm registry), relative locations, and
//! fingerprints that survive edits elsewhere in the file.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sarif(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["scan", "--format", "sarif", "--fail-on", "never"];
    all.extend_from_slice(args);
    let run = common::npu_mem_in(dir, &all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("SARIF is JSON")
}

/// Installs the validator once into the cargo target directory (npm registry).
fn multitool() -> PathBuf {
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sarif-multitool");
    let binary = prefix.join("node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    if !binary.exists() {
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg("@microsoft/sarif-multitool@5")
            .status()
            .expect("npm is needed to install the SARIF validator (@microsoft/sarif-multitool)");
        assert!(status.success(), "npm install @microsoft/sarif-multitool failed");
    }
    // npm may skip the package's postinstall `chmod u+x`.
    let _ = Command::new("chmod").arg("u+x").arg(&binary).status();
    binary
}

#[test]
#[ignore = "installs the SARIF Multitool from the npm registry; .ci/run runs it with `cargo test -- --ignored`"]
fn demo_sarif_passes_github_and_sarif_validation() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("demo.sarif");
    let run =
        common::npu_mem(&["scan", "fixtures/demo", "--fail-on", "never", "--output-sarif", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let output = Command::new(multitool())
        .args(["validate", "--rule-kind", "Gh;Sarif"])
        .arg(&out)
        .output()
        .expect("the SARIF Multitool runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let problems: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(": error ") || l.contains(": warning "))
        // The one field only a published project page can fill (Cargo.toml `homepage`).
        .filter(|l| !l.contains("'informationUri'"))
        .collect();
    assert!(problems.is_empty(), "SARIF Multitool:\n{}", problems.join("\n"));
    assert!(text.contains("Analysis completed successfully"), "{text}");
}

#[test]
fn results_point_at_rules_and_relative_files() {
    let log = sarif(Path::new(env!("CARGO_MANIFEST_DIR")), &["fixtures/demo"]);
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let listed = common::npu_mem(&["rules"]).stdout.lines().count();
    assert_eq!(rules.len(), listed, "every rule enabled for the target is described");
    assert!(rules.iter().all(|r| r["help"]["markdown"].as_str().is_some_and(|m| m.contains("Why it matters"))));
    // The rule docs' exceptions and sources reach the viewer too.
    let tx014 = rules.iter().find(|r| r["id"] == "TX014").unwrap();
    assert!(tx014["fullDescription"]["text"].as_str().unwrap().contains("\n\nNot reported when:\n- "));
    for help in [&tx014["help"]["markdown"], &tx014["help"]["text"]] {
        assert!(help.as_str().unwrap().contains("Not reported when") && help.as_str().unwrap().contains("Sources"));
    }
    for r in run["results"].as_array().unwrap() {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
        let loc = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(loc["uriBaseId"], "SRCROOT");
        assert!(loc["uri"].as_str().unwrap().starts_with("fixtures/demo/"));
    }
    assert!(run["originalUriBaseIds"]["SRCROOT"]["uri"].as_str().unwrap().starts_with("file:///"));
}

#[test]
fn fingerprints_survive_lines_added_above() {
    let dir = common::temp_dir("fp");
    let original = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo/train.py")).unwrap();
    std::fs::write(dir.join("train.py"), &original).unwrap();
    let prints = |log: &Value| -> Vec<(String, String)> {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["ruleId"].as_str().unwrap().to_string(),
                    r["partialFingerprints"]["npuMemFindingHash/v1"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let before = prints(&sarif(&dir, &["train.py"]));
    std::fs::write(dir.join("train.py"), format!("# a new header comment\nimport sys\n\n{original}")).unwrap();
    let after = sarif(&dir, &["train.py"]);
    assert!(!before.is_empty());
    assert_eq!(before, prints(&after), "fingerprints do not depend on line numbers");
    let first_line = after["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"].as_u64();
    assert!(first_line.unwrap() > 3, "while the reported lines did move");
}

#[test]
fn results_say_why_they_are_advice_and_why_a_fix_is_withheld() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let log = sarif(root, &["--no-cache", "fixtures/launches", "fixtures/guarded-branches"]);
    let json = common::scan_json(&["--no-cache", "fixtures/launches", "fixtures/guarded-branches"]);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let findings = json["findings"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());
    let (mut advice, mut withheld) = (0, 0);
    for (r, f) in results.iter().zip(findings) {
        let message = r["message"]["text"].as_str().unwrap();
        let properties = &r["properties"];
        assert_eq!(properties["advice"], f["advice"], "{r}");
        assert_eq!(properties["migrationBlocker"] == true, f["blocker"] == true, "{r}");
        match properties["adviceReason"].as_str() {
            Some(reason) => {
                assert!(message.ends_with(&format!("(advice: {reason})")), "{message}");
                advice += 1;
            }
            None => assert!(!message.contains("(advice: "), "{message}"),
        }
        if f["advice"] == "unlaunched-file" {
            assert_eq!(properties["adviceReason"], "in a file that no launch script starts or imports");
        }
        assert_eq!(properties.get("fixWithheld"), f.get("fix_withheld"), "{r}");
        withheld += usize::from(f.get("fix_withheld").is_some());
    }
    assert!(advice >= 10, "fixtures/launches has advice of several kinds: {advice}");
    assert!(withheld >= 3, "fixtures/guarded-branches has withheld fixes: {withheld}");
}
