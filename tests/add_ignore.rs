//! `--add-ignore` adopts the gate in one step: afterwards the scan passes, and
//! nothing but the added comments changed.

mod common;

use common::npu_mem_in;

#[test]
fn add_ignore_silences_every_finding_and_changes_nothing_else() {
    let dir = common::temp_dir("add-ignore");
    let original = "import torch\r\nx = torch.ones(2).cuda()  # move it\r\ny = x.cuda()  # npu-mem: ignore[TX006]\r\ns = \"\"\"text\r\ncuda\"\"\"\r\nz = (x\r\n     .cuda())";
    std::fs::write(dir.join("t.py"), original).unwrap();
    std::fs::write(dir.join("run.sh"), "#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--add-ignore", "legacy code"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let after = std::fs::read_to_string(dir.join("t.py")).unwrap();
    let expected = "import torch\r\nx = torch.ones(2).cuda()  # move it  # npu-mem: ignore[TX001] -- legacy code\r\ny = x.cuda()  # npu-mem: ignore[TX006, TX001]\r\ns = \"\"\"text\r\ncuda\"\"\"\r\nz = (x  # npu-mem: ignore[TX001] -- legacy code\r\n     .cuda())";
    assert_eq!(after, expected, "CRLF, the missing final newline and other text are kept");
    assert!(std::fs::read_to_string(dir.join("run.sh"))
        .unwrap()
        .ends_with("CUDA_VISIBLE_DEVICES=0  # npu-mem: ignore[TX009] -- legacy code\n"));
    let run = npu_mem_in(&dir, &["scan", ".", "--fail-on", "info", "--format", "concise"]);
    // Only the suppression that was already stale before (TX006) is still reported.
    let left: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(left.len(), 1, "{}", run.stdout);
    assert!(left[0].starts_with("t.py:3:15: NPM001") && left[0].contains("ignore[TX006]"), "{}", run.stdout);
    let run = npu_mem_in(&dir, &["scan", ".", "--add-ignore"]);
    assert!(run.stderr.contains("added or extended 0 suppression comments"), "idempotent: {}", run.stderr);
}

#[test]
fn add_ignore_after_an_unbalanced_quote_is_idempotent() {
    let dir = common::temp_dir("add-ignore-quote");
    let original = "import torch\nm = torch.ones(2)\nprint(\"it's\", m.cuda())\ns = \"\"\"a\nit's\"\"\"; m.cuda()  # npu-mem: ignore[TX006]\n";
    std::fs::write(dir.join("t.py"), original).unwrap();
    let run = npu_mem_in(&dir, &["scan", "t.py", "--add-ignore", "later"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let once = std::fs::read_to_string(dir.join("t.py")).unwrap();
    let expected = "import torch\nm = torch.ones(2)\nprint(\"it's\", m.cuda())  # npu-mem: ignore[TX001] -- later\ns = \"\"\"a\nit's\"\"\"; m.cuda()  # npu-mem: ignore[TX006, TX001]\n";
    assert_eq!(once, expected, "the existing suppression on a line that starts in a string is extended");
    let run = npu_mem_in(&dir, &["scan", "t.py", "--add-ignore", "later"]);
    assert!(run.stderr.contains("added or extended 0 suppression comments"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("t.py")).unwrap(), once, "a second run adds nothing");
}

#[test]
fn a_gbk_module_gets_its_comments_in_gbk() {
    let dir = common::temp_dir("add-ignore-gbk");
    // "中文" in GBK before the finding; the reason is Chinese too, which GBK can write.
    let original = b"# coding: gbk\nimport torch\nx = '\xd6\xd0\xce\xc4'; y = torch.ones(2).cuda()\n";
    std::fs::write(dir.join("t.py"), original).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--add-ignore", "\u{4e2d}\u{6587}"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let want = b"# coding: gbk\nimport torch\nx = '\xd6\xd0\xce\xc4'; y = torch.ones(2).cuda()  # npu-mem: ignore[TX001] -- \xd6\xd0\xce\xc4\n";
    assert_eq!(std::fs::read(dir.join("t.py")).unwrap(), want.to_vec());
    // A reason GBK cannot write leaves the file alone and says why.
    std::fs::write(dir.join("t.py"), original).unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--add-ignore", "\u{1F600}"]);
    assert_eq!(std::fs::read(dir.join("t.py")).unwrap(), original.to_vec());
    assert!(run.stderr.contains("t.py") && run.stderr.contains("GBK"), "{}", run.stderr);
}

#[test]
fn a_file_with_lone_cr_line_ends_gets_its_comments_on_the_findings_lines() {
    let dir = common::temp_dir("add-ignore-lone-cr");
    std::fs::write(dir.join("mac.py"), "import torch\rx = 1\ry = torch.ones(2).cuda()\r").unwrap();
    std::fs::write(dir.join("mixed.py"), "import torch\nx = 1\ry = 2\ntorch.ones(2).cuda()\n").unwrap();
    let run = npu_mem_in(&dir, &["scan", ".", "--add-ignore", "later"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(read("mac.py"), "import torch\rx = 1\ry = torch.ones(2).cuda()  # npu-mem: ignore[TX001] -- later\r");
    assert_eq!(
        read("mixed.py"),
        "import torch\nx = 1\ry = 2\ntorch.ones(2).cuda()  # npu-mem: ignore[TX001] -- later\n"
    );
    let after = npu_mem_in(&dir, &["scan", ".", "--fail-on", "info", "--format", "concise"]);
    assert_eq!(after.code, 0, "{}", after.stdout);
}
