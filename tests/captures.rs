//! Captures and `${x}` templates in user packs: a capture reaches every
//! predicate that reads it, whatever their order in the pack, and a read that
//! nothing can fill (or captures that wait for each other) stops the load.

mod common;

/// A project with `t.py` and a pack `p.toml` of one info rule per
/// `(code, [rule.match] body)`.
fn project(name: &str, rules: &[(&str, &str)], code: &str) -> common::TempDir {
    let dir = common::temp_dir(name);
    let mut pack = String::from("[pack]\nname = \"captures\"\n");
    for (code, body) in rules {
        pack.push_str(&format!(
            "\n[[rule]]\ncode = \"{code}\"\nname = \"n\"\nsection = \"memory\"\nseverity = \"info\"\n\
             triggers = [\"=\"]\nmessage = \"{{text}}\"\n\
             docs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n[rule.match]\n{body}\n"
        ));
    }
    std::fs::write(dir.join("p.toml"), pack).unwrap();
    std::fs::write(dir.join("t.py"), code).unwrap();
    dir
}

/// `(code, line, message)` of every finding of the pack's rules.
fn findings(dir: &std::path::Path) -> Vec<(String, u64, String)> {
    let run = common::npu_mem_in(
        dir,
        &["scan", "t.py", "--rules", "p.toml", "--select", "CAP", "--format", "json", "--no-cache"],
    );
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut out: Vec<(String, u64, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (f["code"].as_str().unwrap().into(), f["line"].as_u64().unwrap(), f["message"].as_str().unwrap().into())
        })
        .collect();
    out.sort();
    out
}

/// The load error of the pack (the scan must fail with exit code 2).
fn load_error(dir: &std::path::Path) -> String {
    let run = common::npu_mem_in(dir, &["scan", "t.py", "--rules", "p.toml", "--no-cache"]);
    assert_eq!(run.code, 2, "the pack loaded: {}", run.stdout);
    run.stderr
}

#[test]
fn a_field_reads_the_capture_of_another_field_in_either_order() {
    let dir = project(
        "fields-order",
        &[
            (
                "CAP001",
                "kind = \"assignment\"\nfields = { right = { kind = \"identifier\", capture = \"r\" }, left = { text = '^${r}$' } }",
            ),
            (
                "CAP002",
                "kind = \"assignment\"\nfields = { left = { kind = \"identifier\", capture = \"l\" }, right = { text = '^${l}$' } }",
            ),
        ],
        "x = x\nx = y\n",
    );
    assert_eq!(findings(&dir), [("CAP001".into(), 1, "x = x".into()), ("CAP002".into(), 1, "x = x".into())]);
}

#[test]
fn an_ancestor_capture_feeds_a_text_template_of_the_same_matcher() {
    let dir = project(
        "ancestor-text",
        &[(
            "CAP003",
            "kind = \"identifier\"\nassign_target = false\n\
             ancestor = { kind = \"assignment\", fields = { left = { capture = \"t\" } } }\ntext = '^${t}$'",
        )],
        "total = total + 1\ncount = total + 1\n",
    );
    assert_eq!(findings(&dir), [("CAP003".into(), 1, "total".into())]);
}

#[test]
fn an_ancestor_capture_feeds_a_template_inside_contains() {
    let dir = project(
        "ancestor-contains",
        &[(
            "CAP004",
            "kind = \"call\"\nancestor = { kind = \"assignment\", fields = { left = { capture = \"t\" } } }\n\
             contains = { kind = \"identifier\", text = '^${t}$' }",
        )],
        "x = f(x)\ny = f(x)\n",
    );
    assert_eq!(findings(&dir), [("CAP004".into(), 1, "f(x)".into())]);
}

#[test]
fn a_placeholder_nothing_captures_is_an_error_naming_rule_and_placeholder() {
    let dir = project(
        "unfilled",
        &[("CAP005", "kind = \"assignment\"\nfields = { left = { capture = \"l\" }, right = { text = '^${lhs}$' } }")],
        "x = x\n",
    );
    let err = load_error(&dir);
    assert!(err.contains("p.toml:5: rule CAP005: match.fields.right.text:"), "{err}");
    assert!(err.contains("placeholder `lhs` is read but never captured"), "{err}");
}

#[test]
fn a_capture_inside_unless_does_not_fill_a_template_outside_it() {
    let dir = project(
        "unless-scope",
        &[("CAP006", "kind = \"assignment\"\nunless = { capture = \"u\" }\ntext = '${u}'")],
        "x = x\n",
    );
    assert!(load_error(&dir).contains("rule CAP006: match.text: placeholder `u`"));
}

#[test]
fn captures_that_wait_for_each_other_are_an_error() {
    let dir = project(
        "cycle",
        &[(
            "CAP007",
            "kind = \"identifier\"\ncontains = { kind = \"identifier\", capture = \"a\", text = '^${b}$' }\n\
             ancestor = { kind = \"assignment\", capture = \"b\", contains = { text = '^${a}$' } }",
        )],
        "x = x\n",
    );
    let err = load_error(&dir);
    assert!(err.contains("rule CAP007: match.contains.text: reads `b`, which `ancestor.capture` captures"), "{err}");
    assert!(err.contains("`ancestor.contains.text` reads `a`, which `contains.capture` captures"), "{err}");
}

/// A rule reporting `torch.load` of a path that the function passed to
/// `torch.save` before, the saved path tested by `test` (reading `${path}`).
fn load_after_save(test: &str) -> String {
    format!(
        "call = \"torch.load\"\nargs = [{{ position = 0, is = [\"present\"], capture = \"path\" }}]\n\
         preceded_in_function = {{ call = \"torch.save\", args = [{{ position = 1, is = [{{ {test} }}] }}] }}"
    )
}

#[test]
fn an_argument_text_test_reads_a_capture() {
    let rule = load_after_save("text = '^${path}$'");
    let code = "import torch\n\ndef f(m):\n    torch.save(m, 'a.pt')\n    x = torch.load('a.pt')\n    y = torch.load('b.pt')\n";
    let found = findings(&project("argument-text", &[("CAP008", &rule)], code));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1, 5, "only the load of the saved path: {found:?}");
}

#[test]
fn an_argument_regex_test_takes_no_placeholder() {
    let rule = load_after_save("regex = '^${path}$'");
    let err = load_error(&project("argument-regex", &[("CAP009", &rule)], "import torch\n"));
    assert!(err.contains("rule CAP009") && err.contains("takes no `${placeholder}`"), "{err}");
}

#[test]
fn name_regex_needs_an_anchor_and_says_so() {
    let code = "import foo\nfoo.bar()\nfoo.baz()\nx = 1\n";
    // Without an anchor nothing resolves the name: a load error that says what to add.
    let dir = project(
        "name-regex-anchorless",
        &[("CAP001", "kind = \"call\"\nunless = { name_regex = '^foo\\.baz$' }")],
        code,
    );
    let error = load_error(&dir);
    assert!(
        error.contains("CAP001") && error.contains("unless.name_regex") && error.contains("only an anchor"),
        "{error}"
    );
    // With one, the `unless` reads the anchor's resolved name.
    let dir = project(
        "name-regex-anchored",
        &[("CAP001", "call = \"foo.*\"\nunless = { name_regex = '^foo\\.baz$' }")],
        code,
    );
    assert_eq!(findings(&dir), [("CAP001".to_string(), 2, "foo.bar()".to_string())]);
}

#[test]
fn a_capture_may_not_take_a_name_an_anchor_sets() {
    // `receiver` is what a `method` anchor sets: the nested `.to()` below
    // would overwrite it, and the later `${receiver}` would read the wrong text.
    let body = "method = \"to\"\nreceiver = { capture = \"receiver\" }\n\
                ancestor = { kind = \"module\", contains = { method = \"to\", receiver = { text = '^${receiver}$' } } }";
    let dir = project("capture-set-by-anchor", &[("CAP001", body)], "x = a.to(b).to(c)\n");
    let stderr = load_error(&dir);
    assert!(stderr.contains("capture = \"receiver\"") && stderr.contains("choose another name"), "{stderr}");
    // The same rule with its own name loads and matches.
    let renamed = body.replace("capture = \"receiver\"", "capture = \"moved\"").replace("${receiver}", "${moved}");
    let dir = project("capture-renamed", &[("CAP001", &renamed)], "x = a.to(b).to(c)\n");
    assert!(!findings(&dir).is_empty());
}

#[test]
fn an_argument_test_that_is_no_test_is_named_in_the_error() {
    // What is neither a state, a literal nor a one-entry table is named by its kind.
    for (test, shown) in [("[1, 2]", "an array"), ("{ eq = 1, gt = 2 }", "a table")] {
        let rule = format!("call = \"torch.load\"\nargs = [{{ position = 0, is = [{test}] }}]");
        let err = load_error(&project("argument-not-a-test", &[("CAP010", &rule)], "import torch\n"));
        assert!(err.contains(&format!("cannot use {shown} as an argument test")), "{test}: {err}");
    }
}

/// A project whose pack declares the table `dtypes` (`api`, `list`) beside
/// one rule with this `[rule.match]` body.
fn project_with_table(name: &str, body: &str, table: &str, code: &str) -> common::TempDir {
    let dir = project(name, &[], code);
    let pack = format!(
        "[pack]\nname = \"captures\"\n\n[[data]]\nname = \"dtypes\"\nfile = \"dtypes.tsv\"\n\n\
         [[rule]]\ncode = \"CAP011\"\nname = \"n\"\nsection = \"memory\"\nseverity = \"info\"\n\
         triggers = [\"torch\"]\nmessage = \"{{text}}\"\n\
         docs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n[rule.match]\n{body}\n"
    );
    std::fs::write(dir.join("p.toml"), pack).unwrap();
    std::fs::write(dir.join("dtypes.tsv"), table).unwrap();
    dir
}

#[test]
fn a_lookup_tests_a_cell_with_a_template_reading_a_capture() {
    // The cell must not name the dtype the call captures.
    let body = "call = \"torch.*\"\nargs = [{ name = \"dtype\", is = [\"present\"], capture = \"dtype\" }]\n\
                unless = { lookup = { table = \"dtypes\", key = \"{qualname}\", column = \"list\", \
                matches = '(^|,)${dtype}(,|$)' } }";
    let table = "api\tlist\ntorch.zeros\ttorch.float32,torch.float64\ntorch.eye\ttorch.float32\n";
    let code = "import torch\na = torch.zeros(2, dtype=torch.float64)\nb = torch.eye(2, dtype=torch.float64)\n\
                c = torch.eye(2, dtype=torch.float32)\n";
    let found = findings(&project_with_table("lookup-matches", body, table, code));
    let lines: Vec<u64> = found.iter().map(|f| f.1).collect();
    assert_eq!(lines, [3], "only the eye the table lists without float64: {found:?}");
}

#[test]
fn lookup_matches_needs_a_column_and_a_valid_regex() {
    let cases =
        [("matches = 'x'", "name its `column`"), ("column = \"list\", matches = '(${dtype}'", "lookup.matches")];
    for (spec, says) in cases {
        let body = format!(
            "call = \"torch.*\"\nargs = [{{ name = \"dtype\", is = [\"present\"], capture = \"dtype\" }}]\n\
             lookup = {{ table = \"dtypes\", key = \"{{qualname}}\", {spec} }}"
        );
        let dir = project_with_table("lookup-matches-error", &body, "api\tlist\n", "import torch\n");
        let err = load_error(&dir);
        assert!(err.contains("rule CAP011") && err.contains(says), "{spec}: {err}");
    }
}

#[test]
fn a_text_template_with_a_broken_regex_is_refused_when_the_pack_loads() {
    let body = "call = \"torch.*\"\nargs = [{ name = \"dtype\", is = [\"present\"], capture = \"dtype\" }]\n\
                text = '(${dtype}'";
    let dir = project_with_table("text-template-error", body, "api\tlist\n", "import torch\n");
    let err = load_error(&dir);
    assert!(err.contains("rule CAP011") && err.contains("text"), "{err}");
}

#[test]
fn a_receiver_slot_follows_a_value_to_the_method_called_on_it() {
    let body = "call = \"torch.jit.script\"\n\
                flows_into = { slot = [{ method = \"save\", receiver = true }], capture = \"use\" }\n";
    let code = "import torch\n\ndef f(m, p):\n    s = torch.jit.script(m)\n    s.save(p)\n\n\
                def g(m, p, other):\n    s = torch.jit.script(m)\n    other.save(s)\n";
    let dir = project("receiver-slot", &[], code);
    let pack = format!(
        "[pack]\nname = \"captures\"\n\n[[rule]]\ncode = \"CAP012\"\nname = \"n\"\nsection = \"memory\"\n\
         severity = \"info\"\nmessage = \"{{use}}\"\n\
         docs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n[rule.match]\n{body}"
    );
    std::fs::write(dir.join("p.toml"), pack).unwrap();
    let found = findings(&dir);
    assert_eq!(found.len(), 1, "the script whose result is saved, not the one passed as an argument: {found:?}");
    assert_eq!((found[0].1, found[0].2.as_str()), (4, "`s.save(…)` on line 5"));
    // A receiver has no position.
    std::fs::write(
        dir.join("p.toml"),
        std::fs::read_to_string(dir.join("p.toml"))
            .unwrap()
            .replace("receiver = true", "receiver = true, position = 0"),
    )
    .unwrap();
    assert!(load_error(&dir).contains("a receiver (call/method with `receiver = true`)"));
}
