//! A rule's documentation. A user's pack gives it with the rule. The
//! built-in rules' docs are embedded apart from their packs, deflated
//! (build.rs), and inflated the first time something reads them: only
//! `npu-mem rule`, `npu-mem rules`, SARIF and the editor's hover do, and a
//! scan should not pay for 130 KB of prose in its start-up or the binary
//! for it in its size (issue 14's limit).

use super::schema::DocsSpec;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Where a rule's documentation is.
#[derive(Debug)]
pub enum RuleDocs {
    /// In the rule's own pack (a user's).
    Given(Box<DocsSpec>),
    /// Among the built-in rules' embedded docs, by the rule's code.
    Embedded,
}

/// The built-in rules' docs by code, as build.rs deflated them.
static DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/rules/docs.json.deflate"));

/// What a rule shows if its embedded docs cannot be read: never, since
/// build.rs wrote them (`tests/rule_docs.rs` reads every built-in rule's).
static MISSING: DocsSpec = DocsSpec {
    what: String::new(),
    not_reported: Vec::new(),
    why: String::new(),
    example: String::new(),
    instead: String::new(),
    fix_note: None,
    sources: Vec::new(),
};

impl RuleDocs {
    /// The documentation of the rule with code `code`.
    pub fn of(&self, code: &str) -> &DocsSpec {
        match self {
            RuleDocs::Given(docs) => docs,
            RuleDocs::Embedded => embedded().get(code).unwrap_or(&MISSING),
        }
    }
}

/// The built-in rules' docs, inflated on first use.
fn embedded() -> &'static HashMap<String, DocsSpec> {
    static DOCS: OnceLock<HashMap<String, DocsSpec>> = OnceLock::new();
    DOCS.get_or_init(|| {
        let json = miniz_oxide::inflate::decompress_to_vec(DEFLATED).unwrap_or_default();
        serde_json::from_slice(&json).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_docs_inflate_and_hold_every_section() {
        let docs = embedded();
        assert!(docs.len() > 50, "only {} built-in rules have docs", docs.len());
        let dl001 = RuleDocs::Embedded.of("DL001");
        assert!(!dl001.what.is_empty() && !dl001.why.is_empty() && !dl001.example.is_empty());
        assert!(RuleDocs::Embedded.of("NOPE999").what.is_empty());
    }
}
