//! `named_in_project` on a `file` anchor: whether a Python string or shell
//! line of the file's project names it, in both directions, for any
//! extension a pack chooses; and on Python code: whether a shell script of
//! the project runs the file.

mod common;

/// A pack of one rule `NF001` with the given `[rule.match]` body.
fn pack(body: &str) -> String {
    format!(
        "[pack]\nname = \"named\"\n\n[[rule]]\ncode = \"NF001\"\nname = \"n\"\nsection = \"memory\"\n\
         severity = \"info\"\nmessage = \"{{path}}\"\n\
         docs = {{ what = \"w\", why = \"y\", example = \"e\", instead = \"i\" }}\n[rule.match]\n{body}\n"
    )
}

/// The paths NF001 reports in a project of `files`, sorted; `runs` scans
/// in a row sharing a cache, each of which must report the same.
fn reported(name: &str, body: &str, files: &[(&str, &str)], runs: usize) -> Vec<String> {
    let dir = common::temp_dir(name);
    std::fs::write(dir.join("p.toml"), pack(body)).unwrap();
    std::fs::write(dir.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let scan = || {
        let args = ["scan", ".", "--rules", "p.toml", "--select", "NF", "--format", "json", "--cache-dir", "cache"];
        let run = common::npu_mem_in(&dir, &args);
        assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let mut paths: Vec<String> =
            report["findings"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
        paths.sort();
        paths
    };
    let first = scan();
    for run in 1..runs {
        assert_eq!(scan(), first, "scan {} with a warm cache", run + 1);
    }
    first
}

const FILES: &[(&str, &str)] = &[
    ("build.py", "SOURCES = ['kernels/used.glsl']\n# SOURCES += ['kernels/commented.glsl']\n"),
    ("kernels/used.glsl", "void main() {}\n"),
    ("kernels/commented.glsl", "void main() {}\n"),
    ("kernels/shell.glsl", "void main() {}\n"),
    ("make.sh", "glslc kernels/shell.glsl -o shell.spv  # not kernels/none.glsl\n"),
    ("kernels/none.glsl", "void main() {}\n"),
];

#[test]
fn named_files_are_the_ones_strings_and_shell_lines_spell_out() {
    let named = reported("named-true", "file = \"*.glsl\"\nnamed_in_project = true", FILES, 1);
    assert_eq!(named, ["kernels/shell.glsl", "kernels/used.glsl"]);
    let unnamed = reported("named-false", "file = \"*.glsl\"\nnamed_in_project = false", FILES, 1);
    assert_eq!(unnamed, ["kernels/commented.glsl", "kernels/none.glsl"]);
}

#[test]
fn a_warm_cache_keeps_the_names_of_files_that_report_nothing() {
    // build.py and make.sh report nothing themselves: the cache keeps their names all the same.
    let named = reported("named-cached", "file = \"*.glsl\"\nnamed_in_project = true", FILES, 2);
    assert_eq!(named, ["kernels/shell.glsl", "kernels/used.glsl"]);
}

#[test]
fn on_python_code_it_asks_whether_a_script_runs_the_file() {
    const RUN: &[(&str, &str)] = &[
        ("train.py", "import torch\ntorch.load('a.pt')\n"),
        ("tools/export.py", "import torch\ntorch.load('b.pt')\n"),
        ("notes.py", "import torch\n# python3 notes.py is no launch\ntorch.load('c.pt')\nCMD = 'python export.py'\n"),
        ("test/train_1p.sh", "python3 -u ${dir}/../train.py --epochs 1\n# python3 notes.py\n"),
    ];
    let run = reported("named-python", "call = \"torch.load\"\nnamed_in_project = true", RUN, 2);
    assert_eq!(run, ["train.py"]);
    let not_run = reported("named-python-not", "call = \"torch.load\"\nnamed_in_project = false", RUN, 1);
    assert_eq!(not_run, ["notes.py", "tools/export.py"]);
}

#[test]
fn built_only_with_cuda_tells_builds_that_test_for_the_toolkit_apart() {
    const BUILDS: &[(&str, &str)] = &[
        (
            "setup.py",
            "import os\nsources = ['kernels/cpu.glsl']\n\
             if os.getenv('FORCE_CUDA') == '1':\n    sources += ['kernels/gpu.glsl', 'kernels/both.glsl']\n",
        ),
        ("make.sh", "glslc kernels/both.glsl\n"),
        ("kernels/cpu.glsl", "void main() {}\n"),
        ("kernels/gpu.glsl", "void main() {}\n"),
        ("kernels/both.glsl", "void main() {}\n"),
        ("kernels/none.glsl", "void main() {}\n"),
    ];
    // setup.py tests for the toolkit, so every name it spells out is built only
    // with CUDA; make.sh names both.glsl as well, and nothing names none.glsl.
    let only = "file = \"*.glsl\"\nnamed_in_project = true\nbuilt_only_with_cuda = true";
    assert_eq!(reported("cuda-only", only, BUILDS, 2), ["kernels/cpu.glsl", "kernels/gpu.glsl"]);
    let always = "file = \"*.glsl\"\nnamed_in_project = true\nbuilt_only_with_cuda = false";
    assert_eq!(reported("cuda-always", always, BUILDS, 2), ["kernels/both.glsl"]);
}

#[test]
fn built_only_with_cuda_needs_a_file_anchor() {
    let dir = common::temp_dir("cuda-only-anchor");
    std::fs::write(dir.join("p.toml"), pack("call = \"torch.load\"\nbuilt_only_with_cuda = true")).unwrap();
    std::fs::write(dir.join("train.py"), "import torch\n").unwrap();
    let run = common::npu_mem_in(&dir, &["scan", ".", "--rules", "p.toml"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("built_only_with_cuda") && run.stderr.contains("file = "), "{}", run.stderr);
}
