//! [`FileFacts`]: everything the analysis of one file learns, in one record.
//! The engine fills what the rules find; the per-file pipeline
//! ([`crate::analysis`]) adds what the project layer reads (named files,
//! launches, option tests, suppression comments, a problem); the cache
//! stores the record as it is, and the project layer and the report read it.
//! A new per-file fact is one field here.

use super::state::Clause;
use crate::finding::{FileProblem, Finding};
use crate::semantic::launch_lines::Launch;
use crate::semantic::named_files::Names;
use crate::semantic::options::Gate;
use crate::semantic::subclasses::Derived;
use crate::suppress::Directive;
use serde::{Deserialize, Serialize};

/// One row of a summary table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRow {
    /// Table index.
    pub table: usize,
    /// 1-based line.
    pub line: usize,
    /// Cell texts.
    pub cells: Vec<String>,
}

/// What one file adds to its project: facts it makes true, summary counts,
/// the files it names, the scripts it starts, the classes it derives and the
/// source it was generated from. A file with nothing to report keeps only
/// this part of its [`FileFacts`] until the merge (see
/// [`crate::analysis::KeptOutcome`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProjectAdds {
    /// Which facts hold in this file.
    pub facts: Vec<bool>,
    /// Summary counts, by count index.
    pub counts: Vec<usize>,
    /// The file names (or patterns) the file spells out, with the extensions
    /// of [`super::engine::Engine::named_extensions`].
    pub named_files: Names,
    /// For a shell script: the Python scripts it starts, with their arguments.
    pub launches: Vec<Launch>,
    /// Its module-level classes derived from a class that a rule's `call`
    /// anchor follows into subclasses, with their bases: a file that imports
    /// one is analysed again with them (see [`crate::project::imported_classes`]).
    pub derived_classes: Vec<(String, Vec<Derived>)>,
    /// The Python file a comment at its top says it was generated from, as
    /// written there ([`crate::semantic::generated`]).
    pub generated_from: Option<String>,
}

impl ProjectAdds {
    /// Whether the file adds anything to its project.
    pub fn any(&self) -> bool {
        self.facts.contains(&true)
            || self.counts.iter().any(|&c| c > 0)
            || !self.named_files.is_empty()
            || !self.launches.is_empty()
            || !self.derived_classes.is_empty()
            || self.generated_from.is_some()
    }

    /// Drops the lists of facts and counts when no fact holds and nothing
    /// counts (most files), and the spare room of the rest.
    fn shrink_to_fit(&mut self) {
        if !self.facts.contains(&true) {
            self.facts = Vec::new();
        }
        if self.counts.iter().all(|&c| c == 0) {
            self.counts = Vec::new();
        }
        self.launches.shrink_to_fit();
    }
}

/// What the analysis of one file produced. The cache stores it (missing
/// fields read as empty: a quiet file stores only [`FileFacts::adds`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FileFacts {
    /// Findings, each with project conditions still to check.
    #[serde(with = "whole_findings")]
    pub findings: Vec<(Finding, Vec<Clause>)>,
    /// What the file adds to its project.
    pub adds: ProjectAdds,
    /// Summary table rows.
    pub rows: Vec<TableRow>,
    /// Summary sites: (sites index, line, detail).
    pub sites: Vec<(usize, usize, String)>,
    /// Summary group members: (group index, key, value).
    pub groups: Vec<(usize, String, String)>,
    /// The line of the first node whose children lie deeper than the
    /// analysis looks (`traverse::MAX_DEPTH`), if any; `problem` says it
    /// once the file is analysed, so it is not stored.
    #[serde(skip)]
    pub cut_at_line: Option<usize>,
    /// The line of the first node for which a search of its function (or
    /// module) stopped at `slots::MAX_SCOPE_NODES` nodes, if any (not stored,
    /// as `cut_at_line`).
    #[serde(skip)]
    pub scope_search_cut_at_line: Option<usize>,
    /// The branches around its findings whose tests read command-line options.
    pub gates: Vec<Gate>,
    /// The lines of the tests around its findings that run only where CUDA
    /// is ([`crate::semantic::cuda_only`]).
    pub cuda_only_tests: Vec<(usize, usize)>,
    /// The lines (first, last) of its module-level `def` and `class`
    /// statements, decorators included; kept for a file with findings: a
    /// finding outside them runs when the module is imported.
    pub module_level_defs: Vec<(usize, usize)>,
    /// Its suppression comments.
    pub directives: Vec<Directive>,
    /// Why the file was skipped or analysed only in part, if it was.
    pub problem: Option<FileProblem>,
}

impl FileFacts {
    /// Gives back the spare capacity of its lists: a file with one finding
    /// would otherwise keep room for four until the report is written, and
    /// on a large repository that slack is most of what the scan holds.
    pub fn shrink_to_fit(&mut self) {
        for (_, clauses) in &mut self.findings {
            clauses.shrink_to_fit();
        }
        self.findings.shrink_to_fit();
        self.rows.shrink_to_fit();
        self.sites.shrink_to_fit();
        self.groups.shrink_to_fit();
        self.gates.shrink_to_fit();
        self.cuda_only_tests.shrink_to_fit();
        self.directives.shrink_to_fit();
        self.adds.shrink_to_fit();
    }

    /// Whether the file has something for the report itself (a finding, a
    /// summary row, site or group, a suppression comment or a problem), as
    /// opposed to facts and counts only.
    pub fn reports(&self) -> bool {
        !(self.findings.is_empty()
            && self.rows.is_empty()
            && self.sites.is_empty()
            && self.groups.is_empty()
            && self.directives.is_empty()
            && self.problem.is_none())
    }
}

/// The findings with what the JSON report leaves out of a [`Finding`] but
/// the merge and the fixer need (byte range, source line, the fix's
/// description, `only_under_automatic`), for the cache.
mod whole_findings {
    use super::Clause;
    use crate::finding::Finding;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Whole {
        finding: Finding,
        clauses: Vec<Clause>,
        byte_range: (usize, usize),
        source_line: String,
        fix_description: Option<String>,
        only_under_automatic: bool,
    }

    pub(super) fn serialize<S: Serializer>(findings: &[(Finding, Vec<Clause>)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(findings.iter().map(|(f, clauses)| Whole {
            finding: f.clone(),
            clauses: clauses.clone(),
            byte_range: f.byte_range,
            source_line: f.source_line.clone(),
            fix_description: f.fix.as_ref().map(|x| x.description.clone()),
            only_under_automatic: f.only_under_automatic,
        }))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(Finding, Vec<Clause>)>, D::Error> {
        let stored: Vec<Whole> = Vec::deserialize(d)?;
        Ok(stored
            .into_iter()
            .map(|w| {
                let mut finding = Finding {
                    byte_range: w.byte_range,
                    source_line: w.source_line,
                    only_under_automatic: w.only_under_automatic,
                    ..w.finding
                };
                if let (Some(fix), Some(description)) = (finding.fix.as_mut(), w.fix_description) {
                    fix.description = description;
                }
                (finding, w.clauses)
            })
            .collect())
    }
}
