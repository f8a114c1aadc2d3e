//! The reference of the window aggregation ([`WindowAgg`]): in incremental mode the `Reduce`
//! of the windowed input (each row once per window, with the window's columns appended); in
//! final mode a sequential model of Flink's window operator over the per-system-time watermark.
//! The window assignment ([`WindowAssign`]) is that windowed input alone in incremental mode,
//! and the final window aggregation counting each row of a window in final mode.

use std::collections::{BTreeMap, BTreeSet};

use crate::expr::AggregateExpr;
use crate::plan::{
    sessions, window_datums, PlanError, RelExpr, WindowAgg, WindowAssign, WindowSpec,
};
use crate::repr::{DataType, Datum, Field, Row, Schema, Ts};
use differential_temporal_operators::{Change, RowKind, Seq, SysTime};

use super::{as_table_stream, eval, event_time, refuse, Inputs, Refused, Stream};

/// The output stream of `w` over its input's `changes`, in final mode if `final_mode`.
pub(super) fn evaluate(
    w: &WindowAgg,
    changes: Stream,
    refused: &mut Vec<Refused>,
    final_mode: bool,
) -> Result<Stream, PlanError> {
    if let WindowSpec::Session { gap } = w.window {
        return match final_mode {
            true => sessions_final(w, gap, changes, refused),
            false => sessions_incremental(w, gap, changes, refused),
        };
    }
    let windowed = windowed(w.time, w.window, changes, refused);
    if final_mode {
        on_watermark(w, &windowed, refused)
    } else {
        incremental(w, windowed, refused)
    }
}

/// A change with the windows of its row, or refused for a NULL event time.
struct Windowed {
    time: SysTime,
    change: Change<Row>,
    event_time: Ts,
    windows: Vec<(i64, i64)>,
}

fn windowed(
    column: usize,
    spec: WindowSpec,
    changes: Stream,
    refused: &mut Vec<Refused>,
) -> Vec<Windowed> {
    let mut out = Vec::new();
    for (time, change) in changes {
        let Some(t) = event_time(&change.row, column) else {
            refused.push(refuse(time, change.seq, "the event time is NULL"));
            continue;
        };
        let mut windows = Vec::new();
        spec.windows(t.millis, &mut windows);
        out.push(Windowed {
            time,
            change,
            event_time: t,
            windows,
        });
    }
    out
}

/// Each change once per window of its row, the window's columns appended, its `seq` and
/// kind kept.
fn repeated(windowed: Vec<Windowed>) -> Stream {
    (windowed.into_iter())
        .flat_map(|r| {
            let (time, change) = (r.time, r.change);
            (r.windows.into_iter()).map(move |window| {
                let row = with_window(&change.row, window);
                (time, Change::new(change.seq, change.kind, row))
            })
        })
        .collect()
}

/// The output stream of the window assignment `a` over its input's `changes`: in incremental
/// mode each change once per window of its row; in final mode the final window aggregation
/// [`WindowAssign::counted`], each row without its count repeated by it.
pub(super) fn assign(
    a: &WindowAssign,
    changes: Stream,
    refused: &mut Vec<Refused>,
    final_mode: bool,
) -> Result<Stream, PlanError> {
    if !final_mode {
        return Ok(repeated(windowed(a.time, a.window, changes, refused)));
    }
    let width = a.input.schema.len() + 3;
    let counted = evaluate(&a.counted()?, changes, refused, true)?;
    Ok((counted.into_iter())
        .flat_map(|(time, change)| {
            // The count is `COUNT(*)` of a window that holds a row: final mode emits a
            // window's row only when it holds rows (`output` gives none for an empty window),
            // each counted once, so `n >= 1` (pinned by `tests/plan_reference/window.rs`,
            // `window_assignments_equal_the_reference`, which evaluates this in final mode).
            let count = match change.row.get(width) {
                Some(Datum::Int(n)) => usize::try_from(n).expect("a window's COUNT(*) >= 1"),
                _ => 0,
            };
            let row = Row::pack(change.row.iter().take(width));
            std::iter::repeat_n((time, Change::new(change.seq, change.kind, row)), count)
        })
        .collect())
}

/// The row with a window's three columns appended.
fn with_window(row: &Row, (start, end): (i64, i64)) -> Row {
    let window = window_datums(start, end).map(Datum::Timestamp);
    Row::pack(row.iter().chain(window))
}

/// Incremental mode: `GROUP BY group, window_start, window_end, window_time` over the rows
/// repeated per window, as the plan's `Reduce` evaluates it.
fn incremental(
    w: &WindowAgg,
    windowed: Vec<Windowed>,
    refused: &mut Vec<Refused>,
) -> Result<Stream, PlanError> {
    const NAME: &str = "$windowed";
    let mut fields = w.input.schema.fields.clone();
    for name in ["$window_start", "$window_end", "$window_time"] {
        fields.push(Field::new(name, DataType::Timestamp(3).not_null()));
    }
    let schema = Schema::new(fields)?;
    let aggregates = (w.aggregates.iter().cloned())
        .enumerate()
        .map(|(i, a)| (a, format!("$agg{i}")))
        .collect();
    let reduce = RelExpr::scan(NAME, schema, !w.input.mode.is_append_only())
        .reduce(w.windowed_group(), aggregates)?;
    let inputs: Inputs = BTreeMap::from([(NAME.to_string(), repeated(windowed))]);
    eval(&reduce, &inputs, refused, false)
}

/// One window of one key in final mode.
struct Window {
    /// The window's last event time (the last instant of `end - 1 ms`) and the time its state
    /// is freed from (the last instant of `end - 1 ms + lateness`).
    max: Ts,
    closes: Ts,
    rows: Vec<(Seq, Row)>,
    fired: bool,
    emitted: Option<Row>,
}

/// Final mode: per system time `s` with watermark `W(s)` (the greatest event time of the
/// rows of earlier system times, minus the rowtime's delay): the windows whose last event time
/// `W` has passed fire (`+I`); those past `end - 1 + lateness` are freed; then the rows of `s`
/// are added to their windows, or refused as late for a window already freed, and a window
/// already fired that changed is revised (`-U`/`+U`). At the end, the system time after the
/// last with a row, every window left fires (the rendered operator fires them when its input
/// ends, at that system time or later: its output after the last row's is compared at the end).
fn on_watermark(
    w: &WindowAgg,
    windowed: &[Windowed],
    refused: &mut Vec<Refused>,
) -> Result<Stream, PlanError> {
    let delay = w.watermark_delay_ms();
    let ts = |millis: i64| Ts {
        millis,
        nanos_of_milli: 0,
    };
    // The last instant of a millisecond: a window's last event time is that of `end - 1 ms`.
    let last_of = |millis: i64| Ts {
        millis,
        nanos_of_milli: 999_999,
    };
    let passed = |mark: Option<Ts>, t: Ts| mark.is_some_and(|m| t < m);
    let epochs: BTreeSet<SysTime> = windowed.iter().flat_map(|r| [r.time, r.time + 1]).collect();
    let end = epochs.last().copied().unwrap_or(0);
    let mut windows: BTreeMap<Row, Window> = BTreeMap::new();
    let mut out = Vec::new();
    for now in epochs {
        let mark = (windowed.iter())
            .filter(|r| r.time < now)
            .map(|r| Ts {
                millis: r.event_time.millis.saturating_sub(delay),
                ..r.event_time
            })
            .max();
        let at_end = now == end;
        // 1. Fire what the watermark has passed, then free what is past the lateness.
        for (key, window) in windows.iter_mut() {
            if !window.fired && (at_end || passed(mark, window.max)) {
                window.fired = true;
                window.emitted = output(w, key, &window.rows)?;
                emit(&mut out, now, None, window.emitted.as_ref());
            }
        }
        windows.retain(|_, window| !passed(mark, window.closes));
        // 2. The rows of `now`, in `seq` order.
        let mut touched = BTreeSet::new();
        for r in windowed.iter().filter(|r| r.time == now) {
            for &(start, end) in &r.windows {
                let closes = last_of((end - 1).saturating_add(w.lateness_ms));
                if passed(mark, closes) {
                    let reason = format!(
                        "late row: event time {:?} is behind the watermark for its window [{:?}, {:?})",
                        r.event_time,
                        ts(start),
                        ts(end)
                    );
                    refused.push(refuse(now, r.change.seq, reason));
                    continue;
                }
                let key = Row::pack(
                    w.group
                        .iter()
                        .map(|&c| r.change.row.get(c).unwrap_or(Datum::Null))
                        .chain(window_datums(start, end).map(Datum::Timestamp)),
                );
                let window = windows.entry(key.clone()).or_insert(Window {
                    max: last_of(end - 1),
                    closes,
                    rows: Vec::new(),
                    fired: false,
                    emitted: None,
                });
                window.rows.push((r.change.seq, r.change.row.clone()));
                touched.insert(key);
            }
        }
        // 3. Late firing: a window the watermark has passed emits its new row at once.
        for key in touched {
            let window = windows.get_mut(&key).expect("a touched window");
            if passed(mark, window.max) {
                window.fired = true;
                let now_row = output(w, &key, &window.rows)?;
                if now_row != window.emitted {
                    emit(&mut out, now, window.emitted.as_ref(), now_row.as_ref());
                    window.emitted = now_row;
                }
            }
        }
    }
    Ok(out)
}

/// A window's output row: its key, then the aggregates over its rows in `seq` order.
fn output(w: &WindowAgg, key: &Row, rows: &[(Seq, Row)]) -> Result<Option<Row>, PlanError> {
    if rows.is_empty() {
        return Ok(None);
    }
    let mut rows: Vec<&(Seq, Row)> = rows.iter().collect();
    rows.sort_by_key(|(seq, _)| *seq);
    let rows: Vec<&Row> = rows.iter().map(|(_, r)| r).collect();
    aggregated("WindowAggregate", &w.aggregates, key, &rows).map(Some)
}

/// The row `key` followed by `aggregates` over `rows` in their order; an aggregate's error is
/// `node`'s.
pub(super) fn aggregated(
    node: &'static str,
    aggregates: &[AggregateExpr],
    key: &Row,
    rows: &[&Row],
) -> Result<Row, PlanError> {
    let decoded: Vec<Vec<Datum>> = rows.iter().map(|r| r.iter().collect()).collect();
    let mut out = Row::new();
    let mut packer = out.packer();
    packer.extend(key.iter());
    for agg in aggregates {
        let group = decoded.iter().map(|d| (d.as_slice(), 1));
        agg.eval_group(group, &mut packer)
            .map_err(|e| PlanError::invalid(node, e.to_string()))?;
    }
    Ok(out)
}

/// Appends the retraction of `old` and the insertion of `new`, at `time`.
fn emit(out: &mut Stream, time: SysTime, old: Option<&Row>, new: Option<&Row>) {
    if let Some(old) = old {
        out.push((time, Change::new(time, RowKind::Delete, old.clone())));
    }
    if let Some(new) = new {
        out.push((time, Change::new(time, RowKind::Insert, new.clone())));
    }
}

/// A key's rows for its sessions: event time (ms), `seq`, row, multiplicity.
type KeyRows = BTreeMap<Row, Vec<(i64, Seq, Row, isize)>>;

/// Session windows, incremental mode: at every system time, per group key, the accumulated
/// rows sorted by `(event time, seq)` cut into sessions, each aggregated in `seq` order (over
/// an updating input, in value order: a retraction cancels its row whatever their `seq`).
fn sessions_incremental(
    w: &WindowAgg,
    gap: i64,
    changes: Stream,
    refused: &mut Vec<Refused>,
) -> Result<Stream, PlanError> {
    let mut timed = Vec::new();
    for (time, change) in changes {
        match event_time(&change.row, w.time) {
            Some(_) => timed.push((time, change)),
            None => refused.push(refuse(time, change.seq, "the event time is NULL")),
        }
    }
    let error = std::cell::RefCell::new(None);
    // Over an updating input a retraction cancels the row it retracts whatever their
    // positions: the rows are a multiset, in value order.
    let by_arrival = w.input.mode.is_append_only();
    let out = as_table_stream(&timed, by_arrival, |rows| {
        let mut keys = KeyRows::new();
        for (seq, row, count) in rows {
            let key = Row::pack(w.group.iter().map(|&c| row.get(c).unwrap_or(Datum::Null)));
            let t = event_time(&row, w.time).map_or(0, |t| t.millis);
            keys.entry(key).or_default().push((t, seq, row, count));
        }
        session_rows(w, gap, &mut keys, |_| true).unwrap_or_else(|e| {
            error.borrow_mut().get_or_insert(e);
            Vec::new()
        })
    });
    match error.into_inner() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The rows of the sessions of `keys` (sorted here by `(event time, seq)`) whose end is
/// `shown`, each aggregated in `seq` order.
fn session_rows(
    w: &WindowAgg,
    gap: i64,
    keys: &mut KeyRows,
    shown: impl Fn(i64) -> bool,
) -> Result<Vec<Row>, PlanError> {
    let mut table = Vec::new();
    for (key, rows) in keys.iter_mut() {
        rows.sort_by_key(|r| (r.0, r.1));
        let times: Vec<i64> = rows.iter().map(|r| r.0).collect();
        for (start, end, range) in sessions(&times, gap) {
            if !shown(end) {
                continue;
            }
            let mut members: Vec<(Seq, Row)> = rows[range]
                .iter()
                .flat_map(|(_, seq, row, count)| {
                    std::iter::repeat_n((*seq, row.clone()), (*count).max(0) as usize)
                })
                .collect();
            members.sort_by_key(|(seq, _)| *seq);
            let window = Row::pack(
                key.iter()
                    .chain(window_datums(start, end).map(Datum::Timestamp)),
            );
            table.extend(output(w, &window, &members)?);
        }
    }
    Ok(table)
}

/// Session windows, final mode: per system time `s` with the watermark `W(s)` (the greatest
/// event time in ms of the rows of earlier system times, minus the rowtime's delay; `+infinity`
/// at the end, the system time after the last with a row), the rows of `s` in `seq` order are
/// accepted unless they are retractions or `t + lateness < W` (refused); the table at `s` is
/// the sessions of each key's accepted rows whose end `W` has reached (`end <= W`).
fn sessions_final(
    w: &WindowAgg,
    gap: i64,
    changes: Stream,
    refused: &mut Vec<Refused>,
) -> Result<Stream, PlanError> {
    let delay = w.watermark_delay_ms();
    let mut timed = Vec::new();
    for (time, change) in changes {
        match event_time(&change.row, w.time) {
            Some(t) => timed.push((time, t.millis, change)),
            None => refused.push(refuse(time, change.seq, "the event time is NULL")),
        }
    }
    let epochs: BTreeSet<SysTime> = timed.iter().flat_map(|r| [r.0, r.0 + 1]).collect();
    let at_end = epochs.last().copied().unwrap_or(0);
    let (mut keys, mut shown, mut out) = (KeyRows::new(), BTreeSet::new(), Vec::new());
    for now in epochs {
        let mark = (timed.iter().filter(|r| r.0 < now))
            .map(|r| r.1.saturating_sub(delay))
            .max();
        let mut arrived: Vec<&(SysTime, i64, Change<Row>)> =
            timed.iter().filter(|r| r.0 == now).collect();
        arrived.sort_by_key(|r| r.2.seq);
        for (_, t, change) in arrived {
            let late = mark.is_some_and(|m| t.saturating_add(w.lateness_ms) < m);
            if matches!(change.kind, RowKind::UpdateBefore | RowKind::Delete) || late {
                let reason = "a retraction, or a row behind the watermark beyond the lateness";
                refused.push(refuse(now, change.seq, reason));
                continue;
            }
            let row = &change.row;
            let key = Row::pack(w.group.iter().map(|&c| row.get(c).unwrap_or(Datum::Null)));
            keys.entry(key)
                .or_default()
                .push((*t, change.seq, row.clone(), 1));
        }
        let reached = |end: i64| now == at_end || mark.is_some_and(|m| end <= m);
        let table: BTreeSet<Row> = session_rows(w, gap, &mut keys, reached)?
            .into_iter()
            .collect();
        for old in shown.difference(&table) {
            emit(&mut out, now, Some(old), None);
        }
        for new in table.difference(&shown) {
            emit(&mut out, now, None, Some(new));
        }
        shown = table;
    }
    Ok(out)
}
