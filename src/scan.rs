//! The driver: analyse every file in parallel ([`crate::analysis`]), decide
//! the project facts ([`crate::project`]), and merge everything into the
//! scan's result ([`ScanOutcome`]) in a deterministic order.

use crate::analysis::{analyse_importing, scan_file, FileOutcome, KeptOutcome};
use crate::cache::{Cache, StoredOutcome};
use crate::config::PerFileIgnores;
use crate::outcome::ScanOutcome;
use crate::progress::Progress;
use crate::project::Rereads;
pub use crate::project::RunSettings;
use crate::rules::engine::{Engine, FileFacts};
use crate::rules::model::Scope;
use crate::walk::{ScanFile, WalkResult};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Reads and analyses every file, in parallel, in `files` order, ticking
/// `progress`; files whose content `cache` has seen are not analysed again.
/// The outcomes are in `files` order.
pub fn analyse_files(
    files: &[ScanFile],
    engine: &Engine,
    progress: &Progress,
    cache: Option<&Cache>,
) -> Vec<KeptOutcome> {
    let seen = SeenFacts::new(files, engine);
    files
        .par_iter()
        .map(|f| {
            let mut outcome = scan_file(f, engine, cache);
            // The cache keeps each file's findings before its project's facts are
            // applied: another file's facts may change by the next scan.
            if cache.is_none() {
                seen.drop_findings_ruled_out(&mut outcome);
            }
            progress.tick();
            KeptOutcome::keep(outcome)
        })
        .collect()
}

/// The project facts that files analysed so far have found true. Facts only
/// ever become true, so a finding that needs one of them false can be dropped
/// as soon as it is seen, instead of being kept until the merge: on a large
/// project most such findings are (MEM007's "no activation checkpointing in
/// this project" was half of the findings the corpus kept).
struct SeenFacts {
    n_facts: usize,
    /// By project, then fact.
    true_in_project: Vec<std::sync::atomic::AtomicBool>,
}

impl SeenFacts {
    fn new(files: &[ScanFile], engine: &Engine) -> Self {
        let n_projects = files.iter().map(|f| f.project + 1).max().unwrap_or(0);
        let n_facts = engine.set.compiler.facts.len();
        let true_in_project = (0..n_projects * n_facts).map(|_| Default::default()).collect();
        SeenFacts { n_facts, true_in_project }
    }

    /// Records the facts `o` found true, then drops its findings whose project
    /// conditions can no longer hold.
    fn drop_findings_ruled_out(&self, o: &mut FileOutcome) {
        use std::sync::atomic::Ordering::Relaxed;
        let at = |fact: usize| self.true_in_project.get(o.project * self.n_facts + fact);
        for (fact, _) in o.facts.adds.facts.iter().enumerate().filter(|(_, holds)| **holds) {
            if let Some(seen) = at(fact) {
                seen.store(true, Relaxed);
            }
        }
        // A process fact may be false in this file's process while true elsewhere in the project.
        let ruled_out = |&(scope, fact, want): &(Scope, usize, bool)| {
            scope == Scope::Project && !want && at(fact).is_some_and(|seen| seen.load(Relaxed))
        };
        o.facts.findings.retain(|(_, clauses)| !clauses.iter().any(|c| c.iter().all(ruled_out)));
    }
}

/// Analyses again, in parallel, the files that import a class which another
/// file of their project derives from a class some rule follows into
/// subclasses ([`crate::project::imported_classes`]), so that the rules see
/// what a call of it constructs. Gives what the cache should store for those
/// files: their first analyses, which depend on their own content alone
/// (the new ones keep no content identity, so none is stored).
pub fn follow_imported_classes(
    walked: &WalkResult,
    outcomes: &mut [KeptOutcome],
    engine: &Engine,
) -> BTreeMap<String, StoredOutcome<'static>> {
    let importers = crate::project::imported_classes::importers(walked, outcomes, &Rereads::default());
    let again: Vec<(usize, KeptOutcome)> = importers
        .into_par_iter()
        .map(|(i, classes)| (i, KeptOutcome::keep(analyse_importing(&walked.files[i], engine, &classes))))
        .collect();
    let mut first = BTreeMap::new();
    for (i, o) in again {
        let replaced = std::mem::replace(&mut outcomes[i], o);
        if let Some(stored) = replaced.stored() {
            first.insert(walked.files[i].display().to_string(), stored.into_owned());
        }
    }
    first
}

/// What to store in the cache: every file analysed from disk content
/// (`outcomes` are in `files` order), and for the files analysed again
/// with other files' classes, their first analyses (`first`, what
/// [`follow_imported_classes`] gave), unless a later one is stored.
pub fn cache_entries<'a>(
    files: &[ScanFile],
    outcomes: &'a [KeptOutcome],
    first: BTreeMap<String, StoredOutcome<'static>>,
) -> BTreeMap<String, StoredOutcome<'a>> {
    let mut entries: BTreeMap<String, StoredOutcome<'a>> =
        files.iter().zip(outcomes).filter_map(|(f, kept)| Some((f.display().to_string(), kept.stored()?))).collect();
    for (path, stored) in first {
        entries.entry(path).or_insert(stored);
    }
    entries
}

/// Merges per-file outcomes (in the order of `walked`'s files) into the
/// scan's result, in a deterministic order; `settings` decide each
/// project's style and which code runs; `rereads` remembers what is read
/// again of the files, or not (see [`Rereads`]).
pub fn merge(
    mut outcomes: Vec<KeptOutcome>,
    engine: &Engine,
    walked: &WalkResult,
    settings: RunSettings,
    rereads: &Rereads,
) -> ScanOutcome {
    let mut projects = crate::project::analyse(walked, &mut outcomes, engine, settings, rereads);
    let mut result = ScanOutcome {
        files_scanned: 0,
        findings: Vec::new(),
        problems: Vec::new(),
        rows: Vec::new(),
        counts: vec![0; engine.set.counts.len()],
        sites: Vec::new(),
        groups: Vec::new(),
        suppressed: Vec::new(),
        baselined: Vec::new(),
        stale_baseline: Vec::new(),
        fixed: Vec::new(),
        fixed_follow_ups: Vec::new(),
        projects: Vec::new(),
        run: None,
    };
    let mut files_scanned = vec![0; walked.projects.len()];
    let mut groups: BTreeMap<(usize, String), (String, usize)> = Default::default();
    let findings = std::mem::take(&mut projects.findings);
    // Room for all at once: a list grown finding by finding would copy tens
    // of thousands of them, and hold the old and new room while it does.
    let per_file = findings.iter().flatten();
    result.findings.reserve_exact(per_file.clone().map(|f| f.kept.len()).sum());
    result.suppressed.reserve_exact(per_file.map(|f| f.suppressed.len()).sum());
    for (kept, file_findings) in outcomes.into_iter().zip(findings) {
        let o: FileOutcome = match kept {
            KeptOutcome::Quiet { project, adds, .. } => {
                result.files_scanned += 1;
                if let Some(n) = files_scanned.get_mut(project) {
                    *n += 1;
                }
                if let Some(f) = adds {
                    add_counts(&mut result.counts, &f.counts);
                }
                continue;
            }
            KeptOutcome::Full(o) => *o,
        };
        result.files_scanned += usize::from(o.scanned);
        if let Some(n) = files_scanned.get_mut(o.project) {
            *n += usize::from(o.scanned);
        }
        let file_findings = file_findings.unwrap_or_default();
        result.findings.extend(file_findings.kept);
        result.suppressed.extend(file_findings.suppressed);
        // Summary rows and sites in a notebook name the cell in their path.
        let place = o.placer();
        let FileFacts { rows, adds, sites, groups: members, problem, .. } = &o.facts;
        result.problems.extend(problem.clone());
        add_counts(&mut result.counts, &adds.counts);
        for row in rows {
            let (path, line) = place(row.line);
            result.rows.push((path, crate::rules::engine::TableRow { line, ..row.clone() }));
        }
        for (i, line, detail) in sites {
            let (path, line) = place(*line);
            result.sites.push((*i, path, line, detail.clone()));
        }
        for (i, key, value) in members {
            groups.entry((*i, key.clone())).or_insert((value.clone(), 0)).1 += 1;
        }
    }
    result.groups = groups.into_iter().map(|((i, key), (value, n))| (i, key, value, n)).collect();
    result.sites.sort_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
    result.findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    result.suppressed.sort_by(|a, b| a.0.sort_key().cmp(&b.0.sort_key()));
    result.rows.sort_by(|a, b| (&a.0, a.1.line, a.1.table).cmp(&(&b.0, b.1.line, b.1.table)));
    result.findings.iter_mut().for_each(|f| projects.advise(f));
    result.suppressed.iter_mut().for_each(|(f, _)| projects.advise(f));
    (result.projects, result.run) = projects.finish(&files_scanned);
    result
}

/// Adds one file's summary counts (by count index) to the totals.
fn add_counts(totals: &mut [usize], file: &[usize]) {
    totals.iter_mut().zip(file).for_each(|(total, c)| *total += c);
}

/// Applies `per-file-ignores` and severity overrides from the configuration;
/// an override names a code or a prefix, and the longest one matching a
/// finding's code wins (`TX = "info"` with `TX004 = "error"`). Advisory
/// findings (handled by automatic migration) stay `info`.
pub fn apply_settings(
    outcome: &mut ScanOutcome,
    per_file_ignores: &PerFileIgnores,
    severity: &std::collections::BTreeMap<String, crate::finding::Severity>,
) {
    outcome.findings.retain(|f| !per_file_ignores.ignores(f));
    // Advice stays advice: `migration = "manual"` and `entries = "all"` are how to count it again.
    for f in outcome.findings.iter_mut().filter(|f| !f.is_advice()) {
        let matching = severity.iter().filter(|(prefix, _)| f.code.starts_with(prefix.as_str()));
        if let Some((_, s)) = matching.max_by_key(|(prefix, _)| prefix.len()) {
            f.severity = *s;
        }
    }
}
