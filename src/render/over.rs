//! Rendering of `Over`: the operator [`over_aggregate`] keyed by the partition columns, ordered
//! by the rowtime (`Ts`; or the proctime attribute's stamps), with the aggregates' accumulators
//! ([`RowFold`]) over the columns they read; each output row is the input row, then the
//! aggregates. In final mode the watermark is the input's rowtime minus its declared delay (the
//! stamps themselves over processing time). Rows whose rowtime is NULL are refused with
//! their `seq`.

use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::over::{over_aggregate, Frame, OverMode};
use differential_temporal_operators::watermark::watermarks;
use differential_temporal_operators::{Change, RowKind};

use crate::plan::{watermark_delay_ms, Over, OverFrame, PlanError};
use crate::repr::{DatumVec, Row, Ts};

use super::nodes::{event_time, null_time, render as render_node, NO_TIME};
use super::reduce::{read_columns, RowFold};
use super::{split_map, Collection, ExecutionMode, RenderContext};

/// Renders an OVER aggregation (see the [module docs](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    o: &Over,
) -> Result<Collection<'s>, PlanError> {
    let changes = render_node(ctx, &o.input)?.into_changelog();
    let column = o.time;
    // The plan reads an append-only input (`RelExpr::in_execution`); a retraction that still
    // came would be refused here, not counted as a row.
    let (timed, refused) = split_map(changes, move |ch| match event_time(&ch.row, column) {
        _ if ch.kind != RowKind::Insert => Err(Rejected::invalid(
            ch.seq,
            format!(
                "a {} row into an OVER aggregation, which consumes inserts only",
                ch.kind
            ),
        )),
        Some(_) => Ok(ch),
        None => Err(null_time(ch.seq)),
    });
    ctx.refused.push(refused);
    let delay = watermark_delay_ms(&o.input.schema, column);
    let marks = watermarks(
        timed.clone(),
        move |ch: &Change<Row>| event_time(&ch.row, column).unwrap_or(NO_TIME),
        move |max: &Ts| Ts {
            millis: max.millis.saturating_sub(delay),
            ..*max
        },
        "OverAggregate: watermark",
    );
    let mut aggregates = o.aggregates.clone();
    let read = read_columns(&mut aggregates);
    let partition = o.partition.clone();
    let mut datums = DatumVec::new();
    let keyed = timed.map(move |ch| {
        let datums = datums.borrow_with(&ch.row);
        let key = Row::pack(partition.iter().map(|&c| datums[c]));
        let values = Row::pack(read.iter().map(|&c| datums[c]));
        let t = event_time(&ch.row, column).unwrap_or(NO_TIME);
        drop(datums);
        (key, (t, ch.seq, ch.row, values))
    });
    let frame = match o.frame {
        OverFrame::Rows(n) => Frame::Rows(n.map(|n| usize::try_from(n).unwrap_or(usize::MAX))),
        OverFrame::Range(p) => Frame::Range(p.map(|p| {
            move |t: &Ts| Ts {
                millis: t.millis.saturating_sub(p),
                ..*t
            }
        })),
    };
    let mode = match ctx.mode {
        ExecutionMode::Incremental => OverMode::Incremental,
        ExecutionMode::Final => OverMode::Final,
    };
    let aggregated = over_aggregate(
        keyed,
        marks,
        RowFold::new(aggregates),
        frame,
        mode,
        "OverAggregate",
    );
    ctx.refused.push(aggregated.rejected);
    Ok(Collection::Table(aggregated.table))
}
