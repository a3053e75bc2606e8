//! What the client configures in `initializationOptions`: `target` and
//! `select` over the workspace's `[tool.npu-mem]`, and the reason "Ignore
//! this finding" writes. Everything else comes from the configuration
//! file, as for `scan`.

use super::analysis::{Overrides, DEFAULT_IGNORE_REASON};
use serde::Deserialize;

/// The client's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ClientSettings {
    /// Over the configuration file.
    pub overrides: Overrides,
    /// The reason after `--` in the suppression comments the server adds.
    pub ignore_reason: String,
}

/// `initializationOptions` as written: every key optional, `select` a
/// list or one comma-separated string.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Options {
    target: Option<String>,
    select: Option<Select>,
    ignore_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Select {
    One(String),
    Many(Vec<String>),
}

impl ClientSettings {
    /// Reads `initializationOptions`; what cannot be read is left at its
    /// default and said in the second value (for the client's log).
    pub(super) fn read(options: Option<serde_json::Value>) -> (ClientSettings, Option<String>) {
        let (options, problem) = match options.filter(|v| !v.is_null()).map(serde_json::from_value::<Options>) {
            None => (Options::default(), None),
            Some(Ok(o)) => (o, None),
            Some(Err(e)) => (
                Options::default(),
                Some(format!(
                    "initializationOptions: {e}; expected {{\"target\": \"2.6\", \"select\": [\"TX\"], \"ignoreReason\": \
                     \"...\"}}, all optional"
                )),
            ),
        };
        let select = match options.select {
            None => Vec::new(),
            Some(Select::One(s)) => vec![s],
            Some(Select::Many(v)) => v,
        };
        let settings = ClientSettings {
            overrides: Overrides { target: options.target, select },
            ignore_reason: options.ignore_reason.unwrap_or_else(|| DEFAULT_IGNORE_REASON.to_string()),
        };
        (settings, problem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_are_optional_and_select_is_a_list_or_a_string() {
        let (s, problem) = ClientSettings::read(None);
        assert_eq!(
            (s.overrides, s.ignore_reason.as_str(), problem),
            (Overrides::default(), DEFAULT_IGNORE_REASON, None)
        );
        let (s, _) = ClientSettings::read(Some(json!({ "target": "2.6", "select": "TX,API", "ignoreReason": "why" })));
        assert_eq!(s.overrides, Overrides { target: Some("2.6".into()), select: vec!["TX,API".into()] });
        assert_eq!(s.ignore_reason, "why");
        let (s, _) = ClientSettings::read(Some(json!({ "select": ["TX", "MEM"] })));
        assert_eq!(s.overrides.select, ["TX", "MEM"]);
        let (s, problem) = ClientSettings::read(Some(json!({ "target": 2.6 })));
        assert_eq!(s.overrides, Overrides::default());
        assert!(problem.is_some_and(|p| p.contains("initializationOptions")));
    }
}
