//! Rendering of `WindowAgg`: each row is repeated once per window it falls in, with the window's
//! `window_start`, `window_end`, `window_time` appended; then
//! * incremental mode: the `Reduce` rendering grouped by the keys and the window columns
//!   (exact at every system time; a late row revises its window);
//! * final mode: [`window_aggregate_final`] with the same accumulators, over the watermark of
//!   the input's rowtime (its declared delay), freeing each window at `end - 1 + lateness`.
//!
//! Rows whose event time is NULL are refused with their `seq`.

use differential_temporal_operators::watermark::watermarks;
use differential_temporal_operators::window::window_aggregate_final;
use differential_temporal_operators::Change;

use crate::plan::{window_datums, PlanError, WindowAgg};
use crate::repr::{Datum, DatumVec, Row, Ts};

use super::nodes::{event_time, null_time, render as render_node, NO_TIME};
use super::reduce::{read_columns, reduce, RowFold};
use super::{split_map, Collection, ExecutionMode, RenderContext};

/// Renders a window aggregation (see the [module docs](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    w: &WindowAgg,
) -> Result<Collection<'s>, PlanError> {
    let changes = render_node(ctx, &w.input)?.into_changelog();
    let column = w.time;
    let (timed, refused) = split_map(changes, move |ch| match event_time(&ch.row, column) {
        Some(_) => Ok(ch),
        None => Err(null_time(ch.seq)),
    });
    ctx.refused.push(refused);
    let spec = w.window;
    let windowed = timed.clone().flat_map(move |ch| {
        let t = event_time(&ch.row, column).unwrap_or(NO_TIME);
        let mut windows = Vec::new();
        spec.windows(t.millis, &mut windows);
        windows.into_iter().map(move |(start, end)| {
            let window = window_datums(start, end).map(Datum::Timestamp);
            Change::new(ch.seq, ch.kind, Row::pack(ch.row.iter().chain(window)))
        })
    });
    let group = w.windowed_group();
    if ctx.mode == ExecutionMode::Incremental {
        let windowed = Collection::Changelog(windowed);
        return Ok(reduce(ctx, windowed, true, group, w.aggregates.clone()));
    }
    let delay = w.input.schema.rowtime.as_ref().map_or(0, |r| r.delay_ms);
    let marks = watermarks(
        timed,
        move |ch: &Change<Row>| event_time(&ch.row, column).unwrap_or(NO_TIME),
        move |max: &Ts| Ts {
            millis: max.millis.saturating_sub(delay),
            ..*max
        },
        "WindowAggregate: watermark",
    );
    let mut aggregates = w.aggregates.clone();
    let read = read_columns(&mut aggregates);
    // The window's last event time is its `window_time`, the last of the appended columns.
    let last = w.input.schema.len() + 2;
    let mut datums = DatumVec::new();
    let keyed = windowed.map(move |ch| {
        let datums = datums.borrow_with(&ch.row);
        let key = Row::pack(group.iter().map(|&c| datums[c]));
        let values = Row::pack(read.iter().map(|&c| datums[c]));
        let max = match datums[last] {
            Datum::Timestamp(ts) => ts,
            _ => NO_TIME,
        };
        (key, (max, ch.seq, values))
    });
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
