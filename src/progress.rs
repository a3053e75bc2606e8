//! A progress bar on stderr for long scans: files done of the total and the
//! rate, drawn by indicatif, shown only on a terminal and only once a scan
//! has run for a while, so short scans and piped output never see it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// How long a scan runs before the bar appears.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar is redrawn.
const TICK: Duration = Duration::from_millis(100);
/// The bar: `[######------] 3/4 files, 120 files/s`.
const TEMPLATE: &str = "[{bar:30}] {pos}/{len} files, {per_sec:.0}";

/// Counts finished files; cheap enough to tick from every worker.
pub struct Progress {
    bar: ProgressBar,
}

impl Default for Progress {
    fn default() -> Self {
        Progress { bar: ProgressBar::hidden() }
    }
}

/// Whether a scan shows the bar: on a terminal only, not with `--quiet`, and
/// not when stdout carries a machine-readable report (its reader may share
/// the terminal).
pub fn wanted(quiet: bool, machine_stdout: bool, stderr_is_terminal: bool) -> bool {
    !quiet && !machine_stdout && stderr_is_terminal
}

impl Progress {
    /// One more file analysed.
    pub fn tick(&self) {
        self.bar.inc(1);
    }

    /// Runs `work` while the bar for `total` files is drawn on stderr once
    /// the scan has run for a second, then clears the bar.
    pub fn show_while<T: Send>(&self, total: usize, work: impl FnOnce() -> T + Send) -> T {
        self.show_on(ProgressDrawTarget::stderr(), total, DELAY, work)
    }

    /// [`Progress::show_while`], drawing on `target` after `delay`.
    fn show_on<T: Send>(
        &self,
        target: ProgressDrawTarget,
        total: usize,
        delay: Duration,
        work: impl FnOnce() -> T + Send,
    ) -> T {
        self.bar.set_length(total as u64);
        let style = ProgressStyle::with_template(TEMPLATE).map(|s| s.progress_chars("#-"));
        self.bar.set_style(style.unwrap_or_else(|_| ProgressStyle::default_bar()));
        let (done, wake) = std::sync::mpsc::channel::<()>();
        let result = std::thread::scope(|scope| {
            let bar = self.bar.clone();
            scope.spawn(move || {
                // Shown only if the work is still running after the delay.
                if wake.recv_timeout(delay).is_err() {
                    bar.set_draw_target(target);
                    bar.enable_steady_tick(TICK);
                }
            });
            let result = work();
            let _ = done.send(());
            result
        });
        self.bar.finish_and_clear();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::InMemoryTerm;

    /// A terminal the test can read, and a draw target on it.
    fn screen() -> (InMemoryTerm, ProgressDrawTarget) {
        let term = InMemoryTerm::new(4, 80);
        (term.clone(), ProgressDrawTarget::term_like(Box::new(term)))
    }

    #[test]
    fn the_bar_counts_files_and_is_cleared_at_the_end() {
        let (progress, (term, target)) = (Progress::default(), screen());
        let mut seen = String::new();
        let result = progress.show_on(target, 4, Duration::ZERO, || {
            (0..3).for_each(|_| progress.tick());
            // Until the drawer has drawn (the steady tick redraws every TICK).
            for _ in 0..50 {
                seen = term.contents();
                if seen.contains("3/4") {
                    break;
                }
                std::thread::sleep(TICK);
            }
            "done"
        });
        assert_eq!(result, "done");
        assert!(seen.contains("] 3/4 files, ") && seen.contains("/s"), "{seen:?}");
        assert!(seen.starts_with(&format!("[{}{}]", "#".repeat(22), "-".repeat(8))), "{seen:?}");
        assert_eq!(term.contents().trim(), "", "the bar is cleared");
    }

    #[test]
    fn a_scan_shorter_than_the_delay_draws_nothing() {
        let (progress, (term, target)) = (Progress::default(), screen());
        progress.show_on(target, 4, Duration::from_secs(60), || progress.tick());
        assert_eq!(term.contents().trim(), "");
    }

    #[test]
    fn the_bar_is_wanted_only_on_a_terminal_without_quiet_or_machine_output() {
        assert!(wanted(false, false, true));
        assert!(!wanted(true, false, true), "--quiet");
        assert!(!wanted(false, true, true), "a JSON or SARIF report on stdout");
        assert!(!wanted(false, false, false), "stderr is piped");
    }
}
