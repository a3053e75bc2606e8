//! Named matchers: a pack defines `[matchers.NAME]` once and its matchers
//! `use = "NAME"` wherever a matcher may stand, at the top of a rule (where
//! the named alternatives keep their own anchors) and nested, beside other
//! fields. Unknown names, cycles and `use` beside `any` are pack errors that
//! name the file, the line and the matcher.

mod common;

use serde_json::Value;

/// A pack of one warning rule `NM001` with the given message and
/// `[rule.match]` body, and the given named matchers after it.
fn pack(message: &str, matcher: &str, named: &str) -> String {
    format!(
        "[pack]\nname = \"named-matchers\"\n\n[[rule]]\ncode = \"NM001\"\nname = \"n\"\nsection = \"memory\"\n\
         severity = \"warning\"\nmessage = \"{message}\"\n\
         docs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n[rule.match]\n{matcher}\n\n{named}\n"
    )
}

/// Scans `code` as `t.py` with `pack_text`: the exit code, stderr, and
/// `(line, message)` of each NM001 finding.
fn scan(name: &str, pack_text: &str, code: &str) -> (i32, String, Vec<(u64, String)>) {
    let run = common::scan_with_pack(name, pack_text, code, "NM");
    let found = serde_json::from_str::<Value>(&run.stdout).map_or(Vec::new(), |report| {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["line"].as_u64().unwrap(), f["message"].as_str().unwrap().to_string()))
            .collect()
    });
    (run.code, run.stderr, found)
}

const CODE: &str = "\
def step(x, log):
    y = reset(x)
    log(y)
    return y


def other(x):
    return reset(x)
";

/// `reset(...)` and `clear(...)` calls, each saying which it is.
const RESETS: &str = "\
[matchers.reset_call]
any = [
  { call = \"reset\", set = { what = \"reset\" } },
  { call = \"clear\", set = { what = \"clear\" } },
]

[matchers.then_logged]
followed_in_function = { call = \"log\" }
";

#[test]
fn a_named_matcher_is_used_at_the_top_and_beside_other_fields() {
    // At the top: the named alternatives are the rule's alternatives, with
    // their own anchors and placeholders.
    let (code, stderr, found) = scan("named-top", &pack("{what}", "use = \"reset_call\"", RESETS), CODE);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(found, [(2, "reset".to_string()), (8, "reset".to_string())]);
    // Beside an anchor, both must hold: only the reset that is logged after it.
    let (_, stderr, found) = scan("named-nested", &pack("m", "call = \"reset\"\nuse = \"then_logged\"", RESETS), CODE);
    assert_eq!(found, [(2, "m".to_string())], "{stderr}");
    // Under `unless`, and a named matcher that uses another.
    let chained = format!(
        "{RESETS}\n[matchers.logged_reset]\nuse = \"reset_call\"\nfollowed_in_function = {{ call = \"log\" }}\n"
    );
    let (_, stderr, found) =
        scan("named-unless", &pack("m", "call = \"reset\"\nunless = { use = \"logged_reset\" }", &chained), CODE);
    assert_eq!(found, [(8, "m".to_string())], "{stderr}");
}

#[test]
fn unknown_names_cycles_and_use_beside_any_are_pack_errors() {
    let unknown = pack("m", "call = \"reset\"\nunless = { use = \"logged\" }", RESETS);
    let (code, stderr, _) = scan("named-unknown", &unknown, CODE);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("p.toml:") && stderr.contains("NM001") && stderr.contains("defines no [matchers.logged]"),
        "{stderr}"
    );
    assert!(stderr.contains("reset_call, then_logged"), "the known names are listed: {stderr}");

    let cycle = "[matchers.a]\nuse = \"b\"\ninside_loop = true\n\n[matchers.b]\nuse = \"a\"\ninside_loop = false\n";
    let (code, stderr, _) = scan("named-cycle", &pack("m", "call = \"reset\"", cycle), CODE);
    assert_eq!(code, 2);
    assert!(stderr.contains("p.toml:") && stderr.contains("matcher `a`") && stderr.contains("uses itself"), "{stderr}");

    let both = pack("m", "call = \"reset\"\nuse = \"then_logged\"\nany = [{ inside_loop = true }]", RESETS);
    let (code, stderr, _) = scan("named-with-any", &both, CODE);
    assert_eq!(code, 2);
    assert!(stderr.contains("`use` and `any` cannot stand in one matcher"), "{stderr}");
}

#[test]
fn a_file_fact_inside_a_named_matcher_stays_its_own_in_a_user_pack() {
    // A user pack's named matchers are compiled once on their own, to report
    // their errors at their definition; what that registered is dropped. The
    // `file_has` of `in_torch_file` must still be its own fact afterwards, not
    // the one the second rule registers (`import numpy`).
    let named = "\
[matchers.in_torch_file]
call = \"reset\"
file_has = { import = \"torch\" }

[[rule]]
code = \"NM002\"
name = \"n2\"
section = \"memory\"
severity = \"warning\"
message = \"other\"
docs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }
[rule.match]
call = \"clear\"
file_has = { import = \"numpy\" }
";
    let text = pack("torch reset", "use = \"in_torch_file\"", named);
    let (_, stderr, found) = scan("named-fact-torch", &text, "import torch\nreset(1)\n");
    assert_eq!(found, [(2, "torch reset".to_string())], "{stderr}");
    let (_, stderr, found) = scan("named-fact-numpy", &text, "import numpy\nreset(1)\n");
    assert!(found.is_empty(), "{found:?} {stderr}");
}
