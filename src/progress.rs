//! A progress bar on stderr for long scans: files done of the total and the
//! rate, shown only on a terminal and only once a scan has run for a while,
//! so short scans and piped output never see it.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a scan runs before the bar appears.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar is redrawn.
const TICK: Duration = Duration::from_millis(100);
const WIDTH: usize = 30;

/// Counts finished files; cheap enough to tick from every worker.
#[derive(Default)]
pub struct Progress {
    done: AtomicUsize,
    finished: AtomicBool,
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
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Runs `work` while a thread draws the bar for `total` files on stderr
    /// once the scan has run for a second, then clears the bar.
    pub fn show_while<T: Send>(&self, total: usize, work: impl FnOnce() -> T + Send) -> T {
        self.show_on(std::io::stderr(), total, DELAY, work)
    }

    /// [`Progress::show_while`], drawing on `out` after `delay`.
    fn show_on<T: Send>(
        &self,
        out: impl Write + Send,
        total: usize,
        delay: Duration,
        work: impl FnOnce() -> T + Send,
    ) -> T {
        std::thread::scope(|scope| {
            let drawer = scope.spawn(|| self.draw_until_finished(out, total, delay));
            let result = work();
            self.finished.store(true, Ordering::Relaxed);
            // Wake the drawer now rather than at its next tick, so a scan never waits for it.
            drawer.thread().unpark();
            let _ = drawer.join();
            result
        })
    }

    fn draw_until_finished(&self, mut out: impl Write, total: usize, delay: Duration) {
        let started = Instant::now();
        let mut drawn = false;
        loop {
            if started.elapsed() >= delay {
                let done = self.done.load(Ordering::Relaxed).min(total);
                let rate = done as f64 / started.elapsed().as_secs_f64().max(0.001);
                let filled = (done * WIDTH).checked_div(total).unwrap_or(WIDTH);
                let bar = format!("{}{}", "#".repeat(filled), "-".repeat(WIDTH - filled));
                let _ = write!(out, "\r\x1b[2K[{bar}] {done}/{total} files, {rate:.0} files/s");
                let _ = out.flush();
                drawn = true;
            }
            if self.finished.load(Ordering::Relaxed) {
                break;
            }
            std::thread::park_timeout(TICK);
        }
        if drawn {
            let _ = write!(out, "\r\x1b[2K");
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What the drawer wrote, shared with the test.
    #[derive(Clone, Default)]
    struct Screen(Arc<Mutex<Vec<u8>>>);

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Screen {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn the_bar_counts_files_and_is_cleared_at_the_end() {
        let (progress, screen) = (Progress::default(), Screen::default());
        let result = progress.show_on(screen.clone(), 4, Duration::ZERO, || {
            (0..3).for_each(|_| progress.tick());
            std::thread::sleep(3 * TICK);
            "done"
        });
        let text = screen.text();
        assert_eq!(result, "done");
        assert!(text.contains("] 3/4 files, ") && text.contains(" files/s"), "{text:?}");
        assert!(text.contains(&format!("[{}{}]", "#".repeat(WIDTH * 3 / 4), "-".repeat(WIDTH - WIDTH * 3 / 4))));
        assert!(text.ends_with("\r\x1b[2K"), "the bar is cleared: {text:?}");
    }

    #[test]
    fn a_scan_shorter_than_the_delay_draws_nothing() {
        let (progress, screen) = (Progress::default(), Screen::default());
        progress.show_on(screen.clone(), 4, Duration::from_secs(60), || progress.tick());
        assert_eq!(screen.text(), "");
    }

    #[test]
    fn the_bar_is_wanted_only_on_a_terminal_without_quiet_or_machine_output() {
        assert!(wanted(false, false, true));
        assert!(!wanted(true, false, true), "--quiet");
        assert!(!wanted(false, true, true), "a JSON or SARIF report on stdout");
        assert!(!wanted(false, false, false), "stderr is piped");
    }
}
