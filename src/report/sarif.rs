//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and other viewers.
//! Rules carry their documentation from the packs; results carry relative
//! locations, fingerprints that survive edits elsewhere in the file, and fixes.

use super::{rule_docs, Report};
use crate::baseline::fingerprints;
use crate::finding::{Finding, Severity};
use crate::rules::model::Rule;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;

/// The id under which results carry their stable fingerprint.
const FINGERPRINT_KEY: &str = "npuMemFindingHash/v1";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The rule's documentation as plain text and as Markdown, every section of
/// `npu-mem rule CODE` in its order.
fn help(rule: &Rule) -> (String, String) {
    let sections = rule_docs::sections(rule);
    (rule_docs::to_text(&sections), rule_docs::to_markdown(&sections, "####"))
}

/// What the rule finds, and the code it is silent on.
fn full_description(rule: &Rule) -> String {
    let d = rule.docs();
    let mut text = d.what.trim().to_string();
    if !d.not_reported.is_empty() {
        text.push_str("\n\nNot reported when:");
        for b in &d.not_reported {
            text.push_str("\n- ");
            text.push_str(b.trim());
        }
    }
    text
}

fn rule_descriptor(rule: &Rule) -> Value {
    let (text, markdown) = help(rule);
    let mut tags = vec![rule.section.id().to_string(), "npu".to_string()];
    if rule.blocker {
        tags.push("migration-blocker".to_string());
    }
    json!({
        "id": rule.code,
        "name": rule.name,
        "shortDescription": { "text": rule.name.replace('-', " ") },
        "fullDescription": { "text": full_description(rule) },
        "help": { "text": text, "markdown": markdown },
        "defaultConfiguration": { "level": level(rule.severity) },
        "properties": { "tags": tags, "precision": rule.precision },
    })
}

/// A location relative to the scan's working directory, or an absolute file URI.
fn artifact(path: &str) -> Value {
    if path.starts_with('/') {
        json!({ "uri": format!("file://{}", encode(path)) })
    } else {
        json!({ "uri": encode(path), "uriBaseId": "SRCROOT" })
    }
}

/// Percent-encodes the characters a URI path cannot hold.
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn region(start: (usize, usize), end: (usize, usize)) -> Value {
    json!({ "startLine": start.0, "startColumn": start.1, "endLine": end.0, "endColumn": end.1 })
}

/// The finding's region in the file itself (in a notebook: in its JSON).
fn region_in_file(f: &Finding) -> Value {
    let (line, column, end_line, end_column) = f.region_in_file();
    region((line, column), (end_line, end_column))
}

/// A result's own properties: where it is in a notebook, whether it blocks
/// automatic migration, why it is advice and why its rule's fix is withheld.
fn properties(f: &Finding) -> Option<Value> {
    let mut p = serde_json::Map::new();
    if let Some(cell) = f.cell {
        p.insert("cell".into(), json!(cell));
        p.insert("cellLine".into(), json!(f.line));
        p.insert("cellColumn".into(), json!(f.column));
    }
    if f.blocker {
        p.insert("migrationBlocker".into(), json!(true));
    }
    if let Some(advice) = f.advice {
        p.insert("advice".into(), json!(advice.id()));
        p.insert("adviceReason".into(), json!(advice.describe()));
    }
    if let Some(why) = &f.fix_withheld {
        p.insert("fixWithheld".into(), json!(why));
    }
    if let Some(reached) = f.reached {
        p.insert("reached".into(), json!(reached));
    }
    (!p.is_empty()).then_some(Value::Object(p))
}

fn result(f: &Finding, rule_index: Option<usize>, fingerprint: String) -> Value {
    let mut r = json!({
        "ruleId": f.code,
        "level": level(f.severity),
        "message": { "text": f.message_with_advice() },
        "locations": [{ "physicalLocation": {
            "artifactLocation": artifact(&f.path),
            "region": region_in_file(f),
        } }],
        "partialFingerprints": { FINGERPRINT_KEY: fingerprint },
    });
    if let Some(i) = rule_index {
        r["ruleIndex"] = json!(i);
    }
    if let Some(properties) = properties(f) {
        r["properties"] = properties;
    }
    // A notebook's fix edits a cell, not a region of the JSON file: not expressible in SARIF.
    if let Some(fix) = f.fix.as_ref().filter(|_| f.cell.is_none()) {
        let replacements: Vec<Value> = fix
            .edits
            .iter()
            .map(|e| {
                json!({
                    "deletedRegion": region((e.start.line, e.start.column), (e.end.line, e.end.column)),
                    "insertedContent": { "text": e.content },
                })
            })
            .collect();
        r["fixes"] = json!([{
            "description": { "text": fix.description },
            "artifactChanges": [{ "artifactLocation": artifact(&f.path), "replacements": replacements }],
        }]);
    }
    r
}

/// Writes the SARIF log to `out` as it is rendered.
///
/// Each result is written as soon as it is built: a `Value` tree costs more
/// than ten times its text, and a run can have tens of thousands of results.
pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let set = report.engine.set;
    let rules: Vec<&Rule> = report.engine.active.iter().map(|&i| &set.rules[i]).collect();
    let index: HashMap<&str, usize> = rules.iter().enumerate().map(|(i, r)| (r.code.as_str(), i)).collect();
    let cwd = std::env::current_dir().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    let root = format!("file://{}/", encode(cwd.trim_end_matches('/')));
    let mut doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "npu-mem",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules.iter().map(|r| rule_descriptor(r)).collect::<Vec<_>>(),
            } },
            "originalUriBaseIds": { "SRCROOT": { "uri": root } },
            "columnKind": "unicodeCodePoints",
            "results": [RESULTS_MARK],
        }],
    });
    // Only a real project page belongs here: set `homepage` in Cargo.toml to fill it.
    if !env!("CARGO_PKG_HOMEPAGE").is_empty() {
        doc["runs"][0]["tool"]["driver"]["informationUri"] = json!(env!("CARGO_PKG_HOMEPAGE"));
    }
    let frame = serde_json::to_string_pretty(&doc)?;
    let mark = format!("{RESULTS_INDENT}\"{RESULTS_MARK}\"");
    let Some((before, after)) = frame.split_once(&mark) else {
        return writeln!(out, "{frame}");
    };
    let outcome = report.outcome;
    if outcome.findings.is_empty() && outcome.baselined.is_empty() && outcome.suppressed.is_empty() {
        // `[\n` and `\n      ]` around the mark close up into `[]`, as for an empty array.
        return writeln!(out, "{}{}", before.trim_end(), after.trim_start());
    }
    out.write_all(before.as_bytes())?;
    let mut results = ResultsWriter { out, first: true };
    let findings = &outcome.findings;
    for (f, fp) in findings.iter().zip(fingerprints(findings)) {
        results.push(&result(f, index.get(f.code.as_str()).copied(), fp))?;
    }
    for (f, fp) in outcome.baselined.iter().zip(fingerprints(&outcome.baselined)) {
        let mut r = result(f, index.get(f.code.as_str()).copied(), fp);
        r["suppressions"] = json!([{ "kind": "external", "justification": "recorded in the npu-mem baseline" }]);
        results.push(&r)?;
    }
    // Suppressed findings stay in the log, marked as such, so viewers can show them.
    let suppressed: Vec<Finding> = outcome.suppressed.iter().map(|(f, _)| f.clone()).collect();
    for ((f, reason), fp) in outcome.suppressed.iter().zip(fingerprints(&suppressed)) {
        let mut r = result(f, index.get(f.code.as_str()).copied(), fp);
        let mut suppression = json!({ "kind": "inSource" });
        if let Some(reason) = reason {
            suppression["justification"] = json!(reason);
        }
        r["suppressions"] = json!([suppression]);
        results.push(&r)?;
    }
    writeln!(results.out, "{after}")
}

/// The place of the results in the rendered frame: a string alone on its
/// line at the results' depth, which nothing else in the log can be.
const RESULTS_MARK: &str = "npu-mem: results go here";
/// The indentation of a result in the pretty-printed log.
const RESULTS_INDENT: &str = "        ";

/// Writes the results array's items, pretty-printed, one result at a time.
struct ResultsWriter<'o> {
    out: &'o mut dyn Write,
    first: bool,
}

impl ResultsWriter<'_> {
    fn push(&mut self, result: &Value) -> std::io::Result<()> {
        if !std::mem::take(&mut self.first) {
            self.out.write_all(b",\n")?;
        }
        // JSON strings escape their newlines, so lines are the printer's own.
        let pretty = serde_json::to_string_pretty(result)?;
        for (i, line) in pretty.lines().enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
            }
            self.out.write_all(RESULTS_INDENT.as_bytes())?;
            self.out.write_all(line.as_bytes())?;
        }
        Ok(())
    }
}
