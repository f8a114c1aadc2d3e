//! Rendering of `WindowAgg`: each row is repeated once per window it falls in, with the window's
//! `window_start`, `window_end`, `window_time` appended; then
//! * incremental mode: the `Reduce` rendering grouped by the keys and the window columns
//!   (exact at every system time; a late row revises its window);
//! * final mode: [`window_aggregate_final`] with the same accumulators, over the watermark of
//!   the input's rowtime (its declared delay; over the stamped proctime, delay 0), freeing
//!   each window at `end - 1 + lateness`. Here the repeated row is never built: each row and
//!   window go straight to the group key and the columns the aggregates read
//!   ([`keyed_windows`]).
//!
//! Session windows in incremental mode are a differential `reduce` per group key that cuts
//! the key's rows, sorted by event time, into sessions ([`sessions`]) and aggregates each: a
//! row that bridges two sessions retracts both and inserts the merged one. Its cost per update
//! is the key's rows, not the change. In final mode they are [`session_aggregate_final`] per
//! group key over the event times in ms, with the same accumulators, firing each session when
//! the watermark reaches its end and freeing it when the watermark passes `end + lateness`.
//!
//! Window assignment (a window TVF's rows) is the same repetition alone in incremental mode; in
//! final mode it is the final window aggregation counting each row of a window, its rows
//! repeated by their count ([`render_assign`]).
//!
//! Rows whose event time is NULL are refused with their `seq`.

use differential_dataflow::{AsCollection, VecCollection};
use differential_temporal_operators::group_aggregate::GroupFold;
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::watermark::watermarks;
use differential_temporal_operators::window::{session_aggregate_final, window_aggregate_final};
use differential_temporal_operators::{Change, Seq, SysTime};
use smallvec::SmallVec;

use crate::plan::{
    sessions, window_datums, PlanError, RelExpr, WindowAgg, WindowAssign, WindowSpec,
};
use crate::repr::{Datum, DatumVec, Row, Ts};

use super::nodes::{event_time, null_time, render as render_node, NO_TIME};
use super::reduce::{aggregated_row, overdrawn, read_columns, reduce, KeyKind, RowFold};
use super::{split_map, Collection, ExecutionMode, RenderContext};

/// Renders a window aggregation (see the [module docs](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    w: &WindowAgg,
) -> Result<Collection<'s>, PlanError> {
    let column = w.time;
    let timed = timed(ctx, &w.input, column)?;
    if let WindowSpec::Session { gap } = w.window {
        return Ok(match ctx.mode {
            ExecutionMode::Final => final_sessions(ctx, w, timed, gap),
            ExecutionMode::Incremental => session_windows(ctx, w, timed, gap),
        });
    }
    if ctx.mode == ExecutionMode::Incremental {
        let windowed = Collection::Changelog(assign(timed, column, w.window));
        // Over a temporal join's rows the input updates (`RelExpr::in_execution`).
        return Ok(reduce(
            ctx,
            windowed,
            w.input.mode.is_append_only(),
            w.windowed_group(),
            KeyKind::Columns,
            w.aggregates.clone(),
        ));
    }
    let delay = w.watermark_delay_ms();
    let marks = watermarks(
        timed.clone(),
        move |ch: &Change<Row>| event_time(&ch.row, column).unwrap_or(NO_TIME),
        move |max: &Ts| Ts {
            millis: max.millis.saturating_sub(delay),
            ..*max
        },
        "WindowAggregate: watermark",
    );
    let mut aggregates = w.aggregates.clone();
    let read = read_columns(&mut aggregates);
    let keyed = keyed_windows(timed, w, read);
    let lateness = w.lateness_ms;
    let aggregated = window_aggregate_final(
        keyed,
        marks,
        RowFold::new(aggregates),
        move |max: &Ts| Ts {
            millis: max.millis.saturating_add(lateness),
            ..*max
        },
        "WindowAggregate",
    );
    ctx.refused.push(aggregated.rejected);
    Ok(Collection::Table(aggregated.table))
}

/// The last instant of the millisecond `ts` starts: a window's last event time, from its
/// `window_time` (`end - 1 ms`). A window `[start, end)` fires when the watermark passes it,
/// that is when the watermark reaches `end`: no row of the window can still come without being
/// late. With millisecond times this is Flink's `window_time < watermark + 1 ms`; with finer
/// ones, a row at `end - 0.5 ms` is still in the window after the watermark passed `end - 1 ms`.
fn last_instant_of(ts: Ts) -> Ts {
    Ts {
        nanos_of_milli: 999_999,
        ..ts
    }
}

/// Renders a window assignment (see [`WindowAssign`]): in incremental mode each row once per
/// window, with its `seq` and kind; in final mode the rows of [`WindowAssign::counted`], each
/// repeated by its count, without it.
pub(super) fn render_assign<'s>(
    ctx: &mut RenderContext<'s>,
    a: &WindowAssign,
) -> Result<Collection<'s>, PlanError> {
    if ctx.mode == ExecutionMode::Final {
        use timely::dataflow::operators::vec::Map;
        let width = a.input.schema.len() + 3;
        let counted = render(ctx, &a.counted()?)?.into_table();
        let rows = (counted.inner)
            .map(move |(row, time, diff)| {
                let count = match row.get(width) {
                    Some(Datum::Int(n)) => n as isize,
                    _ => 0,
                };
                (Row::pack(row.iter().take(width)), time, diff * count)
            })
            .as_collection();
        return Ok(Collection::Table(rows));
    }
    let timed = timed(ctx, &a.input, a.time)?;
    Ok(Collection::Changelog(assign(timed, a.time, a.window)))
}

/// The changelog of `input` whose event time in `column` is not NULL; the other rows are
/// refused with their `seq`.
fn timed<'s>(
    ctx: &mut RenderContext<'s>,
    input: &RelExpr,
    column: usize,
) -> Result<VecCollection<'s, SysTime, Change<Row>>, PlanError> {
    let changes = render_node(ctx, input)?.into_changelog();
    let (timed, refused) = split_map(changes, move |ch| match event_time(&ch.row, column) {
        Some(_) => Ok(ch),
        None => Err(null_time(ch.seq)),
    });
    ctx.refused.push(refused);
    Ok(timed)
}

/// Each change of `timed` once per window of `spec` holding its event time in `column`, with
/// the window's `window_start`, `window_end`, `window_time` appended, its `seq` and kind kept.
fn assign<'s>(
    timed: VecCollection<'s, SysTime, Change<Row>>,
    column: usize,
    spec: WindowSpec,
) -> VecCollection<'s, SysTime, Change<Row>> {
    timed.flat_map(move |ch| {
        let t = event_time(&ch.row, column).unwrap_or(NO_TIME);
        let mut windows = Vec::new();
        spec.windows(t.millis, &mut windows);
        windows.into_iter().map(move |(start, end)| {
            let window = window_datums(start, end).map(Datum::Timestamp);
            Change::new(ch.seq, ch.kind, Row::pack(ch.row.iter().chain(window)))
        })
    })
}

/// A window aggregation's records for [`window_aggregate_final`]: per change of `timed` and
/// window of `w` holding its event time, the window's group key (`w`'s
/// [`windowed_group`](WindowAgg::windowed_group) columns, the window's own read from its
/// bounds), the window's last event time (the last nanosecond of `window_time`, so that it
/// fires once the watermark reaches `end`, also for sub-millisecond event times), the `seq`, and
/// the columns `read`; a retraction (the revision of an earlier window aggregation's row, in a
/// cascade) is a negative diff. The row with the window columns appended is never built: each
/// record is its two packed rows, the input row decoded once for all its windows.
fn keyed_windows<'s>(
    timed: VecCollection<'s, SysTime, Change<Row>>,
    w: &WindowAgg,
    read: Vec<usize>,
) -> VecCollection<'s, SysTime, (Row, (Ts, Seq, Row))> {
    use timely::dataflow::operators::vec::Map;
    let (column, spec, group) = (w.time, w.window, w.windowed_group());
    let width = w.input.schema.len();
    let mut datums = DatumVec::new();
    let mut windows = Vec::new();
    let records = (timed.inner).flat_map(move |(ch, time, diff)| {
        let t = event_time(&ch.row, column).unwrap_or(NO_TIME);
        windows.clear();
        spec.windows(t.millis, &mut windows);
        let datums = datums.borrow_with(&ch.row);
        let records: SmallVec<[_; 8]> = (windows.iter())
            .map(|&(start, end)| {
                let bounds = window_datums(start, end);
                let datum = |c: usize| match c.checked_sub(width) {
                    Some(i) => Datum::Timestamp(bounds[i]),
                    None => datums[c],
                };
                let key = Row::pack(group.iter().map(|&c| datum(c)));
                let values = Row::pack(read.iter().map(|&c| datum(c)));
                (key, (last_instant_of(bounds[2]), ch.seq, values))
            })
            .collect();
        let diff = diff * ch.kind.sign();
        records.into_iter().map(move |record| (record, time, diff))
    });
    records.as_collection()
}

/// Session windows, final mode (see the [module docs](self)): the event times in ms, each
/// row's group key and the columns its aggregates read.
fn final_sessions<'s>(
    ctx: &mut RenderContext<'s>,
    w: &WindowAgg,
    timed: VecCollection<'s, SysTime, Change<Row>>,
    gap: i64,
) -> Collection<'s> {
    use timely::dataflow::operators::vec::Map;
    let column = w.time;
    let millis = move |ch: &Change<Row>| event_time(&ch.row, column).unwrap_or(NO_TIME).millis;
    let delay = w.watermark_delay_ms();
    let marks = watermarks(
        timed.clone(),
        millis,
        move |max: &i64| max.saturating_sub(delay),
        "WindowAggregate: watermark",
    );
    let mut aggregates = w.aggregates.clone();
    let read = read_columns(&mut aggregates);
    let group = w.group.clone();
    let mut datums = DatumVec::new();
    let keyed = (timed.inner)
        .map(move |(ch, time, diff)| {
            let t = millis(&ch);
            let datums = datums.borrow_with(&ch.row);
            let key = Row::pack(group.iter().map(|&c| datums[c]));
            let values = Row::pack(read.iter().map(|&c| datums[c]));
            let diff = diff * ch.kind.sign();
            ((key, (t, ch.seq, values)), time, diff)
        })
        .as_collection();
    let lateness = w.lateness_ms;
    let aggregated = session_aggregate_final(
        keyed,
        marks,
        SessionFold(RowFold::new(aggregates)),
        move |t: &i64| t.saturating_add(gap),
        move |t: &i64| t.saturating_add(lateness),
        "SessionWindow",
    );
    ctx.refused.push(aggregated.rejected);
    Collection::Table(aggregated.table)
}

/// The window aggregation's fold over a session `(group key, start, end)`: its row is the group
/// columns, the window's three columns, then the aggregates.
struct SessionFold(RowFold);

impl GroupFold<(Row, i64, i64)> for SessionFold {
    type Value = Row;
    type State = <RowFold as GroupFold<Row>>::State;
    type Output = Row;

    fn init(&self) -> Self::State {
        GroupFold::<Row>::init(&self.0)
    }

    fn update(&self, state: &mut Self::State, values: &Row, diff: isize) -> Result<(), String> {
        GroupFold::<Row>::update(&self.0, state, values, diff)
    }

    fn output(
        &self,
        (key, start, end): &(Row, i64, i64),
        state: &Self::State,
    ) -> Result<Row, String> {
        let window = window_datums(*start, *end).map(Datum::Timestamp);
        self.0.output(&Row::pack(key.iter().chain(window)), state)
    }
}

/// Session windows, incremental mode (see the [module docs](self)). Over an append-only input
/// a session's rows are aggregated in arrival (`seq`) order; over an updating one (a cascade
/// over a revised window, a temporal join's retractions) a retraction must cancel the row it
/// retracts whatever their positions, so the rows are a multiset in value order, and a row
/// retracted more often than inserted is reported ([`overdrawn`]).
fn session_windows<'s>(
    ctx: &mut RenderContext<'s>,
    w: &WindowAgg,
    timed: VecCollection<'s, SysTime, Change<Row>>,
    gap: i64,
) -> Collection<'s> {
    use timely::dataflow::operators::vec::Map;
    let (group, column) = (w.group.clone(), w.time);
    let by_arrival = w.input.mode.is_append_only();
    let mut datums = DatumVec::new();
    let positioned = timed
        .inner
        .map(move |(ch, time, diff)| {
            let key = {
                let datums = datums.borrow_with(&ch.row);
                Row::pack(group.iter().map(|&c| datums[c]))
            };
            let t = event_time(&ch.row, column).unwrap_or(NO_TIME).millis;
            let diff = diff * ch.kind.sign();
            (((key, (t, ch.row)), ch.seq), time, diff)
        })
        .as_collection();
    if !by_arrival {
        ctx.refused
            .push(overdrawn(positioned.clone(), "session window"));
    }
    let keyed = positioned.map(move |((key, (t, row)), seq)| {
        let seq = if by_arrival { seq } else { 0 };
        (key, (t, seq, row))
    });
    let aggregates = w.aggregates.clone();
    let reduced = keyed.reduce_named(
        "SessionWindow",
        move |key: &Row,
              rows: &[(&(i64, Seq, Row), isize)],
              out: &mut Vec<(Result<Row, String>, isize)>| {
            // The rows come sorted by event time: each session is a run of them.
            let times: Vec<i64> = rows.iter().map(|((t, _, _), _)| *t).collect();
            for (start, end, range) in sessions(&times, gap) {
                let mut members: Vec<&(&(i64, Seq, Row), isize)> = rows[range].iter().collect();
                members.sort_by_key(|((_, seq, _), _)| *seq);
                let members: Vec<(&Row, isize)> =
                    members.iter().map(|((_, _, row), n)| (row, *n)).collect();
                let window = window_datums(start, end).map(Datum::Timestamp);
                let prefix = Row::pack(key.iter().chain(window));
                out.push((aggregated_row(&prefix, &aggregates, &members), 1));
            }
        },
    );
    let (rows, refused) = split_map(reduced, |(_, r)| {
        r.map_err(|reason| Rejected::invalid(0, reason))
    });
    ctx.refused.push(refused);
    Collection::Table(rows)
}
