//! `npu-mem server`, driven over stdio by a small client written here (the
//! end-to-end tests with pytest-lsp and Neovim, which need PyPI and Debian's
//! neovim, are in tests/editors.rs): the diagnostics are the findings the CLI
//! reports, at the same places; edits move them; the code actions write
//! what `--fix` and `--add-ignore` write; hover gives the rule's docs; and
//! bad input never ends the server.

mod common;

use common::{copy_dir, npu_mem_in, temp_dir};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo");

/// How long any one answer may take (generous: CI shares its two cores, and
/// the debug build analyses the 10 MB buffer in some 30 s).
const PATIENCE: Duration = Duration::from_secs(180);

/// A client of one server process.
struct Client {
    child: Child,
    stdin: ChildStdin,
    inbox: Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_npu-mem"))
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("npu-mem server starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, inbox) = channel();
        std::thread::spawn(move || loop {
            let mut length = 0;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    length = n.parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            if stdout.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        });
        Client { child, stdin, inbox, next_id: 0 }
    }

    fn send_bytes(&mut self, body: &[u8]) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, mut message: Value) {
        message["jsonrpc"] = json!("2.0");
        self.send_bytes(&serde_json::to_vec(&message).unwrap());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "method": method, "params": params }));
    }

    /// Sends a request; its answer.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "id": id, "method": method, "params": params }));
        self.wait(|m| m["id"] == id && m.get("method").is_none())
    }

    /// The first message `matches` accepts; others are dropped.
    fn wait(&mut self, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.inbox.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(m) if matches(&m) => return m,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!("no answer within {PATIENCE:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
            }
        }
    }

    /// The next diagnostics for `uri` (at `version`, if given).
    fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        let m = self.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && version.is_none_or(|v| m["params"]["version"] == v)
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn initialize(&mut self, root: &Path, extra: Value) -> Value {
        let mut params = json!({
            "processId": null,
            "rootUri": uri(root),
            "capabilities": { "workspace": { "workspaceEdit": { "documentChanges": true } } },
        });
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let answer = self.call("initialize", params);
        self.notify("initialized", json!({}));
        answer
    }

    fn open(&mut self, path: &Path, text: &str) -> String {
        let uri = uri(path);
        let doc = json!({ "uri": uri, "languageId": "python", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": doc }));
        uri
    }

    fn change(&mut self, uri: &str, version: i64, changes: Value) {
        let doc = json!({ "uri": uri, "version": version });
        self.notify("textDocument/didChange", json!({ "textDocument": doc, "contentChanges": changes }));
    }

    /// Shuts the server down; its exit code.
    fn shutdown(mut self) -> i32 {
        let answer = self.call("shutdown", Value::Null);
        assert_eq!(answer["result"], Value::Null, "{answer}");
        self.notify("exit", Value::Null);
        wait_exit(&mut self.child)
    }
}

fn wait_exit(child: &mut Child) -> i32 {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The CLI's JSON findings for `file` (relative to `dir`) in a scan of `dir`.
fn cli_findings(dir: &Path, file: &str) -> Vec<Value> {
    let run = npu_mem_in(dir, &["scan", "--no-cache", "--format", "json", "--fail-on", "never", "."]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    report["findings"].as_array().unwrap().iter().filter(|f| f["path"] == file).cloned().collect()
}

/// An LSP position (UTF-16) of the CLI's 1-based line and character column in `text`.
fn utf16(text: &str, line: u64, column: u64) -> Value {
    let line_text = text.split('\n').nth(line as usize - 1).unwrap();
    let units: usize = line_text.chars().take(column as usize - 1).map(char::len_utf16).sum();
    json!({ "line": line - 1, "character": units })
}

/// (code, range) of each diagnostic, sorted.
fn codes_and_ranges(diagnostics: &[Value]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        diagnostics.iter().map(|d| (d["code"].as_str().unwrap().to_string(), d["range"].to_string())).collect();
    out.sort();
    out
}

/// The text with a workspace edit of one document applied.
fn apply(text: &str, edit: &Value) -> String {
    let change = &edit["documentChanges"][0];
    let edits = change["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 1, "one edit of the part that differs: {edit}");
    let range = &edits[0]["range"];
    let offset = |p: &Value| {
        let start: usize = text.split_inclusive('\n').take(p["line"].as_u64().unwrap() as usize).map(str::len).sum();
        let line = text[start..].split('\n').next().unwrap_or("");
        let (want, mut units) = (p["character"].as_u64().unwrap() as usize, 0);
        for (i, c) in line.char_indices() {
            if units >= want {
                return start + i;
            }
            units += c.len_utf16();
        }
        start + line.len()
    };
    let (s, e) = (offset(&range["start"]), offset(&range["end"]));
    format!("{}{}{}", &text[..s], edits[0]["newText"].as_str().unwrap(), &text[e..])
}

#[test]
fn diagnostics_are_the_findings_the_cli_reports_and_follow_edits() {
    let text = std::fs::read_to_string(Path::new(DEMO).join("train.py")).unwrap();
    let want: Vec<(String, String)> = {
        let mut w: Vec<(String, String)> = cli_findings(Path::new(DEMO), "train.py")
            .iter()
            .map(|f| {
                let start = utf16(&text, f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap());
                let end = utf16(&text, f["end_line"].as_u64().unwrap(), f["end_column"].as_u64().unwrap());
                (f["code"].as_str().unwrap().to_string(), json!({ "end": end, "start": start }).to_string())
            })
            .collect();
        w.sort();
        w
    };
    assert!(want.len() > 5, "the demo's train.py has findings: {want:?}");
    let mut client = Client::start();
    let init = client.initialize(Path::new(DEMO), json!({}));
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-16");
    let uri = client.open(&Path::new(DEMO).join("train.py"), &text);
    let opened = client.diagnostics(&uri, Some(1));
    assert_eq!(codes_and_ranges(&opened), want);
    // Severity, source, the link to the rule's docs, and the finding it is, for code actions.
    let d = &opened[0];
    assert_eq!(d["source"], "npu-mem");
    assert!([1, 2, 3].contains(&d["severity"].as_i64().unwrap()), "{d}");
    let page = d["codeDescription"]["href"].as_str().unwrap();
    let page = PathBuf::from(page.strip_prefix("file://").unwrap());
    let code = d["code"].as_str().unwrap();
    assert!(std::fs::read_to_string(page).unwrap().contains(&format!("## {code} ")));

    // A line added at the top moves every diagnostic one line down.
    client.change(&uri, 2, json!([{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "# a new first line\n" }]));
    let moved = client.diagnostics(&uri, Some(2));
    let lines = |ds: &[Value]| -> Vec<u64> {
        let mut l: Vec<u64> = ds.iter().map(|d| d["range"]["start"]["line"].as_u64().unwrap()).collect();
        l.sort();
        l
    };
    assert_eq!(lines(&moved), lines(&opened).iter().map(|l| l + 1).collect::<Vec<_>>());

    // Hover on a diagnostic gives its rule's documentation.
    let hover = client
        .call("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": moved[0]["range"]["start"] }));
    let value = hover["result"]["contents"]["value"].as_str().unwrap();
    for part in ["### What it finds", "### Why it matters on an Ascend NPU", "### Example", "### Use instead"] {
        assert!(value.contains(part), "{part} in {value}");
    }
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn code_actions_write_what_fix_and_add_ignore_write() {
    let dir = temp_dir("server-actions");
    copy_dir(Path::new(DEMO), &dir.join("server"));
    copy_dir(Path::new(DEMO), &dir.join("cli"));
    let path = dir.join("server/train.py");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut client = Client::start();
    client.initialize(&dir.join("server"), json!({}));
    let uri = client.open(&path, &text);
    let diagnostics = client.diagnostics(&uri, Some(1));

    // "Fix all safe fixes in this file", asked for as a source action: what `--fix` writes.
    let whole = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 9999, "character": 0 } });
    let params = json!({ "textDocument": { "uri": uri }, "range": whole, "context": { "diagnostics": [], "only": ["source.fixAll"] } });
    let actions = client.call("textDocument/codeAction", params)["result"].clone();
    let fix_all = actions.as_array().unwrap().iter().find(|a| a["kind"] == "source.fixAll.npu-mem").unwrap();
    let fixed = apply(&text, &fix_all["edit"]);
    let run = npu_mem_in(&dir.join("cli"), &["scan", "--no-cache", "--fix", "--fail-on", "never", "."]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(fixed, std::fs::read_to_string(dir.join("cli/train.py")).unwrap());
    assert_ne!(fixed, text, "the demo has safe fixes");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "the server wrote nothing");

    // Each finding with a fix offers it (safe ones preferred, unsafe ones marked), and an ignore.
    let mut saw_safe = false;
    for d in diagnostics.iter() {
        let params = json!({ "textDocument": { "uri": uri }, "range": d["range"], "context": { "diagnostics": [d] } });
        let actions = client.call("textDocument/codeAction", params)["result"].clone();
        let titles: Vec<&str> = actions.as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
        let code = d["code"].as_str().unwrap();
        assert!(
            titles.contains(&format!("Ignore {code} on this line").as_str()) || code.starts_with("NPM"),
            "{titles:?}"
        );
        for a in actions
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["title"].as_str().unwrap().starts_with(&format!("Fix {code}")))
        {
            let unsafe_fix = a["title"].as_str().unwrap().contains("unsafe");
            assert_eq!(a["isPreferred"], !unsafe_fix, "{a}");
            if !unsafe_fix && a.get("disabled").is_none() {
                saw_safe = true;
                // The fixed text no longer has this finding where it was.
                let after = apply(&text, &a["edit"]);
                assert_ne!(after, text);
            }
        }
    }
    assert!(saw_safe, "some finding of the demo's train.py has a safe fix");

    // "Ignore this finding": the comment --add-ignore writes, for a code found once in the file.
    let once = diagnostics
        .iter()
        .find(|d| {
            diagnostics.iter().filter(|e| e["code"] == d["code"]).count() == 1
                && !d["code"].as_str().unwrap().starts_with("NPM")
        })
        .unwrap();
    let code = once["code"].as_str().unwrap();
    let params =
        json!({ "textDocument": { "uri": uri }, "range": once["range"], "context": { "diagnostics": [once] } });
    let actions = client.call("textDocument/codeAction", params)["result"].clone();
    let ignore =
        actions.as_array().unwrap().iter().find(|a| a["title"] == format!("Ignore {code} on this line")).unwrap();
    let ignored = apply(&text, &ignore["edit"]);
    std::fs::write(dir.join("cli/train.py"), &text).unwrap();
    let run = npu_mem_in(&dir.join("cli"), &["scan", "--no-cache", "--select", code, "--add-ignore"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ignored, std::fs::read_to_string(dir.join("cli/train.py")).unwrap());
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn positions_count_utf16_units_or_utf8_bytes_as_agreed() {
    let dir = temp_dir("server-positions");
    let text = "import torch\nname = 'é𝕏'; x = torch.zeros(2).cuda()\n";
    std::fs::write(dir.join("t.py"), text).unwrap();
    // The finding starts at `torch.zeros(2).cuda()`: after 15 ASCII characters, é (1 UTF-16
    // unit, 2 bytes) and 𝕏 (2 units, 4 bytes).
    let bytes = text.lines().nth(1).unwrap().find("torch.zeros").unwrap();
    assert_eq!(bytes, 15 + 2 + 4);
    for (encodings, character) in [(json!(["utf-16"]), 15 + 1 + 2), (json!(["utf-8", "utf-16"]), bytes)] {
        let mut client = Client::start();
        let caps = json!({ "capabilities": { "general": { "positionEncodings": encodings } } });
        let init = client.initialize(&dir, caps);
        let uri = client.open(&dir.join("t.py"), text);
        let diagnostics = client.diagnostics(&uri, Some(1));
        let tx001 = diagnostics.iter().find(|d| d["code"] == "TX001").unwrap();
        assert_eq!(tx001["range"]["start"], json!({ "line": 1, "character": character }), "{init}");
        assert_eq!(client.shutdown(), 0);
    }
}

#[test]
fn a_notebook_opened_as_json_has_its_findings_where_sarif_puts_them() {
    let notebook = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/notebooks");
    let run = npu_mem_in(&notebook, &["scan", "--no-cache", "--format", "sarif", "--fail-on", "never", "train.ipynb"]);
    let sarif: Value = serde_json::from_str(&run.stdout).unwrap();
    let text = std::fs::read_to_string(notebook.join("train.ipynb")).unwrap();
    let mut want: Vec<(String, String)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("suppressions").is_none())
        .map(|r| {
            let region = &r["locations"][0]["physicalLocation"]["region"];
            let at = |l: &str, c: &str| utf16(&text, region[l].as_u64().unwrap(), region[c].as_u64().unwrap());
            let range = json!({ "end": at("endLine", "endColumn"), "start": at("startLine", "startColumn") });
            (r["ruleId"].as_str().unwrap().to_string(), range.to_string())
        })
        .collect();
    want.sort();
    assert!(!want.is_empty());
    let mut client = Client::start();
    client.initialize(&notebook, json!({}));
    let uri = client.open(&notebook.join("train.ipynb"), &text);
    assert_eq!(codes_and_ranges(&client.diagnostics(&uri, Some(1))), want);
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn bad_input_never_ends_the_server() {
    let dir = temp_dir("server-robust");
    std::fs::write(dir.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::write(dir.join("gone.py"), "import torch\nx = torch.zeros(2).cuda()\n").unwrap();
    let mut client = Client::start();

    // Requests before `initialize` are refused, and the server stays.
    let early = client.call("textDocument/hover", json!({}));
    assert_eq!(early["error"]["code"], -32002, "{early}");
    client.initialize(&dir, json!({ "initializationOptions": { "target": "2.6" } }));

    // Not UTF-8 (é in Latin-1): read with a replacement character, analysed all the same.
    let path = dir.join("latin1.py");
    let body = format!(
        r##"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{}","languageId":"python","version":1,"text":"# café\nimport torch\nx = torch.zeros(2).cuda()\n"}}}}}}"##,
        uri(&path)
    );
    let mut bytes = body.into_bytes();
    let at = bytes.iter().position(|&b| b == 0xC3).unwrap();
    bytes.splice(at..at + 2, [0xE9]);
    client.send_bytes(&bytes);
    let latin1 = client.diagnostics(&uri(&path), Some(1));
    assert!(latin1.iter().any(|d| d["code"] == "TX001"), "{latin1:?}");

    // Not JSON at all, and a header without a length: skipped.
    client.send_bytes(b"{ not json");
    client.stdin.write_all(b"X-Nonsense\r\n\r\n").unwrap();

    // A 10 MB buffer, of long string assignments: ten megabytes of short statements, or of
    // long comments, take the analysis as long as they take `scan` (some twenty seconds
    // here; the parser gives up on the comments), which a test need not wait for.
    let line = format!("s = \"{}\"\n", "x".repeat(1000));
    let big = format!("import torch\n{}x = torch.zeros(2).cuda()\n", line.repeat(10 * 1024 * 1024 / line.len()));
    let big_uri = client.open(&dir.join("big.py"), &big);
    let started = Instant::now();
    let found = client.diagnostics(&big_uri, Some(1));
    assert!(found.iter().any(|d| d["code"] == "TX001"), "{:?}", &found[..found.len().min(3)]);
    eprintln!("10 MB buffer: diagnostics in {:?}", started.elapsed());

    // A file deleted while open: its buffer still stands for it.
    let gone = client.open(&dir.join("gone.py"), "import torch\nx = torch.zeros(2).cuda()\n");
    assert!(!client.diagnostics(&gone, Some(1)).is_empty());
    std::fs::remove_file(dir.join("gone.py")).unwrap();
    let deleted = json!({ "changes": [{ "uri": gone, "type": 3 }] });
    client.notify("workspace/didChangeWatchedFiles", deleted);
    client.change(&gone, 2, json!([{ "text": "import torch\nimport torch_npu\nx = torch.zeros(2).npu()\n" }]));
    assert_eq!(client.diagnostics(&gone, Some(2)), Vec::<Value>::new());

    // A pyproject.toml with errors: a diagnostic on it, and the server goes on.
    std::fs::write(dir.join("pyproject.toml"), "[tool.npu-mem]\nselect = [\"TX\"\nignore = 3\n").unwrap();
    let config = uri(&dir.join("pyproject.toml"));
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": config, "type": 2 }] }));
    let problems = client.diagnostics(&config, None);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0]["message"].as_str().unwrap().contains("pyproject.toml"), "{problems:?}");
    // Fixed: the diagnostic goes, and the configuration applies.
    std::fs::write(dir.join("pyproject.toml"), "[tool.npu-mem]\nselect = [\"API\"]\n").unwrap();
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": config, "type": 2 }] }));
    assert_eq!(client.diagnostics(&config, None), Vec::<Value>::new());
    let selected = client.diagnostics(&uri(&path), None);
    assert!(selected.iter().all(|d| d["code"].as_str().unwrap().starts_with("API")), "{selected:?}");

    // Still answering.
    let hover = client.call(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&path) }, "position": { "line": 0, "character": 0 } }),
    );
    assert!(hover.get("error").is_none(), "{hover}");
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn exit_without_shutdown_is_code_1() {
    let mut client = Client::start();
    client.initialize(Path::new(DEMO), json!({}));
    client.notify("exit", Value::Null);
    assert_eq!(wait_exit(&mut client.child), 1);
}

/// Project facts follow the open buffers from one edit to the next: the
/// server remembers what it read of each file (here, train.py's imports),
/// and reads a buffer again once its text changes.
#[test]
fn project_facts_follow_an_edit_of_the_imports() {
    let dir = temp_dir("server-imports");
    std::fs::write(dir.join("setup_npu.py"), "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n")
        .unwrap();
    let migrated =
        "import setup_npu\nimport torch\nx = torch.ones(2).cuda()\nif __name__ == \"__main__\":\n    print(x)\n";
    std::fs::write(dir.join("train.py"), migrated).unwrap();
    let mut client = Client::start();
    client.initialize(&dir, json!({}));
    let uri = client.open(&dir.join("train.py"), migrated);
    // (code, 0-based line, LSP severity: 2 warning, 3 information)
    let seen = |ds: &[Value]| -> Vec<(String, u64, i64)> {
        ds.iter()
            .map(|d| {
                let line = d["range"]["start"]["line"].as_u64().unwrap();
                (d["code"].as_str().unwrap().to_string(), line, d["severity"].as_i64().unwrap())
            })
            .collect()
    };
    // Its process imports transfer_to_npu through setup_npu: advice.
    assert_eq!(seen(&client.diagnostics(&uri, Some(1))), [("TX001".to_string(), 2, 3)]);
    // Without that import, the entry script runs on CUDA's terms: a warning.
    let first_line = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 1, "character": 0 } });
    client.change(&uri, 2, json!([{ "range": first_line, "text": "" }]));
    assert_eq!(seen(&client.diagnostics(&uri, Some(2))), [("TX001".to_string(), 1, 2)]);
    // And back.
    let top = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } });
    client.change(&uri, 3, json!([{ "range": top, "text": "import setup_npu\n" }]));
    assert_eq!(seen(&client.diagnostics(&uri, Some(3))), [("TX001".to_string(), 2, 3)]);
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn a_subclass_imported_from_another_file_counts_in_the_editor_and_after_an_edit() {
    let dir = temp_dir("server-imported-subclass");
    std::fs::write(
        dir.join("loaders.py"),
        "from torch.utils.data import DataLoader\nclass Loader(DataLoader):\n    pass\n",
    )
    .unwrap();
    let train = "from loaders import Loader\ndef build(ds):\n    return Loader(ds, batch_size=16, num_workers=4)\n";
    std::fs::write(dir.join("train.py"), train).unwrap();
    let mut client = Client::start();
    client.initialize(&dir, json!({}));
    let uri = client.open(&dir.join("train.py"), train);
    let dl002_lines = |ds: &[Value]| -> Vec<u64> {
        let dl002 = ds.iter().filter(|d| d["code"] == "DL002");
        dl002.map(|d| d["range"]["start"]["line"].as_u64().unwrap()).collect()
    };
    assert_eq!(dl002_lines(&client.diagnostics(&uri, Some(1))), [2]);
    // A second loader typed in: the edited file still knows what `Loader` is.
    let end = json!({ "start": { "line": 3, "character": 0 }, "end": { "line": 3, "character": 0 } });
    client.change(&uri, 2, json!([{ "range": end, "text": "dev = Loader(ds, batch_size=64, num_workers=4)\n" }]));
    assert_eq!(dl002_lines(&client.diagnostics(&uri, Some(2))), [2, 3]);
    assert_eq!(client.shutdown(), 0);
}
