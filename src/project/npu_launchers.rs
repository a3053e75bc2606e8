//! The shell scripts that start a project's NPU runs. A port keeps the
//! original's own shell scripts beside the ones it adds: ESPnet's hundreds
//! of `egs/*/run.sh` recipes, NVIDIA's `run_squad.sh`, mmdet's
//! `tools/dist_train.sh`. Huawei's ports start their runs from scripts that
//! say they are for the NPU (`test/train_full_8p.sh` sources `env_npu.sh`,
//! sets `ASCEND_DEVICE_ID` or `RANK_SIZE` for HCCL); the upstream recipes
//! never name the NPU and start nothing that runs on it.
//!
//! When some shell scripts of a project name the NPU, the project's NPU
//! launchers are those scripts, the others in their directories (a port's
//! `test/run_ner_span.sh` beside its `test/train_full_8p.sh`), those that a
//! README step runs, the shell scripts they run, and what they
//! run, found by name: a path (`bash egs2/aishell/asr1/run.sh`, also after a
//! variable, `${cur_path}/scripts/run.sh`) is the script whose path ends so;
//! a bare name (`bash run.sh`, `./asr.sh`) is the script of that name in
//! the caller's directory, in a directory the caller `cd`s into (`cd
//! $cur_path/egs2/aishell/asr1`, by its literal end; a script's `cd ..` or
//! `cd $test_path_dir/..` steps up from its own directory), or at the
//! project's top; when none of those holds one, every script of that name. The other
//! shell scripts start no NPU run (see [`crate::project::launches`]). A project whose
//! shell scripts never name the NPU is left as it is.

use crate::source::read_file;
use crate::walk::{FileKind, ScanFile};
use std::collections::{BTreeSet, HashMap};

/// What marks a shell script as written for the NPU.
static NAMES_THE_NPU: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?i)(^|[^a-z0-9])(npu|ascend|hccl|torch_npu)([^a-z0-9]|$)").expect("a valid pattern")
});

/// A `cd` into a directory, also indented in an `if` block: its argument.
/// `$(dirname "$0")`, the script's own directory, is read as `.`, so that
/// `cd "$(dirname "$0")/.."` steps up from it.
static CD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r#"(?m)(?:^[ \t]*|[;&|][ \t]*|\bthen[ \t]+|\bdo[ \t]+)cd[ \t]+["']?((?:\$\([ \t]*dirname[ \t]+["']?\$(?:0|\{?BASH_SOURCE(?:\[0\])?\}?)["']?[ \t]*\))?[^\s;&|"'()]*)"#,
    )
    .expect("a valid pattern")
});

/// The shell scripts of a project (`files`, whose directory is `dir` as
/// displayed) that start its NPU runs, by display path with their text
/// (comments removed), or `None` when no shell script of the project names
/// the NPU.
///
/// `documents` gives the project's documents (display path and text), read
/// only when some script names the NPU; a script that a command line of one
/// starts (`sh start.sh` in a README step) launches too, and `is_command`
/// tells whether the name at a byte of a document's text is in such a line.
pub fn closure(
    files: &[&ScanFile],
    dir: &str,
    documents: impl FnOnce() -> Vec<(String, String)>,
    is_command: impl Fn(&str, usize) -> bool,
) -> Option<Vec<(String, String)>> {
    let scripts: Vec<(String, String)> = files
        .iter()
        .filter(|f| f.kind == FileKind::Shell)
        .filter_map(|f| Some((f.display().into_owned(), read_file(f).ok()?.text)))
        .map(|(path, text)| (path, crate::parse::shell::Comments::of(&text).blank(&text)))
        .collect();
    // The scripts that name the NPU, and those beside them: Huawei keeps a
    // port's launch scripts together (`test/`), not every one naming the NPU.
    let npu_dirs: BTreeSet<&str> =
        scripts.iter().filter(|(_, text)| NAMES_THE_NPU.is_match(text)).map(|(path, _)| parent(path)).collect();
    if npu_dirs.is_empty() {
        return None;
    }
    let mut reached: BTreeSet<usize> =
        (0..scripts.len()).filter(|&i| npu_dirs.contains(parent(&scripts[i].0))).collect();
    let paths: Vec<&str> = scripts.iter().map(|(p, _)| p.as_str()).collect();
    let names = ScriptsByName::new(&paths)?;
    // README steps that run a shell script (`cd framework && sh start.sh`).
    for (doc, text) in documents() {
        let commands = |at: usize| is_command(&text, at);
        reached.extend(called(&doc, false, &text, dir, &names, &paths, &commands));
    }
    let mut todo: Vec<usize> = reached.iter().copied().collect();
    while let Some(i) = todo.pop() {
        let (caller, text) = &scripts[i];
        for j in called(caller, true, text, dir, &names, &paths, &|_| true) {
            if reached.insert(j) {
                todo.push(j);
            }
        }
    }
    Some(scripts.into_iter().enumerate().filter(|(i, _)| reached.contains(i)).map(|(_, s)| s).collect())
}

/// The file names of a project's shell scripts, searched in one pass over
/// a text, with the scripts (indexes) that bear each.
struct ScriptsByName {
    automaton: aho_corasick::AhoCorasick,
    scripts: Vec<Vec<usize>>,
}

impl ScriptsByName {
    /// `None` when the names cannot be searched (too many for the automaton).
    fn new(paths: &[&str]) -> Option<Self> {
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, path) in paths.iter().enumerate() {
            by_name.entry(file_name(path)).or_default().push(i);
        }
        let (names, scripts): (Vec<&str>, Vec<Vec<usize>>) = by_name.into_iter().unzip();
        Some(ScriptsByName { automaton: aho_corasick::AhoCorasick::new(names).ok()?, scripts })
    }
}

/// The scripts (indexes into `paths`) that the script (`caller_is_script`)
/// or document at `caller`, whose text without comments is `text`, runs by
/// name where `runs_there` holds (at the byte of the name).
fn called(
    caller: &str,
    caller_is_script: bool,
    text: &str,
    dir: &str,
    names: &ScriptsByName,
    paths: &[&str],
    runs_there: &dyn Fn(usize) -> bool,
) -> Vec<usize> {
    let cd_dirs: Vec<&str> = CD.captures_iter(text).filter_map(|c| literal_tail(c.get(1)?.as_str())).collect();
    let caller_dir = parent(caller);
    // `cd ..` or `cd $test_path_dir/..`: Huawei's launch scripts find their
    // bearings from their own directory (`test/`) and step up from it to
    // the port's top; a document's `cd ..` depends on where its reader is.
    let up_dirs: Vec<String> = match caller_is_script {
        true => CD.captures_iter(text).filter_map(|c| ancestor(caller_dir, levels_up(c.get(1)?.as_str())?)).collect(),
        false => Vec::new(),
    };
    let mut out = Vec::new();
    for m in names.automaton.find_overlapping_iter(text) {
        let (at, scripts) = (m.start(), &names.scripts[m.pattern().as_usize()]);
        // A file name, not a module path: `train.run.sh` is another script.
        let dotted = at > 0 && text.as_bytes()[at - 1] == b'.';
        if dotted || !crate::semantic::named_files::whole_name(text.as_bytes(), at, m.end()) || !runs_there(at) {
            continue;
        }
        let written = path_before(text, at);
        let found: Vec<usize> = match literal_tail(written) {
            // A path: the script whose path ends so.
            Some(tail) => scripts.iter().copied().filter(|&j| ends_with_dir(parent(paths[j]), tail)).collect(),
            // A bare name: beside the caller, where it `cd`s, or at the top.
            None => scripts
                .iter()
                .copied()
                .filter(|&j| {
                    let d = parent(paths[j]);
                    d == caller_dir
                        || d == dir
                        || cd_dirs.iter().any(|c| ends_with_dir(d, c))
                        || up_dirs.iter().any(|u| u == d)
                })
                .collect(),
        };
        out.extend(if found.is_empty() { scripts.clone() } else { found });
    }
    out
}

/// The directory part written before byte `at` of `text` (`egs2/asr1/` of
/// `bash egs2/asr1/run.sh`, `${dir}/` of `${dir}/run.sh`), empty for a bare name.
fn path_before(text: &str, at: usize) -> &str {
    let start = text[..at]
        .rfind(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '=' | ';' | '(' | '`'))
        .map_or(0, |i| i + 1);
    &text[start..at]
}

/// The literal end of a written directory: its parts after the last one
/// that holds a variable or is `.`/`..` (`egs2/aishell/asr1` of
/// `$cur_path/egs2/aishell/asr1`, or of `./egs2/aishell/asr1/`); `None` when
/// nothing literal is left.
fn literal_tail(written: &str) -> Option<&str> {
    let trimmed = written.trim_end_matches('/');
    let parts: Vec<&str> = trimmed.split('/').collect();
    let first = parts.iter().rposition(|p| p.contains(['$', '}', '{', '`']) || *p == "." || *p == ".." || p.is_empty());
    let start = first.map_or(0, |k| k + 1);
    if start >= parts.len() {
        return None;
    }
    let skip: usize = parts[..start].iter().map(|p| p.len() + 1).sum();
    trimmed.get(skip..).filter(|t| !t.is_empty())
}

/// How many directories up a `cd` target that ends in `..` goes (`..`,
/// `$test_path_dir/..` and `$(dirname "$0")/..` one, `${cur}/../..` two),
/// after whatever comes before them; `None` for a target that does not end
/// in `..`.
fn levels_up(target: &str) -> Option<usize> {
    let ups = target.trim_end_matches('/').split('/').rev().take_while(|p| *p == "..").count();
    (ups > 0).then_some(ups)
}

/// The directory `levels` above `dir` (as displayed, `.` for the top of
/// the scan), if there is one.
fn ancestor(dir: &str, levels: usize) -> Option<String> {
    let mut d = dir;
    for _ in 0..levels {
        d = match d.rsplit_once('/') {
            Some((up, _)) => up,
            None if d != "." => ".",
            None => return None,
        };
    }
    Some(d.to_string())
}

/// Whether the directory `dir` (as displayed) is `tail` or ends with `/tail`.
fn ends_with_dir(dir: &str, tail: &str) -> bool {
    dir == tail || dir.strip_suffix(tail).is_some_and(|rest| rest.ends_with('/'))
}

/// The directory of a display path (`.` for a file at the top of the scan).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(d, _)| d)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cd_up_names_an_ancestor_of_the_caller() {
        assert_eq!(levels_up("$test_path_dir/.."), Some(1));
        assert_eq!(levels_up("../../"), Some(2));
        assert_eq!(levels_up("../egs"), None);
        assert_eq!(levels_up("$(dirname \"$0\")/.."), Some(1));
        assert_eq!(ancestor("p/egs/test", 1).as_deref(), Some("p/egs"));
        assert_eq!(ancestor("test", 1).as_deref(), Some("."));
        assert_eq!(ancestor("test", 2), None);
    }

    #[test]
    fn the_literal_end_of_a_directory_is_what_follows_its_variables() {
        assert_eq!(literal_tail("$cur_path/egs2/aishell/asr1"), Some("egs2/aishell/asr1"));
        assert_eq!(literal_tail("${cur_path}/egs2/aishell/asr1/"), Some("egs2/aishell/asr1"));
        assert_eq!(literal_tail("./scripts/"), Some("scripts"));
        assert_eq!(literal_tail("tools"), Some("tools"));
        assert_eq!(literal_tail("${dir}/"), None);
        assert_eq!(literal_tail(".."), None);
        assert_eq!(literal_tail(""), None);
    }

    #[test]
    fn a_called_script_is_found_by_its_path_or_where_the_caller_looks() {
        let paths = [
            "p/test/train_full_8p.sh",
            "p/egs2/aishell/asr1/run.sh",
            "p/egs/wsj/asr1/run.sh",
            "p/egs2/aishell/asr1/asr.sh",
            "p/tools/dist_train.sh",
            "p/scripts/prepare.sh",
        ];
        let names = ScriptsByName::new(&paths).expect("searchable names");
        let calls = |caller: &str, text: &str| {
            let mut c = called(
                caller,
                true,
                &crate::parse::shell::Comments::of(text).blank(text),
                "p",
                &names,
                &paths,
                &|_| true,
            );
            c.sort_unstable();
            c.dedup();
            c.into_iter().map(|i| paths[i]).collect::<Vec<_>>()
        };
        let launcher = "source env_npu.sh\ncd $cur_path/egs2/aishell/asr1\nnohup bash run.sh --ngpu 8 &\n";
        assert_eq!(calls(paths[0], launcher), ["p/egs2/aishell/asr1/run.sh"]);
        assert_eq!(calls(paths[1], "./asr.sh --lang zh\n"), ["p/egs2/aishell/asr1/asr.sh"], "beside the caller");
        assert_eq!(calls(paths[0], "bash ${cur_path}/tools/dist_train.sh 8\n"), ["p/tools/dist_train.sh"]);
        assert_eq!(calls(paths[0], "bash prepare.sh\n"), ["p/scripts/prepare.sh"], "found nowhere nearer: every one");
        assert_eq!(calls(paths[0], "bash run.sh\n"), ["p/egs2/aishell/asr1/run.sh", "p/egs/wsj/asr1/run.sh"]);
        assert_eq!(calls(paths[0], "# bash tools/dist_train.sh\necho done # then run.sh\n"), Vec::<&str>::new());
        assert_eq!(calls(paths[0], "bash dist_train.sh.bak\n"), Vec::<&str>::new(), "a longer name");
        assert_eq!(calls(paths[0], "bash my.prepare.sh; cp prepare.sh-old x\n"), Vec::<&str>::new(), "longer names");
        // Huawei's template steps up from its own `test/` directory.
        let stepped_up = "test_path_dir=${cur_path}\ncd $test_path_dir/..\nnohup bash run.sh --stage 4 &\n";
        assert_eq!(calls("p/egs/wsj/asr1/test/train_full_8p.sh", stepped_up), ["p/egs/wsj/asr1/run.sh"]);
        assert_eq!(
            calls("p/egs2/aishell/asr1/test/a/b.sh", "cd ${cur}/../..\nbash run.sh\n"),
            ["p/egs2/aishell/asr1/run.sh"]
        );
        // Indented in the template's `if`, and from the script's own directory.
        let indented =
            "if [ x\"${last}\" == x\"test\" ];then\n    test_path_dir=${cur_path}\n    cd ..\nfi\nbash run.sh\n";
        assert_eq!(calls("p/egs/wsj/asr1/test/train_full_8p.sh", indented), ["p/egs/wsj/asr1/run.sh"]);
        let dirname = "cd \"$(dirname \"$0\")/..\"\nbash run.sh\n";
        assert_eq!(calls("p/egs/wsj/asr1/test/train_full_8p.sh", dirname), ["p/egs/wsj/asr1/run.sh"]);
    }

    #[test]
    fn an_npu_launcher_names_the_npu() {
        for text in
            ["source ${test_path_dir}/env_npu.sh", "export ASCEND_DEVICE_ID=0", "export HCCL_WHITELIST_DISABLE=1"]
        {
            assert!(NAMES_THE_NPU.is_match(text), "{text}");
        }
        for text in ["python train.py --gpus 8", "export CUDA_VISIBLE_DEVICES=0", "input_npus=1"] {
            assert!(!NAMES_THE_NPU.is_match(text), "{text}");
        }
    }
}
