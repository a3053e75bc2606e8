//! The pages a diagnostic's code links to (`codeDescription`): each rule's
//! documentation as a Markdown file, written once per rule set into a
//! directory of the system's temporary directory (never into the user's
//! tree), so that the link opens the same text as the hover, offline and
//! for the rule packs the workspace loads.

use super::analysis::{write_whole, Config};
use lsp_types::Url;
use std::collections::HashMap;

/// Rule code -> the address of its page; empty when the pages cannot be written.
pub(super) fn pages(config: &Config) -> HashMap<String, Url> {
    let dir = std::env::temp_dir().join(format!("npu-mem-rules-{:016x}", config.fingerprint()));
    if std::fs::create_dir_all(&dir).is_err() {
        return HashMap::new();
    }
    config
        .rule_docs()
        .filter_map(|(code, text)| {
            let page = dir.join(format!("{code}.md"));
            // Written anew only when missing or different: the set's fingerprint names the directory.
            let current = std::fs::read_to_string(&page).is_ok_and(|t| t == text);
            if !current {
                write_whole(&page, text.as_bytes()).ok()?;
            }
            Some((code.to_string(), Url::from_file_path(&page).ok()?))
        })
        .collect()
}
