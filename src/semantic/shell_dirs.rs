//! The directories a shell script changes into (`cd`, `builtin cd`,
//! `pushd`, also in subshells, braces, functions and `sh -c "..."`), as far
//! as the script tells: a script it runs by a bare name (`bash run.sh`) is
//! looked for in those. The reading does not follow the order of the
//! commands: every place the script may go counts, which can only find more
//! scripts. A change the script does not spell out (`cd "$1"`, `cd
//! $(cat dir.txt)`), or one in a part the parser could not read, makes the
//! place unknown: then any script of that name may be the one run.

use crate::parse::shell::{Script, ShellCommand};

/// A directory a script changes into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// One the script was already in: where it was started or its own
    /// directory (`cd "$(dirname "$0")"`, `cd $cur_path` with
    /// `cur_path=$(pwd)`), or the one before (`cd -`, `popd`).
    Start,
    /// `levels` directories above the script's own (`cd ..`, `cd $test_path_dir/..`).
    Up(usize),
    /// A directory whose path ends so (`egs2/aishell/asr1` of `cd $cur_path/egs2/aishell/asr1`).
    EndsWith(String),
}

/// Where a script's commands may run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DirChanges {
    /// The places it changes into, each once.
    pub places: Vec<Place>,
    /// Some change goes where the script does not tell.
    pub unknown: bool,
}

/// How many variables deep a `cd` target is followed (`D=$E`, `E=$F`, ...).
const MAX_INDIRECTION: usize = 4;

/// The directory changes of `script` (whose text is `text`).
pub(crate) fn of(text: &str, script: &Script) -> DirChanges {
    let mut out = DirChanges { unknown: unreadable_change(text, script), ..DirChanges::default() };
    for command in &script.commands {
        let places = match change(command, script) {
            Change::None => continue,
            Change::Unknown => None,
            Change::To(target) => places_of(&target, script, 0),
        };
        match places {
            Some(places) => {
                for p in places {
                    if !out.places.contains(&p) {
                        out.places.push(p);
                    }
                }
            }
            None => out.unknown = true,
        }
    }
    out
}

/// The directory that `command` of `script` runs in,
/// by the literal end of its path (`nested` after `cd nested` or `cd
/// $ROOT/nested`): where the last change of the script's own shell before
/// it goes ([`crate::parse::shell::ShellCommand::top_level`]), when that
/// names a directory by a literal end. Changes before that one do not
/// matter, as the end is the same wherever they went (ModelZoo's test
/// scripts `cd ..` in a branch, then `cd $cur_path/references/classification`).
/// `None` where another change may run between the two: one after it that is
/// not of the script's own shell (a loop may run it before the command's
/// next turn), or one in a function, which runs when it is called; for a
/// command in a function or an `sh -c` string
/// ([`crate::parse::shell::ShellCommand::in_order`]); and before any change
/// (where the script is started is not known).
pub(crate) fn dir_at(text: &str, script: &Script, command: &ShellCommand) -> Option<String> {
    if !command.in_order || unreadable_change(text, script) {
        return None;
    }
    let at = command.range.0;
    let changes: Vec<(&ShellCommand, Change)> =
        script.commands.iter().map(|c| (c, change(c, script))).filter(|(_, c)| !matches!(c, Change::None)).collect();
    let (last, target) = changes.iter().rfind(|(c, _)| c.top_level && c.range.0 < at)?;
    let unsettled = |c: &ShellCommand| !c.top_level && (!c.in_order || c.range.0 > last.range.0);
    if changes.iter().any(|(c, _)| unsettled(c)) {
        return None;
    }
    let Change::To(target) = target else { return None };
    match places_of(target, script, 0)?.as_slice() {
        [Place::EndsWith(tail)] => Some(tail.clone()),
        _ => None,
    }
}

/// Whether a part of the script the parser could not read changes directory.
fn unreadable_change(text: &str, script: &Script) -> bool {
    script.unreadable.iter().any(|&(s, e)| text.get(s..e).is_some_and(|part| CHANGES_DIR.is_match(part)))
}

/// What a command does to the directory.
enum Change {
    /// Nothing.
    None,
    /// It changes it where the script does not tell.
    Unknown,
    /// It changes into this target, as written (quotes removed).
    To(String),
}

/// What `command` does to the directory: `cd`, `pushd`, `popd`, or an
/// `eval` of a `cd`.
fn change(command: &ShellCommand, script: &Script) -> Change {
    let words = command.words();
    let Some(name) = words.first().map(|w| w.rsplit('/').next().unwrap_or(w)) else { return Change::None };
    let target = match name {
        "cd" | "pushd" => {
            let mut args = words[1..].iter().filter(|w| !matches!(w.as_str(), "-P" | "-L" | "-e" | "-@" | "-n"));
            match (name, args.next()) {
                (_, Some(arg)) if arg.starts_with('>') || arg.starts_with("2>") => None,
                (_, Some(arg)) => Some(arg.clone()),
                // `pushd` alone swaps the two places it was in.
                ("pushd", None) => Some("-".to_string()),
                // `cd` alone goes home, where the project's scripts are not.
                _ => None,
            }
        }
        "popd" => Some("-".to_string()),
        // `eval "cd $dir"`: where the command goes is not read.
        "eval" if words[1..].iter().any(|w| CHANGES_DIR.is_match(w)) => return Change::Unknown,
        _ => return Change::None,
    };
    // A change the parser could not read whole goes where it does not tell.
    let (start, end) = command.range;
    let unread = script.unreadable.iter().any(|&(s, e)| s < end && start < e.max(s + 1));
    match target.filter(|_| !unread) {
        Some(target) => Change::To(target),
        None => Change::Unknown,
    }
}

/// A word that changes directory, in text the parser could not read or a string `eval` runs.
static CHANGES_DIR: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"(^|[^\w-])(cd|pushd)(\s|$)").expect("a valid pattern"));

/// A command substitution that gives a place the script is in: `$(pwd)`,
/// `$(dirname "$0")`, `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`.
static PLACE_SUBSTITUTION: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"^(\$\(|`)[^`]*(\bpwd\b|\$0\b|\$\{0\}|BASH_SOURCE)[^`]*(\)|`)$").expect("a valid pattern")
});

/// The places a `cd` target (quotes removed, one-value variables read) may
/// be, or `None` when the script does not tell.
fn places_of(target: &str, script: &Script, depth: usize) -> Option<Vec<Place>> {
    let target = target.trim_end_matches('/');
    // `~`, `~user`: a home directory, where the project's scripts are not known to be.
    if target.starts_with('~') {
        return None;
    }
    if matches!(target, "" | "." | "-" | "$PWD" | "${PWD}" | "$OLDPWD" | "${OLDPWD}")
        || PLACE_SUBSTITUTION.is_match(target)
    {
        return Some(vec![Place::Start]);
    }
    if let Some(levels) = levels_up(target) {
        return Some(vec![Place::Up(levels)]);
    }
    if let Some(tail) = literal_tail(target) {
        return Some(vec![Place::EndsWith(tail.to_string())]);
    }
    // `cd $D`: wherever every value the script gives D leads.
    let name = target.strip_prefix("${").and_then(|t| t.strip_suffix('}')).or_else(|| target.strip_prefix('$'))?;
    if depth >= MAX_INDIRECTION || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let values: Vec<&str> =
        script.mentions.iter().filter(|m| m.name == name).filter_map(|m| m.value.as_deref()).collect();
    if values.is_empty() || script.loop_variables().any(|v| v == name) {
        return None;
    }
    let mut places = Vec::new();
    for v in values {
        places.extend(places_of(v, script, depth + 1)?);
    }
    Some(places)
}

/// The literal end of a written directory: its parts after the last one
/// that holds a variable or is `.`/`..` (`egs2/aishell/asr1` of
/// `$cur_path/egs2/aishell/asr1`, or of `./egs2/aishell/asr1/`); `None` when
/// nothing literal is left.
pub(crate) fn literal_tail(written: &str) -> Option<&str> {
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
pub(crate) fn levels_up(target: &str) -> Option<usize> {
    let ups = target.trim_end_matches('/').split('/').rev().take_while(|p| *p == "..").count();
    (ups > 0).then_some(ups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(text: &str) -> DirChanges {
        of(text, &crate::parse::shell::read(text))
    }

    fn ends(tail: &str) -> Place {
        Place::EndsWith(tail.to_string())
    }

    /// Where the last command of `text` that starts `train.py` runs, by [`dir_at`].
    fn dir_of_last(text: &str) -> Option<String> {
        let script = crate::parse::shell::read(text);
        let last = script.commands.iter().rfind(|c| c.text.contains("train.py")).expect("a launch");
        dir_at(text, &script, last)
    }

    #[test]
    fn the_last_cd_of_the_scripts_own_shell_places_a_later_command() {
        for text in [
            "cd nested; python tools/train.py\n",
            "cd nested || exit 1\npython tools/train.py\n",
            "ROOT=$(pwd)\ncd $ROOT/work/nested\npython tools/train.py\n",
            "cd other\ncd nested\npython tools/train.py\n",
            // ModelZoo's test scripts: a branch's change before the last one does not matter.
            "cur_path=`pwd`\nif [ x\"${cur_path##*/}\" == x\"test\" ]; then\n  cd ..\n  cur_path=`pwd`\nfi\n\
             cd $cur_path/work/nested\nfor i in 0 1; do\n  nohup python3 tools/train.py > log 2>&1 &\ndone\n",
            "cd nested\npython tools/train.py | tee log\n",
            "cd nested\nif [ -f x ]; then python tools/train.py; fi\n",
        ] {
            assert_eq!(dir_of_last(text).as_deref().map(|d| d.rsplit('/').next().unwrap()), Some("nested"), "{text}");
        }
    }

    #[test]
    fn a_cd_whose_order_or_place_is_not_settled_places_nothing() {
        for text in [
            "python tools/train.py\n",
            "(cd nested; true)\npython tools/train.py\n",
            "if [ -d nested ]; then cd nested; fi\npython tools/train.py\n",
            "f() { cd nested; }\nf\npython tools/train.py\n",
            "cd nested\ncd ..\npython tools/train.py\n",
            "cd \"$1\"\npython tools/train.py\n",
            "cd nested\ncd -\npython tools/train.py\n",
            // A function's change runs where the function is called.
            "go() { cd other; }\ncd nested\ngo\npython tools/train.py\n",
            // A change in the loop runs before the command's next turn.
            "cd nested\nfor i in 0 1; do\n  python tools/train.py\n  cd other\ndone\n",
            "cd nested\nif [ -d x ]; then cd x; fi\npython tools/train.py\n",
            // A command in a function runs where the function is called.
            "cd nested\nrun() { python tools/train.py; }\ncd ..\nrun\n",
        ] {
            assert_eq!(dir_of_last(text), None, "{text}");
        }
    }

    #[test]
    fn every_way_to_change_directory_counts() {
        // Issue 47, item 4: each of these was read as no `cd`.
        for text in [
            "pushd ../legacy\nbash run.sh\npopd\n",
            "(cd ../legacy; bash run.sh)\n",
            "{ cd ../legacy; }\nbash run.sh\n",
            "builtin cd ../legacy\nbash run.sh\n",
            "D=../legacy; cd $D\nbash run.sh\n",
            "sh -c \"cd ../legacy; bash run.sh\"\n",
            "f() {\n  if true; then cd \"../legacy\" || exit; fi\n}\n",
        ] {
            let found = changes(text);
            assert!(found.places.contains(&ends("legacy")) && !found.unknown, "{text}: {found:?}");
        }
    }

    #[test]
    fn places_the_script_was_in_add_nothing() {
        let text = "cur_path=`pwd`\nif [ x = y ]; then\n  cd ..\n  cur_path=$(pwd)\nfi\ntest_path_dir=${cur_path}\n\
                    cd $test_path_dir\ncd \"$(dirname \"$0\")\"\ncd -\npopd\ncd $(cd $(dirname ${BASH_SOURCE[0]}); pwd)\n";
        assert_eq!(changes(text), DirChanges { places: vec![Place::Up(1), Place::Start], unknown: false });
        let two = changes("if [ $1 = a ]; then D=egs/a; else D=egs/b; fi\ncd $D\n");
        assert_eq!(two.places, [ends("egs/a"), ends("egs/b")]);
        assert!(!two.unknown);
    }

    #[test]
    fn a_change_the_script_does_not_spell_out_is_unknown() {
        for text in [
            "cd \"$1\"\n",
            "cd $(cat dir.txt)\n",
            "cd\n",
            "cd ~\n",
            "for d in a b; do cd $d; done\n",
            "cd $DATA_DIR\n",
            "D=$1\ncd $D\n",
            "eval \"cd $where\"\n",
            "if [ -d x ]; then\n  cd ) legacy\nfi\n",
        ] {
            assert!(changes(text).unknown, "{text}: {:?}", changes(text));
        }
        assert!(!changes("echo cd here\npython3 t.py --cd 1\n").unknown);
    }

    #[test]
    fn a_cd_up_and_the_literal_end_of_a_directory() {
        assert_eq!(levels_up("$test_path_dir/.."), Some(1));
        assert_eq!(levels_up("../../"), Some(2));
        assert_eq!(levels_up("../egs"), None);
        assert_eq!(levels_up("$(dirname \"$0\")/.."), Some(1));
        assert_eq!(literal_tail("$cur_path/egs2/aishell/asr1"), Some("egs2/aishell/asr1"));
        assert_eq!(literal_tail("${cur_path}/egs2/aishell/asr1/"), Some("egs2/aishell/asr1"));
        assert_eq!(literal_tail("./scripts/"), Some("scripts"));
        assert_eq!(literal_tail("tools"), Some("tools"));
        assert_eq!(literal_tail("${dir}/"), None);
        assert_eq!(literal_tail(".."), None);
        assert_eq!(literal_tail(""), None);
    }
}
