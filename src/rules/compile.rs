//! Checking a pack and turning its TOML into compiled rules. Every error names
//! the pack, the line and the field at fault, so a pack author can fix it.

use super::data_table::DataTable;
use super::docs::RuleDocs;
use super::error::{DataError, PackError, PackProblem};
use super::lazy_regex::{Interner, LazyRegex, RegexError};
use super::model::*;
use super::pack_json::{line_and_column, PackJson};
use super::placeholders::{captures, check_filled};
use super::schema::*;
use super::spec_error::{Problem, SpecError, VersionError};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Shared state while compiling all packs of a run.
#[derive(Default)]
pub struct Compiler {
    /// Facts that `file_has`, `project_has`, `loaded_with`, `project_imports` and `process_imports` refer to, by index.
    pub facts: Vec<Fact>,
    /// Data tables by name.
    pub tables: Vec<(String, DataTable)>,
    /// Raw queries with the index of their reported capture.
    pub queries: Vec<(tree_sitter::Query, u32)>,
    /// File extensions that `file` anchors need the walker to collect.
    pub file_extensions: Vec<String>,
    /// Whether the pack being compiled is built in and trusted: its regexes
    /// are compiled on first use (see [`LazyRegex`]) and its named matchers
    /// are checked only where used. A test compiles every built-in pack
    /// untrusted, so that neither can hide an error.
    pub trusted: bool,
    /// Whether the pack being compiled is built in, its docs embedded apart
    /// (see [`crate::rules::docs`]); a user's pack must give them.
    pub docs_embedded: bool,
    /// One regex per distinct pattern, across all packs.
    regexes: Mutex<Interner>,
    /// The named matchers (`[matchers.NAME]`) of the pack being compiled.
    pub(super) named: BTreeMap<String, Arc<MatcherSpec>>,
    /// The named matchers of the pack being compiled, as each compiled on its
    /// first use that adds nothing to it (`use = "NAME"` alone): later such
    /// uses copy it rather than compile it again.
    pub(super) named_compiled: NamedCompiled,
    /// The named matchers being expanded, innermost last (a name used inside
    /// its own expansion is a cycle).
    pub(super) expanding: Vec<String>,
    /// How many packs have begun compiling: named matchers, and so what a
    /// spec compiles to, are the pack's own.
    pub(super) packs_begun: usize,
    /// The spec of each `file_has`, `project_has` and `loaded_with` fact,
    /// with its pack and scope, and the fact's index (see `has_fact`).
    pub(super) fact_specs: Vec<((usize, Scope, MatcherSpec), usize)>,
}

/// Compiled named matchers by name (see [`Compiler::named_compiled`]), as
/// a nested matcher compiles them and as a rule's alternatives.
#[derive(Default)]
pub(super) struct NamedCompiled {
    pub(super) matcher: BTreeMap<String, Matcher>,
    pub(super) alternatives: BTreeMap<String, Vec<Matcher>>,
}

/// Everything one pack contributes.
pub struct CompiledPack {
    /// Rules.
    pub rules: Vec<Rule>,
    /// Summary tables.
    pub tables: Vec<Table>,
    /// Summary counts.
    pub counts: Vec<Count>,
    /// Summary site lists.
    pub sites: Vec<Sites>,
    /// Summary groups.
    pub groups: Vec<Group>,
    /// Summary notes.
    pub notes: Vec<Note>,
}

/// What the compiler's steps return: the value, or the field at fault and why.
pub(super) type Res<T> = Result<T, SpecError>;

/// Parses one pack's TOML text (`origin` names it in the error). Packs are
/// parsed apart from [`Compiler::compile_pack`] so that they can be parsed in
/// parallel. The TOML is read through JSON, as the built-in packs are (see
/// [`PackJson`]).
pub fn parse_pack(origin: &str, text: &str) -> Result<PackSpec, PackError> {
    let error = |offset: Option<usize>, problem: PackProblem| {
        let (line, column) = offset.map(|offset| line_and_column(text, offset)).unzip();
        PackError { origin: origin.to_string(), line, column, problem: Box::new(problem) }
    };
    let pack = PackJson::from_toml(text).map_err(|e| error(e.span().map(|s| s.start), PackProblem::Syntax(e)))?;
    serde_json::from_str(&pack.json).map_err(|e| {
        let message = e.to_string();
        let message = message.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&message);
        error(pack.toml_offset(e.line(), e.column()), PackProblem::Schema(message.to_string()))
    })
}

impl Compiler {
    /// Compiles one parsed pack; `text` is its TOML text, for error lines
    /// (empty for a built-in pack, embedded as JSON), and
    /// `read_data` reads a `[[data]]` file.
    pub fn compile_pack(
        &mut self,
        origin: &str,
        text: &str,
        mut spec: PackSpec,
        read_data: &dyn Fn(&str) -> Result<Cow<'static, str>, DataError>,
    ) -> Result<CompiledPack, PackError> {
        let at = |needle: &str, problem: PackProblem| PackError {
            origin: origin.to_string(),
            line: text.find(needle).map(|i| text[..i].matches('\n').count() + 1),
            column: None,
            problem: Box::new(problem),
        };
        let summary = |kind, name: &str, error: SpecError| {
            at(&format!("\"{name}\""), PackProblem::Summary { kind, name: name.to_string(), error })
        };
        for d in &spec.data {
            let needle = format!("\"{}\"", d.file);
            let table = read_data(&d.file).and_then(DataTable::parse).map_err(|error| {
                at(&needle, PackProblem::Data { name: d.name.clone(), file: d.file.clone(), error })
            })?;
            // Rules compiled earlier refer to tables by position: a later pack
            // declaring the same name adds a table (found first by name from
            // now on) and leaves the earlier ones where they are.
            self.tables.push((d.name.clone(), table));
        }
        self.packs_begun += 1;
        self.named = std::mem::take(&mut spec.matchers).into_iter().map(|(k, m)| (k, Arc::new(m))).collect();
        self.named_compiled = NamedCompiled::default();
        if !self.trusted {
            self.check_named_matchers()
                .map_err(|(name, error)| at(&format!("[matchers.{name}]"), PackProblem::Matcher { name, error }))?;
        }
        let mut rules = Vec::new();
        for r in spec.rule {
            let needle = format!("\"{}\"", r.code);
            let code = r.code.clone();
            rules.push(self.rule(r, origin).map_err(|error| at(&needle, PackProblem::Rule { code, error }))?);
        }
        let mut tables = Vec::new();
        for t in spec.summary.table {
            let alternatives =
                self.alternatives(&t.matcher).map_err(|e| summary("table", &t.title, e.within("match")))?;
            let columns = t.columns.into_iter().map(|c| (c.arg, c.position, c.default)).collect();
            tables.push(Table { section: t.section, title: t.title, alternatives, columns });
        }
        let mut counts = Vec::new();
        for c in spec.summary.count {
            let source = match (c.matcher, c.rule) {
                (Some(m), None) => CountSource::Matches(
                    self.alternatives(&m).map_err(|e| summary("count", &c.label, e.within("match")))?,
                ),
                (None, Some(code)) => CountSource::Rule(code),
                _ => {
                    let problem = Problem::OneOf { fields: "`match` and `rule`" };
                    return Err(summary("count", &c.label, problem.into()));
                }
            };
            counts.push(Count { section: c.section, label: c.label, source });
        }
        let mut sites = Vec::new();
        for x in spec.summary.sites {
            let alternatives =
                self.alternatives(&x.matcher).map_err(|e| summary("sites", &x.label, e.within("match")))?;
            sites.push(Sites { section: x.section, label: x.label, alternatives, detail: x.detail, role: x.role });
        }
        let mut groups = Vec::new();
        for g in spec.summary.group {
            let alternatives =
                self.alternatives(&g.matcher).map_err(|e| summary("group", &g.title, e.within("match")))?;
            groups.push(Group {
                section: g.section,
                title: g.title,
                alternatives,
                key: g.key,
                value: g.value,
                columns: g.columns,
                triggers: g.triggers,
            });
        }
        let notes = spec
            .summary
            .note
            .into_iter()
            .map(|n| Note { section: n.section, title: n.title, text: n.text, when_rule: n.when_rule })
            .collect();
        Ok(CompiledPack { rules, tables, counts, sites, groups, notes })
    }

    /// Compiles every named matcher once, so that an error is reported at its
    /// definition even if no rule uses it, then drops what that registered
    /// (facts, their specs, queries, compiled named matchers): the rules'
    /// uses compile them again.
    fn check_named_matchers(&mut self) -> Result<(), (String, SpecError)> {
        let registered = (self.facts.len(), self.queries.len(), self.file_extensions.len());
        let names: Vec<String> = self.named.keys().cloned().collect();
        for name in names {
            let use_it = MatcherSpec { uses: Some(name.clone()), ..Default::default() };
            self.matcher(&use_it).map_err(|e| (name, e))?;
        }
        self.facts.truncate(registered.0);
        self.fact_specs.retain(|(_, fact)| *fact < registered.0);
        self.named_compiled = NamedCompiled::default();
        self.queries.truncate(registered.1);
        self.file_extensions.truncate(registered.2);
        Ok(())
    }

    /// A predicate-only matcher that is evaluated on its own, without the
    /// match's captures (`downgrade.when`, `auto_migrated_when`); `key` names it in errors.
    fn condition(&mut self, spec: &MatcherSpec, key: &str) -> Res<Matcher> {
        let when = self.matcher(spec).map_err(|e| e.within(key))?;
        check_filled(&when, |_| false).map_err(|e| e.within(key))?;
        Ok(when)
    }

    /// The index of the data table `name` (the latest declared by that name).
    pub(super) fn table(&self, name: &str) -> Res<usize> {
        self.tables.iter().rposition(|(n, _)| n == name).ok_or_else(|| {
            let known = self.tables.iter().map(|(n, _)| n.clone()).collect();
            Problem::NoTable { name: name.to_string(), known }.into()
        })
    }

    fn rule(&mut self, r: RuleSpec, origin: &str) -> Res<Rule> {
        if r.code.is_empty() || !r.code.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(SpecError::at("code", Problem::BadCode));
        }
        let alternatives = match (&r.matcher, r.emitted_by.as_deref()) {
            (Some(m), None) => self.alternatives(m).map_err(|e| e.within("match"))?,
            (None, Some("suppressions")) => Vec::new(),
            (None, Some(other)) => {
                let expected = "`suppressions`, the only built-in emitter";
                return Err(SpecError::at("emitted_by", Problem::Unknown { value: other.to_string(), expected }));
            }
            (None, None) => return Err(SpecError::at("match", Problem::NoMatcher)),
            (Some(_), Some(_)) => return Err(Problem::OneOf { fields: "`match` and `emitted_by`" }.into()),
        };
        let report = match r.report.as_deref() {
            None | Some("node") => ReportAt::Node,
            Some("header") => ReportAt::Header,
            Some("file_start") => ReportAt::FileStart,
            Some("enclosing_loop") => ReportAt::EnclosingLoop,
            Some(s) => match s.split_once(':') {
                Some(("keyword", k)) => ReportAt::Keyword(k.to_string()),
                Some(("keyword_value", k)) => ReportAt::KeywordValue(k.to_string()),
                Some(("capture", k)) => ReportAt::Capture(k.to_string()),
                _ => {
                    let expected = "node, header, file_start, enclosing_loop, keyword:NAME, keyword_value:NAME or \
                                    capture:NAME";
                    return Err(SpecError::at("report", Problem::Unknown { value: s.to_string(), expected }));
                }
            },
        };
        let target =
            r.target.as_deref().map(parse_version_req).transpose().map_err(|e| SpecError::from(e).within("target"))?;
        let downgrade = match r.downgrade {
            Some(d) => Some((d.to, self.condition(&d.when, "downgrade.when")?)),
            None => None,
        };
        let auto_migrated_when =
            r.auto_migrated_when.as_ref().map(|spec| self.condition(spec, "auto_migrated_when")).transpose()?;
        let fix = r.fix.map(|f| self.fix(*f)).transpose().map_err(|e| e.within("fix"))?;
        if let Some(when) = fix.as_ref().and_then(|f| f.when.as_ref()) {
            // Evaluated after the match, with its captures.
            check_filled(when, |name| alternatives.iter().any(|m| captures(m, name)))
                .map_err(|e| e.within("fix.when"))?;
        }
        // Facts the conditions test are known once the file has been walked
        // (see `Rule::conditions_read_file`). Read from the compiled matchers:
        // a fact written before in the pack is not registered again.
        let fix_conditions = fix.iter().flat_map(|f| {
            f.when.iter().chain(f.withheld.iter().map(|(m, _)| m)).chain(f.unsafe_when.iter().map(|(m, _)| m))
        });
        let mut conditions = downgrade.iter().map(|(_, m)| m).chain(&auto_migrated_when).chain(fix_conditions);
        let conditions_read_file = conditions.any(Matcher::tests_a_fact);
        let precision = r.precision.unwrap_or_else(|| "high".to_string());
        if !["very-high", "high", "medium", "low"].contains(&precision.as_str()) {
            let expected = "very-high, high, medium or low";
            return Err(SpecError::at("precision", Problem::Unknown { value: precision, expected }));
        }
        check_placeholders(&r.message, &alternatives).map_err(|p| SpecError::at("message", p))?;
        if r.triggers.is_none() && alternatives.iter().any(|m| matches!(m.anchor, Some(Anchor::ShellCommand(_)))) {
            return Err(Problem::ShellWithoutTriggers.into());
        }
        Ok(Rule {
            code: r.code.into(),
            name: r.name.into(),
            section: r.section,
            severity: r.severity,
            message: r.message,
            auto_migrated: r.auto_migrated,
            blocker: r.blocker,
            only_under_automatic: r.only_under_automatic,
            overrides: r.overrides,
            target,
            triggers: r.triggers,
            docs: match r.docs {
                Some(docs) => RuleDocs::Given(Box::new(docs)),
                None if self.docs_embedded => RuleDocs::Embedded,
                None => return Err(SpecError::at("docs", Problem::NoDocs)),
            },
            alternatives,
            report,
            downgrade,
            auto_migrated_when,
            fix,
            conditions_read_file,
            origin: origin.to_string(),
            once_per_file: r.once_per_file,
            once_per_line: r.once_per_line,
            precision,
            breaks_at: r.breaks_at,
        })
    }

    fn fix(&mut self, f: FixSpec) -> Res<FixTemplate> {
        let when = f.when.as_ref().map(|m| self.matcher(m)).transpose().map_err(|e| e.within("when"))?;
        let withheld = match f.withheld {
            Some(w) => Some((self.condition(&w.when, "withheld.when")?, w.why)),
            None => None,
        };
        let unsafe_when = match f.unsafe_when {
            Some(u) => Some((self.condition(&u.when, "unsafe_when.when")?, u.why)),
            None => None,
        };
        let mut edits = Vec::new();
        for (i, e) in f.edits.into_iter().enumerate() {
            let edit = format!("edits[{i}]");
            let on = match e.on.as_deref() {
                None | Some("report") => EditTarget::Report,
                Some("node") => EditTarget::Node,
                Some("callee") => EditTarget::Callee,
                Some("method_name") => EditTarget::MethodName,
                Some("receiver") => EditTarget::Receiver,
                Some("call_tail") => EditTarget::CallTail,
                Some("comparisons") => EditTarget::Comparisons,
                Some(s) => match s.split_once(':') {
                    Some(("keyword", k)) => EditTarget::Keyword(k.into()),
                    Some(("keyword_value", k)) => EditTarget::KeywordValue(k.into()),
                    Some(("capture", k)) => EditTarget::Capture(k.into()),
                    _ => {
                        let expected = "report, node, callee, method_name, receiver, call_tail, comparisons, \
                                        keyword:NAME, keyword_value:NAME or capture:NAME";
                        let problem = Problem::Unknown { value: s.to_string(), expected };
                        return Err(SpecError::at("on", problem).within(&edit));
                    }
                },
            };
            let subs = |list: Vec<(String, String)>, key: &str| {
                list.into_iter()
                    .map(|(p, r)| Ok((self.regex(&p)?, r)))
                    .collect::<Result<Vec<_>, RegexError>>()
                    .map_err(|e| SpecError::from(e).within(key).within(&edit))
            };
            // Exactly one action: each field given becomes one.
            let mut actions = Vec::new();
            actions.extend(e.replace.map(EditAction::Replace));
            actions.extend(e.sub.map(|s| subs(s, "sub").map(EditAction::Sub)).transpose()?);
            actions.extend(e.sub_all.map(|s| subs(s, "sub_all").map(EditAction::SubAll)).transpose()?);
            actions.extend(e.set_keyword.map(|k| EditAction::SetKeyword {
                name: k.name,
                position: k.position,
                value: k.value,
            }));
            actions.extend(e.prepend_arg.map(EditAction::PrependArg));
            actions.extend(e.remove_arg.then_some(EditAction::RemoveArg));
            actions.extend(e.name_args.map(EditAction::NameArgs));
            let Ok([action]) = <[EditAction; 1]>::try_from(actions) else {
                let fields = "replace, sub, sub_all, set_keyword, prepend_arg, remove_arg, name_args";
                return Err(SpecError::at(&edit, Problem::OneOf { fields }));
            };
            if matches!(on, EditTarget::Comparisons) && !matches!(action, EditAction::Sub(_)) {
                return Err(SpecError::at(&edit, Problem::ComparisonsNeedSub));
            }
            edits.push(EditTemplate { on, action });
        }
        let (then, together) = (f.then, f.together);
        Ok(FixTemplate {
            applicability: f.applicability,
            description: f.description,
            edits,
            when,
            then,
            together,
            withheld,
            unsafe_when,
        })
    }
}

impl Compiler {
    /// A regex of the pack being compiled: deferred for a built-in pack,
    /// compiled (and so checked) now for a user pack.
    pub(super) fn regex(&self, pattern: &str) -> Result<LazyRegex, RegexError> {
        self.regexes.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(pattern, self.trusted)
    }
}

/// Parses `<=2.6`, `>=2.7`, `==2.1`.
pub fn parse_version_req(s: &str) -> Result<VersionReq, VersionError> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_digit()).ok_or_else(|| VersionError::NoVersion { text: s.to_string() })?;
    let (op, ver) = s.split_at(split);
    let op = match op.trim() {
        "" | "==" => "==",
        o @ ("<" | "<=" | ">" | ">=") => o,
        o => return Err(VersionError::Operator { op: o.to_string() }),
    };
    Ok(VersionReq { op: op.to_string(), version: parse_version(ver)? })
}

/// Parses `2.6` into `(2, 6)`.
pub fn parse_version(s: &str) -> Result<Version, VersionError> {
    let wrong = || VersionError::NotMajorMinor { text: s.to_string() };
    let (a, b) = s.trim().split_once('.').ok_or_else(wrong)?;
    let num = |x: &str| x.parse::<u32>().map_err(|_| wrong());
    Ok((num(a)?, num(b)?))
}

/// Placeholders every anchor kind may provide; see docs/rule-packs.md.
const KNOWN_PLACEHOLDERS: &[&str] = &[
    "text",
    "callee",
    "qualname",
    "name",
    "method",
    "receiver",
    "value",
    "literal",
    "op",
    "path",
    "condition",
    "report",
    "target",
];

/// Fails on a placeholder of `message` that nothing provides, or a `{` never closed.
fn check_placeholders(message: &str, alternatives: &[Matcher]) -> Result<(), Problem> {
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').ok_or(Problem::UnclosedPlaceholder)? + open;
        let name = &rest[open + 1..close];
        let known = KNOWN_PLACEHOLDERS.contains(&name)
            || name.starts_with("arg.")
            || name.starts_with("import:")
            || alternatives.iter().any(|m| captures(m, name));
        if !known {
            return Err(Problem::UnknownPlaceholder { name: name.to_string(), known: KNOWN_PLACEHOLDERS });
        }
        rest = &rest[close + 1..];
    }
    Ok(())
}
