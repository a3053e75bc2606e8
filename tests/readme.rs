//! The README's rule table is the one `npu-mem rules` prints.

mod common;

#[test]
fn readme_rule_table_is_up_to_date() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("<!-- rules:start").expect("rules table start marker");
    let end = readme.find("<!-- rules:end -->").expect("rules table end marker");
    let documented: Vec<String> = readme[start..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| code"))
        .map(str::to_string)
        .collect();
    let listing = common::npu_mem(&["rules"]).stdout;
    let generated: Vec<String> = listing
        .lines()
        .map(|l| {
            let parts: Vec<&str> = l.split_whitespace().collect();
            let blocker = if l.contains("[blocker]") { ", blocker" } else { "" };
            format!("| {} | {} | {} | {}{} |", parts[0], parts[3], parts[1], parts[2], blocker)
        })
        .collect();
    assert_eq!(documented, generated, "regenerate the README rule table from `npu-mem rules`");
}
