//! Window aggregations (issue 12) as Table API plans over packed rows, final mode: the dedup
//! workload's rows `events(k, ts, payload)` over [`WINDOW_KEYS`] keys (1000: about one row a
//! second per key), rowtime `ts` with a watermark delay of [`JITTER_MS`] (a row
//! is at most that far behind the greatest time before it, so no row is late; a late row would
//! be refused and fail the check).
//!
//! * `table_tumble_count`: `window(Tumble::over(1 min))`, `COUNT(*)` and `SUM(payload)` per
//!   key and window (167k windows of about 60 rows at 10M rows), each row emitted once when
//!   the watermark passes its window. Baseline: a `HashMap<(key, window start), (count, sum)>`
//!   fold, the windows emitted at the end.
//! * `table_session`: `window(Session::with_gap(2 s))`, `COUNT(*)` and `SUM(payload)` per key
//!   and session: a key's rows are about 1 s apart, so about one gap in seven closes a session,
//!   and rows arriving up to 5 s late often bridge (merge) two open sessions. Baseline: each
//!   key's `(time, payload)` rows collected, then sorted and split where two rows are more than
//!   the gap apart ([`sessions`]).
//!
//! Both digest the rows `[k, window_start, window_end, cnt, total]`.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use differential_temporal::expr::{col, count_star};
use differential_temporal::render::ExecutionMode;
use differential_temporal::table::{GroupWindow, Session, Tumble};

use crate::baseline::{timed, Base};
use crate::dataflows::{drive, Run};
use crate::relational::{events, integers, plan, render, schema};
use crate::report::Digest;
use crate::workload::{event, KeyedRow, Shape, Stream, JITTER_MS, WINDOW_KEYS};

/// The tumbling window's size, in ms.
const TUMBLE_MS: i64 = 60_000;
/// The session gap, in ms.
const GAP_MS: i64 = 2_000;

/// `table_tumble_count` (see the module docs).
pub fn tumble_count(workers: usize, shape: Shape) -> Run {
    let size = Duration::from_millis(TUMBLE_MS as u64);
    run(workers, shape, Tumble::over(size))
}

/// `table_session` (see the module docs).
pub fn session(workers: usize, shape: Shape) -> Run {
    let gap = Duration::from_millis(GAP_MS as u64);
    run(workers, shape, Session::with_gap(gap))
}

/// `COUNT(*)`, `SUM(payload)` per key and `window`, final mode, over the window workload.
fn run(workers: usize, shape: Shape, window: GroupWindow) -> Run {
    let plan = plan(
        &[("events", schema("payload", JITTER_MS, false), false)],
        |env| {
            env.from("events")
                .window(window.clone().on(col("ts")).alias("w"))
                .group_by([col("k"), col("w")])
                .select([
                    col("k"),
                    col("w").start(),
                    col("w").end(),
                    count_star().alias("cnt"),
                    col("payload").sum().alias("total"),
                ])
        },
    );
    drive(
        workers,
        shape,
        events(Stream::Dedup, WINDOW_KEYS),
        move |events, sink| {
            let scope = events.scope();
            let sources = BTreeMap::from([("events".to_string(), events)]);
            let windows = render(scope, sources, ExecutionMode::Final, &plan, sink);
            sink.observe(windows.into_table(), integers::<5>);
        },
    )
}

/// The window workload's rows of `range`.
fn rows(range: std::ops::Range<u64>, out: &mut Vec<KeyedRow>) {
    out.extend(range.map(|i| event(Stream::Dedup, i, WINDOW_KEYS)))
}

/// The baseline of `table_tumble_count` (see the module docs).
pub fn tumble_baseline(shape: Shape) -> Base {
    let mut windows: HashMap<(u64, i64), (u64, u64)> = HashMap::new();
    let mut clock = timed(&shape, rows, |rows| {
        for e in rows {
            let start = e.time - e.time.rem_euclid(TUMBLE_MS);
            let window = windows.entry((e.key, start)).or_default();
            window.0 += 1;
            window.1 += e.payload;
        }
    });
    let mut digest = Digest::default();
    clock.start();
    for (&(key, start), &(cnt, total)) in &windows {
        let end = start + TUMBLE_MS;
        digest.add([key, start as u64, end as u64, cnt, total], 1);
    }
    clock.stop();
    Base {
        digest,
        clock,
        keys: windows.len() as u64,
    }
}

/// The baseline of `table_session` (see the module docs).
pub fn session_baseline(shape: Shape) -> Base {
    let mut by_key: HashMap<u64, Vec<(i64, u64)>> = HashMap::new();
    let mut clock = timed(&shape, rows, |rows| {
        for e in rows {
            by_key.entry(e.key).or_default().push((e.time, e.payload));
        }
    });
    let mut digest = Digest::default();
    clock.start();
    for (&key, rows) in &mut by_key {
        sessions(rows, GAP_MS, |start, end, cnt, total| {
            digest.add([key, start as u64, end as u64, cnt, total], 1)
        });
    }
    clock.stop();
    Base {
        digest,
        clock,
        keys: by_key.len() as u64,
    }
}

/// Sorts one key's `(time, value)` rows and passes each session `[first, last + gap)` (rows at
/// most `gap` apart, both ends of a gap included) to `emit` as `(start, end, count, sum of the
/// values)`.
pub fn sessions(rows: &mut [(i64, u64)], gap: i64, mut emit: impl FnMut(i64, i64, u64, u64)) {
    rows.sort_unstable();
    let Some(&(first, _)) = rows.first() else {
        return;
    };
    let (mut start, mut last, mut cnt, mut total) = (first, first, 0, 0);
    for &(time, value) in rows.iter() {
        if time > last + gap {
            emit(start, last + gap, cnt, total);
            (start, cnt, total) = (time, 0, 0);
        }
        last = time;
        cnt += 1;
        total += value;
    }
    emit(start, last + gap, cnt, total);
}
