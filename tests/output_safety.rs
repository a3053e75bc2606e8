//! What reaches the terminal stays readable: control characters from source
//! lines and file names are escaped, and a huge invalid regex in a rule pack
//! is quoted short, and a pack too large for the trigger regex still scans.

mod common;

use common::{npu_mem, npu_mem_in, temp_dir};

#[test]
fn control_characters_in_source_lines_and_names_are_escaped() {
    let dir = temp_dir("escapes");
    std::fs::write(dir.join("bell\x07.py"), "import torch\ns = \"\x1b\"; x = torch.ones(2).cuda()  # \x1b[2J\x07\n")
        .unwrap();
    for format in ["text", "concise"] {
        let run = npu_mem_in(&dir, &["scan", ".", "--format", format, "--color", "never"]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(!run.stdout.contains(['\x1b', '\x07']), "{format}: raw control characters\n{:?}", run.stdout);
        assert!(run.stdout.contains("bell\\x07.py:2:14"), "{format}: {}", run.stdout);
    }
    for format in ["github", "markdown"] {
        let run = npu_mem_in(&dir, &["scan", ".", "--format", format]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(!run.stdout.contains(['\x1b', '\x07']), "{format}: raw control characters\n{:?}", run.stdout);
        assert!(run.stdout.contains("bell\\x07.py"), "{format}: {}", run.stdout);
    }
    let run = npu_mem_in(&dir, &["scan", ".", "--format", "text", "--color", "never"]);
    let source = " 2 | s = \"\\x1b\"; x = torch.ones(2).cuda()  # \\x1b[2J\\x07\n";
    assert!(run.stdout.contains(source), "{}", run.stdout);
    // The escape before the call is four characters wide: the carets move with it.
    let carets = format!("\n   | {}{}\n", " ".repeat(16), "^".repeat(20));
    assert!(run.stdout.contains(&carets), "carets under the call\n{}", run.stdout);
}

#[test]
fn a_huge_invalid_regex_is_quoted_short() {
    let dir = temp_dir("huge-regex");
    let pack = dir.join("huge.toml");
    let pattern = format!("({}", "ab|".repeat(500_000));
    let rule = "[[rule]]\ncode = \"ORG001\"\nname = \"n\"\nsection = \"transfer\"\nseverity = \"info\"\nmessage = \"m\"\ndocs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }\n";
    std::fs::write(&pack, format!("[pack]\nname = \"x\"\n\n{rule}match = {{ string = \"{pattern}\" }}\n")).unwrap();
    let run = npu_mem(&["scan", "fixtures/demo", "--rules", pack.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.len() < 2_000, "{} bytes of error", run.stderr.len());
    let bytes = format!("({} bytes)", pattern.len());
    assert!(run.stderr.contains(&bytes) && run.stderr.contains("match.string"), "{}", run.stderr);
}

#[test]
fn a_pack_whose_trigger_words_overflow_the_regex_limit_still_scans() {
    let dir = temp_dir("huge-trigger");
    std::fs::write(dir.join("a.py"), "import torch\nm = torch.nn.Linear(2, 2)\ny = m.cuda()\n").unwrap();
    // One method name of 3 MB: its escaped alternation is over the regex size limit.
    let method = format!("m_{}", "abcdefghij".repeat(300_000));
    let rule = "[[rule]]\ncode = \"ORG001\"\nname = \"n\"\nsection = \"transfer\"\nseverity = \"info\"\nmessage = \"m\"\ndocs = { what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }\n";
    std::fs::write(
        dir.join("huge.toml"),
        format!("[pack]\nname = \"x\"\n\n{rule}match = {{ method = \"{method}\" }}\n"),
    )
    .unwrap();
    let run = npu_mem_in(&dir, &["scan", "a.py", "--no-cache", "--format", "concise", "--rules", "huge.toml"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(run.stdout.contains("a.py:3:5: TX001"), "the built-in rules still run: {}", run.stdout);
}
