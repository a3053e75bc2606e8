//! The Python scripts a shell script starts, with the words after them:
//! what a launch line tells about the run it starts (its options, read by
//! [`crate::project::configurations`]; its script, followed by
//! [`crate::project::launches`]).

use crate::parse::shell::{split_words, Script};
use serde::{Deserialize, Serialize};

/// A Python script that a shell command starts, with the words after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    /// The script's file name (`train.py`), or its module path for `python -m`.
    pub script: String,
    /// The words after it, each ended by a NUL (one string, not a list:
    /// every launch of every shell script is kept until the project is
    /// judged), as the command gives them (variables the script
    /// assigns one literal value replaced by it).
    pub arguments: String,
    /// A launcher stands between Python and the script (`-m torch.distributed.launch`,
    /// `torchrun`): it may add options of its own (`--local_rank`).
    pub via_launcher: bool,
    /// The script is named where its arguments cannot be read (a command
    /// built in a variable, `CMD="python3 run.py "; CMD+="--do_train"; $CMD`):
    /// it may be given any options.
    pub opaque: bool,
    /// The line of the command, for messages.
    pub line: usize,
}

impl Launch {
    /// Whether it starts the Python file at display path `path`: by its
    /// file name, or for `python -m` by its dotted module path.
    pub fn starts(&self, path: &str) -> bool {
        if self.script == ANY_SCRIPT {
            return true;
        }
        match self.script.ends_with(".py") {
            true => path.rsplit('/').next() == Some(self.script.as_str()),
            false => {
                let module = path.trim_end_matches(".py").trim_end_matches("/__main__").replace('/', ".");
                module == self.script || module.ends_with(&format!(".{}", self.script))
            }
        }
    }

    /// The words after the script.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.arguments.split_terminator('\0')
    }
}

/// Commands that start a Python script themselves, or run the command after them.
const LAUNCHERS: &[&str] = &["torchrun", "deepspeed", "accelerate", "mpirun", "horovodrun", "srun", "msrun"];

/// Options that a launcher gives the script it starts.
pub(crate) const LAUNCHER_OPTIONS: &[&str] = &["local_rank"];

/// The Python scripts that the commands of a shell script (`text`, read as
/// `script`) start, with their arguments; a script named anywhere else in
/// it (an assignment's value, a command that is not Python and does more
/// than handle files, see [`only_handles_files`]) is an opaque launch, with
/// options not known, and a part the parser could not read may start any
/// script with any options.
pub(crate) fn launches_in(text: &str, script: &Script) -> Vec<Launch> {
    let line_of = |at: usize| text[..at.min(text.len())].bytes().filter(|b| *b == b'\n').count() + 1;
    let opaque = |words: Vec<String>, line: usize| {
        words.into_iter().filter(|w| w.ends_with(".py")).map(move |w| Launch {
            script: file_name(&w),
            arguments: String::new(),
            via_launcher: false,
            opaque: true,
            line,
        })
    };
    let any_script = |line: usize| Launch {
        script: ANY_SCRIPT.to_string(),
        arguments: String::new(),
        via_launcher: false,
        opaque: true,
        line,
    };
    let mut out: Vec<Launch> = script.unreadable.iter().map(|&(at, _)| any_script(line_of(at))).collect();
    let mentions = &script.mentions;
    // Variables whose every value the script spells out (a value naming a
    // script is an opaque launch of it, below); `CMD+="--x 1"` (read as
    // `${CMD}--x 1`) adds to the values spelled out before it.
    let unknown = |name: &str| {
        let own = format!("${{{name}}}");
        mentions.iter().any(|m| {
            m.name == name && m.value.as_ref().is_some_and(|v| v.strip_prefix(&own).unwrap_or(v).contains(['$', '`']))
        })
    };
    let assigned: Vec<&str> =
        mentions.iter().filter(|m| m.value.is_some() && !unknown(&m.name)).map(|m| m.name.as_str()).collect();
    // Where the commands read as launches lie (byte ranges).
    let mut launch_ranges: Vec<(usize, usize)> = Vec::new();
    for c in &script.commands {
        let (words, line) = (c.words(), line_of(c.range.0));
        // What precedes the command on its line: after an assignment or in
        // arithmetic or a test (`t=$(( $end - $start ))`, `if ((${PIPESTATUS[0]} != 0))`)
        // a variable is a value, not a command.
        let line_start = text[..c.range.0].rfind('\n').map_or(0, |i| i + 1);
        let a_command = !text[line_start..c.range.0].contains(['=', '(', '[']);
        match launch_of(&words, line) {
            Some(launch) => {
                launch_ranges.push(c.range);
                out.push(launch);
            }
            None if a_command && runs_unknown_command(&words, &assigned) => out.push(any_script(line)),
            None if a_command && only_handles_files(&words) => {}
            None => out.extend(opaque(words, line)),
        }
    }
    // A variable of one literal value that every read of which lies in a
    // command read as a launch (`PY="python train.py"; $PY --lr 1`): those
    // commands were read with it expanded, so its value names no other launch.
    let read_in_launches = |name: &str| {
        let values = mentions.iter().filter(|m| m.name == name && m.value.is_some()).count();
        let mut reads = mentions.iter().filter(|m| m.name == name && m.value.is_none()).peekable();
        let in_launch = |(at, end): (usize, usize)| launch_ranges.iter().any(|&(from, to)| from <= at && end <= to);
        values == 1 && assigned.contains(&name) && reads.peek().is_some() && reads.all(|r| in_launch(r.range))
    };
    for m in mentions {
        if let Some(value) = m.value.as_ref().filter(|_| !read_in_launches(&m.name)) {
            out.extend(opaque(split_words(value), line_of(m.range.0)));
        }
    }
    // An assignment's value is read both as a value and as the command after it.
    out.sort_by_key(|l| l.line);
    out.dedup();
    out
}

/// Commands that run none of the files they name, print none of them (which
/// `| python` could run) and copy none (which a later launch could run
/// under another name).
const FILE_TOOLS: &[&str] = &["chmod", "diff", "dos2unix", "ls", "mkdir", "rm", "touch", "wc"];

/// Whether a command only handles the files it names: one of [`FILE_TOOLS`],
/// or `sed` editing them in place (Huawei's test scripts `sed -i
/// "s|pass|break|g" $cur_path/utils.py` before a run, and back after it). A
/// script it names is not started. `cat`, `sed` without `-i`, `cp` and `mv`
/// may hand a script to a launch, so the script stays an opaque one.
fn only_handles_files(words: &[String]) -> bool {
    let Some(command) = words.first().map(|w| w.rsplit('/').next().unwrap_or(w)) else { return false };
    let in_place = |w: &String| {
        w == "--in-place"
            || w.starts_with("--in-place=")
            || (w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
    };
    FILE_TOOLS.contains(&command) || command == "sed" && words[1..].iter().any(in_place)
}

/// The script of a launch whose command is not known: it may be any.
pub(crate) const ANY_SCRIPT: &str = "*";

/// Whether a command runs what a variable holds that the script does not
/// spell out (`$CMD`, `eval "${BERT_CMD} --seed=1"` with `BERT_CMD=$1`, given
/// by the caller): it may start any script with any options.
fn runs_unknown_command(words: &[String], assigned: &[&str]) -> bool {
    let first = match words.first().map(String::as_str) {
        Some("eval") => words.get(1).and_then(|w| w.split_whitespace().next()),
        other => other,
    };
    let Some(variable) = first.and_then(|w| w.strip_prefix('$')) else { return false };
    let name = variable.trim_start_matches('{').split(|c: char| !(c.is_alphanumeric() || c == '_')).next();
    // `$1 == --help ]]` is the rest of a test after `||`, and `$1` an argument, not a command.
    let in_test = words.iter().any(|w| w == "]]" || w == "]");
    let named = name.filter(|n| n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
    !in_test && named.is_some_and(|n| !assigned.contains(&n))
}

/// The script a command's `words` start, if it runs Python or a launcher.
fn launch_of(words: &[String], line: usize) -> Option<Launch> {
    let runner = words.iter().position(|w| {
        let name = w.rsplit('/').next().unwrap_or(w);
        name.to_ascii_lowercase().contains("python") || LAUNCHERS.contains(&name)
    })?;
    let after = &words[runner + 1..];
    let script_at = after.iter().position(|w| w.ends_with(".py"));
    let module_at = after.iter().position(|w| w == "-m").filter(|&m| m + 1 < after.len());
    let (script, args, via_launcher) = match (script_at, module_at) {
        // `python -m tools.train --x`: the module is the script.
        (None, Some(m)) => (after[m + 1].clone(), &after[m + 2..], false),
        // `python -m torch.distributed.launch ... train.py --x`: a launcher starts the script.
        (Some(s), Some(m)) if m < s => (file_name(&after[s]), &after[s + 1..], true),
        (Some(s), _) => (file_name(&after[s]), &after[s + 1..], runner > 0 || LAUNCHERS.contains(&&*words[runner])),
        (None, None) => return None,
    };
    let arguments = args.iter().take_while(|w| !is_redirection(w)).map(|w| format!("{w}\0")).collect();
    // `... | xargs python train.py --x`: xargs adds words read from its input.
    let opaque = words[..runner].iter().any(|w| w.rsplit('/').next() == Some("xargs"));
    Some(Launch { script, arguments, via_launcher, opaque, line })
}

/// The file name of a script path (`${cur_path}/../train.py` is `train.py`).
fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// `> log`, `2>&1`, `< in`: the command's arguments end there.
fn is_redirection(word: &str) -> bool {
    let rest = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    rest.starts_with('>') || rest.starts_with('<')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_built_by_appending_literals_is_no_unknown_command() {
        // fixtures/branches' eval.sh: `$CMD` runs evaluate.py with options
        // not read (an opaque launch), not any script with any options.
        let script = "CMD=\"python3 evaluate.py \"\nCMD+=\"--num-gpu 8\"\n$CMD\n";
        let found = launches_in(script, &crate::parse::shell::read(script));
        let got: Vec<(&str, bool)> = found.iter().map(|l| (l.script.as_str(), l.opaque)).collect();
        assert_eq!(got, [("evaluate.py", true)]);
        // Appended to a value the script does not spell out, it may be anything.
        let script = "CMD=$1\nCMD+=\" --x\"\n$CMD\n";
        let found = launches_in(script, &crate::parse::shell::read(script));
        assert!(found.iter().any(|l| l.script == ANY_SCRIPT));
    }

    #[test]
    fn options_passed_through_xargs_are_not_known() {
        let script = "cat args.txt | xargs -n 2 python train.py --amp\npython train.py --amp\n";
        let found = launches_in(script, &crate::parse::shell::read(script));
        let got: Vec<(&str, bool)> = found.iter().map(|l| (l.script.as_str(), l.opaque)).collect();
        assert_eq!(got, [("train.py", true), ("train.py", false)]);
    }

    #[test]
    fn launches_are_read_from_commands_and_named_scripts_are_opaque() {
        let script = "export X=1\nnohup taskset -c 0-23 python3 ${dir}/../main.py --a 1 &\n\
            torchrun --nproc_per_node 8 tools/train.py --b\npython -m tools.train --c\n\
            CMD=\"python3 eval.py \"\ncp run.py /tmp\r\nsed -i \"s|pass|break|g\" $cur_path/utils.py\nrm -f old.py\n\
            cat job.py | python -\nsed -n 1,5p show.py\nif [[ $1 == -h || $1 == --help ]]; then exit; fi\nRUN=$1\n$RUN\nt=$(( $RUN - 1 ))\nif ((${PIPESTATUS[0]} != 0)); then exit; fi\npython a.py \\\r\n  --d 1\neval \"${BERT_CMD} --seed=1\"\n$CMD\n";
        let found = launches_in(script, &crate::parse::shell::read(script));
        let got: Vec<(&str, Vec<&str>, bool, bool)> =
            found.iter().map(|l| (l.script.as_str(), l.words().collect(), l.via_launcher, l.opaque)).collect();
        assert_eq!(
            got,
            vec![
                ("main.py", vec!["--a", "1"], false, false),
                ("train.py", vec!["--b"], true, false),
                ("tools.train", vec!["--c"], false, false),
                // A copy may be run under another name.
                ("run.py", vec![], false, true),
                // `sed -i` and `rm` start none of the scripts they name; `cat` may feed one to Python.
                ("job.py", vec![], false, true),
                ("show.py", vec![], false, true),
                ("*", vec![], false, true),
                ("a.py", vec!["--d", "1"], false, false),
                ("*", vec![], false, true),
                // `CMD` holds one literal value and is only run (`$CMD`): that
                // launch is read as it is, and the assignment names no other.
                ("eval.py", vec![], false, false),
            ]
        );
        // Read anywhere else too (`CMD="$PY --fast"`), the value may run with any options.
        let script = "PY=\"python t.py\"\n$PY --lr 1\nCMD=\"$PY --fast\"\n";
        let found = launches_in(script, &crate::parse::shell::read(script));
        let got: Vec<(&str, bool)> = found.iter().map(|l| (l.script.as_str(), l.opaque)).collect();
        assert_eq!(got, [("t.py", true), ("t.py", false)]);
    }
}
