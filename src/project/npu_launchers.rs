//! The shell scripts that start a project's NPU runs. A port keeps the
//! original's own shell scripts beside the ones it adds: ESPnet's hundreds
//! of `egs/*/run.sh` recipes, NVIDIA's `run_squad.sh`, mmdet's
//! `tools/dist_train.sh`. Huawei's ports start their runs from scripts that
//! say they are for the NPU (`test/train_full_8p.sh` sources `env_npu.sh`,
//! sets `ASCEND_DEVICE_ID` or `RANK_SIZE` for HCCL); the upstream recipes
//! never name the NPU and start nothing that runs on it.
//!
//! When some shell scripts of a project set up or start an NPU run
//! ([`crate::semantic::npu_script`]: they source `env_npu.sh`, set
//! `ASCEND_*` variables, pass `--device npu`, ...), the project's NPU
//! launchers are those scripts, the ones that name the NPU otherwise (an
//! `echo`, a test), the others in their directories (a port's
//! `test/run_ner_span.sh` beside its `test/train_full_8p.sh`), those that a
//! README step runs, the shell scripts they run, and what they
//! run, found by name: a path (`bash egs2/aishell/asr1/run.sh`, also after a
//! variable, `${cur_path}/scripts/run.sh`) is the script whose path ends so;
//! a bare name (`bash run.sh`, `./asr.sh`) is the script of that name in
//! the caller's directory, in a directory the caller changes into
//! ([`crate::semantic::shell_dirs`]: `cd $cur_path/egs2/aishell/asr1`, by
//! its literal end; `cd ..` or `cd $test_path_dir/..` steps up from the
//! script's own directory; `pushd`, subshells, `sh -c "cd ..."` alike), or at the
//! project's top; when none of those holds one, or the caller changes into
//! a directory it does not spell out (`cd "$1"`), every script of that name.
//! The other shell scripts start no NPU run (see [`crate::project::launches`]).
//! A project whose shell scripts only name the NPU, or never, is left as it is.

use crate::semantic::npu_script::{self, NpuSign};
use crate::semantic::shell_dirs::{self, literal_tail, Place};
use crate::source::read_file;
use crate::walk::{FileKind, ScanFile};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};

/// In a document, a `cd` into a directory, also indented in an `if` block: its argument.
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
/// (comments removed), or `None` when no shell script of the project sets
/// up or starts an NPU run.
///
/// `documents` gives the project's documents (display path and text), read
/// only when some script names the NPU; a script that a command line of one
/// starts (`sh start.sh` in a README step) launches too, and `is_command`
/// tells whether the name at a byte of a document's text is in such a line.
pub(crate) fn closure(
    files: &[&ScanFile],
    dir: &str,
    documents: impl FnOnce() -> Vec<(String, String)>,
    is_command: impl Fn(&str, usize) -> bool,
) -> Option<Vec<(String, String)>> {
    // Read side by side; a script is parsed only when a name of the NPU may be in it, or when reached.
    let scanned: Vec<_> = files
        .par_iter()
        .filter(|f| f.kind == FileKind::Shell)
        .filter_map(|f| {
            let text = read_file(f).ok()?.text;
            let parsed = npu_script::may_name_the_npu(&text).then(|| {
                let script = crate::parse::shell::read(&text);
                (npu_script::sign(&text, &script), Read::of(&text, &script))
            });
            Some((f.display().into_owned(), text, parsed))
        })
        .collect();
    let mut read: HashMap<usize, Read> = HashMap::new();
    let mut signs = vec![NpuSign::None; scanned.len()];
    let mut texts = Vec::with_capacity(scanned.len());
    for (i, (path, text, parsed)) in scanned.into_iter().enumerate() {
        if let Some((sign, r)) = parsed {
            signs[i] = sign;
            read.insert(i, r);
        }
        texts.push((path, text));
    }
    if !signs.contains(&NpuSign::Does) {
        return None;
    }
    // The scripts that name the NPU, and those beside them: Huawei keeps a
    // port's launch scripts together (`test/`), not every one naming the NPU.
    let npu_dirs: BTreeSet<&str> =
        texts.iter().zip(&signs).filter(|(_, s)| **s != NpuSign::None).map(|((path, _), _)| parent(path)).collect();
    let scripts = &texts;
    let mut reached: BTreeSet<usize> =
        (0..scripts.len()).filter(|&i| npu_dirs.contains(parent(&scripts[i].0))).collect();
    let paths: Vec<&str> = scripts.iter().map(|(p, _)| p.as_str()).collect();
    let names = ScriptsByName::new(&paths)?;
    // README steps that run a shell script (`cd framework && sh start.sh`).
    for (doc, text) in documents() {
        let commands = |at: usize| is_command(&text, at);
        let dirs = document_dirs(&text);
        reached.extend(called(&doc, &dirs, &text, dir, &names, &paths, &commands));
    }
    let mut todo: Vec<usize> = reached.iter().copied().collect();
    while let Some(i) = todo.pop() {
        let caller = &scripts[i].0;
        let r = read.entry(i).or_insert_with(|| {
            let text = &scripts[i].1;
            Read::of(text, &crate::parse::shell::read(text))
        });
        let dirs = r.dirs.clone();
        for j in called(caller, &dirs, &r.blanked, dir, &names, &paths, &|_| true) {
            if reached.insert(j) {
                todo.push(j);
            }
        }
    }
    Some(reached.into_iter().filter_map(|i| Some((scripts[i].0.clone(), read.remove(&i)?.blanked))).collect())
}

/// What [`closure`] keeps of a script it reads.
struct Read {
    /// The text with its comments blanked.
    blanked: String,
    /// Where it may run the scripts it names.
    dirs: Dirs,
}

impl Read {
    fn of(text: &str, script: &crate::parse::shell::Script) -> Self {
        Read { blanked: script.comments.blank(text), dirs: Dirs::of_script(text, script) }
    }
}

/// Where a script or document may run the scripts it names by a bare name,
/// besides its own directory and the project's top.
#[derive(Debug, Clone, Default)]
struct Dirs {
    /// Directories whose paths end so.
    tails: Vec<String>,
    /// Directories above the caller's own, by how many levels.
    ups: Vec<usize>,
    /// It may run them anywhere.
    unknown: bool,
}

impl Dirs {
    fn of_script(text: &str, script: &crate::parse::shell::Script) -> Self {
        let changes = shell_dirs::of(text, script);
        let mut dirs = Dirs { unknown: changes.unknown, ..Dirs::default() };
        for place in changes.places {
            match place {
                Place::Start => {}
                Place::Up(levels) => dirs.ups.push(levels),
                Place::EndsWith(tail) => dirs.tails.push(tail),
            }
        }
        dirs
    }
}

/// Where a document's steps `cd` (a document's `cd ..` depends on where its
/// reader is, so only the literal ends count).
fn document_dirs(text: &str) -> Dirs {
    let tails = CD.captures_iter(text).filter_map(|c| literal_tail(c.get(1)?.as_str()).map(str::to_string)).collect();
    Dirs { tails, ..Dirs::default() }
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

/// The scripts (indexes into `paths`) that the script or document at
/// `caller`, whose text without comments is `text` and which changes into
/// `dirs`, runs by name where `runs_there` holds (at the byte of the name).
fn called(
    caller: &str,
    dirs: &Dirs,
    text: &str,
    dir: &str,
    names: &ScriptsByName,
    paths: &[&str],
    runs_there: &dyn Fn(usize) -> bool,
) -> Vec<usize> {
    let caller_dir = parent(caller);
    // `cd ..` or `cd $test_path_dir/..`: Huawei's launch scripts find their
    // bearings from their own directory (`test/`) and step up from it to
    // the port's top.
    let up_dirs: Vec<String> = dirs.ups.iter().filter_map(|&levels| ancestor(caller_dir, levels)).collect();
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
            // Where the caller does not tell (`../run.sh`, after `cd "$1"`): any.
            None if dirs.unknown || written.split('/').any(|p| p == "..") => Vec::new(),
            // A bare name: beside the caller, where it `cd`s, or at the top.
            None => scripts
                .iter()
                .copied()
                .filter(|&j| {
                    let d = parent(paths[j]);
                    d == caller_dir
                        || d == dir
                        || dirs.tails.iter().any(|c| ends_with_dir(d, c))
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
        assert_eq!(ancestor("p/egs/test", 1).as_deref(), Some("p/egs"));
        assert_eq!(ancestor("test", 1).as_deref(), Some("."));
        assert_eq!(ancestor("test", 2), None);
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
            let read = Read::of(text, &crate::parse::shell::read(text));
            let mut c = called(caller, &read.dirs, &read.blanked, "p", &names, &paths, &|_| true);
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
        // Where the caller does not say, every script of the name may be the one run.
        let everywhere = ["p/egs2/aishell/asr1/run.sh", "p/egs/wsj/asr1/run.sh"];
        assert_eq!(calls("p/egs/wsj/asr1/test/train_full_8p.sh", "cd \"$1\"\nbash run.sh\n"), everywhere);
        assert_eq!(calls("p/egs/wsj/asr1/x.sh", "bash ../run.sh\n"), everywhere);
        let pushd = "pushd $cur_path/egs2/aishell/asr1\nbash run.sh\npopd\n";
        assert_eq!(calls("p/egs/wsj/asr1/x.sh", pushd), everywhere, "beside the caller, and where it pushd-s");
        assert_eq!(calls(paths[0], pushd), ["p/egs2/aishell/asr1/run.sh"]);
    }
}
