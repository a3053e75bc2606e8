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
