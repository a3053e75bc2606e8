//! Entry scripts of a nested project that a project around it starts. A
//! port keeps a library or an upstream repository inside it, with its own
//! `setup.py` (so a project of its own) and its own launch scripts; the
//! port's NPU launcher starts one of its entry scripts by path (`python3
//! ${cur_path}/mmdetection/tools/train.py`). That script runs however the
//! nested project's own scripts read: it counts as started there
//! ([`super::launches`]).
//!
//! A mention counts when a shell script of an enclosing project spells
//! the script's path from the nested project's directory on
//! (`mmdetection/tools/train.py`), outside comments, as a whole name.

use crate::source::read_file;
use crate::walk::{FileKind, WalkResult};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};

/// An entry script a needle names: its project and display path.
type Named<'a> = (usize, &'a str);

/// For each project, the scripts among its `entries` (display paths, by
/// project) that a shell script of an enclosing project names by path.
pub(crate) fn started_from_outside(walked: &WalkResult, entries: &[BTreeSet<String>]) -> Vec<BTreeSet<String>> {
    let parents = super::vendored::enclosing_projects(walked);
    let mut out = vec![BTreeSet::new(); entries.len()];
    // Each needle with the entries it names: (project, display path).
    let mut needles: HashMap<String, Vec<Named>> = HashMap::new();
    for (p, scripts) in entries.iter().enumerate().filter(|(p, _)| parents.get(*p).copied().flatten().is_some()) {
        let Some(dir) = walked.projects.get(p).map(|d| d.display.as_str()) else { continue };
        let base = dir.rsplit('/').next().unwrap_or(dir);
        for script in scripts {
            if let Some(rest) = script.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) {
                needles.entry(format!("{base}/{rest}")).or_default().push((p, script));
            }
        }
    }
    if needles.is_empty() {
        return out;
    }
    let (patterns, owners): (Vec<String>, Vec<Vec<Named>>) = needles.into_iter().unzip();
    // A path with a space may end where a blanked comment's spaces begin.
    let spaced = patterns.iter().any(|p| p.contains(char::is_whitespace));
    let Ok(automaton) = aho_corasick::AhoCorasick::new(&patterns) else { return out };
    let outer: BTreeSet<usize> = parents.iter().flatten().copied().collect();
    // By shell script of an enclosing project: its project and the needles it spells out.
    let found: Vec<(usize, Vec<usize>)> = walked
        .files
        .par_iter()
        .filter(|f| f.kind == FileKind::Shell && outer.contains(&f.project))
        .filter_map(|f| {
            let text = read_file(f).ok()?.text;
            let named = outside_comments(&automaton, &text, spaced);
            (!named.is_empty()).then_some((f.project, named))
        })
        .collect();
    let encloses = |outer: usize, mut p: usize| {
        while let Some(q) = parents.get(p).copied().flatten() {
            if q == outer {
                return true;
            }
            p = q;
        }
        false
    };
    for (project, named) in found {
        for (p, script) in named.into_iter().flat_map(|k| &owners[k]) {
            if encloses(project, *p) {
                out[*p].insert(script.to_string());
            }
        }
    }
    out
}

/// The needles (indexes) that a shell script's `text` spells out as whole
/// names outside its comments, as found in the text with its comments
/// blanked. When no needle holds a space (`spaced`), the raw text is
/// searched, and the script parsed only when a comment may cover a name or
/// the bytes around it that [`whole_name`] reads; the others read the same
/// in both texts. A needle with a space may end where a blanked comment's
/// spaces begin, so then the blanked text is searched.
///
/// [`whole_name`]: crate::semantic::named_files::whole_name
fn outside_comments(automaton: &aho_corasick::AhoCorasick, text: &str, spaced: bool) -> Vec<usize> {
    let blanked = std::cell::OnceCell::new();
    let blank = || blanked.get_or_init(|| crate::parse::shell::read(text).comments.blank(text)).as_bytes();
    let searched = if spaced { blank() } else { text.as_bytes() };
    automaton
        .find_overlapping_iter(searched)
        .filter(|m| {
            let raw = !spaced && !crate::parse::shell::comment_may_cover(text, m.start(), m.end() + 2);
            let read = if raw { searched } else { blank() };
            // A blanked byte inside the name leaves no name there.
            read[m.range()] == searched[m.range()] && crate::semantic::named_files::whole_name(read, m.start(), m.end())
        })
        .map(|m| m.pattern().as_usize())
        .collect()
}
