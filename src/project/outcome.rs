//! What the scan learned about one project, for the report.

use super::launches::Launches;
use super::migration::Assumed;
use crate::walk::Project;

/// What the scan learned about one project.
#[derive(Debug, Clone)]
pub struct ProjectOutcome {
    /// Its directory and marker.
    pub project: Project,
    /// Files looked at.
    pub files_scanned: usize,
    /// The migration style assumed, and why.
    pub migration: Assumed,
    /// Where the project imports `transfer_to_npu` (sites of the
    /// `automatic-migration` summary lists), in path and line order.
    pub transfer_imports: Vec<(String, usize)>,
    /// Where it imports `transfer_to_npu` inside a function (sites of the
    /// `late-automatic-migration` lists), in path and line order.
    pub late_transfer_imports: Vec<(String, usize)>,
    /// Its entry scripts (sites of the `entry-scripts` lists), in path and line order.
    pub entry_scripts: Vec<(String, usize)>,
    /// Scripts without a `__main__` guard that parse options at module
    /// level (sites of the `unguarded-scripts` lists), in path and line order.
    pub unguarded_scripts: Vec<(String, usize)>,
    /// Which entry scripts its launch scripts start, and which nothing names
    /// (see [`super::launches`]); the files only those run are left out.
    pub launches: Launches,
}
