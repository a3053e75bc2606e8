//! Evaluating a compiled matcher at one node.

use super::context::contains_call;
use super::context::{local, Context, Frame};
use super::glob::NameGlobs;
use super::lazy_regex::LazyRegex;
use super::model::*;
use super::schema::Subclasses;
use super::slots::{self, Order};
use super::state::{negate_condition, or_conditions, Clause, MatchState};
use crate::parse::KindOf;
use crate::parse::{Field, FieldOf};
use crate::semantic::calls::{callee, method_parts, ArgState, CallArgs};
use crate::semantic::dispatch::chain_tests;
use crate::semantic::dispatch::other_else_of_cuda_test;
use crate::semantic::subclasses::Derived;
use crate::semantic::traverse::any_descendant;
use crate::semantic::values::{is_literal, literal, plain_string, shorten, string_like, text, unparen};
use crate::semantic::LoopInfo;
use std::borrow::Cow;
use tree_sitter::Node;

/// Evaluates `m` at `node`; on success `state` holds its captures.
pub fn eval<'t>(m: &Matcher, node: Node<'t>, cx: &Context<'_, 't>, state: &mut MatchState<'t>) -> bool {
    let mark = (state.captures.len(), state.pending.len(), state.nodes.len());
    let ok = m.anchor.as_ref().is_none_or(|a| anchor(a, node, cx, state))
        && m.preds.iter().all(|p| pred(p, node, cx, state));
    if ok {
        for (k, v) in &m.set {
            // `set` values may use the placeholders captured so far (`{index}`).
            let value = super::render::render_with(v, |name| state.get(name).unwrap_or_default().to_string());
            state.put(k, value);
        }
    } else {
        state.captures.truncate(mark.0);
        state.pending.truncate(mark.1);
        state.nodes.truncate(mark.2);
    }
    ok
}

fn anchor<'t>(a: &Anchor, node: Node<'t>, cx: &Context<'_, 't>, st: &mut MatchState<'t>) -> bool {
    let src = cx.src;
    match a {
        Anchor::Call(globs, subclasses) => {
            let Some(f) = callee(node) else { return false };
            let resolved = cx.callee_name(node, f).filter(|q| globs.is_match(q));
            // Else another arm's import of the name may be the one that runs,
            // or the name is a class derived from a matching one.
            let q = resolved
                .or_else(|| cx.other_arm_names(f).into_iter().find(|o| globs.is_match(o)).map(Cow::Owned))
                .or_else(|| subclasses.and_then(|s| derived_base(f, s, globs, cx)).map(Cow::Owned));
            let Some(q) = q else { return false };
            st.put("callee", shorten(text(f, src), 60));
            st.put("name", q.rsplit('.').next().unwrap_or(&q).to_string());
            st.put("qualname", q.into_owned());
            true
        }
        Anchor::Method(names) => {
            let Some((recv, name)) = method_parts(node) else { return false };
            let name = text(name, src);
            if !names.iter().any(|n| n == name) {
                return false;
            }
            st.put("method", name);
            st.put("receiver", shorten(text(recv, src), 40));
            true
        }
        Anchor::Attribute(globs) => {
            let cached = cx.memo.attr.as_deref().filter(|_| node.id() == cx.current.id());
            let q = cached.map(str::to_string).or_else(|| attribute_name(node, cx));
            let Some(q) = q else { return false };
            if !globs.is_match(&q) {
                return false;
            }
            st.put("name", q.rsplit('.').next().unwrap_or(&q).to_string());
            st.put("qualname", q);
            true
        }
        Anchor::Str(re) => {
            let Some(value) = cx.string_of(node, || string_value(node, cx)) else { return false };
            if !re.is_match(&value) {
                return false;
            }
            st.put("value", value.into_owned());
            true
        }
        Anchor::EnvVar(re) => {
            if node.kind_name() != "string" || cx.model.docstrings.contains(&node.id()) {
                return false;
            }
            match plain_string(node, src) {
                Some(s) if re.is_match(&s) => {
                    st.put("name", s);
                    if let Some(v) = slots::env_value(node, cx) {
                        if let Some(text) = plain_string(v, src) {
                            st.put("value", text);
                        }
                        st.nodes.push(("value".to_string(), v));
                    }
                    true
                }
                _ => false,
            }
        }
        Anchor::Compare(test) => compare(test, node, cx, st),
        Anchor::Import(globs) => {
            if !matches!(node.kind_name(), "import_statement" | "import_from_statement") {
                return false;
            }
            match cx.model.imported_by(node).iter().find(|q| globs.is_match(q)) {
                Some(q) => {
                    st.put("name", q.as_str());
                    true
                }
                None => false,
            }
        }
        Anchor::Condition(test) => {
            let Some(t) = condition_test(test, node, cx) else { return false };
            st.put("condition", shorten(text(t, src), 60));
            st.focus = Some(t);
            true
        }
        Anchor::Query(i) => cx.query_hits.get(*i).is_some_and(|hits| hits.contains(&node.id())),
        Anchor::Kind(kinds) => kinds.iter().any(|k| k == node.kind_name()),
        Anchor::File { .. } | Anchor::ShellCommand(_) => false,
    }
}

/// The base class matching `globs` of the class that `callee` names, where
/// it is a derived class (of the file, or imported from another) that
/// derives from it in the way `which` accepts.
fn derived_base(callee: Node, which: Subclasses, globs: &NameGlobs, cx: &Context) -> Option<String> {
    let derived = cx.model.derived_of_callee(callee, cx.src);
    let accepted = |d: &&Derived| which == Subclasses::All || d.passes_arguments;
    derived.iter().filter(accepted).find(|d| globs.is_match(&d.base)).map(|d| d.base.clone())
}

/// The qualified name of a maximal dotted chain (`torch.backends.cudnn.x`),
/// or of a name imported from a module; `None` for anything else.
pub fn attribute_name<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> Option<String> {
    let parent = cx.parent(node);
    match node.kind_name() {
        "attribute" => {
            if parent.is_some_and(|p| p.kind_name() == "attribute" && p.field(Field::Object) == Some(node)) {
                return None;
            }
        }
        "identifier" => {
            let p = parent?;
            let skip = match p.kind_name() {
                "attribute"
                | "dotted_name"
                | "aliased_import"
                | "function_definition"
                | "class_definition"
                | "parameters"
                | "default_parameter"
                | "typed_parameter"
                | "typed_default_parameter"
                | "lambda_parameters" => true,
                "keyword_argument" => p.field(Field::Name) == Some(node),
                _ => false,
            };
            if skip || !cx.model.is_imported_name(text(node, cx.src)) {
                return None;
            }
        }
        _ => return None,
    }
    // The chain's root, found without collecting its parts: most chains (`self.x`) start with no import.
    let mut root = node;
    while root.kind_name() == "attribute" {
        root = root.field(Field::Object)?;
    }
    if root.kind_name() != "identifier" || !cx.model.is_imported_name(text(root, cx.src)) {
        return None;
    }
    cx.resolve_node(node)
}

/// The normalised text of a string-like value at `node` (the outermost form:
/// a string that is the left of `%` or the object of `.format` is read at its parent).
pub fn string_value<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> Option<String> {
    if node.kind_name() == "string" {
        if cx.model.docstrings.contains(&node.id()) {
            return None;
        }
        if let Some(p) = cx.parent(node) {
            let is_left_of_percent = p.kind_name() == "binary_operator"
                && p.field(Field::Left) == Some(node)
                && string_like(p, cx.src).is_some();
            let is_format_object =
                p.kind_name() == "attribute" && cx.text(p).ends_with(".format") && p.field(Field::Object) == Some(node);
            if is_left_of_percent || is_format_object {
                return None;
            }
        }
    }
    string_like(node, cx.src).map(|(_, s)| s)
}

fn compare<'t>(test: &CompareTest, node: Node<'t>, cx: &Context<'_, 't>, st: &mut MatchState<'t>) -> bool {
    if node.kind_name() != "comparison_operator" {
        return false;
    }
    let mut cursor = node.walk();
    let ops: Vec<&str> = node.children_by_field_name("operators", &mut cursor).map(|o| cx.text(o)).collect();
    let operands: Vec<Node> = node.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
    for (i, op) in ops.iter().enumerate() {
        let op = op.split_whitespace().collect::<Vec<_>>().join(" ");
        if !test.ops.contains(&op) {
            continue;
        }
        for operand in [operands.get(i), operands.get(i + 1)].into_iter().flatten() {
            if let Some(lit) = compared_literal(test, unparen(*operand), cx) {
                st.put("literal", lit);
                st.put("op", op);
                return true;
            }
        }
    }
    false
}

/// A matching string operand: a literal, or an element of a collection
/// literal in which at least half the strings match `majority`.
fn compared_literal(test: &CompareTest, operand: Node, cx: &Context) -> Option<String> {
    match operand.kind_name() {
        "string" => plain_string(operand, cx.src).filter(|s| test.literal.is_match(s)),
        "list" | "tuple" | "set" => {
            let mut cursor = operand.walk();
            let strings: Vec<String> =
                operand.named_children(&mut cursor).filter_map(|c| plain_string(c, cx.src)).collect();
            let hit = strings.iter().find(|s| test.literal.is_match(s))?.clone();
            if let Some(majority) = &test.majority {
                let n = strings.iter().filter(|s| majority.is_match(s)).count();
                if n * 2 < strings.len() {
                    return None;
                }
            }
            Some(hit)
        }
        _ => None,
    }
}

/// For a conditional expression or `if` chain matching `test`, the test node that calls the name.
fn condition_test<'t>(test: &ConditionTest, node: Node<'t>, cx: &Context<'_, 't>) -> Option<Node<'t>> {
    let tests = chain_tests(node);
    let hit = tests.iter().copied().find(|t| contains_call(*t, &test.test_calls, cx))?;
    if let Some(re) = &test.branch_value {
        if !branch_values(node).into_iter().any(|v| value_matches(v, re, cx)) {
            return None;
        }
    }
    if let Some(re) = test.else_value.as_ref().filter(|_| has_else(node)) {
        if !branch_values(node).into_iter().any(|v| value_matches(v, re, cx)) {
            return None;
        }
    }
    Some(hit)
}

/// The chain's tests plus those of conditional expressions it is a branch of:
/// in `"npu" if a else ("cuda" if b else "cpu")` the inner chain is `a`, `b`.
fn enclosing_chain_tests<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> Vec<Node<'t>> {
    let mut tests = chain_tests(node);
    let mut cur = node;
    for parent in cx.self_and_ancestors(node).skip(1) {
        match parent.kind_name() {
            "parenthesized_expression" => cur = parent,
            "conditional_expression" => {
                let test = crate::parse::conditional_test(parent);
                if test == Some(cur) {
                    break;
                }
                tests.extend(test);
                cur = parent;
            }
            _ => break,
        }
    }
    tests
}

/// The tests of every `if` chain and conditional expression that `node` is
/// (or is part of, in a test or in a branch), out to the enclosing function,
/// the other `else` of a chain that tests for CUDA (see
/// [`other_else_of_cuda_test`]) or the other value of such a conditional
/// expression, and the tests of the separate `if`
/// statements that make a dispatch with its statements (see
/// [`crate::semantic::dispatch::sibling_dispatch_tests`]).
fn surrounding_chain_tests<'t>(node: Node<'t>, cx: &Context<'_, 't>) -> Vec<Node<'t>> {
    let mut tests = Vec::new();
    let mut statement = None;
    for n in cx.self_and_ancestors(node) {
        match n.kind_name() {
            "if_statement" => {
                tests.extend(chain_tests(n));
                tests.extend(other_else_of_cuda_test(n, statement, cx.src));
            }
            "conditional_expression" => {
                tests.extend(chain_tests(n));
                tests.extend(crate::semantic::dispatch::other_value_of_cuda_test(n, statement, cx.src));
            }
            "function_definition" | "lambda" | "class_definition" => break,
            "block" | "module" => {
                if let Some(s) = statement {
                    tests.extend(cx.model.dispatch_tests_of(s, n, cx.src).iter().copied());
                }
            }
            _ => {}
        }
        statement = Some(n);
    }
    tests
}

/// Whether a conditional expression or `if` chain has an `else`: a value for
/// when every test fails (an `if` without one keeps what came before).
fn has_else(node: Node) -> bool {
    match node.kind_name() {
        "conditional_expression" => true,
        "if_statement" => crate::semantic::dispatch::else_of(node).is_some(),
        _ => false,
    }
}

/// What runs when every test of a chain fails: the block of an `if`
/// statement's `else`, or a conditional expression's last value.
fn else_branch(node: Node) -> Option<Node> {
    match node.kind_name() {
        "conditional_expression" => crate::parse::conditional_parts(node).map(|[_, _, otherwise]| otherwise),
        "if_statement" => crate::semantic::dispatch::else_of(node)?.field(Field::Body),
        _ => None,
    }
}

/// Branch values: both results of a conditional expression, or the right-hand
/// sides of assignments written directly in the branches of an `if` chain.
fn branch_values(node: Node) -> Vec<Node> {
    match node.kind_name() {
        "conditional_expression" => {
            crate::parse::conditional_parts(node).map_or(Vec::new(), |[then, _, otherwise]| vec![then, otherwise])
        }
        "if_statement" => {
            let mut blocks: Vec<Node> = node.field(Field::Consequence).into_iter().collect();
            let mut cursor = node.walk();
            for alt in node.children_by_field_name("alternative", &mut cursor) {
                blocks.extend(alt.field(Field::Consequence).or_else(|| alt.field(Field::Body)));
            }
            let mut values = Vec::new();
            for block in blocks {
                let mut c = block.walk();
                for stmt in block.named_children(&mut c) {
                    if let Some(a) = stmt
                        .named_child(0)
                        .filter(|a| stmt.kind_name() == "expression_statement" && a.kind_name() == "assignment")
                    {
                        values.extend(a.field(Field::Right));
                    }
                }
            }
            values
        }
        _ => Vec::new(),
    }
}

/// A string value matching `re`, directly or as the first argument of a call (`torch.device("cuda")`).
fn value_matches(v: Node, re: &LazyRegex, cx: &Context) -> bool {
    let v = unparen(v);
    if let Some((_, s)) = string_like(v, cx.src) {
        return re.is_match(&s);
    }
    if v.kind_name() == "call" {
        if let Some(first) = CallArgs::of(v, cx.src).positional.first() {
            return string_like(*first, cx.src).is_some_and(|(_, s)| re.is_match(&s));
        }
    }
    false
}

fn pred<'t>(p: &Pred, node: Node<'t>, cx: &Context<'_, 't>, st: &mut MatchState<'t>) -> bool {
    match p {
        Pred::Args(checks) => {
            let args = CallArgs::of(node, cx.src);
            checks.iter().all(|c| arg_check(c, &args, cx, st))
        }
        Pred::Receiver(m) => match method_parts(node) {
            Some((recv, _)) => eval(m, unparen(recv), cx, st),
            None => false,
        },
        Pred::Contains(m) => any_descendant(node, |n| eval(m, n, cx, st)),
        Pred::Slot(slots) => slots::in_slot(slots, node, cx),
        Pred::FlowsInto(f) => match slots::flows_into(&f.slots, node, cx) {
            Some(read) => {
                if let Some(name) = &f.capture {
                    st.put(name, read);
                }
                true
            }
            None => false,
        },
        Pred::Text(re) => re.is_match(cx.text(node)),
        Pred::InBranchOf(test) => slots::in_branch_of(test, node, cx),
        Pred::ConditionText(re) => enclosing_chain_tests(node, cx).iter().any(|t| re.is_match(cx.text(*t))),
        Pred::AssignTarget(want) => {
            let is_target = cx.parent(node).is_some_and(|p| {
                matches!(p.kind_name(), "assignment" | "augmented_assignment") && p.field(Field::Left) == Some(node)
            });
            is_target == *want
        }
        Pred::InsideLoop(want) => local(&cx.frames_of(node)).any(|f| matches!(f, Frame::LoopBody(_))) == *want,
        Pred::InsideTrainingLoop(want) => cx.loop_around(node, |i| i.training).is_some() == *want,
        Pred::RunsPerStep(want) => {
            let step_loop = cx.loop_around(node, LoopInfo::is_step_loop).is_some();
            let step_function = || cx.function_of(node).is_some_and(|f| cx.model.per_step_functions.contains(&f.id()));
            (step_loop || step_function()) == *want
        }
        Pred::InsideWith(globs) => slots::inside_with(globs, node, cx),
        Pred::Signature(params) => {
            let args = CallArgs::of(node, cx.src);
            args.positional.len() <= params.len()
                && args.keywords.iter().all(|(name, _)| params[args.positional.len()..].iter().any(|p| p == name))
        }
        Pred::InChainTesting(re) => surrounding_chain_tests(node, cx).iter().any(|t| re.is_match(cx.text(*t))),
        Pred::UnderIf(re) => {
            local(&cx.frames_of(node)).any(|f| matches!(f, Frame::IfBranch(t) if re.is_match(cx.text(*t))))
        }
        Pred::ReceiverLoopInvariant(want) => slots::receiver_loop_invariant(node, cx) == *want,
        Pred::ReceiverAssignedInTrainingLoop(want) => slots::receiver_assigned_in_training_loop(node, cx) == *want,
        Pred::LoopOver { over, receiver_variable, innermost } => match over {
            Some(m) => slots::loop_over(Some(&mut |v| eval(m, v, cx, st)), *receiver_variable, *innermost, node, cx),
            None => slots::loop_over(None, *receiver_variable, *innermost, node, cx),
        },
        Pred::FileImports(globs) => cx.model.imported.iter().any(|q| globs.is_match(q)),
        Pred::Fact(scope, i) => {
            st.pending.push(vec![(*scope, *i, true)]);
            true
        }
        Pred::Fields(list) => {
            list.iter().all(|(name, m)| node.child_by_field_name(name).is_some_and(|c| eval(m, c, cx, st)))
        }
        Pred::Capture(name) => {
            st.put(name, cx.text(node).to_string());
            st.nodes.push((name.clone(), node));
            true
        }
        Pred::Binding(m) => {
            // The name part of `obj.name` or `name=` is no variable of its own.
            let variable = match node.kind_name() {
                "identifier" => crate::semantic::flow::is_name(node),
                "attribute" => true,
                _ => false,
            };
            let bound =
                variable.then(|| cx.model.binding(cx.scope_of(node), cx.text(node), node.start_byte())).flatten();
            bound.is_some_and(|v| eval(m, unparen(v), cx, st))
        }
        Pred::Ancestor(m) => cx.self_and_ancestors(node).skip(1).any(|a| eval(m, a, cx, st)),
        Pred::CalleeDefinition(m) => cx.model.definitions_called(node, cx.src).iter().any(|&d| eval(m, d, cx, st)),
        Pred::ClassDefinition(m) => cx.model.classes_called(node, cx.src).iter().any(|&d| eval(m, d, cx, st)),
        Pred::ElseBranch(m) => else_branch(node).is_some_and(|e| eval(m, e, cx, st)),
        Pred::FromCallers(m) => {
            let passed = (node.kind_name() == "identifier")
                .then(|| cx.function_of(node))
                .flatten()
                .and_then(|f| cx.model.caller_arguments(f, cx.text(node), node.start_byte(), cx.src));
            passed.is_some_and(|values| values.iter().all(|&v| eval(m, unparen(v), cx, st)))
        }
        Pred::ShellAssignmentsOnly => true,
        // Decided once the project's file names, or its import graph, are known.
        Pred::NamedInProject(_) | Pred::BuiltOnlyWithCuda(_) | Pred::LoadedOnlyGuarded(_) => {
            st.pending.extend(p.project_literal().map(|literal| vec![literal]));
            true
        }
        Pred::FunctionHas(m) => slots::scope_has(node, Order::Anywhere, cx, |n| eval(m, n, cx, st)),
        Pred::Preceded(m) => slots::scope_has(node, Order::Before, cx, |n| eval(m, n, cx, st)),
        Pred::Followed(m) => slots::scope_has(node, Order::After, cx, |n| eval(m, n, cx, st)),
        Pred::ImportUsed(want) => slots::import_used(node, cx) == *want,
        Pred::CallersPass(want) => cx.model.callers_pass(node, cx.src) == *want,
        Pred::TrainingLoop(want) => cx.model.loops.get(&node.id()).is_some_and(|l| l.training) == *want,
        Pred::NameRegex(re) => {
            let Some(name) = st.get("qualname").map(str::to_string) else { return false };
            let Some(re) = re.get() else { return false };
            let Some(caps) = re.captures(&name) else { return false };
            for group in re.capture_names().flatten() {
                if let Some(m) = caps.name(group) {
                    st.put(group, m.as_str());
                }
            }
            true
        }
        Pred::TextTemplate(template) => super::data::template_matches(template, st, cx.text(node)),
        Pred::Lookup(l) => super::data::lookup(l, cx, st),
        Pred::Nearest(table, key, capture) => super::data::nearest(*table, key, capture, cx, st),
        Pred::Options(o) => super::data::options(o, cx.tables, cx.target, st),
        Pred::Unless(m) => {
            // The negated matcher sees the placeholders captured so far; what it captures is dropped.
            let mut sub =
                MatchState { captures: st.captures.clone(), nodes: st.nodes.clone(), ..MatchState::default() };
            if !eval(m, node, cx, &mut sub) {
                return true;
            }
            // Holds for sure: the match is dropped. Holds only if some facts
            // are true: keep the match on condition that they are not, with
            // the negation written as clauses again (not (a and b) is one
            // clause, not a or not b; not (a or b) is two, not a and not b).
            // Past MAX_CLAUSES the match is dropped, as when it holds for sure.
            match negate_condition(&sub.pending) {
                Some(clauses) => {
                    st.pending.extend(clauses);
                    true
                }
                None => false,
            }
        }
        Pred::Any(ms) => any_of(ms, node, cx, st),
    }
}

/// `any`: the first alternative that holds. When it holds only if some facts
/// do (`file_has`, ...), the later alternatives are tried too: one that holds
/// for sure wins, and the conditions of the others are joined with its own
/// (`any = [file_has A, file_has B]` is "A or B", not "A"). Past
/// MAX_CLAUSES only the first alternative's condition is kept.
fn any_of<'t>(ms: &[Matcher], node: Node<'t>, cx: &Context<'_, 't>, st: &mut MatchState<'t>) -> bool {
    let mark = (st.captures.len(), st.pending.len(), st.nodes.len());
    let Some(first) = ms.iter().position(|m| eval(m, node, cx, st)) else { return false };
    if st.pending.len() == mark.1 {
        return true;
    }
    let mut joined: Option<Vec<Clause>> = Some(st.pending[mark.1..].to_vec());
    for m in &ms[first + 1..] {
        let mut sub = MatchState {
            captures: st.captures[..mark.0].to_vec(),
            nodes: st.nodes[..mark.2].to_vec(),
            focus: st.focus,
            pending: Vec::new(),
        };
        if !eval(m, node, cx, &mut sub) {
            continue;
        }
        if sub.pending.is_empty() {
            st.pending.truncate(mark.1);
            (st.captures, st.nodes, st.focus) = (sub.captures, sub.nodes, sub.focus);
            return true;
        }
        joined = joined.and_then(|j| or_conditions(&j, &sub.pending));
    }
    if let Some(clauses) = joined {
        st.pending.truncate(mark.1);
        st.pending.extend(clauses);
    }
    true
}

fn arg_check<'t>(c: &ArgCheck, args: &CallArgs<'t>, cx: &Context<'_, 't>, st: &mut MatchState<'t>) -> bool {
    let state = if c.star {
        args.star_value.map_or(ArgState::Absent, ArgState::Present)
    } else {
        args.get(c.name.as_deref(), c.position)
    };
    let ok = c.alternatives.iter().any(|alt| arg_alt(alt, state, cx, st));
    if ok {
        if let (Some(name), ArgState::Present(v)) = (&c.capture, state) {
            st.put(name, cx.text(v).to_string());
            st.nodes.push((name.clone(), v));
        }
    }
    ok
}

fn arg_alt<'t>(alt: &ArgAlt, state: ArgState<'t>, cx: &Context<'_, 't>, st: &mut MatchState<'t>) -> bool {
    let value = match state {
        ArgState::Absent => return matches!(alt, ArgAlt::Absent),
        ArgState::Unknown => return matches!(alt, ArgAlt::Unknown),
        ArgState::Present(v) => v,
    };
    match alt {
        ArgAlt::Absent | ArgAlt::Unknown => false,
        ArgAlt::Present => true,
        ArgAlt::NotNone => literal(value, cx.src) != Some(Literal::None),
        ArgAlt::Literal => is_literal(value, cx.src),
        ArgAlt::NonLiteral => !is_literal(value, cx.src),
        ArgAlt::Eq(want) => literal(value, cx.src).is_some_and(|got| literal_eq(&got, want)),
        ArgAlt::Cmp(op, n) => match literal(value, cx.src) {
            Some(Literal::Int(i)) => compare_num(i as f64, op, *n),
            Some(Literal::Float(f)) => compare_num(f, op, *n),
            _ => false,
        },
        ArgAlt::Regex(re) => string_like(unparen(value), cx.src).is_some_and(|(_, s)| re.is_match(&s)),
        ArgAlt::Text(re) => re.is_match(cx.text(value)),
        ArgAlt::Match(m) => eval(m, unparen(value), cx, st),
    }
}

fn literal_eq(a: &Literal, b: &Literal) -> bool {
    match (a, b) {
        (Literal::Int(x), Literal::Float(y)) | (Literal::Float(y), Literal::Int(x)) => (*x as f64) == *y,
        _ => a == b,
    }
}

fn compare_num(x: f64, op: &str, n: f64) -> bool {
    match op {
        ">" => x > n,
        ">=" => x >= n,
        "<" => x < n,
        _ => x <= n,
    }
}
