//! Rendering of `CountWindowAgg` (row-count windows, see
//! [`CountWindowAgg`](crate::plan::CountWindowAgg)): a differential `reduce` per group key over
//! the key's rows as `(system time, seq, row)`, which it receives sorted, that is in arrival
//! order; each complete window's aggregates are computed over its rows. As rows only ever arrive
//! after those already numbered, a window's row is never revised: the output is append-only and
//! the same in both execution modes. The state is every row of every key (never freed) and an
//! update costs the key's rows, not the change.

use differential_dataflow::AsCollection;
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::{RowKind, Seq, SysTime};

use crate::plan::{CountWindowAgg, PlanError};
use crate::repr::{DatumVec, Row};

use super::nodes::render as render_node;
use super::window::aggregated_row;
use super::{split_map, Collection, RenderContext};

/// Renders a row-count window aggregation (see the [module docs](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    w: &CountWindowAgg,
) -> Result<Collection<'s>, PlanError> {
    use timely::dataflow::operators::vec::Map;
    let changes = render_node(ctx, &w.input)?.into_changelog();
    let group = w.group.clone();
    let mut datums = DatumVec::new();
    let keyed = (changes.inner)
        .map(move |(ch, time, diff)| {
            let key = {
                let datums = datums.borrow_with(&ch.row);
                Row::pack(group.iter().map(|&c| datums[c]))
            };
            let diff = match ch.kind {
                RowKind::Insert | RowKind::UpdateAfter => diff,
                RowKind::UpdateBefore | RowKind::Delete => -diff,
            };
            ((key, (time, ch.seq, ch.row)), time, diff)
        })
        .as_collection();
    let node = w.clone();
    let reduced = keyed.reduce_named(
        "CountWindow",
        move |key: &Row,
              rows: &[(&(SysTime, Seq, Row), isize)],
              out: &mut Vec<(Result<Row, String>, isize)>| {
            // Each row once per copy, numbered in arrival order.
            let numbered: Vec<(&Row, isize)> = (rows.iter())
                .flat_map(|((_, _, row), n)| std::iter::repeat_n((row, 1), (*n).max(0) as usize))
                .collect();
            for window in node.complete_windows(numbered.len()) {
                let row = aggregated_row(key, &node.aggregates, &numbered[window]);
                out.push((row, 1));
            }
        },
    );
    let (rows, refused) = split_map(reduced, |(_, r)| {
        r.map_err(|reason| Rejected::invalid(0, reason))
    });
    ctx.refused.push(refused);
    Ok(Collection::Table(rows))
}
