//! The files of a project that another of its files says it was generated
//! from ([`crate::semantic::generated`]): transformers' `modular_x.py`,
//! which nothing imports; its generated `modeling_x.py` is what runs.

use crate::analysis::KeptOutcome;
use crate::walk::WalkResult;
use std::collections::{HashMap, HashSet};

/// The display paths of the files some other file of their project names as
/// its source. `outcomes` are in the order of `walked`'s files.
///
/// A header names its source as the generator's tree spells it
/// (`src/transformers/models/x/modular_x.py`), which need not be where the
/// scan finds it. The source is the file of the same project whose path ends
/// with the most of those parts (its name and at least its directory, when
/// the header gives one), and of those the one nearest the generated file.
/// A tie names none: the finding stays as it is.
pub(super) fn sources(walked: &WalkResult, outcomes: &[KeptOutcome]) -> HashSet<String> {
    let named: Vec<(usize, &str)> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.adds().and_then(|a| a.generated_from.as_deref()).map(|src| (i, src)))
        .collect();
    if named.is_empty() {
        return HashSet::new();
    }
    // Candidates by file name and project.
    let mut by_name: HashMap<(usize, &str), Vec<String>> = HashMap::new();
    let wanted: HashSet<&str> = named.iter().filter_map(|(_, src)| src.rsplit('/').next()).collect();
    for f in &walked.files {
        let display = f.display();
        let name = display.rsplit('/').next().unwrap_or(&display);
        if let Some(&name) = wanted.get(name) {
            by_name.entry((f.project, name)).or_default().push(display.into_owned());
        }
    }
    let mut found = HashSet::new();
    for (i, src) in named {
        let Some(file) = walked.files.get(i) else { continue };
        let generated = file.display();
        let name = src.rsplit('/').next().unwrap_or(src);
        let candidates = by_name.get(&(file.project, name)).map_or(&[][..], Vec::as_slice);
        let best = nearest_source(src, &generated, candidates.iter().map(String::as_str));
        found.extend(best.map(str::to_owned));
    }
    found
}

/// Of `candidates` (paths ending in `src`'s file name), the one `src`
/// names for the file at `generated`, if exactly one scores best.
fn nearest_source<'c>(src: &str, generated: &str, candidates: impl Iterator<Item = &'c str>) -> Option<&'c str> {
    let parts: Vec<&str> = src.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let needed = parts.len().min(2);
    let dir = generated.rsplit_once('/').map_or("", |(d, _)| d);
    let scored = candidates.filter(|&c| c != generated).filter_map(|c| {
        let matched = c.rsplit('/').zip(parts.iter().rev()).take_while(|(a, b)| a == *b).count();
        let c_dir = c.rsplit_once('/').map_or("", |(d, _)| d);
        // A bare name is looked for beside the generated file only.
        let beside = parts.len() > 1 || c_dir == dir;
        let shared = c_dir.split('/').zip(dir.split('/')).take_while(|(a, b)| a == b).count();
        (matched >= needed && beside).then_some(((matched, shared), c))
    });
    let mut best: Option<((usize, usize), &str)> = None;
    let mut tied = false;
    for (score, c) in scored {
        match best {
            Some((b, _)) if score < b => {}
            Some((b, _)) if score == b => tied = true,
            _ => (best, tied) = (Some((score, c)), false),
        }
    }
    best.filter(|_| !tied).map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::nearest_source;

    #[test]
    fn the_source_is_found_by_the_end_of_its_path_nearest_the_generated_file() {
        let src = "src/transformers/models/blt/modular_blt.py";
        let copies = ["a/transformers/models/blt/modular_blt.py", "b/transformers/models/blt/modular_blt.py"];
        let pick = |generated| nearest_source(src, generated, copies.into_iter());
        assert_eq!(pick("b/transformers/models/blt/modeling_blt.py"), Some(copies[1]));
        assert_eq!(pick("a/transformers/models/blt/modeling_blt.py"), Some(copies[0]));
        // Equally near both: neither.
        assert_eq!(pick("c/modeling_blt.py"), None);
    }

    #[test]
    fn a_file_of_the_same_name_elsewhere_is_not_the_source() {
        let src = "src/pkg/models/blt/modular_blt.py";
        // Only the file name matches, not its directory.
        assert_eq!(nearest_source(src, "x/blt/modeling_blt.py", ["x/other/modular_blt.py"].into_iter()), None);
        // A bare name is looked for beside the generated file only.
        let gen = |c: &'static str| nearest_source("gen.py", "x/ops.py", [c].into_iter());
        assert_eq!(gen("x/gen.py"), Some("x/gen.py"));
        assert_eq!(gen("y/gen.py"), None);
        // A file does not generate itself.
        assert_eq!(nearest_source("x/ops.py", "x/ops.py", ["x/ops.py"].into_iter()), None);
    }
}
