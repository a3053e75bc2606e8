//! Checking a pack and turning its TOML into compiled rules. Every error names
//! the pack, the line and the field at fault, so a pack author can fix it.

use super::glob::NameGlobs;
use super::model::*;
use super::schema::*;
use crate::finding::Section;
use regex::Regex;
use std::fmt;

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

type Res<T> = Result<T, String>;

impl Compiler {
    /// Parses and compiles one pack's text; `read_data` reads a `[[data]]` file.
    pub fn compile_pack(
        &mut self,
        origin: &str,
        text: &str,
        read_data: &dyn Fn(&str) -> Result<String, String>,
    ) -> Result<CompiledPack, PackError> {
        let spec: PackSpec = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((None, None), |s| {
                let before = &text[..s.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                (Some(line), Some(column))
            });
            PackError { origin: origin.to_string(), line, column, message: e.message().to_string() }
        })?;
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
            self.tables.retain(|(n, _)| *n != d.name);
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
            sites.push(Sites { section: x.section, label: x.label, alternatives, detail: x.detail });
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

    fn table(&self, name: &str) -> Res<usize> {
        self.tables.iter().position(|(n, _)| n == name).ok_or_else(|| {
            let known: Vec<&str> = self.tables.iter().map(|(n, _)| n.as_str()).collect();
            format!("no data table `{name}`; declare it with [[data]] (known: {})", known.join(", "))
        })
    }

    fn rule(&mut self, r: RuleSpec, origin: &str) -> Res<Rule> {
        if r.code.is_empty() || !r.code.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err("code: use letters and digits only, e.g. `ORG001`".into());
        }
        let alternatives = self.alternatives(&r.matcher).map_err(|e| format!("match.{e}"))?;
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
        let downgrade = match r.downgrade {
            Some(d) => Some((d.to, self.matcher(&d.when).map_err(|e| format!("downgrade.when.{e}"))?)),
            None => None,
        };
        let fix = r.fix.map(|f| self.fix(f)).transpose().map_err(|e| format!("fix.{e}"))?;
        check_placeholders(&r.message, &alternatives).map_err(|e| format!("message: {e}"))?;
        Ok(Rule {
            code: r.code,
            name: r.name,
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
            fix,
            origin: origin.to_string(),
            once_per_file: r.once_per_file,
        })
    }

    /// A top-level matcher: each `any` branch becomes an alternative with its
    /// own anchor and the shared predicates of the parent.
    fn alternatives(&mut self, spec: &MatcherSpec) -> Res<Vec<Matcher>> {
        match &spec.any {
            Some(branches) if anchor_count(spec) == 0 => {
                let mut shared = spec.clone();
                shared.any = None;
                let mut out = Vec::new();
                for (i, b) in branches.iter().enumerate() {
                    let mut m = self.matcher(b).map_err(|e| format!("any[{i}].{e}"))?;
                    if m.anchor.is_none() {
                        return Err(format!("any[{i}]: each alternative needs an anchor (call, method, string, ...)"));
                    }
                    // Shared predicates run first, so their captures are there for the branch.
                    let mut shared_m = self.matcher(&shared)?;
                    shared_m.preds.append(&mut m.preds);
                    m.preds = shared_m.preds;
                    m.set.extend(shared_m.set);
                    out.push(m);
                }
                Ok(out)
            }
            _ => {
                let m = self.matcher(spec)?;
                if m.anchor.is_none() {
                    return Err("needs an anchor: one of call, method, attribute, string, compare, import, env_var, file, condition, kind, query".into());
                }
                Ok(vec![m])
            }
        }
    }

    fn matcher(&mut self, s: &MatcherSpec) -> Res<Matcher> {
        if anchor_count(s) > 1 {
            return Err("give at most one anchor per matcher; use `any = [...]` for alternatives".into());
        }
        let anchor = self.anchor(s)?;
        let mut preds = Vec::new();
        if !s.args.is_empty() {
            let checks =
                s.args.iter().map(|a| self.arg(a)).collect::<Res<Vec<_>>>().map_err(|e| format!("args: {e}"))?;
            preds.push(Pred::Args(checks));
        }
        if let Some(r) = &s.receiver {
            preds.push(Pred::Receiver(Box::new(self.matcher(r).map_err(|e| format!("receiver.{e}"))?)));
        }
        if let Some(c) = &s.contains {
            preds.push(Pred::Contains(Box::new(self.matcher(c).map_err(|e| format!("contains.{e}"))?)));
        }
        if !s.slot.is_empty() {
            let slots = s.slot.iter().map(slot).collect::<Res<Vec<_>>>().map_err(|e| format!("slot: {e}"))?;
            preds.push(Pred::Slot(slots));
        }
        if let Some(t) = &s.text {
            if t.contains("${") {
                preds.push(Pred::TextTemplate(t.clone()));
            } else {
                preds.push(Pred::Text(re(t).map_err(|e| format!("text: {e}"))?));
            }
        }
        for (name, m) in &s.fields {
            let m = self.matcher(m).map_err(|e| format!("fields.{name}.{e}"))?;
            match preds.iter_mut().find(|p| matches!(p, Pred::Fields(_))) {
                Some(Pred::Fields(list)) => list.push((name.clone(), m)),
                _ => preds.push(Pred::Fields(vec![(name.clone(), m)])),
            }
        }
        if let Some(a) = &s.ancestor {
            preds.push(Pred::Ancestor(Box::new(self.matcher(a).map_err(|e| format!("ancestor.{e}"))?)));
        }
        if s.shell_reads == Some(false) {
            preds.push(Pred::ShellAssignmentsOnly);
        }
        if let Some(b) = &s.binding {
            preds.push(Pred::Binding(Box::new(self.matcher(b).map_err(|e| format!("binding.{e}"))?)));
        }
        if let Some(m) = &s.function_has {
            preds.push(Pred::FunctionHas(Box::new(self.matcher(m).map_err(|e| format!("function_has.{e}"))?)));
        }
        if let Some(m) = &s.preceded_in_function {
            preds.push(Pred::Preceded(Box::new(self.matcher(m).map_err(|e| format!("preceded_in_function.{e}"))?)));
        }
        if let Some(m) = &s.followed_in_function {
            preds.push(Pred::Followed(Box::new(self.matcher(m).map_err(|e| format!("followed_in_function.{e}"))?)));
        }
        if let Some(m) = &s.file_has {
            let alts = self.alternatives(m).map_err(|e| format!("file_has.{e}"))?;
            self.facts.push(Fact::Has(alts));
            preds.push(Pred::Fact(Scope::File, self.facts.len() - 1));
        }
        if let Some(m) = &s.project_has {
            let alts = self.alternatives(m).map_err(|e| format!("project_has.{e}"))?;
            self.facts.push(Fact::Has(alts));
            preds.push(Pred::Fact(Scope::Project, self.facts.len() - 1));
        }
        if let Some(b) = s.training_loop {
            preds.push(Pred::TrainingLoop(b));
        }
        if let Some(r) = &s.name_regex {
            preds.push(Pred::NameRegex(re(r).map_err(|e| format!("name_regex: {e}"))?));
        }
        if let Some(l) = &s.lookup {
            let table = self.table(&l.table).map_err(|e| format!("lookup: {e}"))?;
            preds.push(Pred::Lookup(Lookup {
                table,
                key: l.key.clone(),
                found: l.found,
                column: l.column.clone(),
                is: l.is.clone(),
                capture: l.capture.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            }));
        }
        if let Some(n) = &s.nearest {
            let table = self.table(&n.table).map_err(|e| format!("nearest: {e}"))?;
            preds.push(Pred::Nearest(table, n.key.clone(), n.capture.clone()));
        }
        if let Some(o) = &s.options {
            let unknown_in = match &o.unknown_in {
                Some(u) => {
                    Some((self.table(&u.table).map_err(|e| format!("options.unknown_in: {e}"))?, u.column.clone()))
                }
                None => None,
            };
            preds.push(Pred::Options(Options {
                of: o.of.clone(),
                separator: o.separator.clone().unwrap_or_else(|| ",".into()),
                assign: o.assign.clone().unwrap_or_else(|| ":".into()),
                all: o.all.clone(),
                any: o.any.clone(),
                unknown_in,
                capture: o.capture.clone(),
            }));
        }
        if let Some(c) = &s.in_branch_of {
            preds.push(Pred::InBranchOf(condition(c).map_err(|e| format!("in_branch_of: {e}"))?));
        }
        if let Some(t) = &s.condition_text {
            preds.push(Pred::ConditionText(re(t).map_err(|e| format!("condition_text: {e}"))?));
        }
        if let Some(b) = s.assign_target {
            preds.push(Pred::AssignTarget(b));
        }
        if let Some(b) = s.inside_loop {
            preds.push(Pred::InsideLoop(b));
        }
        if let Some(b) = s.inside_training_loop {
            preds.push(Pred::InsideTrainingLoop(b));
        }
        if let Some(w) = &s.inside_with {
            preds.push(Pred::InsideWith(NameGlobs::new(&w.to_vec()).map_err(|e| format!("inside_with: {e}"))?));
        }
        if let Some(t) = &s.under_if {
            preds.push(Pred::UnderIf(re(t).map_err(|e| format!("under_if: {e}"))?));
        }
        if let Some(b) = s.receiver_loop_invariant {
            preds.push(Pred::ReceiverLoopInvariant(b));
        }
        if s.loop_over.is_some() || s.receiver_loop_variable.is_some() {
            let over = match &s.loop_over {
                Some(m) => Some(Box::new(self.matcher(m).map_err(|e| format!("loop_over.{e}"))?)),
                None => None,
            };
            preds.push(Pred::LoopOver { over, receiver_variable: s.receiver_loop_variable.unwrap_or(false) });
        }
        if let Some(g) = &s.file_imports {
            preds.push(Pred::FileImports(NameGlobs::new(&g.to_vec()).map_err(|e| format!("file_imports: {e}"))?));
        }
        if let Some(g) = &s.project_imports {
            let globs = NameGlobs::new(&g.to_vec()).map_err(|e| format!("project_imports: {e}"))?;
            self.facts.push(Fact::Imports(globs));
            preds.push(Pred::Fact(Scope::Project, self.facts.len() - 1));
        }
        if let Some(u) = &s.unless {
            preds.push(Pred::Unless(Box::new(self.matcher(u).map_err(|e| format!("unless.{e}"))?)));
        }
        if anchor.is_some() || s.any.is_none() {
            if let Some(branches) = &s.any {
                let ms = branches
                    .iter()
                    .map(|b| self.matcher(b))
                    .collect::<Res<Vec<_>>>()
                    .map_err(|e| format!("any.{e}"))?;
                preds.push(Pred::Any(ms));
            }
        } else if let Some(branches) = &s.any {
            let ms =
                branches.iter().map(|b| self.matcher(b)).collect::<Res<Vec<_>>>().map_err(|e| format!("any.{e}"))?;
            preds.push(Pred::Any(ms));
        }
        if let Some(c) = &s.capture {
            preds.push(Pred::Capture(c.clone()));
        }
        // Cheap tests first; producers of placeholders rank no later than their consumers.
        preds.sort_by_key(cost);
        let set = s.set.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        Ok(Matcher { anchor, preds, set })
    }

    fn anchor(&mut self, s: &MatcherSpec) -> Res<Option<Anchor>> {
        let globs = |g: &OneOrMany, field: &str| NameGlobs::new(&g.to_vec()).map_err(|e| format!("{field}: {e}"));
        Ok(Some(if let Some(g) = &s.call {
            Anchor::Call(globs(g, "call")?)
        } else if let Some(m) = &s.method {
            Anchor::Method(m.to_vec())
        } else if let Some(g) = &s.attribute {
            Anchor::Attribute(globs(g, "attribute")?)
        } else if let Some(r) = &s.string {
            Anchor::Str(re(r).map_err(|e| format!("string: {e}"))?)
        } else if let Some(c) = &s.compare {
            let ops = c.ops.clone().unwrap_or_else(|| ["==", "!=", "in", "not in"].map(String::from).to_vec());
            let majority = c
                .collection_majority
                .as_deref()
                .map(re)
                .transpose()
                .map_err(|e| format!("compare.collection_majority: {e}"))?;
            Anchor::Compare(CompareTest {
                literal: re(&c.literal).map_err(|e| format!("compare.literal: {e}"))?,
                ops,
                majority,
            })
        } else if let Some(g) = &s.import {
            Anchor::Import(globs(g, "import")?)
        } else if let Some(r) = &s.env_var {
            Anchor::EnvVar(re(r).map_err(|e| format!("env_var: {e}"))?)
        } else if let Some(g) = &s.file {
            let list = g.to_vec();
            let mut extensions = Vec::new();
            for glob in &list {
                match glob.rsplit_once("*.") {
                    Some((_, ext)) if !ext.contains(['*', '?', '{', '/']) => extensions.push(ext.to_string()),
                    _ => return Err(format!("file: `{glob}` must end in `*.EXT` so the walker knows what to collect")),
                }
            }
            self.file_extensions.extend(extensions.iter().cloned());
            Anchor::File { globs: globs(g, "file")?, extensions }
        } else if let Some(c) = &s.condition {
            Anchor::Condition(condition(c).map_err(|e| format!("condition: {e}"))?)
        } else if let Some(k) = &s.kind {
            Anchor::Kind(k.to_vec())
        } else if let Some(q) = &s.query {
            let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
            let query = tree_sitter::Query::new(&lang, q)
                .map_err(|e| format!("query: line {} column {}: {}", e.row + 1, e.column + 1, e.message))?;
            let capture = query.capture_index_for_name("match").unwrap_or(0);
            if query.capture_names().is_empty() {
                return Err("query: needs a capture, e.g. `@match`, naming the reported node".into());
            }
            self.queries.push((query, capture));
            Anchor::Query(self.queries.len() - 1)
        } else {
            return Ok(None);
        }))
    }

    fn arg(&mut self, a: &ArgSpec) -> Res<ArgCheck> {
        if a.name.is_none() && a.position.is_none() && !a.star {
            return Err("each argument needs `name`, `position` or `star = true`".into());
        }
        let mut alternatives = Vec::new();
        for v in &a.is {
            alternatives.push(self.arg_alt(v)?);
        }
        if alternatives.is_empty() {
            return Err("`is` needs at least one alternative".into());
        }
        Ok(ArgCheck {
            name: a.name.clone(),
            position: a.position,
            alternatives,
            capture: a.capture.clone(),
            star: a.star,
        })
    }

    fn arg_alt(&mut self, v: &toml::Value) -> Res<ArgAlt> {
        use toml::Value as V;
        Ok(match v {
            V::String(s) => match s.as_str() {
                "absent" => ArgAlt::Absent,
                "present" => ArgAlt::Present,
                "literal" => ArgAlt::Literal,
                "non_literal" => ArgAlt::NonLiteral,
                "unknown" => ArgAlt::Unknown,
                "not_none" => ArgAlt::NotNone,
                other => return Err(format!("unknown state `{other}`: use absent, present, not_none, literal, non_literal, unknown, a literal value, or a table such as {{ eq = \"cuda\" }}")),
            },
            V::Boolean(b) => ArgAlt::Eq(Literal::Bool(*b)),
            V::Integer(i) => ArgAlt::Eq(Literal::Int(*i)),
            V::Float(f) => ArgAlt::Eq(Literal::Float(*f)),
            V::Table(t) if t.len() == 1 => {
                let (k, v) = t.iter().next().expect("one entry");
                match (k.as_str(), v) {
                    ("eq", V::String(s)) => ArgAlt::Eq(Literal::Str(s.clone())),
                    ("eq", other) => self.arg_alt(other)?,
                    (op @ ("gt" | "ge" | "lt" | "le"), V::Integer(n)) => ArgAlt::Cmp(cmp_op(op), *n as f64),
                    (op @ ("gt" | "ge" | "lt" | "le"), V::Float(n)) => ArgAlt::Cmp(cmp_op(op), *n),
                    ("regex", V::String(s)) => ArgAlt::Regex(re(s)?),
                    ("text", V::String(s)) => ArgAlt::Text(re(s)?),
                    ("match", m @ V::Table(_)) => {
                        let spec: MatcherSpec = m.clone().try_into().map_err(|e: toml::de::Error| format!("match: {}", e.message()))?;
                        ArgAlt::Match(Box::new(self.matcher(&spec).map_err(|e| format!("match.{e}"))?))
                    }
                    _ => return Err(format!("`{k}` is not a known test here: use eq, gt, ge, lt, le, regex, text or match")),
                }
            }
            other => return Err(format!("cannot use `{other}` as an argument test")),
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
                Some(s) => match s.split_once(':') {
                    Some(("keyword", k)) => EditTarget::Keyword(k.into()),
                    Some(("keyword_value", k)) => EditTarget::KeywordValue(k.into()),
                    Some(("capture", k)) => EditTarget::Capture(k.into()),
                    _ => return Err(format!("edits[{i}].on: unknown target `{s}`")),
                },
            };
            let subs =
                |list: Vec<(String, String)>| list.into_iter().map(|(p, r)| Ok((re(&p)?, r))).collect::<Res<Vec<_>>>();
            let action = match (e.replace, e.sub, e.sub_all, e.set_keyword, e.prepend_arg) {
                (Some(r), None, None, None, None) => EditAction::Replace(r),
                (None, Some(s), None, None, None) => {
                    EditAction::Sub(subs(s).map_err(|m| format!("edits[{i}].sub: {m}"))?)
                }
                (None, None, Some(s), None, None) => {
                    EditAction::SubAll(subs(s).map_err(|m| format!("edits[{i}].sub_all: {m}"))?)
                }
                (None, None, None, Some(k), None) => {
                    EditAction::SetKeyword { name: k.name, position: k.position, value: k.value }
                }
                (None, None, None, None, Some(a)) => EditAction::PrependArg(a),
                _ => {
                    return Err(format!(
                        "edits[{i}]: give exactly one of replace, sub, sub_all, set_keyword, prepend_arg"
                    ))
                }
            };
            edits.push(EditTemplate { on, action });
        }
        Ok(FixTemplate { applicability: f.applicability, description: f.description, edits, when })
    }
}

/// Evaluation order of predicates: context and argument checks before tree
/// scans. A predicate that captures a placeholder never ranks after one that reads it.
fn cost(p: &Pred) -> u8 {
    match p {
        Pred::InsideLoop(_)
        | Pred::InsideTrainingLoop(_)
        | Pred::TrainingLoop(_)
        | Pred::UnderIf(_)
        | Pred::FileImports(_)
        | Pred::AssignTarget(_)
        | Pred::Text(_)
        | Pred::ConditionText(_)
        | Pred::Args(_)
        | Pred::NameRegex(_)
        | Pred::Capture(_)
        | Pred::ShellAssignmentsOnly => 0,
        Pred::Fields(_)
        | Pred::Receiver(_)
        | Pred::Slot(_)
        | Pred::Lookup(_)
        | Pred::Options(_)
        | Pred::TextTemplate(_) => 1,
        Pred::Nearest(..)
        | Pred::InsideWith(_)
        | Pred::ReceiverLoopInvariant(_)
        | Pred::LoopOver { .. }
        | Pred::InBranchOf(_)
        | Pred::Binding(_) => 2,
        Pred::Contains(_) | Pred::FunctionHas(_) | Pred::Preceded(_) | Pred::Followed(_) | Pred::Ancestor(_) => 3,
        Pred::Fact(..) | Pred::Unless(_) | Pred::Any(_) => 4,
    }
}

fn anchor_count(s: &MatcherSpec) -> usize {
    [
        s.call.is_some(),
        s.method.is_some(),
        s.attribute.is_some(),
        s.string.is_some(),
        s.compare.is_some(),
        s.import.is_some(),
        s.env_var.is_some(),
        s.file.is_some(),
        s.condition.is_some(),
        s.query.is_some(),
        s.kind.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count()
}

fn cmp_op(op: &str) -> &'static str {
    match op {
        "gt" => ">",
        "ge" => ">=",
        "lt" => "<",
        _ => "<=",
    }
}

fn re(pattern: &str) -> Res<Regex> {
    Regex::new(pattern).map_err(|e| format!("invalid regex `{pattern}`: {e}"))
}

fn condition(c: &ConditionSpec) -> Res<ConditionTest> {
    Ok(ConditionTest {
        test_calls: NameGlobs::new(&c.test_calls.to_vec())?,
        branch_value: c.branch_value.as_deref().map(re).transpose()?,
    })
}

fn slot(s: &SlotSpec) -> Res<Slot> {
    let globs = |g: &Option<OneOrMany>| g.as_ref().map(|g| NameGlobs::new(&g.to_vec())).transpose();
    let slot = Slot {
        call: globs(&s.call)?,
        method: s.method.as_ref().map(OneOrMany::to_vec),
        position: s.position,
        keyword: s.keyword.as_ref().map(OneOrMany::to_vec),
        first_arg: s.first_arg.as_ref().map(|g| NameGlobs::new(std::slice::from_ref(g))).transpose()?,
        assigned_to: globs(&s.assigned_to)?,
        param: globs(&s.param)?,
    };
    let kinds = [
        slot.call.is_some() || slot.method.is_some() || slot.keyword.is_some(),
        slot.assigned_to.is_some(),
        slot.param.is_some(),
    ];
    if kinds.iter().filter(|b| **b).count() != 1 {
        return Err("each slot is one of: an argument (call/method/keyword), assigned_to, or param".into());
    }
    Ok(slot)
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
            || alternatives.iter().any(|m| provides(m, name));
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

/// Whether some part of `m` can set placeholder `name`.
fn provides(m: &Matcher, name: &str) -> bool {
    m.set.iter().any(|(k, _)| k == name)
        || m.preds.iter().any(|p| match p {
            Pred::Args(checks) => checks.iter().any(|c| {
                c.capture.as_deref() == Some(name)
                    || c.alternatives.iter().any(|a| matches!(a, ArgAlt::Match(m) if provides(m, name)))
            }),
            Pred::Any(ms) => ms.iter().any(|m| provides(m, name)),
            Pred::Capture(c) => c == name,
            Pred::NameRegex(re) => re.capture_names().any(|n| n == Some(name)),
            Pred::Lookup(l) => l.capture.iter().any(|(k, _)| k == name),
            Pred::Nearest(_, _, c) => c == name,
            Pred::Options(o) => o.capture.as_deref() == Some(name),
            Pred::Receiver(m)
            | Pred::Contains(m)
            | Pred::Binding(m)
            | Pred::FunctionHas(m)
            | Pred::Preceded(m)
            | Pred::Followed(m)
            | Pred::Ancestor(m) => provides(m, name),
            Pred::Fields(list) => list.iter().any(|(_, m)| provides(m, name)),
            _ => false,
        })
}

/// The section a code's letters suggest, for messages about unknown packs.
pub fn section_hint(code: &str) -> Option<Section> {
    let letters: String = code.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    match letters.as_str() {
        "DL" => Some(Section::DataLoading),
        "TX" => Some(Section::Transfer),
        "AMP" => Some(Section::MixedPrecision),
        "MEM" => Some(Section::Memory),
        "API" => Some(Section::NpuApi),
        _ => None,
    }
}
