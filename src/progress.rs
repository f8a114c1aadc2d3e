//! The progress line of a run over files: bytes read (a bar when the total is known), rows
//! read and rows per second, on standard error, drawn by `indicatif`.
//!
//! It is drawn only when standard error is a terminal and the inputs are large enough for a
//! run to take a noticeable time ([`LARGE_INPUT_BYTES`]); otherwise, and when the caller asks
//! for quiet, it is hidden and costs one atomic add per block. Every worker of the process
//! shares one line (a clone is a handle to the same line); each counts the blocks it parses.
//! In a cluster each process draws its own line and counts only its workers' blocks, so its
//! bar ends at that process's share of the input.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs smaller than this (in bytes on disk) are read without a progress line.
pub const LARGE_INPUT_BYTES: u64 = 32 << 20;

/// A process's progress line (see the [module documentation](self)).
#[derive(Clone)]
pub struct Progress {
    bar: ProgressBar,
    rows: Arc<AtomicU64>,
    started: Instant,
}

impl Progress {
    /// A line that is never drawn.
    pub fn hidden() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
            rows: Arc::default(),
            started: Instant::now(),
        }
    }

    /// The line for reading `paths`: drawn if `show`, standard error is a terminal and the
    /// files hold at least [`LARGE_INPUT_BYTES`]. A compressed (`.gz`) input has no known
    /// total of uncompressed bytes: the line then shows bytes read without a bar.
    pub fn for_files<'a>(paths: impl IntoIterator<Item = &'a str>, show: bool) -> Progress {
        if !show || !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let (mut on_disk, mut compressed) = (0, false);
        for path in paths {
            on_disk += std::fs::metadata(path).map_or(0, |m| m.len());
            compressed |= path.ends_with(".gz");
        }
        if on_disk < LARGE_INPUT_BYTES {
            return Progress::hidden();
        }
        let (length, template) = if compressed {
            (None, "{spinner} {bytes} read, {msg}")
        } else {
            (
                Some(on_disk),
                "{spinner} [{wide_bar}] {bytes}/{total_bytes}, {msg}",
            )
        };
        let style = ProgressStyle::with_template(template)
            .expect("a valid template")
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(length, ProgressDrawTarget::stderr_with_hz(4))
            .with_style(style);
        Progress {
            bar,
            rows: Arc::default(),
            started: Instant::now(),
        }
    }

    /// Counts a parsed block of `bytes` bytes holding `rows` rows.
    pub fn block(&self, bytes: usize, rows: u64) {
        let total = self.rows.fetch_add(rows, Ordering::Relaxed) + rows;
        if self.bar.is_hidden() {
            return;
        }
        let seconds = self.started.elapsed().as_secs_f64().max(1e-3);
        let rate = total as f64 / seconds;
        self.bar
            .set_message(format!("{total} rows, {rate:.0} rows/s"));
        self.bar.inc(bytes as u64);
    }

    /// Rows counted so far.
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    /// Removes the line (the run's own output follows on a clean terminal).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_line_still_counts_rows() {
        let progress = Progress::hidden();
        let worker = progress.clone();
        worker.block(100, 3);
        progress.block(50, 2);
        assert_eq!(progress.rows(), 5);
        progress.finish();
    }

    #[test]
    fn small_inputs_and_quiet_runs_draw_nothing() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let path = file.path().to_str().unwrap();
        assert!(Progress::for_files([path], true).bar.is_hidden());
        assert!(Progress::for_files([path], false).bar.is_hidden());
    }
}
