//! `npu-mem server` in real clients, end to end: pytest-lsp (from PyPI)
//! runs tests/lsp/test_server.py, and Debian's Neovim (`nvim --headless`)
//! attaches the server with editors/neovim/npu-mem.lua, the setup the README
//! gives, and prints the diagnostics it received. Both need what `cargo
//! test` does not have offline (PyPI; the neovim package, which .ci/run
//! installs), so they are ignored there and `.ci/run` runs them.

mod common;

use common::{copy_dir, npu_mem_in, output_text, path_with, temp_dir, venv_with};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
#[ignore = "installs pytest-lsp from PyPI; .ci/run runs it with `cargo test -- --ignored`"]
fn pytest_lsp_drives_the_server_through_a_session() {
    let bin = venv_with("pytest-lsp-venv", &["pytest-lsp==1.0.1"]);
    let out = Command::new(bin.join("python"))
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "."])
        .current_dir(Path::new(ROOT).join("tests/lsp"))
        .env("NPU_MEM", env!("CARGO_BIN_EXE_npu-mem"))
        .env("NPU_MEM_DEMO", Path::new(ROOT).join("fixtures/demo"))
        .output()
        .expect("pytest runs");
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "{}", output_text(&out));
}

#[test]
#[ignore = "needs Debian's neovim (`apt-get install neovim`, which .ci/run does); run with `cargo test -- --ignored`"]
fn neovim_attaches_the_server_and_receives_the_cli_findings() {
    let nvim = Command::new("nvim").arg("--version").output();
    let version = nvim.as_ref().map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").to_string());
    assert!(version.as_ref().is_ok_and(|v| v.starts_with("NVIM")), "no nvim on PATH: `apt-get install -y neovim`");
    eprintln!("{}", version.unwrap_or_default());
    let dir = temp_dir("nvim");
    copy_dir(&Path::new(ROOT).join("fixtures/demo"), &dir.join("demo"));
    let out_file = dir.join("diagnostics.txt");
    let bin = Path::new(env!("CARGO_BIN_EXE_npu-mem")).parent().unwrap();
    let nvim = Path::new(ROOT).join("tests/nvim");
    let out = Command::new("nvim")
        .args(["--headless", "-i", "NONE", "-n", "-u"])
        .arg(nvim.join("init.lua"))
        .arg("train.py")
        .arg("-c")
        .arg(format!("luafile {}", nvim.join("print.lua").display()))
        .current_dir(dir.join("demo"))
        .env("PATH", path_with(bin))
        .env("NPU_MEM_NVIM_SETUP", Path::new(ROOT).join("editors/neovim/npu-mem.lua"))
        .env("NPU_MEM_NVIM_OUT", &out_file)
        .output()
        .expect("nvim runs");
    assert!(out.status.success(), "{}", output_text(&out));
    let printed = std::fs::read_to_string(&out_file).unwrap_or_default();
    eprintln!("Neovim received:\n{printed}");

    // What the CLI reports for the file: `CODE LINE:COLUMN SEVERITY npu-mem`, Neovim's
    // severities (1 error, 2 warning, 3 information); the demo's lines are ASCII, so
    // Neovim's byte columns are the CLI's character columns.
    let run = npu_mem_in(&dir.join("demo"), &["scan", "--no-cache", "--format", "json", "--fail-on", "never", "."]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut want: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == "train.py")
        .map(|f| {
            let severity = match f["severity"].as_str().unwrap() {
                "error" => 1,
                "warning" => 2,
                _ => 3,
            };
            format!("{} {}:{} {severity} npu-mem", f["code"].as_str().unwrap(), f["line"], f["column"])
        })
        .collect();
    want.sort();
    assert!(!want.is_empty());
    assert_eq!(printed.lines().collect::<Vec<_>>(), want);
}
