//! The project layer: facts across the files of a project.

pub mod configurations;
pub mod console_scripts;
pub mod launches;
pub mod migration;
pub mod named_files;
pub mod npu_launchers;
pub mod processes;
pub mod uncalled;
pub mod vendored;
