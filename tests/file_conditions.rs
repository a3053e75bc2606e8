//! Conditions on the whole file (`file_has`) wherever a matcher may stand:
//! as one alternative of `any` among others, negated by `unless`, and in
//! `fix.when` and `downgrade.when`, which are decided once the file has been
//! walked, so a use after the match counts.

mod common;

use serde_json::Value;

/// One warning rule `FC001` anchored on calls of `target(...)`, with the
/// given extra TOML lines after `[rule.match]`'s anchor.
fn pack(extra: &str) -> String {
    format!(
        "[pack]\nname = \"file-conditions\"\n\n[[rule]]\ncode = \"FC001\"\nname = \"n\"\nsection = \"memory\"\n\
         severity = \"warning\"\nmessage = \"m\"\n\
         docs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n{extra}\n"
    )
}

/// `(line, severity, fix applicability or "none")` of each FC001 finding on `code`.
fn findings(name: &str, pack_text: &str, code: &str) -> Vec<(u64, String, String)> {
    let run = common::scan_with_pack(name, pack_text, code, "FC");
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let fix = f["fix"]["applicability"].as_str().unwrap_or("none").to_string();
            (f["line"].as_u64().unwrap(), f["severity"].as_str().unwrap().to_string(), fix)
        })
        .collect()
}

const EITHER_MARKER: &str = "[rule.match]\ncall = \"target\"\n\
    any = [{ file_has = { call = \"marker_a\" } }, { file_has = { call = \"marker_b\" } }]\n";

#[test]
fn any_of_file_conditions_holds_when_any_of_them_does() {
    let pack = pack(EITHER_MARKER);
    let warning = |line| (line, "warning".to_string(), "none".to_string());
    // Only the second alternative's fact is true: before, only the first one was tried.
    assert_eq!(findings("any-b", &pack, "target()\nmarker_b()\n"), vec![warning(1)]);
    assert_eq!(findings("any-a", &pack, "marker_a()\ntarget()\n"), vec![warning(2)]);
    assert_eq!(findings("any-none", &pack, "target()\nother()\n"), vec![]);
}

#[test]
fn unless_any_of_file_conditions_drops_the_match_when_any_holds() {
    let pack = pack(
        "[rule.match]\ncall = \"target\"\n\
         unless = { any = [{ file_has = { call = \"marker_a\" } }, { file_has = { call = \"marker_b\" } }] }\n",
    );
    assert_eq!(findings("unless-b", &pack, "target()\nmarker_b()\n"), vec![]);
    assert_eq!(findings("unless-a", &pack, "target()\nmarker_a()\n"), vec![]);
    assert_eq!(
        findings("unless-none", &pack, "target()\nother()\n"),
        vec![(1, "warning".to_string(), "none".to_string())]
    );
}

#[test]
fn fix_when_reads_the_whole_file() {
    let pack = pack(
        "[rule.match]\ncall = \"target\"\n\
         [rule.fix]\napplicability = \"safe\"\ndescription = \"rename\"\n\
         edits = [{ on = \"callee\", replace = \"renamed\" }]\n\
         when = { unless = { any = [{ file_has = { call = \"marker_a\" } }, { file_has = { call = \"marker_b\" } }] } }\n",
    );
    let with = |fix: &str| vec![(1, "warning".to_string(), fix.to_string())];
    assert_eq!(findings("fix-clean", &pack, "target()\nother()\n"), with("safe"));
    // A marker after the match, in either alternative, withholds the fix.
    assert_eq!(findings("fix-a", &pack, "target()\nmarker_a()\n"), with("none"));
    assert_eq!(findings("fix-b", &pack, "target()\nmarker_b()\n"), with("none"));
}

#[test]
fn downgrade_when_reads_the_whole_file() {
    let pack = pack(
        "[rule.match]\ncall = \"target\"\n\
         [rule.downgrade]\nto = \"info\"\nwhen = { file_has = { call = \"marker_a\" } }\n",
    );
    assert_eq!(
        findings("downgrade-yes", &pack, "target()\nmarker_a()\n"),
        vec![(1, "info".to_string(), "none".to_string())]
    );
    assert_eq!(
        findings("downgrade-no", &pack, "target()\nmarker_b()\n"),
        vec![(1, "warning".to_string(), "none".to_string())]
    );
}

#[test]
fn a_condition_on_a_fact_another_rule_tests_first_is_still_read_from_the_file() {
    // The first rule registers `file_has = { call = "marker_a" }`; the second
    // rule's `downgrade.when` writes the same fact and so registers nothing.
    // It must still wait for the whole file (it once crashed the scan).
    let text = pack(
        "[rule.match]\ncall = \"other\"\nfile_has = { call = \"marker_a\" }\n\n\
         [[rule]]\ncode = \"FC002\"\nname = \"n2\"\nsection = \"memory\"\nseverity = \"warning\"\nmessage = \"m\"\n\
         docs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }\n\
         [rule.match]\ncall = \"target\"\n\
         [rule.downgrade]\nto = \"info\"\nwhen = { file_has = { call = \"marker_a\" } }\n",
    );
    let severities = |name: &str, code: &str| -> Vec<(u64, String)> {
        let run = common::scan_with_pack(name, &text, code, "FC002");
        assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let found = report["findings"].as_array().unwrap().iter();
        found.map(|f| (f["line"].as_u64().unwrap(), f["severity"].as_str().unwrap().to_string())).collect()
    };
    assert_eq!(severities("shared-fact-yes", "target()\nmarker_a()\n"), [(1, "info".to_string())]);
    assert_eq!(severities("shared-fact-no", "target()\nmarker_b()\n"), [(1, "warning".to_string())]);
}
