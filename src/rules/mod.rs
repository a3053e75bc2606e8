//! Rules as data: the pack schema, its compiler, the matcher and the engine.

pub mod analyse;
pub mod compile;
mod compile_matcher;
pub mod context;
pub mod data;
mod data_table;
pub mod engine;
pub mod error;
pub mod file_facts;
pub mod glob;
mod guards;
pub mod lazy_regex;
pub mod matcher;
pub mod model;
mod pack_json;
pub mod packs;
mod placeholders;
mod renamed_tests;
pub mod render;
pub mod schema;
pub mod slots;
pub mod spec_error;
pub mod state;
pub mod walker;
