//! Rendering of an interval join ([`IntervalBounds`]) in final mode, onto the watermark-driven
//! [`interval_join`] operator: each input keyed by its key columns, with its rowtime and `seq`;
//! the watermark of each input its rowtime's maximum minus the declared delay; the whole ON
//! residual checked on each pair in the window; the output append-only.
//!
//! A row with a NULL key column or a NULL rowtime can match nothing (the regular join's rule):
//! a kept side's such row is padded at once, any other is not in the result (and not an error).
//! Rows behind the watermark are refused as late with their `seq`. In incremental mode the node
//! is rendered as the regular join ([`super::equi_join`]).

use differential_temporal_operators::interval_join::{interval_join, Bounds, IntervalJoinConfig};
use differential_temporal_operators::watermark::watermarks;
use differential_temporal_operators::{Change, Seq, SysTime};

use crate::plan::{joined_row, EquiJoin, IntervalBounds, PlanError, RelExpr};
use crate::repr::{DatumVec, Row, Ts};

use super::join::residual_fn;
use super::nodes::{event_time, render as render_node};
use super::{split_map, Collection, RenderContext};

use differential_dataflow::VecCollection;

/// A row keyed for the operator: `(key, (rowtime, seq, row))`.
type Timed = (Row, (Ts, Seq, Row));

/// Renders a `Join` with interval bounds in final mode (see the [module docs](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    join: &EquiJoin,
    bounds: &IntervalBounds,
) -> Result<Collection<'s>, PlanError> {
    let widths = (join.left.schema.len(), join.right.schema.len());
    let kept = (join.join_type.keeps_left(), join.join_type.keeps_right());
    let (left, left_alone) = timed(ctx, &join.left, join.left_key.clone(), bounds.left_time)?;
    let (right, right_alone) = timed(ctx, &join.right, join.right_key.clone(), bounds.right_time)?;
    let marks = (
        marks_of(left.clone(), &join.left, "IntervalJoin: left watermark"),
        marks_of(right.clone(), &join.right, "IntervalJoin: right watermark"),
    );
    let shift = |t: &Ts, ms: i64| Ts {
        millis: t.millis.saturating_add(ms),
        ..*t
    };
    let mut config = IntervalJoinConfig::new(Bounds::new(bounds.lower_ms, bounds.upper_ms, shift))
        .padded(kept.0, kept.1)
        .idle_timeout(ctx.idle_timeout)
        .named("IntervalJoin");
    if let Some(residual) = &join.residual {
        config = config.residual(residual_fn(Some(residual.compile())));
    }
    let joined = interval_join(left, right, marks, config, move |_, l, r| {
        joined_row(l, r, widths)
    });
    ctx.refused.push(joined.rejected);
    let mut out = joined.joined;
    if kept.0 {
        out = out.concat(left_alone.map(move |l| joined_row(Some(&l), None, widths)));
    }
    if kept.1 {
        out = out.concat(right_alone.map(move |r| joined_row(None, Some(&r), widths)));
    }
    Ok(Collection::Table(out))
}

/// The input `plan` rendered and keyed by `key` with its rowtime `time`, and its rows that can
/// match nothing (a NULL key column or rowtime).
fn timed<'s>(
    ctx: &mut RenderContext<'s>,
    plan: &RelExpr,
    key: Vec<usize>,
    time: usize,
) -> Result<
    (
        VecCollection<'s, SysTime, Timed>,
        VecCollection<'s, SysTime, Row>,
    ),
    PlanError,
> {
    let changes = render_node(ctx, plan)?.into_changelog();
    let mut datums = DatumVec::new();
    Ok(split_map(changes, move |ch: Change<Row>| {
        let k = {
            let datums = datums.borrow_with(&ch.row);
            match key.iter().any(|&c| datums[c].is_null()) {
                true => None,
                false => Some(Row::pack(key.iter().map(|&c| datums[c]))),
            }
        };
        match (k, event_time(&ch.row, time)) {
            (Some(k), Some(t)) => Ok((k, (t, ch.seq, ch.row))),
            _ => Err(ch.row),
        }
    }))
}

/// The watermark collection of an input's keyed rows: their greatest rowtime minus the delay
/// its `WATERMARK` declares.
fn marks_of<'s>(
    rows: VecCollection<'s, SysTime, Timed>,
    plan: &RelExpr,
    name: &str,
) -> VecCollection<'s, SysTime, differential_temporal_operators::watermark::Watermark<Ts>> {
    let delay = plan.schema.rowtime.as_ref().map_or(0, |r| r.delay_ms);
    watermarks(
        rows,
        |(_, (t, _, _)): &Timed| *t,
        move |max: &Ts| Ts {
            millis: max.millis.saturating_sub(delay),
            ..*max
        },
        name,
    )
}
