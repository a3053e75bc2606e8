//! Baselines: record today's findings so that a team can adopt the gate at
//! once and be judged only on new findings. A finding's identity is its code,
//! path and the normalised text of its line (plus an occurrence index), so it
//! survives edits elsewhere in the file.

use crate::finding::Finding;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// One recorded finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Rule code.
    pub code: String,
    /// Display path when recorded.
    pub path: String,
    /// Identity (see [`fingerprints`]).
    pub fingerprint: String,
    /// Line when recorded (informational).
    pub line: usize,
    /// Message when recorded (informational).
    pub message: String,
}

/// A baseline file.
#[derive(Debug, Serialize, Deserialize)]
pub struct Baseline {
    /// Format version (1).
    pub version: u32,
    /// The recorded findings.
    pub findings: Vec<Entry>,
}

/// Each finding's identity: code, path, whitespace-normalised line text, and
/// which occurrence of that triple it is (in report order).
pub fn fingerprints(findings: &[Finding]) -> Vec<String> {
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    findings
        .iter()
        .map(|f| {
            let line = f.source_line.split_whitespace().collect::<Vec<_>>().join(" ");
            let n = seen.entry((f.code.clone(), f.path.clone(), line.clone())).or_insert(0);
            *n += 1;
            let identity = format!("{}\u{0}{}\u{0}{}\u{0}{}", f.code, f.path, line, n);
            format!("{:016x}", crate::hash::fnv1a(identity.as_bytes()))
        })
        .collect()
}

/// Writes the baseline of `findings` to `path`.
pub fn write(path: &Path, findings: &[Finding]) -> Result<(), String> {
    let entries = findings
        .iter()
        .zip(fingerprints(findings))
        .map(|(f, fingerprint)| Entry {
            code: f.code.clone(),
            path: f.path.clone(),
            fingerprint,
            line: f.line,
            message: f.message.clone(),
        })
        .collect();
    let text = serde_json::to_string_pretty(&Baseline { version: 1, findings: entries }).unwrap_or_default();
    std::fs::write(path, text + "\n").map_err(|e| format!("cannot write the baseline {}: {e}", path.display()))
}

/// Reads a baseline file.
pub fn read(path: &Path) -> Result<Baseline, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read the baseline {}: {e}", path.display()))?;
    let b: Baseline = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}:{}:{}: not an npu-mem baseline: {e}; write one with --write-baseline",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    if b.version != 1 {
        return Err(format!("{}: baseline version {} is not supported (expected 1)", path.display(), b.version));
    }
    Ok(b)
}

/// Splits `findings` into new ones and baselined ones; also returns the
/// baseline entries that matched nothing (fixed, or changed beyond recognition).
pub fn split(findings: Vec<Finding>, baseline: &Baseline) -> (Vec<Finding>, Vec<Finding>, Vec<Entry>) {
    let prints = fingerprints(&findings);
    let mut recorded: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for (i, e) in baseline.findings.iter().enumerate() {
        recorded.insert((e.code.as_str(), e.path.as_str(), e.fingerprint.as_str()), i);
    }
    let mut used = vec![false; baseline.findings.len()];
    let (mut new, mut old) = (Vec::new(), Vec::new());
    for (f, fp) in findings.into_iter().zip(prints) {
        match recorded.get(&(f.code.as_str(), f.path.as_str(), fp.as_str())) {
            Some(&i) => {
                used[i] = true;
                old.push(f);
            }
            None => new.push(f),
        }
    }
    let stale = baseline.findings.iter().zip(used).filter(|(_, u)| !u).map(|(e, _)| e.clone()).collect();
    (new, old, stale)
}
