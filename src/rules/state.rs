//! What matching builds up as it goes: placeholder values, captured nodes,
//! and project-wide conditions left for the merge to decide.

use super::model::Scope;
use tree_sitter::Node;

/// A disjunction of facts still to decide: `(scope, fact index, expected value)`.
pub type Clause = Vec<(Scope, usize, bool)>;

/// What a successful match produced.
#[derive(Debug, Default, Clone)]
pub struct MatchState<'t> {
    /// Placeholder values.
    pub captures: Vec<(String, String)>,
    /// Project-wide conditions still to check (all clauses must hold).
    pub pending: Vec<Clause>,
    /// A node inside the anchor that the finding should point at (a condition's test).
    pub focus: Option<Node<'t>>,
    /// Nodes captured by name (`capture = "x"`), for `report = "capture:x"` and edits.
    pub nodes: Vec<(String, Node<'t>)>,
}

impl<'t> MatchState<'t> {
    /// The value of placeholder `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.captures.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// Records `value` as placeholder `name`.
    pub(super) fn put(&mut self, name: &str, value: impl Into<String>) {
        self.captures.push((name.to_string(), value.into()));
    }

    /// The node captured as `name`.
    pub fn node(&self, name: &str) -> Option<Node<'t>> {
        self.nodes.iter().rev().find(|(k, _)| k == name).map(|(_, n)| *n)
    }
}

/// The most clauses `any` and `unless` write out when they combine
/// conditions: past it, [`or_conditions`] and [`negate_condition`] give up
/// and their callers keep the narrower reading they document.
pub const MAX_CLAUSES: usize = 64;

/// `a or b`, for two conditions each written as clauses that must all hold:
/// every clause of `a` joined with every clause of `b`, without the joins
/// that hold whatever the facts (a fact and its negation). `None` past
/// [`MAX_CLAUSES`]. An empty result holds for sure.
pub fn or_conditions(a: &[Clause], b: &[Clause]) -> Option<Vec<Clause>> {
    if a.len() * b.len() > MAX_CLAUSES {
        return None;
    }
    let join = |x: &Clause, y: &Clause| -> Option<Clause> {
        let mut c = x.clone();
        for &(scope, i, want) in y {
            if c.contains(&(scope, i, !want)) {
                return None;
            }
            if !c.contains(&(scope, i, want)) {
                c.push((scope, i, want));
            }
        }
        Some(c)
    };
    Some(a.iter().flat_map(|x| b.iter().filter_map(move |y| join(x, y))).collect())
}

/// `not c`, for a condition written as clauses that must all hold: some
/// clause fails, that is every one of its facts has the other value.
/// `None` for a condition that holds for sure (no clauses: its negation
/// never holds) and past [`MAX_CLAUSES`].
pub fn negate_condition(c: &[Clause]) -> Option<Vec<Clause>> {
    let negated = |clause: &Clause| -> Vec<Clause> { clause.iter().map(|&(s, i, want)| vec![(s, i, !want)]).collect() };
    let (first, rest) = c.split_first()?;
    rest.iter().try_fold(negated(first), |acc, clause| or_conditions(&acc, &negated(clause)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: (Scope, usize, bool) = (Scope::File, 0, true);
    const B: (Scope, usize, bool) = (Scope::Project, 1, true);
    const C: (Scope, usize, bool) = (Scope::Process, 2, true);
    fn not((s, i, w): (Scope, usize, bool)) -> (Scope, usize, bool) {
        (s, i, !w)
    }

    #[test]
    fn or_distributes_over_the_clauses_of_both_sides() {
        // C or (not A and B) = (C or not A) and (C or B)
        let got = or_conditions(&[vec![C]], &[vec![not(A)], vec![B]]).unwrap();
        assert_eq!(got, [vec![C, not(A)], vec![C, B]]);
        // A or not A holds whatever A is: no clause left.
        assert_eq!(or_conditions(&[vec![A]], &[vec![not(A)]]).unwrap(), Vec::<Clause>::new());
    }

    #[test]
    fn negation_turns_clauses_into_alternatives() {
        // not ((C or not A) and (C or B)) = (not C and A) or (not C and not B)
        //   = (not C) and (not C or not B) and (A or not C) and (A or not B)
        let got = negate_condition(&[vec![C, not(A)], vec![C, B]]).unwrap();
        assert_eq!(got, [vec![not(C)], vec![not(C), not(B)], vec![A, not(C)], vec![A, not(B)]]);
        assert_eq!(negate_condition(&[vec![A, B]]).unwrap(), [vec![not(A)], vec![not(B)]]);
        assert!(negate_condition(&[]).is_none());
    }

    #[test]
    fn combinations_past_the_limit_are_not_written_out() {
        let wide: Vec<Clause> = (0..9).map(|i| vec![(Scope::File, i, true)]).collect();
        assert!(or_conditions(&wide, &wide).is_none());
    }
}
