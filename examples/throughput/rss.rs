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
/// `keys` is the number of distinct keys the baseline kept state for.
pub fn live_state(op: Op, shape: &Shape, keys: u64) -> (u64, &'static str) {
    let build = workload::build_versions(shape);
    match op {
        Op::DedupKeepLast => (keys * 32, "keys x 32 B (key, event time, payload, seq)"),
        Op::VersionedMerge => (
            keys * 32,
            "keys x 32 B (key, version, payload, seq as integers; the engine keeps text cells)",
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
        Op::AsofSnapshot => (
            shape.rows * 33,
            "versions x 33 B (key, time, seq, payload, delete flag; all kept for late versions)",
        ),
    }
}
