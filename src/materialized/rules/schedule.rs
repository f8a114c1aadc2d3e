//! When FULL refreshes run: a [`Clock`] (the system's, or a [`ManualClock`] that tests move by
//! hand) and the schedule times of a freshness, which are Flink's cron shapes
//! ([`IntervalFreshness::to_cron`]): every multiple of the freshness since midnight, UTC.
//! Because a FULL freshness divides a minute, an hour or a day, those are the multiples of
//! the freshness since the epoch.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::DateTime;

use super::freshness::IntervalFreshness;
use super::partition::SCHEDULE_TIME_FORMAT;

/// A source of the current time, in milliseconds since the epoch (UTC).
pub trait Clock: Send + Sync {
    /// Now.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }
}

/// A clock that stands still until moved: deterministic schedules in tests. Clones share
/// the time.
///
/// ```
/// use differential_temporal::materialized::{Clock, ManualClock};
///
/// let clock = ManualClock::at("2024-01-01 00:00:00").unwrap();
/// clock.advance_ms(90_000);
/// assert_eq!(clock.now_ms(), 1_704_067_290_000);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    now: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock at `time` (`yyyy-MM-dd HH:mm:ss`, UTC).
    ///
    /// Errors: `time` is not in that format.
    pub fn at(time: &str) -> Result<ManualClock, String> {
        let t = chrono::NaiveDateTime::parse_from_str(time, SCHEDULE_TIME_FORMAT)
            .map_err(|e| format!("'{time}' is not a time 'yyyy-MM-dd HH:mm:ss': {e}"))?;
        let clock = ManualClock::default();
        clock.set_ms(t.and_utc().timestamp_millis());
        Ok(clock)
    }

    /// Sets the time.
    pub fn set_ms(&self, ms: i64) {
        self.now.store(ms, Ordering::SeqCst);
    }

    /// Moves the time on by `ms`.
    pub fn advance_ms(&self, ms: i64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
}

/// How often [`sleep_until`] looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Sleeps until `clock` reaches `wake_ms` or `at_most` has passed, whichever is first, or
/// until `stop` is set (looked at every 20 ms): the wait of a server between refreshes that a
/// signal ends promptly. `wake_ms = i64::MAX` waits `at_most` (or until `stop`).
pub(crate) fn sleep_until(clock: &dyn Clock, wake_ms: i64, at_most: Duration, stop: &AtomicBool) {
    let until = Instant::now() + at_most;
    while !stop.load(Ordering::SeqCst) && clock.now_ms() < wake_ms {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(STOP_POLL));
    }
}

/// The schedule times of `freshness` after `after_ms` up to and including `now_ms`, oldest
/// first: every one is due (a refresh missed while nothing ran is caught up).
///
/// ```
/// use differential_temporal::materialized::{due_schedule_times, format_schedule_time, IntervalFreshness, TimeUnit};
///
/// let hour = IntervalFreshness::of("1", TimeUnit::Hour).unwrap();
/// let start = 1_704_067_200_000; // 2024-01-01 00:00:00
/// let due = due_schedule_times(hour, start + 60_000, start + 2 * 3_600_000);
/// let shown: Vec<String> = due.iter().map(|&t| format_schedule_time(t)).collect();
/// assert_eq!(shown, ["2024-01-01 01:00:00", "2024-01-01 02:00:00"]);
/// ```
pub fn due_schedule_times(freshness: IntervalFreshness, after_ms: i64, now_ms: i64) -> Vec<i64> {
    let period = freshness.duration().as_millis() as i64;
    let first = next_schedule_time(freshness, after_ms);
    (0..)
        .map(|i| first + i * period)
        .take_while(|&t| t <= now_ms)
        .collect()
}

/// A time in ms since the epoch as a schedule time, `yyyy-MM-dd HH:mm:ss` (UTC).
pub fn format_schedule_time(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map(|t| t.naive_utc().format(SCHEDULE_TIME_FORMAT).to_string())
        .unwrap_or_else(|| format!("{ms} ms"))
}

/// The first schedule time of `freshness` strictly after `after_ms` (ms since the epoch).
///
/// ```
/// use differential_temporal::materialized::{next_schedule_time, IntervalFreshness, TimeUnit};
///
/// let hour = IntervalFreshness::of("1", TimeUnit::Hour).unwrap();
/// let start = 1_704_067_200_000; // 2024-01-01 00:00:00
/// assert_eq!(next_schedule_time(hour, start), start + 3_600_000);
/// assert_eq!(next_schedule_time(hour, start - 1), start);
/// ```
pub fn next_schedule_time(freshness: IntervalFreshness, after_ms: i64) -> i64 {
    let period = freshness.duration().as_millis() as i64;
    (after_ms.div_euclid(period) + 1) * period
}

/// The periodic refreshes of a warehouse's ACTIVATED FULL tables that are due now, and when
/// the next one falls due ([`TableEnv::refresh_schedule`](crate::table::TableEnv::refresh_schedule)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefreshSchedule {
    /// `(table, schedule time in ms since the epoch)`, in the order they run: table by table
    /// (by name), each table's oldest schedule time first.
    pub due: Vec<(String, i64)>,
    /// The earliest schedule time after now of any of those tables (`None`: there is none).
    pub next_ms: Option<i64>,
}
