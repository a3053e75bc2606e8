//! Checking a pack and turning its TOML into compiled rules. Every error names
//! the pack, the line and the field at fault, so a pack author can fix it.

use super::lazy_regex::{Interner, LazyRegex};
use super::model::*;
use super::placeholders::{check_filled, provided};
use super::schema::*;
use std::fmt;
use std::sync::Mutex;

/// A pack that cannot be used, and where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackError {
    /// The pack's path (or `builtin:NAME`).
    pub origin: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong and, where it helps, what to write instead.
    pub message: String,
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// Shared state while compiling all packs of a run.
#[derive(Default)]
pub struct Compiler {
    /// Facts that `file_has`, `project_has` and `project_imports` refer to, by index.
    pub facts: Vec<Fact>,
    /// Data tables by name.
    pub tables: Vec<(String, DataTable)>,
    /// Raw queries with the index of their reported capture.
    pub queries: Vec<(tree_sitter::Query, u32)>,
    /// File extensions that `file` anchors need the walker to collect.
    pub file_extensions: Vec<String>,
    /// Whether the pack being compiled is built in, so that its regexes are
    /// compiled on first use (see [`LazyRegex`]).
    pub defer_regexes: bool,
    /// One regex per distinct pattern, across all packs.
    regexes: Mutex<Interner>,
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

pub(super) type Res<T> = Result<T, String>;

/// Parses one pack's TOML text (`origin` names it in the error). Packs are
/// parsed apart from [`Compiler::compile_pack`] so that they can be parsed in parallel.
pub fn parse_pack(origin: &str, text: &str) -> Result<PackSpec, PackError> {
    toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map_or((None, None), |s| {
            let before = &text[..s.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            (Some(line), Some(column))
        });
        PackError { origin: origin.to_string(), line, column, message: e.message().to_string() }
    })
}

impl Compiler {
    /// Compiles one parsed pack; `text` is its TOML text, for error lines, and
    /// `read_data` reads a `[[data]]` file.
    pub fn compile_pack(
        &mut self,
        origin: &str,
        text: &str,
        spec: PackSpec,
        read_data: &dyn Fn(&str) -> Result<String, String>,
    ) -> Result<CompiledPack, PackError> {
        let at = |needle: &str, message: String| PackError {
            origin: origin.to_string(),
            line: text.find(needle).map(|i| text[..i].matches('\n').count() + 1),
            column: None,
            message,
        };
        for d in &spec.data {
            let needle = format!("\"{}\"", d.file);
            let table = read_data(&d.file)
                .and_then(|t| DataTable::parse(&t))
                .map_err(|m| at(&needle, format!("data `{}` ({}): {m}", d.name, d.file)))?;
            // Rules compiled earlier refer to tables by position: a later pack
            // declaring the same name adds a table (found first by name from
            // now on) and leaves the earlier ones where they are.
            self.tables.push((d.name.clone(), table));
        }
        let mut rules = Vec::new();
        for r in spec.rule {
            let needle = format!("\"{}\"", r.code);
            let code = r.code.clone();
            rules.push(self.rule(r, origin).map_err(|m| at(&needle, format!("rule {code}: {m}")))?);
        }
        let mut tables = Vec::new();
        for t in spec.summary.table {
            let needle = format!("\"{}\"", t.title);
            let title = t.title.clone();
            let alternatives =
                self.alternatives(&t.matcher).map_err(|m| at(&needle, format!("table `{title}`: match.{m}")))?;
            let columns = t.columns.into_iter().map(|c| (c.arg, c.position, c.default)).collect();
            tables.push(Table { section: t.section, title: t.title, alternatives, columns });
        }
        let mut counts = Vec::new();
        for c in spec.summary.count {
            let needle = format!("\"{}\"", c.label);
            let source = match (c.matcher, c.rule) {
                (Some(m), None) => CountSource::Matches(
                    self.alternatives(&m).map_err(|e| at(&needle, format!("count `{}`: match.{e}", c.label)))?,
                ),
                (None, Some(code)) => CountSource::Rule(code),
                _ => return Err(at(&needle, format!("count `{}`: give exactly one of `match` and `rule`", c.label))),
            };
            counts.push(Count { section: c.section, label: c.label, source });
        }
        let mut sites = Vec::new();
        for x in spec.summary.sites {
            let needle = format!("\"{}\"", x.label);
            let alternatives =
                self.alternatives(&x.matcher).map_err(|e| at(&needle, format!("sites `{}`: match.{e}", x.label)))?;
            sites.push(Sites { section: x.section, label: x.label, alternatives, detail: x.detail, role: x.role });
        }
        let mut groups = Vec::new();
        for g in spec.summary.group {
            let needle = format!("\"{}\"", g.title);
            let alternatives =
                self.alternatives(&g.matcher).map_err(|e| at(&needle, format!("group `{}`: match.{e}", g.title)))?;
            groups.push(Group {
                section: g.section,
                title: g.title,
                alternatives,
                key: g.key,
                value: g.value,
                columns: g.columns,
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

    /// A predicate-only matcher that is evaluated on its own, without the
    /// match's captures (`downgrade.when`, `auto_migrated_when`); `key` names it in errors.
    fn condition(&mut self, spec: &MatcherSpec, key: &str) -> Res<Matcher> {
        let when = self.matcher(spec).map_err(|e| format!("{key}.{e}"))?;
        check_filled(&when, |_| false).map_err(|e| format!("{key}.{e}"))?;
        Ok(when)
    }

    pub(super) fn table(&self, name: &str) -> Res<usize> {
        self.tables.iter().rposition(|(n, _)| n == name).ok_or_else(|| {
            let known: Vec<&str> = self.tables.iter().map(|(n, _)| n.as_str()).collect();
            format!("no data table `{name}`; declare it with [[data]] (known: {})", known.join(", "))
        })
    }

    fn rule(&mut self, r: RuleSpec, origin: &str) -> Res<Rule> {
        if r.code.is_empty() || !r.code.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err("code: use letters and digits only, e.g. `ORG001`".into());
        }
        let alternatives = match (&r.matcher, r.emitted_by.as_deref()) {
            (Some(m), None) => self.alternatives(m).map_err(|e| format!("match.{e}"))?,
            (None, Some("suppressions")) => Vec::new(),
            (None, Some(other)) => {
                return Err(format!("emitted_by: unknown `{other}`; the only built-in emitter is `suppressions`"))
            }
            (None, None) => return Err("match: missing; every rule needs a matcher".into()),
            (Some(_), Some(_)) => return Err("give either `match` or `emitted_by`, not both".into()),
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
                    return Err(format!(
                        "report: unknown `{s}`; use node, header, file_start, enclosing_loop, keyword:NAME, keyword_value:NAME or capture:NAME"
                    ))
                }
            },
        };
        let target = r.target.as_deref().map(parse_version_req).transpose().map_err(|e| format!("target: {e}"))?;
        // Facts that the conditions below add are tested once the file has
        // been walked (see `Rule::conditions_read_file`).
        let facts_before = self.facts.len();
        let downgrade = match r.downgrade {
            Some(d) => Some((d.to, self.condition(&d.when, "downgrade.when")?)),
            None => None,
        };
        let auto_migrated_when =
            r.auto_migrated_when.as_ref().map(|spec| self.condition(spec, "auto_migrated_when")).transpose()?;
        let fix = r.fix.map(|f| self.fix(f)).transpose().map_err(|e| format!("fix.{e}"))?;
        if let Some(when) = fix.as_ref().and_then(|f| f.when.as_ref()) {
            // Evaluated after the match, with its captures.
            let captured = |name: &str| alternatives.iter().any(|m| provided(m).contains_key(name));
            check_filled(when, captured).map_err(|e| format!("fix.when.{e}"))?;
        }
        let conditions_read_file = self.facts.len() > facts_before;
        let precision = r.precision.unwrap_or_else(|| "high".to_string());
        if !["very-high", "high", "medium", "low"].contains(&precision.as_str()) {
            return Err(format!("precision: `{precision}` is not one of very-high, high, medium, low"));
        }
        check_placeholders(&r.message, &alternatives).map_err(|e| format!("message: {e}"))?;
        if r.triggers.is_none() && alternatives.iter().any(|m| matches!(m.anchor, Some(Anchor::ShellCommand(_)))) {
            return Err(
                "a `shell_command` rule needs `triggers`: the words a script must contain for the rule to be tried"
                    .into(),
            );
        }
        Ok(Rule {
            code: r.code.into(),
            name: r.name.into(),
            section: r.section,
            severity: r.severity,
            message: r.message,
            auto_migrated: r.auto_migrated,
            blocker: r.blocker,
            overrides: r.overrides,
            target,
            triggers: r.triggers,
            docs: r.docs,
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
        })
    }

    fn fix(&mut self, f: FixSpec) -> Res<FixTemplate> {
        let when = f.when.as_ref().map(|m| self.matcher(m)).transpose().map_err(|e| format!("when.{e}"))?;
        let mut edits = Vec::new();
        for (i, e) in f.edits.into_iter().enumerate() {
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
                    _ => return Err(format!("edits[{i}].on: unknown target `{s}`")),
                },
            };
            let subs = |list: Vec<(String, String)>| {
                list.into_iter().map(|(p, r)| Ok((self.regex(&p)?, r))).collect::<Res<Vec<_>>>()
            };
            let action = match (e.replace, e.sub, e.sub_all, e.set_keyword, e.prepend_arg, e.remove_arg) {
                (Some(r), None, None, None, None, false) => EditAction::Replace(r),
                (None, Some(s), None, None, None, false) => {
                    EditAction::Sub(subs(s).map_err(|m| format!("edits[{i}].sub: {m}"))?)
                }
                (None, None, Some(s), None, None, false) => {
                    EditAction::SubAll(subs(s).map_err(|m| format!("edits[{i}].sub_all: {m}"))?)
                }
                (None, None, None, Some(k), None, false) => {
                    EditAction::SetKeyword { name: k.name, position: k.position, value: k.value }
                }
                (None, None, None, None, Some(a), false) => EditAction::PrependArg(a),
                (None, None, None, None, None, true) => EditAction::RemoveArg,
                _ => {
                    return Err(format!(
                        "edits[{i}]: give exactly one of replace, sub, sub_all, set_keyword, prepend_arg, remove_arg"
                    ))
                }
            };
            if matches!(on, EditTarget::Comparisons) && !matches!(action, EditAction::Sub(_)) {
                return Err(format!("edits[{i}]: `on = \"comparisons\"` takes `sub`"));
            }
            edits.push(EditTemplate { on, action });
        }
        Ok(FixTemplate { applicability: f.applicability, description: f.description, edits, when, then: f.then })
    }
}

impl Compiler {
    /// A regex of the pack being compiled: deferred for a built-in pack,
    /// compiled (and so checked) now for a user pack.
    pub(super) fn regex(&self, pattern: &str) -> Res<LazyRegex> {
        self.regexes.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(pattern, self.defer_regexes)
    }
}

/// Parses `<=2.6`, `>=2.7`, `==2.1`.
pub fn parse_version_req(s: &str) -> Res<VersionReq> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_digit()).ok_or_else(|| format!("`{s}` has no version"))?;
    let (op, ver) = s.split_at(split);
    let op = match op.trim() {
        "" | "==" => "==",
        o @ ("<" | "<=" | ">" | ">=") => o,
        o => return Err(format!("unknown operator `{o}`; use <, <=, >, >= or ==")),
    };
    Ok(VersionReq { op: op.to_string(), version: parse_version(ver)? })
}

/// Parses `2.6` into `(2, 6)`.
pub fn parse_version(s: &str) -> Res<Version> {
    let (a, b) = s.trim().split_once('.').ok_or_else(|| format!("`{s}` is not MAJOR.MINOR"))?;
    let num = |x: &str| x.parse::<u32>().map_err(|_| format!("`{s}` is not MAJOR.MINOR"));
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

fn check_placeholders(message: &str, alternatives: &[Matcher]) -> Res<()> {
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').ok_or("unclosed `{`")? + open;
        let name = &rest[open + 1..close];
        let known = KNOWN_PLACEHOLDERS.contains(&name)
            || name.starts_with("arg.")
            || name.starts_with("import:")
            || alternatives.iter().any(|m| provided(m).contains_key(name));
        if !known {
            return Err(format!(
                "unknown placeholder `{{{name}}}`; known: {}, arg.NAME, captures and `set` keys",
                KNOWN_PLACEHOLDERS.join(", ")
            ));
        }
        rest = &rest[close + 1..];
    }
    Ok(())
}
