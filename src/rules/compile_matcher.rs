//! Compiling matchers: anchors, predicates and argument tests, checked and
//! ordered for evaluation.

use super::compile::{Compiler, NamedCompiled, Res};
use super::glob::NameGlobs;
use super::model::*;
use super::placeholders::{
    arg_captures, arg_reads, check_filled, dependency_order, field_captures, field_reads, matcher_reads, pred_captures,
    pred_reads,
};
use super::schema::*;
use super::spec_error::{within, Problem, SpecError};
use std::collections::BTreeMap;

impl Compiler {
    /// Checks the syntax of a user pack's text regex template, each `${name}`
    /// standing for a plain word (an unclosed `${` is left for the regex
    /// parser to report). A built-in pack's regexes are deferred, not checked
    /// here: the tests load it as a user pack.
    fn check_template(&self, template: &str) -> Result<(), super::lazy_regex::RegexError> {
        if self.trusted {
            return Ok(());
        }
        let words = super::data::fill_placeholders(template, |_| Some("x".to_string()));
        self.regex(&words.unwrap_or_else(|| template.to_string())).map(|_| ())
    }

    /// The index of the fact "some node of the file matches `spec`", read
    /// at `scope`. One written the same way again in the same pack (MEM007's
    /// depth test is written ten times) is the same fact: the walk tries every
    /// fact on every node of its kind until it holds, so each copy would cost
    /// a test per node.
    fn has_fact(&mut self, scope: Scope, spec: &MatcherSpec) -> Res<usize> {
        let pack = self.packs_begun;
        let same = |(p, sc, sp): &(usize, Scope, MatcherSpec)| *p == pack && *sc == scope && sp == spec;
        if let Some((_, i)) = self.fact_specs.iter().find(|(key, _)| same(key)) {
            return Ok(*i);
        }
        let alts = self.alternatives(spec)?;
        self.facts.push(Fact::Has(alts));
        let i = self.facts.len() - 1;
        self.fact_specs.push(((pack, scope, spec.clone()), i));
        Ok(i)
    }

    /// A top-level matcher: each `any` branch becomes an alternative with its
    /// own anchor and the shared predicates of the parent.
    pub(super) fn alternatives(&mut self, spec: &MatcherSpec) -> Res<Vec<Matcher>> {
        if let Some(name) = &spec.uses {
            return self.expanded(spec, name, Self::alternatives, |c| &mut c.alternatives);
        }
        match &spec.any {
            Some(branches) if anchor_count(spec) == 0 => {
                let mut shared = spec.clone();
                shared.any = None;
                let mut out = Vec::new();
                // The shared part compiles once, after the first branch (whose errors come first).
                let mut shared_once: Option<Matcher> = None;
                for (i, b) in branches.iter().enumerate() {
                    let branch = format!("any[{i}]");
                    let mut m = self.matcher(b).map_err(within(&branch))?;
                    if m.anchor.is_none() {
                        return Err(SpecError::at(&branch, Problem::AlternativeWithoutAnchor));
                    }
                    // Shared and branch predicates together, cheap tests first; a
                    // predicate that reads a capture still runs after what captures it.
                    let mut shared_m = match &shared_once {
                        Some(compiled) => compiled.clone(),
                        None => shared_once.insert(self.matcher(&shared)?).clone(),
                    };
                    shared_m.preds.append(&mut m.preds);
                    shared_m.preds.sort_by_key(cost);
                    m.preds = dependency_order(shared_m.preds, m.anchor.as_ref(), pred_reads, pred_captures)
                        .map_err(|e| e.in_alternative(i))?;
                    m.set.extend(shared_m.set);
                    m.reads = matcher_reads(m.anchor.as_ref(), &m.preds);
                    check_filled(&m, |_| false).map_err(|e| e.in_alternative(i))?;
                    out.push(m);
                }
                Ok(out)
            }
            _ => {
                let m = self.matcher(spec)?;
                if m.anchor.is_none() {
                    return Err(Problem::NoAnchor.into());
                }
                check_filled(&m, |_| false)?;
                Ok(vec![m])
            }
        }
    }

    pub(super) fn matcher(&mut self, s: &MatcherSpec) -> Res<Matcher> {
        if let Some(name) = &s.uses {
            return self.expanded(s, name, Self::matcher, |c| &mut c.matcher);
        }
        if anchor_count(s) > 1 {
            return Err(Problem::SeveralAnchors.into());
        }
        let anchor = self.anchor(s)?;
        let mut preds = Vec::new();
        if !s.args.is_empty() {
            let checks = s
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| self.arg(a).map_err(|e| e.within(&format!("args[{i}]"))))
                .collect::<Res<Vec<_>>>()?;
            preds.push(Pred::Args(dependency_order(checks, anchor.as_ref(), arg_reads, arg_captures)?));
        }
        if let Some(r) = &s.receiver {
            preds.push(Pred::Receiver(Box::new(self.matcher(r).map_err(within("receiver"))?)));
        }
        if let Some(c) = &s.contains {
            preds.push(Pred::Contains(Box::new(self.matcher(c).map_err(within("contains"))?)));
        }
        if !s.slot.is_empty() {
            let slots = slots(&s.slot, "slot")?;
            preds.push(Pred::Slot(slots));
        }
        if let Some(f) = &s.flows_into {
            if f.slot.is_empty() {
                return Err(SpecError::at("flows_into", Problem::NoSlot));
            }
            let slots = slots(&f.slot, "flows_into.slot")?;
            preds.push(Pred::FlowsInto(FlowsInto { slots, capture: f.capture.clone() }));
        }
        if let Some(t) = &s.text {
            if t.contains("${") {
                self.check_template(t).map_err(within("text"))?;
                preds.push(Pred::TextTemplate(t.clone()));
            } else {
                preds.push(Pred::Text(self.regex(t).map_err(within("text"))?));
            }
        }
        if !s.fields.is_empty() {
            let mut list = Vec::new();
            for (name, m) in &s.fields {
                list.push((name.clone(), self.matcher(m).map_err(|e| e.within(&format!("fields.{name}")))?));
            }
            preds.push(Pred::Fields(dependency_order(list, anchor.as_ref(), field_reads, field_captures)?));
        }
        if let Some(a) = &s.ancestor {
            preds.push(Pred::Ancestor(Box::new(self.matcher(a).map_err(within("ancestor"))?)));
        }
        if s.shell_reads == Some(false) {
            preds.push(Pred::ShellAssignmentsOnly);
        }
        if let Some(b) = s.named_in_project {
            preds.push(Pred::NamedInProject(b));
        }
        if let Some(b) = s.loaded_only_guarded {
            preds.push(Pred::LoadedOnlyGuarded(b));
        }
        if let Some(b) = s.built_only_with_cuda {
            if s.file.is_none() {
                return Err(SpecError::at("built_only_with_cuda", Problem::BuiltOnlyWithCudaWithoutFile));
            }
            preds.push(Pred::BuiltOnlyWithCuda(b));
        }
        if let Some(b) = &s.binding {
            preds.push(Pred::Binding(Box::new(self.matcher(b).map_err(within("binding"))?)));
        }
        if let Some(d) = &s.callee_definition {
            let m = self.matcher(d).map_err(within("callee_definition"))?;
            preds.push(Pred::CalleeDefinition(Box::new(m)));
        }
        if let Some(d) = &s.class_definition {
            let m = self.matcher(d).map_err(within("class_definition"))?;
            preds.push(Pred::ClassDefinition(Box::new(m)));
        }
        if let Some(e) = &s.else_branch {
            preds.push(Pred::ElseBranch(Box::new(self.matcher(e).map_err(within("else_branch"))?)));
        }
        if let Some(c) = &s.from_callers {
            preds.push(Pred::FromCallers(Box::new(self.matcher(c).map_err(within("from_callers"))?)));
        }
        if let Some(m) = &s.function_has {
            preds.push(Pred::FunctionHas(Box::new(self.matcher(m).map_err(within("function_has"))?)));
        }
        if let Some(m) = &s.preceded_in_function {
            preds.push(Pred::Preceded(Box::new(self.matcher(m).map_err(within("preceded_in_function"))?)));
        }
        if let Some(m) = &s.followed_in_function {
            preds.push(Pred::Followed(Box::new(self.matcher(m).map_err(within("followed_in_function"))?)));
        }
        if let Some(m) = &s.file_has {
            let fact = self.has_fact(Scope::File, m).map_err(within("file_has"))?;
            preds.push(Pred::Fact(Scope::File, fact));
        }
        if let Some(m) = &s.project_has {
            let fact = self.has_fact(Scope::Project, m).map_err(within("project_has"))?;
            preds.push(Pred::Fact(Scope::Project, fact));
        }
        if let Some(m) = &s.loaded_with {
            let fact = self.has_fact(Scope::LoadedWith, m).map_err(within("loaded_with"))?;
            preds.push(Pred::Fact(Scope::LoadedWith, fact));
        }
        if let Some(b) = s.training_loop {
            preds.push(Pred::TrainingLoop(b));
        }
        if let Some(b) = s.import_used {
            preds.push(Pred::ImportUsed(b));
        }
        if let Some(b) = s.callers_pass {
            preds.push(Pred::CallersPass(b));
        }
        if let Some(r) = &s.name_regex {
            preds.push(Pred::NameRegex(self.regex(r).map_err(within("name_regex"))?));
        }
        if let Some(l) = &s.lookup {
            let table = self.table(&l.table).map_err(within("lookup"))?;
            if let Some(m) = &l.matches {
                if l.column.is_none() {
                    return Err(SpecError::at("lookup.matches", Problem::MatchesWithoutColumn));
                }
                self.check_template(m).map_err(within("lookup.matches"))?;
            }
            preds.push(Pred::Lookup(Lookup {
                table,
                key: l.key.clone(),
                found: l.found,
                column: l.column.clone(),
                is: l.is.clone(),
                matches: l.matches.clone(),
                capture: l.capture.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            }));
        }
        if let Some(n) = &s.nearest {
            let table = self.table(&n.table).map_err(within("nearest"))?;
            preds.push(Pred::Nearest(table, n.key.clone(), n.capture.clone()));
        }
        if let Some(o) = &s.options {
            let unknown_in = match &o.unknown_in {
                Some(u) => Some((self.table(&u.table).map_err(within("options.unknown_in"))?, u.column.clone())),
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
            preds.push(Pred::InBranchOf(condition(self, c).map_err(within("in_branch_of"))?));
        }
        if let Some(t) = &s.condition_text {
            preds.push(Pred::ConditionText(self.regex(t).map_err(within("condition_text"))?));
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
        if let Some(b) = s.runs_per_step {
            preds.push(Pred::RunsPerStep(b));
        }
        if let Some(w) = &s.inside_with {
            preds.push(Pred::InsideWith(NameGlobs::new(&w.to_vec()).map_err(within("inside_with"))?));
        }
        if let Some(t) = &s.under_if {
            preds.push(Pred::UnderIf(self.regex(t).map_err(within("under_if"))?));
        }
        if let Some(params) = &s.signature {
            preds.push(Pred::Signature(params.clone()));
        }
        if let Some(t) = &s.in_chain_testing {
            preds.push(Pred::InChainTesting(self.regex(t).map_err(within("in_chain_testing"))?));
        }
        if let Some(b) = s.receiver_loop_invariant {
            preds.push(Pred::ReceiverLoopInvariant(b));
        }
        if let Some(b) = s.receiver_assigned_in_training_loop {
            preds.push(Pred::ReceiverAssignedInTrainingLoop(b));
        }
        if s.loop_over.is_some() || s.receiver_loop_variable.is_some() || s.loop_innermost.is_some() {
            let over = match &s.loop_over {
                Some(m) => Some(Box::new(self.matcher(m).map_err(within("loop_over"))?)),
                None => None,
            };
            preds.push(Pred::LoopOver {
                over,
                receiver_variable: s.receiver_loop_variable.unwrap_or(false),
                innermost: s.loop_innermost.unwrap_or(false),
            });
        }
        if let Some(g) = &s.file_imports {
            preds.push(Pred::FileImports(NameGlobs::new(&g.to_vec()).map_err(within("file_imports"))?));
        }
        if let Some(g) = &s.project_imports {
            let globs = NameGlobs::new(&g.to_vec()).map_err(within("project_imports"))?;
            self.facts.push(Fact::Imports(globs));
            preds.push(Pred::Fact(Scope::Project, self.facts.len() - 1));
        }
        if let Some(g) = &s.process_imports {
            let globs = NameGlobs::new(&g.to_vec()).map_err(within("process_imports"))?;
            self.facts.push(Fact::Imports(globs));
            preds.push(Pred::Fact(Scope::Process, self.facts.len() - 1));
        }
        if let Some(u) = &s.unless {
            preds.push(Pred::Unless(Box::new(self.matcher(u).map_err(within("unless"))?)));
        }
        if let Some(branches) = &s.any {
            let ms = branches
                .iter()
                .enumerate()
                .map(|(i, b)| self.matcher(b).map_err(|e| e.within(&format!("any[{i}]"))))
                .collect::<Res<Vec<_>>>()?;
            preds.push(Pred::Any(ms));
        }
        if let Some(c) = &s.capture {
            check_capture_name(c)?;
            preds.push(Pred::Capture(c.clone()));
        }
        // Cheap tests first, except that a capture runs before what reads it.
        preds.sort_by_key(cost);
        let preds = dependency_order(preds, anchor.as_ref(), pred_reads, pred_captures)?;
        let set = s.set.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let reads = matcher_reads(anchor.as_ref(), &preds);
        Ok(Matcher { anchor, preds, set, reads })
    }

    /// Compiles `s` with its `use = "name"` written out (see [`with_named`]),
    /// refusing a name that is already being expanded. A use of the name
    /// alone compiles it once per pack and `compiled` keeps it: it compiles
    /// the same wherever it stands, and what it registered (facts, queries)
    /// is the pack's own.
    fn expanded<T: Clone>(
        &mut self,
        s: &MatcherSpec,
        name: &str,
        compile: fn(&mut Self, &MatcherSpec) -> Res<T>,
        compiled: fn(&mut NamedCompiled) -> &mut BTreeMap<String, T>,
    ) -> Res<T> {
        if self.expanding.iter().any(|n| n == name) {
            return Err(Problem::MatcherUsesItself { name: name.to_string() }.into());
        }
        let Some(named) = self.named.get(name).cloned() else {
            let known = self.named.keys().cloned().collect();
            return Err(Problem::UnknownMatcher { name: name.to_string(), known }.into());
        };
        let combined = with_named(s, &named)?;
        if combined.is_none() {
            if let Some(done) = compiled(&mut self.named_compiled).get(name) {
                return Ok(done.clone());
            }
        }
        self.expanding.push(name.to_string());
        let out = compile(self, combined.as_ref().unwrap_or(&named)).map_err(|e| e.within(&format!("matchers.{name}")));
        self.expanding.pop();
        if let (None, Ok(done)) = (&combined, &out) {
            compiled(&mut self.named_compiled).insert(name.to_string(), done.clone());
        }
        out
    }

    fn anchor(&mut self, s: &MatcherSpec) -> Res<Option<Anchor>> {
        let globs = |g: &OneOrMany, field: &str| NameGlobs::new(&g.to_vec()).map_err(within(field));
        if s.subclasses.is_some() && s.call.is_none() {
            return Err(SpecError::at("subclasses", Problem::SubclassesWithoutCall));
        }
        Ok(Some(if let Some(g) = &s.call {
            Anchor::Call(globs(g, "call")?, s.subclasses)
        } else if let Some(m) = &s.method {
            Anchor::Method(m.to_vec())
        } else if let Some(g) = &s.attribute {
            Anchor::Attribute(globs(g, "attribute")?)
        } else if let Some(r) = &s.string {
            Anchor::Str(self.regex(r).map_err(within("string"))?)
        } else if let Some(c) = &s.compare {
            let ops = c.ops.clone().unwrap_or_else(|| ["==", "!=", "in", "not in"].map(String::from).to_vec());
            let majority = c
                .collection_majority
                .as_deref()
                .map(|p| self.regex(p))
                .transpose()
                .map_err(within("compare.collection_majority"))?;
            Anchor::Compare(CompareTest {
                literal: self.regex(&c.literal).map_err(within("compare.literal"))?,
                ops,
                majority,
            })
        } else if let Some(g) = &s.import {
            Anchor::Import(globs(g, "import")?)
        } else if let Some(r) = &s.env_var {
            Anchor::EnvVar(self.regex(r).map_err(within("env_var"))?)
        } else if let Some(r) = &s.shell_command {
            Anchor::ShellCommand(self.regex(r).map_err(within("shell_command"))?)
        } else if let Some(g) = &s.file {
            let list = g.to_vec();
            let mut extensions = Vec::new();
            for glob in &list {
                match glob.rsplit_once("*.") {
                    Some((_, ext)) if !ext.contains(['*', '?', '{', '/']) => extensions.push(ext.to_string()),
                    _ => {
                        let problem = Problem::FileGlobWithoutExtension { glob: glob.clone() };
                        return Err(SpecError::at("file", problem));
                    }
                }
            }
            let globs = globs(g, "file")?;
            self.file_extensions.extend(extensions.iter().cloned());
            Anchor::File { globs, extensions }
        } else if let Some(c) = &s.condition {
            Anchor::Condition(condition(self, c).map_err(within("condition"))?)
        } else if let Some(k) = &s.kind {
            Anchor::Kind(k.to_vec())
        } else if let Some(q) = &s.query {
            let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
            let query = tree_sitter::Query::new(&lang, q).map_err(|e| SpecError::at("query", Problem::Query(e)))?;
            let capture = query.capture_index_for_name("match").unwrap_or(0);
            if query.capture_names().is_empty() {
                return Err(SpecError::at("query", Problem::QueryWithoutCapture));
            }
            self.queries.push((query, capture));
            Anchor::Query(self.queries.len() - 1)
        } else {
            return Ok(None);
        }))
    }

    fn arg(&mut self, a: &ArgSpec) -> Res<ArgCheck> {
        if a.name.is_none() && a.position.is_none() && !a.star {
            return Err(Problem::ArgumentUnnamed.into());
        }
        let mut alternatives = Vec::new();
        for (i, v) in a.is.iter().enumerate() {
            alternatives.push(self.arg_alt(v).map_err(|e| e.within(&format!("is[{i}]")))?);
        }
        if alternatives.is_empty() {
            return Err(SpecError::at("is", Problem::ArgumentWithoutTest));
        }
        if let Some(c) = &a.capture {
            check_capture_name(c)?;
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
                other => {
                    let expected = "absent, present, not_none, literal, non_literal, unknown, a literal value, or a \
                                    table such as { eq = \"cuda\" }";
                    return Err(Problem::Unknown { value: other.to_string(), expected }.into());
                }
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
                    ("regex", V::String(s)) if s.contains("${") => {
                        return Err(SpecError::at("regex", Problem::TemplateInRegex))
                    }
                    ("regex", V::String(s)) => ArgAlt::Regex(self.regex(s).map_err(within("regex"))?),
                    // A template is read at match time, as a matcher's `text` is.
                    ("text", V::String(s)) if s.contains("${") => {
                        let spec = MatcherSpec { text: Some(s.clone()), ..Default::default() };
                        ArgAlt::Match(Box::new(self.matcher(&spec).map_err(within("text"))?))
                    }
                    ("text", V::String(s)) => ArgAlt::Text(self.regex(s).map_err(within("text"))?),
                    ("match", m @ V::Table(_)) => {
                        let spec: MatcherSpec =
                            m.clone().try_into().map_err(|e| SpecError::at("match", Problem::Toml(e)))?;
                        ArgAlt::Match(Box::new(self.matcher(&spec).map_err(within("match"))?))
                    }
                    _ => {
                        let expected = "eq, gt, ge, lt, le, regex, text or match";
                        return Err(Problem::Unknown { value: k.to_string(), expected }.into());
                    }
                }
            }
            other => return Err(Problem::NotATest { kind: kind_of(other) }.into()),
        })
    }
}

/// Evaluation order of predicates: context and argument checks before tree
/// scans. [`dependency_order`] then moves a predicate that reads a capture
/// after the predicates that capture it. The loop and `if` contexts are cheap
/// for the node the walk is at, but for a node that `function_has` or
/// `contains` reaches they walk down from the root: on a chain of thousands
/// of calls, testing each node's text first is what keeps such a search linear.
fn cost(p: &Pred) -> u8 {
    match p {
        Pred::TrainingLoop(_)
        | Pred::ImportUsed(_)
        | Pred::CallersPass(_)
        | Pred::InChainTesting(_)
        | Pred::Signature(_)
        | Pred::FileImports(_)
        | Pred::AssignTarget(_)
        | Pred::Text(_)
        | Pred::ConditionText(_)
        | Pred::Args(_)
        | Pred::NameRegex(_)
        | Pred::Capture(_)
        | Pred::ShellAssignmentsOnly
        | Pred::NamedInProject(_)
        | Pred::BuiltOnlyWithCuda(_)
        | Pred::LoadedOnlyGuarded(_) => 0,
        Pred::Fields(_)
        | Pred::Receiver(_)
        | Pred::Slot(_)
        | Pred::Lookup(_)
        | Pred::Options(_)
        | Pred::TextTemplate(_) => 1,
        Pred::Nearest(..)
        | Pred::InsideLoop(_)
        | Pred::InsideTrainingLoop(_)
        | Pred::RunsPerStep(_)
        | Pred::UnderIf(_)
        | Pred::InsideWith(_)
        | Pred::ReceiverLoopInvariant(_)
        | Pred::ReceiverAssignedInTrainingLoop(_)
        | Pred::LoopOver { .. }
        | Pred::InBranchOf(_)
        | Pred::Binding(_) => 2,
        Pred::Contains(_)
        | Pred::CalleeDefinition(_)
        | Pred::ClassDefinition(_)
        | Pred::ElseBranch(_)
        | Pred::FromCallers(_)
        | Pred::FlowsInto(_)
        | Pred::FunctionHas(_)
        | Pred::Preceded(_)
        | Pred::Followed(_)
        | Pred::Ancestor(_) => 3,
        Pred::Fact(..) | Pred::Unless(_) | Pred::Any(_) => 4,
    }
}

/// `s` with its `use` replaced by the named matcher: `None` when `s` has
/// nothing else (the named matcher is then used as it is), otherwise `s` with
/// the named matcher as its one `any` alternative (or with its alternatives,
/// when it is only an `any`), so that a top-level `use` of alternatives keeps
/// one anchor per alternative.
fn with_named(s: &MatcherSpec, named: &MatcherSpec) -> Res<Option<MatcherSpec>> {
    if *s == (MatcherSpec { uses: s.uses.clone(), ..Default::default() }) {
        return Ok(None);
    }
    if s.any.is_some() {
        return Err(Problem::UseWithAny.into());
    }
    let mut rest = s.clone();
    rest.uses = None;
    let only_any = MatcherSpec { any: named.any.clone(), ..Default::default() };
    rest.any = Some(match &named.any {
        Some(branches) if *named == only_any => branches.clone(),
        _ => vec![named.clone()],
    });
    Ok(Some(rest))
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
        s.shell_command.is_some(),
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

fn condition(compiler: &Compiler, c: &ConditionSpec) -> Res<ConditionTest> {
    Ok(ConditionTest {
        test_calls: NameGlobs::new(&c.test_calls.to_vec())?,
        branch_value: c.branch_value.as_deref().map(|p| compiler.regex(p)).transpose()?,
        else_value: c.else_value.as_deref().map(|p| compiler.regex(p)).transpose()?,
    })
}

/// The slots of `specs`, an error naming the one at fault under `key`.
fn slots(specs: &[SlotSpec], key: &str) -> Res<Vec<Slot>> {
    specs.iter().enumerate().map(|(i, s)| slot(s).map_err(|e| e.within(&format!("{key}[{i}]")))).collect()
}

fn slot(s: &SlotSpec) -> Res<Slot> {
    let globs = |g: &Option<OneOrMany>| g.as_ref().map(|g| NameGlobs::new(&g.to_vec())).transpose();
    let slot = Slot {
        call: globs(&s.call)?,
        method: s.method.as_ref().map(OneOrMany::to_vec),
        position: s.position,
        receiver: s.receiver == Some(true),
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
    // A receiver is no argument: it has no position or keyword.
    let argument_of_receiver = slot.receiver && (slot.position.is_some() || slot.keyword.is_some());
    if kinds.iter().filter(|b| **b).count() != 1 || argument_of_receiver {
        return Err(Problem::SlotKind.into());
    }
    Ok(slot)
}

/// A capture may not take a name that an anchor sets (`receiver`, `name`,
/// ...): an anchor matched later in the rule would overwrite it.
fn check_capture_name(name: &str) -> Res<()> {
    if super::placeholders::set_by_an_anchor(name) {
        return Err(SpecError::at("capture", Problem::CaptureSetByAnchor { name: name.to_string() }));
    }
    Ok(())
}

/// What kind of TOML value `value` is, for an error message.
fn kind_of(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) | toml::Value::Float(_) => "a number",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_named_matcher_used_alone_compiles_once_per_pack() {
        let spec = |toml: &str| toml::from_str::<MatcherSpec>(toml).unwrap();
        let mut compiler = Compiler::default();
        compiler.named.insert("q".into(), Arc::new(spec("query = '(call) @c'")));
        let use_q = spec("use = 'q'");
        for _ in 0..3 {
            compiler.matcher(&use_q).unwrap();
            compiler.alternatives(&use_q).unwrap();
        }
        // Both forms compiled it once: one query each, however often used.
        assert_eq!(compiler.queries.len(), 2);
        // A use that adds to it compiles it again, beside the addition.
        compiler.matcher(&spec("use = 'q'\ninside_loop = true")).unwrap();
        assert_eq!(compiler.queries.len(), 3);
    }
}
