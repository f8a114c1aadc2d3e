//! Memory: the process's peak resident set, and the raw bytes of each operation's live state.

use crate::workload::{self, Shape};
use crate::Op;

/// The peak resident set of this process so far (`VmHWM` of `/proc/self/status`), in MiB;
/// `None` where that file does not exist (not Linux).
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The raw bytes of `op`'s live state at the end of the run and the formula behind them:
/// fixed-width fields only (8 bytes per integer, 1 per delete flag), no container overhead.
/// `keys` is the number of state entries the baseline kept (distinct keys, or what the
/// formula counts).
pub fn live_state(op: Op, shape: &Shape, keys: u64) -> (u64, &'static str) {
    let build = workload::build_versions(shape);
    match op {
        Op::DedupKeepLast => (keys * 32, "keys x 32 B (key, event time, payload, seq)"),
        Op::VersionedMerge => (
            keys * 32,
            "keys x 32 B (key, version, payload, seq as integers; the engine keeps typed rows)",
        ),
        Op::NexmarkQ18 => (
            keys * 40,
            "(bidder, auction) pairs x 40 B (bidder, auction, date_time, price, seq)",
        ),
        Op::GroupBy | Op::TableGroupBy => (keys * 24, "keys x 24 B (key, count, sum)"),
        Op::TemporalJoinFinal | Op::TableTemporalJoin => (
            (build + shape.epoch_rows) * 32,
            "(build versions + one epoch of probe rows awaiting the watermark) x 32 B \
             (key, time, seq, rate | payload)",
        ),
        Op::TableIntervalJoin => (
            build * 32,
            "build versions x 32 B (key, time, seq, rate), freed as the watermark passes them",
        ),
        Op::TemporalJoinIncremental | Op::TableAsofJoin | Op::TableAsofNearest => (
            (build + shape.rows) * 32,
            "(build versions + all probe rows, kept for late versions) x 32 B \
             (key, time, seq, rate | payload)",
        ),
        Op::TableEquiJoin => (
            shape.keys() * 2 * 32,
            "(live orders + dimension rows) x 32 B (key, time, seq, payload | rate)",
        ),
        Op::TableTumbleCount => (
            workload::WINDOW_KEYS * 40,
            "keys x 40 B (key, window start, count, sum, the emitted row's seq): one open \
             window a key (two for 5 s after a window closes)",
        ),
        Op::TableSession => (
            workload::WINDOW_KEYS * 10 * 24,
            "keys x ~10 live rows x 24 B (time, seq, payload): a key's open session (about 7 rows, \
             a second apart) and the 5 s of rows the watermark lags behind",
        ),
        Op::NexmarkQ5 => (
            keys * 24,
            "(hop window, auction) counts x 24 B (window, auction, count): the join of the \
             counts with each window's maximum keeps them all",
        ),
        Op::NexmarkQ7 => (
            keys * 40,
            "bids x 40 B (auction, bidder, price, time, seq; strings excluded): the join \
             keeps every bid",
        ),
        Op::NexmarkQ8 => (
            keys * 24,
            "(person, window) and (seller, window) rows x 24 B: the join keeps them all",
        ),
        Op::NexmarkQ11 => (
            keys * 32,
            "sessions x 32 B (bidder, start, end, count), were every session kept; final mode \
             frees each 4 s after it closes",
        ),
        Op::AsofSnapshot => (
            shape.rows * 33,
            "versions x 33 B (key, time, seq, payload, delete flag; all kept for late versions)",
        ),
    }
}
