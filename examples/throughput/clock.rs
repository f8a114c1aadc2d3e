//! Timing: wall-clock and on-CPU time of the calling thread over the timed sections.
//!
//! The machine these runs share is often loaded, so wall-clock rates depend on the scheduler;
//! on-CPU time (`CLOCK_THREAD_CPUTIME_ID`) counts only the cycles the thread actually ran.
//! Note that a timely worker waiting for another one keeps stepping (spinning), so with more
//! than one worker the CPU time includes that waiting.

use std::time::{Duration, Instant};

/// The calling thread's CPU time so far.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is always supported
    // on Linux. On failure `ts` stays zero and the CPU figures read 0.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Accumulated wall-clock and thread CPU time over the sections between `start` and `stop`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stopwatch {
    /// Wall-clock time of the sections.
    pub wall: Duration,
    /// CPU time of the calling thread in the sections.
    pub cpu: Duration,
    started: Option<(Instant, Duration)>,
}

impl Stopwatch {
    /// Starts a section.
    pub fn start(&mut self) {
        self.started = Some((Instant::now(), thread_cpu()));
    }

    /// Ends the section started last (nothing if none was started).
    pub fn stop(&mut self) {
        if let Some((wall, cpu)) = self.started.take() {
            self.wall += wall.elapsed();
            self.cpu += thread_cpu().saturating_sub(cpu);
        }
    }
}
