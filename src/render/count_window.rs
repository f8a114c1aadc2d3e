//! Rendering of `CountWindowAgg` (row-count windows, see
//! [`CountWindowAgg`](crate::plan::CountWindowAgg)): each row's group key is copied out of its
//! bytes (the one allocation per row), the row itself moves on beside it as the values its
//! aggregates read, and [`count_window_aggregate`] folds the rows of
//! each key, in arrival order (system time, then `seq`), into the accumulators of its open
//! windows ([`RowFold`], as `GROUP BY` does), emitting a window's row when its last row arrives
//! and dropping its state. A window's row is never revised: the output is append-only and the
//! same in both execution modes. State: per key with open windows its position modulo the
//! slide and at most `ceil(size / slide)` accumulators; an update costs one accumulator update
//! per open window of its key.

use differential_dataflow::AsCollection;
use differential_temporal_operators::window::count_window_aggregate;

use crate::plan::{CountWindowAgg, PlanError};
use crate::repr::{prefix_len, ColumnSpans};

use super::nodes::render as render_node;
use super::reduce::RowFold;
use super::{Collection, RenderContext};

/// Renders a row-count window aggregation (see the [module docs](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    w: &CountWindowAgg,
) -> Result<Collection<'s>, PlanError> {
    use timely::dataflow::operators::vec::Map;
    let changes = render_node(ctx, &w.input)?.into_changelog();
    let group = w.group.clone();
    let mut spans = ColumnSpans::new();
    let width = prefix_len(group.iter().copied());
    // The input is append-only (the plan node requires it); a retraction reaching the operator
    // is refused there with its `seq`.
    let keyed = (changes.inner)
        .map(move |(ch, time, diff)| {
            let key = spans.locate(&ch.row, width).project(&group);
            let diff = diff * ch.kind.sign();
            ((key, (ch.seq, ch.row)), time, diff)
        })
        .as_collection();
    let (size, slide) = (w.size.max(1) as u64, w.slide.max(1) as u64);
    let fold = RowFold::new(w.aggregates.clone());
    let aggregated = count_window_aggregate(keyed, size, slide, fold, "CountWindow");
    ctx.refused.push(aggregated.rejected);
    Ok(Collection::Table(aggregated.table))
}
