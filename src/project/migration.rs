//! The two migration styles. A project that imports
//! `torch_npu.contrib.transfer_to_npu` is on automatic migration: what that
//! module rewrites at run time (`.cuda()`, `torch.cuda.*`, "cuda" device
//! strings, "nccl", `torch.cuda.amp`; the rules with `auto_migrated = true`)
//! is advice there, not work to do. Any other project is migrated by hand,
//! and every finding keeps its severity. The `migration` setting and the
//! `--migration` flag can decide the style for every project instead.

use crate::config::{Migration, Origin, Setting};
use crate::finding::{Advice, Finding, Severity};

/// The style a project is migrated in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// `transfer_to_npu` redirects CUDA spellings at run time.
    Automatic,
    /// CUDA spellings are changed in the code.
    Manual,
}

impl Style {
    /// `automatic` or `manual`.
    pub fn as_str(self) -> &'static str {
        match self {
            Style::Automatic => "automatic",
            Style::Manual => "manual",
        }
    }
}

/// Why a style was assumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// Detected: the project imports `transfer_to_npu` here (path and line as reported).
    Imported {
        /// Display path (in a notebook, with its cell).
        path: String,
        /// 1-based line.
        line: usize,
    },
    /// Detected: no file of the project imports `transfer_to_npu`.
    NotImported,
    /// `--migration auto` or `--migration manual`.
    CommandLine,
    /// `migration = "auto"` or `"manual"` in this configuration file (its name).
    Config(String),
}

/// The style assumed for one project, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumed {
    /// The style.
    pub style: Style,
    /// Why.
    pub why: Why,
    /// In a project that detected automatic migration, the entry scripts
    /// whose process never imports `transfer_to_npu` (see
    /// [`crate::project::processes`]): they, and the files only they import, are
    /// migrated by hand.
    pub unmigrated_entries: Vec<String>,
}

impl Assumed {
    /// The style `setting` gives a project whose first `transfer_to_npu`
    /// import (if any) is at `import`.
    pub fn decide(setting: &Setting<Migration>, import: Option<(&str, usize)>) -> Self {
        let set_by = || match &setting.origin {
            Origin::File(place) => {
                // `path:line`, shown by the file's name: the full path is in `--show-settings`.
                let path = place.rsplit_once(':').map_or(place.as_str(), |(path, _)| path);
                let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
                Why::Config(name.to_string())
            }
            Origin::CommandLine | Origin::Default => Why::CommandLine,
        };
        let (style, why) = match (setting.value, import) {
            (Migration::Auto, _) => (Style::Automatic, set_by()),
            (Migration::Manual, _) => (Style::Manual, set_by()),
            (Migration::Detect, Some((path, line))) => {
                (Style::Automatic, Why::Imported { path: path.to_string(), line })
            }
            (Migration::Detect, None) => (Style::Manual, Why::NotImported),
        };
        Assumed { style, why, unmigrated_entries: Vec::new() }
    }

    /// Whether the style was detected as automatic from an import (not set
    /// by the flag or the configuration), so that entry scripts running
    /// without it can be told apart.
    pub fn detected_automatic(&self) -> bool {
        self.style == Style::Automatic && matches!(self.why, Why::Imported { .. })
    }

    /// Why, in words: `transfer_to_npu imported in train.py:3`, `set by --migration`;
    /// then the entry scripts that run without it, if any.
    pub fn reason(&self) -> String {
        let why = match &self.why {
            Why::Imported { path, line } => format!("transfer_to_npu imported in {path}:{line}"),
            Why::NotImported => "no transfer_to_npu import found".to_string(),
            Why::CommandLine => "set by --migration".to_string(),
            Why::Config(file) => format!("set by `migration` in {file}"),
        };
        match self.unmigrated_entries.as_slice() {
            [] => why,
            entries => {
                const SHOWN: usize = 3;
                let mut names = entries.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
                if entries.len() > SHOWN {
                    names.push_str(&format!(" and {} more", entries.len() - SHOWN));
                }
                let scripts = if entries.len() == 1 { "entry script runs" } else { "entry scripts run" };
                format!("{why}; {} {scripts} without it: {names}", entries.len())
            }
        }
    }

    /// `automatic (transfer_to_npu imported in train.py:3)`.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.style.as_str(), self.reason())
    }

    /// Makes `f` advice when its project is on automatic migration and the
    /// rule's pattern is one `transfer_to_npu` handles: severity `info`,
    /// marked advisory. Its fix stays. A finding in a file that only runs
    /// without `transfer_to_npu` (`unmigrated`) is left as it is. A pattern
    /// that only `transfer_to_npu` breaks is info where it does not run:
    /// it still blocks turning automatic migration on.
    pub fn apply(&self, f: &mut Finding, unmigrated: bool) {
        let automatic = self.style == Style::Automatic && !unmigrated;
        if automatic && f.auto_migrated && !f.blocker {
            (f.advisory, f.severity, f.advice) = (true, Severity::Info, Some(Advice::TransferToNpu));
        }
        if f.only_under_automatic && !automatic {
            f.severity = Severity::Info;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(value: Migration, origin: Origin) -> Setting<Migration> {
        Setting { value, origin }
    }

    #[test]
    fn detect_follows_the_import_and_the_setting_overrides_it() {
        let detect = setting(Migration::Detect, Origin::Default);
        let found = Assumed::decide(&detect, Some(("a/train.py", 3)));
        assert_eq!(found.describe(), "automatic (transfer_to_npu imported in a/train.py:3)");
        assert_eq!(Assumed::decide(&detect, None).describe(), "manual (no transfer_to_npu import found)");
        let manual = setting(Migration::Manual, Origin::CommandLine);
        assert_eq!(Assumed::decide(&manual, Some(("a/train.py", 3))).describe(), "manual (set by --migration)");
        let auto = setting(Migration::Auto, Origin::File("/x/y/npu-mem.toml:4".into()));
        assert_eq!(Assumed::decide(&auto, None).describe(), "automatic (set by `migration` in npu-mem.toml)");
    }
}
