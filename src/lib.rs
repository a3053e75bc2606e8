//! npu-mem: static analysis for PyTorch code moving from CUDA GPUs to Huawei
//! Ascend NPUs. One scan, read top to bottom (`main.rs` runs it; every
//! module uses only the ones above it, as `tests/layers.rs` checks):
//!
//! ```text
//!  settings   config ........ pyproject/npu-mem.toml and the command line, resolved
//!  walk       walk .......... the files to scan (Python, notebooks, shell, build files)
//!  read       encoding, source, notebook, stdin
//!                             bytes -> text; cells of a notebook; a buffer on stdin
//!  parse      parse ......... tree-sitter syntax trees (Python, shell)
//!  one file   suppress, semantic
//!                             ignore comments; the file's model (imports, scopes, flows)
//!             rules ......... the packs, their compiler, the matcher and the engine
//!             cache, analysis one file's facts and findings, or the cached ones
//!  project    project ....... what holds across files: launches, runs, reach,
//!                             untaken branches, uncalled functions, vendored copies
//!  filter     baseline, diff, add_ignore
//!                             known findings, changed lines, adopting the gate
//!  outcome    outcome ....... the whole scan's findings and summaries
//!  output     report, fix ... text/JSON/SARIF/GitLab/CSV/...; --fix and --diff
//!  drive      scan, cli ..... the driver; the command-line arguments
//!             server ........ the same analysis as a language server
//!             error ......... why a command stopped
//! ```
//!
//! Shared by every stage: [`finding`] (the result types), [`hash`],
//! [`atomic`] and [`write`] (writing files safely), [`output`] (stdout and
//! stderr without panics), [`progress`] and [`shown_path`] (how paths are
//! shown).

/// `From` impls that put each error type in a variant of an error enum, so
/// that `?` converts it: `wraps_errors!(RunError { Config(ConfigError), ... })`.
macro_rules! wraps_errors {
    ($enum:ident { $($variant:ident($error:ty)),* $(,)? }) => {
        $(
            impl From<$error> for $enum {
                fn from(e: $error) -> Self {
                    $enum::$variant(e)
                }
            }
        )*
    };
}

pub mod add_ignore;
mod analysis;
mod atomic;
pub mod baseline;
pub mod cache;
pub mod cli;
pub mod config;
pub mod diff;
mod encoding;
pub mod error;
pub mod finding;
pub mod fix;
mod hash;
mod notebook;
pub mod outcome;
pub mod output;
mod parse;
pub mod progress;
mod project;
pub mod report;
pub mod rules;
pub mod scan;
mod semantic;
pub mod server;
pub mod shown_path;
mod source;
pub mod stdin;
mod suppress;
pub mod walk;
mod write;

// What the command line (src/main.rs) uses of the layers kept private.
pub use analysis::{parse_only, KeptOutcome};
pub use project::{named_runs, Rereads, ScanFacts};
