//! `npu-mem server`: a language server over stdio. It shows the findings
//! of Python files, notebooks (opened as their JSON text) and shell launch
//! scripts as diagnostics while they are edited, with the workspace folder
//! as the project (configuration, migration style, what the launch scripts
//! run: the facts `scan` decides); offers each finding's fix, the file's
//! safe fixes and its suppression comment as code actions; and explains a
//! rule on hover.
//!
//! [`session`] runs the protocol, [`transport`] reads and writes it,
//! [`documents`] keeps the open buffers (and their syntax trees) in step,
//! [`positions`] converts positions, [`diagnostics`], [`actions`],
//! [`hover`] and [`docs`] answer, [`settings`] reads the client's options,
//! and [`analysis`] is the one door into the analysis core.

mod actions;
mod analysis;
mod diagnostics;
mod docs;
mod documents;
mod hover;
mod positions;
mod session;
mod settings;
mod transport;

pub use transport::ServerError;

/// Serves one client on stdin and stdout until it says `exit` or its input
/// ends; the exit code the protocol asks for (0 after `shutdown`, else 1).
pub fn run() -> Result<u8, ServerError> {
    Ok(session::run(transport::stdio()?))
}
