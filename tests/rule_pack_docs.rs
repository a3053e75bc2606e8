//! The worked example of docs/rule-packs.md runs exactly as written there.

mod common;

/// The fenced block that follows `<!-- marker -->` in the document.
fn block_after(doc: &str, marker: &str) -> String {
    let start = doc.find(&format!("<!-- {marker} -->")).unwrap_or_else(|| panic!("no {marker} block"));
    let rest = &doc[start..];
    let open = rest.find("```").unwrap();
    let body_start = open + rest[open..].find('\n').unwrap() + 1;
    let close = body_start + rest[body_start..].find("```").unwrap();
    rest[body_start..close].to_string()
}

#[test]
fn worked_example_user_pack_works_as_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rule-packs.md")).unwrap();
    let dir = common::temp_dir("doc");
    std::fs::write(dir.join("org-rules.toml"), block_after(&doc, "example-pack")).unwrap();
    std::fs::write(dir.join("train.py"), block_after(&doc, "example-code")).unwrap();
    let run = common::npu_mem_in(&dir, &["scan", "train.py", "--rules", "org-rules.toml", "--format", "concise"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let own: Vec<&str> = run.stdout.lines().filter(|l| l.contains(": ORG")).collect();
    let documented = block_after(&doc, "example-output");
    let documented: Vec<&str> = documented.lines().collect();
    assert_eq!(own, documented);
}

#[test]
fn raw_query_escape_hatch_works_with_context_predicates() {
    let dir = common::temp_dir("query");
    let pack = r#"
[pack]
name = "q"

[[rule]]
code = "Q001"
name = "print-in-loop"
section = "transfer"
severity = "info"
triggers = ["print"]
message = "`{text}` prints inside a loop"
docs = { what = "w", why = "y", example = "e", instead = "i" }
[rule.match]
query = '(call function: (identifier) @f (#eq? @f "print")) @match'
inside_loop = true
"#;
    std::fs::write(dir.join("q.toml"), pack).unwrap();
    std::fs::write(dir.join("t.py"), "print('a')\nfor i in range(3):\n    print(i)\n").unwrap();
    let run = common::npu_mem_in(&dir, &["scan", "t.py", "--rules", "q.toml", "--format", "concise"]);
    assert_eq!(
        run.stdout.lines().filter(|l| l.contains("Q001")).collect::<Vec<_>>(),
        vec!["t.py:3:5: Q001 [info] `print(i)` prints inside a loop"]
    );
}
