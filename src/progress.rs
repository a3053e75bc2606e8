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

impl Progress {
    /// One more file analysed.
    pub fn tick(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Runs `work` while a thread draws the bar for `total` files on stderr
    /// (after `delay`), then clears the bar.
    pub fn show_while<T: Send>(&self, total: usize, delay: Option<Duration>, work: impl FnOnce() -> T + Send) -> T {
        let delay = delay.unwrap_or(DELAY);
        std::thread::scope(|scope| {
            let drawer = scope.spawn(|| self.draw_until_finished(total, delay));
            let result = work();
            self.finished.store(true, Ordering::Relaxed);
            // Wake the drawer now rather than at its next tick, so a scan never waits for it.
            drawer.thread().unpark();
            let _ = drawer.join();
            result
        })
    }

    fn draw_until_finished(&self, total: usize, delay: Duration) {
        let started = Instant::now();
        let mut drawn = false;
        loop {
            if started.elapsed() >= delay {
                let done = self.done.load(Ordering::Relaxed).min(total);
                let rate = done as f64 / started.elapsed().as_secs_f64().max(0.001);
                let filled = (done * WIDTH).checked_div(total).unwrap_or(WIDTH);
                let bar = format!("{}{}", "#".repeat(filled), "-".repeat(WIDTH - filled));
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2K[{bar}] {done}/{total} files, {rate:.0} files/s");
                let _ = err.flush();
                drawn = true;
            }
            if self.finished.load(Ordering::Relaxed) {
                break;
            }
            std::thread::park_timeout(TICK);
        }
        if drawn {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}
