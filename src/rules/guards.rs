//! Fixes that migrate together, or not at all, so that a fixed program still
//! works.
//!
//! Code that runs only where CUDA is (the branch of `if device.type == "cuda":`,
//! of `if torch.cuda.is_available():`, the value if true of
//! `torch.cuda.FloatTensor if p.is_cuda else ...`; see
//! [`crate::semantic::cuda_tests`]) is moved to the NPU only together with
//! its test: a fix there that writes an NPU name (`.npu()`, `torch.npu`,
//! `"npu"`, `hccl`) becomes one fix with the fixes that migrate the test, and
//! with every other such fix in that code. Changed alone, the branch would
//! call the NPU where only CUDA is; the test changed alone would run CUDA
//! code on the NPU.
//!
//! The fix is withheld, with the reason in [`Finding::fix_withheld`], when
//! no fix migrates the test, or when the code holds a finding that breaks
//! on an NPU (a transfer or torch_npu API rule of severity `error`, such as
//! DataParallel) and has no fix: migrating the test would run that code on
//! the NPU. Rules can pair their fixes the same way (`together` in
//! `[rule.fix]`: a grad scaler and the autocast it serves).
//!
//! One fix has one applicability: unsafe when any of its parts is. Each
//! finding in it carries the whole fix, so that `--select` of one of them
//! applies all of it, and `--fix` counts each as fixed.

use super::model::Rule;
use super::state::Clause;
use crate::finding::{Applicability, Edit, Finding, Fix, Section, Severity};
use crate::semantic::cuda_tests::guards_at;
use crate::semantic::values::text;
use tree_sitter::Node;

/// Whether findings of `rule` break on an NPU: severity `error` as the rule
/// is written (a finding downgraded because a CUDA test guards it is the case
/// in point), about transfers or CUDA APIs.
pub(super) fn breaks_on_npu(rule: &Rule) -> bool {
    rule.severity == Severity::Error && matches!(rule.section, Section::Transfer | Section::NpuApi)
}

/// Whether findings of `rule` decide whether other rules' fixes may be
/// offered: it breaks on an NPU, its fix may migrate a CUDA test (a transfer
/// or torch_npu API rule with a fix), or an enabled rule pairs its fix with
/// it (`partners`, from `together`). Such rules run even when not selected.
pub(super) fn decides_fixes(rule: &Rule, partners: &[&str]) -> bool {
    let migrates_tests = rule.fix.is_some() && matches!(rule.section, Section::Transfer | Section::NpuApi);
    breaks_on_npu(rule) || migrates_tests || partners.contains(&rule.code.as_str())
}

/// Makes one fix of the fixes that must migrate together in one file, and
/// withholds them where one part has none (see the module documentation);
/// then makes unsafe the renamed CUDA tests that would run code naming a
/// device on the NPU ([`super::renamed_tests`]).
pub(super) fn pair_fixes(findings: &mut [(Finding, Vec<Clause>)], rules: &[Rule], root: Node, src: &str) {
    pair(findings, rules, root, src);
    super::renamed_tests::check(findings, root, src);
}

/// Joins and withholds the fixes of one file (see [`pair_fixes`]).
fn pair(findings: &mut [(Finding, Vec<Clause>)], rules: &[Rule], root: Node, src: &str) {
    let rule_of = |f: &Finding| rules.iter().find(|r| r.code == f.code);
    let together: Vec<(usize, &super::schema::TogetherSpec)> = findings
        .iter()
        .enumerate()
        .filter_map(|(i, (f, _))| Some((i, rule_of(f)?.fix.as_ref()?.together.as_ref()?)))
        .collect();
    let relevant = |f: &Finding| rule_of(f).is_some_and(breaks_on_npu) || f.fix.as_ref().is_some_and(writes_npu);
    if together.is_empty() && !findings.iter().any(|(f, _)| relevant(f)) {
        return;
    }
    let mut links = Links::new(findings.len());
    // Code that only CUDA runs, and the tests that guard it.
    for (i, (f, _)) in findings.iter().enumerate() {
        if relevant(f) {
            for guard in guards_at(root, f.byte_range.0, src) {
                let node = links.test(guard.test);
                links.join(i, node);
                links.guarded[i].get_or_insert(node - links.findings);
            }
        }
    }
    // The fixes that migrate each test.
    for t in 0..links.tests.len() {
        let range = links.tests[t].byte_range();
        for (j, (f, _)) in findings.iter().enumerate() {
            if f.fix
                .as_ref()
                .is_some_and(|x| x.edits.iter().any(|e| e.byte_range.0 < range.end && range.start < e.byte_range.1))
            {
                links.join(j, links.findings + t);
                links.migrated[t] = true;
                links.migrates[j] = true;
            }
        }
    }
    for &(i, spec) in &together {
        for (j, (f, _)) in findings.iter().enumerate() {
            if j != i && spec.codes.iter().any(|c| f.code == *c) {
                links.join(i, j);
                links.why[i].get_or_insert(spec.why.as_str());
                links.why[j].get_or_insert(spec.why.as_str());
            }
        }
    }
    for group in links.groups() {
        match links.withheld_because(&group, findings, src) {
            Some(reason) => {
                for &m in &group.findings {
                    let f = &mut findings[m].0;
                    if f.fix.take().is_some() {
                        f.fix_withheld = Some(reason.clone());
                    }
                }
            }
            None => links.merge(&group, findings, src),
        }
    }
}

/// Whether a fix writes an NPU name: after it, the code targets the NPU.
fn writes_npu(fix: &Fix) -> bool {
    fix.edits.iter().any(|e| {
        let content = e.content.to_ascii_lowercase();
        content.contains("npu") || content.contains("hccl")
    })
}

/// The findings and tests of one group.
struct Group {
    findings: Vec<usize>,
    tests: Vec<usize>,
}

/// Which findings and CUDA tests must migrate together: a union-find over
/// the findings (`0..findings`) and the tests (`findings..`).
struct Links<'t, 'w> {
    findings: usize,
    parent: Vec<usize>,
    tests: Vec<Node<'t>>,
    /// By test: some fix migrates it.
    migrated: Vec<bool>,
    /// By finding: its fix migrates a test.
    migrates: Vec<bool>,
    /// By finding: the innermost test it runs under, if it was linked to one.
    guarded: Vec<Option<usize>>,
    /// By finding: why its rule pairs it with others (`together`).
    why: Vec<Option<&'w str>>,
}

impl<'t, 'w> Links<'t, 'w> {
    fn new(findings: usize) -> Self {
        Links {
            findings,
            parent: (0..findings).collect(),
            tests: Vec::new(),
            migrated: Vec::new(),
            migrates: vec![false; findings],
            guarded: vec![None; findings],
            why: vec![None; findings],
        }
    }

    /// The index of `test` among the tests, added if new; returns its node index.
    fn test(&mut self, test: Node<'t>) -> usize {
        let t = match self.tests.iter().position(|n| *n == test) {
            Some(t) => t,
            None => {
                self.tests.push(test);
                self.migrated.push(false);
                self.parent.push(self.parent.len());
                self.tests.len() - 1
            }
        };
        self.findings + t
    }

    fn root(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn join(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }

    /// The groups of more than one node, in order of their first member.
    fn groups(&mut self) -> Vec<Group> {
        let mut by_root: Vec<(usize, Group)> = Vec::new();
        for x in 0..self.parent.len() {
            let r = self.root(x);
            let at = match by_root.iter().position(|(root, _)| *root == r) {
                Some(at) => at,
                None => {
                    by_root.push((r, Group { findings: Vec::new(), tests: Vec::new() }));
                    by_root.len() - 1
                }
            };
            let group = &mut by_root[at].1;
            if x < self.findings {
                group.findings.push(x);
            } else {
                group.tests.push(x - self.findings);
            }
        }
        by_root.into_iter().map(|(_, g)| g).filter(|g| g.findings.len() + g.tests.len() > 1).collect()
    }

    /// `test` on line N.
    fn describe_test(&self, t: usize, src: &str) -> String {
        let Some(test) = self.tests.get(t) else { return "a CUDA test".to_string() };
        format!("`{}` (line {})", one_line(text(*test, src)), test.start_position().row + 1)
    }

    /// Why no fix of `group` may be offered, if one may not.
    fn withheld_because(&self, group: &Group, findings: &[(Finding, Vec<Clause>)], src: &str) -> Option<String> {
        if let Some(&t) = group.tests.iter().find(|&&t| !self.migrated[t]) {
            return Some(format!(
                "it runs only where {} holds, and no fix here migrates that test: changed alone, this code would no \
                 longer run on CUDA",
                self.describe_test(t, src)
            ));
        }
        let fixless = group.findings.iter().find(|&&m| findings[m].0.fix.is_none())?;
        let f = &findings[*fixless].0;
        Some(match (self.guarded[*fixless], self.why[*fixless]) {
            (Some(t), _) => format!(
                "migrating the CUDA test {} would run {} (line {}) on the NPU, which no fix changes",
                self.describe_test(t, src),
                f.code,
                f.line
            ),
            (None, why) => {
                format!("{}, and {} (line {}) has no fix here", why.unwrap_or("they migrate together"), f.code, f.line)
            }
        })
    }

    /// Gives every finding of `group` one fix made of all their edits:
    /// first the fixes that migrate a test (safe ones first), then the rest
    /// in source order. A finding whose edits clash with ones taken already
    /// shares the fix when those edits cover it (it is fixed by them), and
    /// otherwise waits, without a fix, for a later pass.
    fn merge(&self, group: &Group, findings: &mut [(Finding, Vec<Clause>)], src: &str) {
        let mut order: Vec<usize> = group.findings.clone();
        order.sort_by_key(|&m| {
            let f = &findings[m].0;
            let unsafe_ = f.fix.as_ref().is_some_and(|x| x.applicability == Applicability::Unsafe);
            (!self.migrates[m], unsafe_, f.byte_range.0)
        });
        let mut taken: Vec<Edit> = Vec::new();
        let (mut shared, mut waiting) = (Vec::new(), Vec::new());
        let mut applicability = Applicability::Safe;
        for m in order {
            let f = &findings[m].0;
            let Some(fix) = &f.fix else { continue };
            let clashes = fix.edits.iter().any(|e| taken.iter().any(|t| t != e && touches(e.byte_range, t.byte_range)));
            if !clashes {
                for e in &fix.edits {
                    if !taken.contains(e) {
                        taken.push(e.clone());
                    }
                }
                if fix.applicability == Applicability::Unsafe {
                    applicability = Applicability::Unsafe;
                }
                shared.push(m);
            } else if taken.iter().any(|t| touches(f.byte_range, t.byte_range)) {
                shared.push(m);
            } else {
                waiting.push(m);
            }
        }
        taken.sort_by_key(|e| e.byte_range);
        let why = self.why_together(group, src);
        let names: Vec<String> =
            group.findings.iter().map(|&m| format!("{} (line {})", findings[m].0.code, findings[m].0.line)).collect();
        let name = |m: usize| group.findings.iter().position(|&g| g == m).map(|i| names[i].clone()).unwrap_or_default();
        for &m in &shared {
            let others: Vec<String> = shared.iter().filter(|&&o| o != m).map(|&o| name(o)).collect();
            let Some(fix) = findings[m].0.fix.as_mut() else { continue };
            fix.applicability = applicability;
            fix.edits = taken.clone();
            if !others.is_empty() {
                fix.description.push_str(&format!("; one fix with {}: {why}", list(&others)));
            }
        }
        let first = shared.first().map(|&m| name(m)).unwrap_or_default();
        for &m in &waiting {
            let f = &mut findings[m].0;
            f.fix = None;
            f.fix_withheld = Some(format!(
                "it waits for the fix of {first}, which migrates the code around it: `--fix` applies its own fix in \
                 the pass after that one"
            ));
        }
    }

    /// Why the findings of `group` migrate together, in words.
    fn why_together(&self, group: &Group, src: &str) -> String {
        let mut reasons: Vec<String> = Vec::new();
        if let Some(&t) = group.tests.first() {
            reasons.push(format!(
                "code that runs only where {} holds migrates with that test, or the CUDA path breaks",
                self.describe_test(t, src)
            ));
        }
        if let Some(why) = group.findings.iter().find_map(|&m| self.why[m]) {
            reasons.push(why.to_string());
        }
        reasons.join("; ")
    }
}

/// Whether two byte ranges overlap or touch (two insertions at one place
/// have no meaningful order).
fn touches(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// Up to four names, then how many more.
fn list(names: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut out = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        out.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    out
}

/// `text` on one line, shortened past 60 characters.
fn one_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &flat[..at]),
        None => flat,
    }
}
