//! npu-mem: static analysis for PyTorch code moving from CUDA GPUs to Huawei
//! Ascend NPUs. The pipeline, in module order: [`walk`] finds files,
//! [`source`] reads them (in the encodings [`encoding`] allows), [`parse`]
//! builds syntax trees, [`semantic`] resolves
//! names and contexts, [`rules`] matches the packs, [`scan`] runs it all in
//! parallel and [`report`] renders the result.

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
pub mod analysis;
pub mod atomic;
pub mod baseline;
pub mod cache;
pub mod cli;
pub mod config;
pub mod diff;
pub mod encoding;
pub mod error;
pub mod finding;
pub mod fix;
pub mod hash;
pub mod notebook;
pub mod outcome;
pub mod output;
pub mod parse;
pub mod progress;
pub mod project;
pub mod report;
pub mod rules;
pub mod scan;
pub mod semantic;
pub mod server;
pub mod shown_path;
pub mod source;
pub mod stdin;
pub mod suppress;
pub mod walk;
pub mod write;
