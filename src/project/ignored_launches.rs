//! Launch lines that start no run. A project keeps stale helpers beside its
//! launch scripts: YOLOv4's `utils/evolve.sh` passes `train.py --accum 8`,
//! an option the current `train.py` no longer defines, so argparse stops
//! with a usage error before anything runs. Such a line is no evidence of
//! a run: it neither starts its script ([`super::launches`]) nor gives
//! options to one ([`super::configurations`]), and the report says so.
//!
//! A line counts as rejected only when every Python file of the project it
//! may start has an option table its own text settles
//! ([`crate::semantic::option_table`]) and that table rejects an option the
//! line passes. A line whose options are not all read (a command built in
//! a variable) or whose script's parser may accept more is a launch.

use super::rereads::Rereads;
use crate::analysis::KeptOutcome;
use crate::semantic::launch_lines::Launch;
use crate::semantic::option_table::OptionTable;
use crate::walk::{FileKind, ScanFile};
use std::collections::{BTreeSet, HashMap};

/// A launch line that the started script's parser rejects.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct IgnoredLaunch {
    /// The shell script that holds the line (display path).
    pub path: String,
    /// The line of the command.
    pub line: usize,
    /// The script it names, as written (`train.py`).
    pub script: String,
    /// The first option it passes that the script does not define.
    pub option: String,
}

/// The ignored launch lines of one project.
#[derive(Debug, Default)]
pub(crate) struct Ignored {
    /// In path and line order.
    pub lines: Vec<IgnoredLaunch>,
    /// The Python files (display paths) that some ignored line names and
    /// that no other launch line of the project's shell scripts may start.
    pub only_by_them: BTreeSet<String>,
}

impl Ignored {
    /// Whether `launch`, read from the shell script at display path `shell`, is ignored.
    pub(crate) fn holds(&self, shell: &str, launch: &Launch) -> bool {
        self.lines.iter().any(|l| l.path == shell && l.line == launch.line && l.script == launch.script)
    }
}

/// The launch lines of the project whose files, with their analyses, are
/// `members` that the scripts they start reject; their option tables are
/// read through `rereads`.
pub(crate) fn in_project(members: &[(&ScanFile, &KeptOutcome)], rereads: &Rereads) -> Ignored {
    let launches: Vec<(String, &Launch)> = members
        .iter()
        .filter(|(f, _)| f.kind == FileKind::Shell)
        .flat_map(|(f, o)| o.adds().into_iter().flat_map(|a| &a.launches).map(|l| (f.display().into_owned(), l)))
        .collect();
    let python: Vec<&ScanFile> = members.iter().map(|(f, _)| *f).filter(|f| f.kind == FileKind::Python).collect();
    let paths: Vec<String> = python.iter().map(|f| f.display().into_owned()).collect();
    let mut tables: HashMap<usize, std::sync::Arc<Option<OptionTable>>> = HashMap::new();
    let mut lines = Vec::new();
    for (shell, launch) in &launches {
        // Only a line whose every word is read, and that passes some option, may be rejected.
        if launch.opaque || !launch.words().any(|w| w.starts_with('-')) {
            continue;
        }
        let started: Vec<usize> = (0..paths.len()).filter(|&i| launch.starts(&paths[i])).collect();
        let mut rejected = started.iter().map(|&i| {
            let table = tables.entry(i).or_insert_with(|| rereads.option_table(python[i]));
            table.as_ref().as_ref().and_then(|t| t.rejected(launch.words())).map(str::to_string)
        });
        let first = rejected.next().flatten();
        if let Some(option) = first.filter(|_| rejected.all(|r| r.is_some())) {
            let (path, line, script) = (shell.clone(), launch.line, launch.script.clone());
            lines.push(IgnoredLaunch { path, line, script, option });
        }
    }
    lines.sort();
    let ignored = Ignored { lines, only_by_them: BTreeSet::new() };
    let others: Vec<&Launch> = launches.iter().filter(|(s, l)| !ignored.holds(s, l)).map(|(_, l)| *l).collect();
    let only_by_them = paths
        .iter()
        .filter(|p| launches.iter().any(|(s, l)| ignored.holds(s, l) && l.starts(p)))
        .filter(|p| !others.iter().any(|l| l.starts(p)))
        .cloned()
        .collect();
    Ignored { only_by_them, ..ignored }
}
