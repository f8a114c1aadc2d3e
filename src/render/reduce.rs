//! Rendering of `Reduce` (GROUP BY with aggregates), in one of two ways:
//!
//! * **Accumulators** (Flink's `GroupAggFunction`): per group one [`Accumulator`] per
//!   aggregate, updated by each change and retraction, with the operator
//!   [`group_aggregate`]: cost per input row is one hash probe and one update, output once per
//!   changed group and system time. Used when the input is append-only (rows are folded in
//!   arrival order, so FIRST_VALUE, LAST_VALUE and LISTAGG see it) or when every aggregate is
//!   [order independent](crate::expr::AggregateFunc::is_order_independent) (COUNT, MIN, MAX, exact SUM /
//!   AVG), where retracting a row in any order gives the value of the remaining multiset.
//! * **Recomputation** with differential's `reduce`: a group's value recomputed from its
//!   consolidated rows whenever it changes. Used for an updating input with an order-dependent
//!   aggregate (a DOUBLE SUM, LISTAGG, a user aggregate), whose value over a multiset is then
//!   defined by value order, as the reference interpreter defines it.
//!
//! Either way the input becomes `(group key, (seq, values))` records where `values` are only the
//! columns the aggregates read, and each group's output row is the key, then the aggregates.

use std::cell::RefCell;

use differential_dataflow::AsCollection;
use smallvec::SmallVec;

use crate::expr::{Accumulator, AggregateExpr, RowArena};
use crate::repr::{prefix_len, ColumnSpans, Datum, Row};
use differential_temporal_operators::group_aggregate::{group_aggregate, GroupFold};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::{RowKind, Seq};

use super::{split_map, Collection, RenderContext};

/// `GROUP BY group` with `aggregates` over `input` (see the [module docs](self)).
pub(super) fn reduce<'s>(
    ctx: &mut RenderContext<'s>,
    input: Collection<'s>,
    append_only: bool,
    group: Vec<usize>,
    mut aggregates: Vec<AggregateExpr>,
) -> Collection<'s> {
    let read = read_columns(&mut aggregates);
    let order_independent = aggregates.iter().all(|a| a.func.is_order_independent());
    let accumulate = append_only || order_independent;
    // The key and values are copied out of the row's bytes, not decoded and encoded again.
    let mut spans = ColumnSpans::new();
    let width = prefix_len(group.iter().chain(&read).copied());
    let mut split_row = move |row: &Row| {
        let located = spans.locate(row, width);
        (located.project(&group), located.project(&read))
    };
    let keyed = match input {
        Collection::Changelog(c) => {
            use timely::dataflow::operators::vec::Map;
            c.inner
                .map(move |(ch, time, diff)| {
                    let (key, values) = split_row(&ch.row);
                    // Accumulators fold in arrival order and report a refused row by its
                    // position; recomputation over a multiset lets equal values collapse.
                    let seq = if accumulate { ch.seq } else { 0 };
                    let diff = match ch.kind {
                        RowKind::Insert | RowKind::UpdateAfter => diff,
                        RowKind::UpdateBefore | RowKind::Delete => -diff,
                    };
                    ((key, (seq, values)), time, diff)
                })
                .as_collection()
        }
        Collection::Table(t) => t.map(move |row| {
            let (key, values) = split_row(&row);
            (key, (0, values))
        }),
    };
    if accumulate {
        let aggregated = group_aggregate(keyed, RowFold::new(aggregates), "GroupAggregate");
        ctx.refused.push(aggregated.rejected);
        return Collection::Table(aggregated.table);
    }
    let reduced = keyed.reduce_named(
        "Reduce",
        move |key: &Row,
              rows: &[(&(Seq, Row), isize)],
              out: &mut Vec<(Result<Row, String>, isize)>| {
            // A group's records are positive here (a group whose rows were all retracted has
            // no input and no output).
            let decoded: Vec<Vec<Datum>> =
                rows.iter().map(|((_, r), _)| r.iter().collect()).collect();
            let mut row = Row::new();
            let mut packer = row.packer();
            packer.extend_by_row(key.as_row_ref());
            for agg in &aggregates {
                let group_rows = decoded
                    .iter()
                    .zip(rows)
                    .map(|(d, (_, count))| (d.as_slice(), (*count).max(0) as usize));
                if let Err(e) = agg.eval_group(group_rows, &mut packer) {
                    out.push((Err(e.to_string()), 1));
                    return;
                }
            }
            out.push((Ok(row), 1));
        },
    );
    let (rows, refused) = split_map(reduced, |(_, r)| {
        r.map_err(|reason| Rejected::invalid(0, reason))
    });
    ctx.refused.push(refused);
    Collection::Table(rows)
}

/// The columns the aggregates read, ascending; the aggregates are renumbered onto them (so they
/// read a row of only those columns).
pub(super) fn read_columns(aggregates: &mut [AggregateExpr]) -> Vec<usize> {
    let mut read = Vec::new();
    for agg in aggregates.iter() {
        agg.args
            .iter()
            .chain(&agg.filter)
            .for_each(|e| e.columns(&mut read));
    }
    read.sort_unstable();
    read.dedup();
    let width = read.iter().max().map_or(0, |m| m + 1);
    let mut position = vec![0; width];
    for (new, &old) in read.iter().enumerate() {
        position[old] = new;
    }
    for agg in aggregates.iter_mut() {
        agg.args
            .iter_mut()
            .chain(&mut agg.filter)
            .for_each(|e| e.permute(&position));
    }
    read
}

/// The aggregates of a group as accumulators over its rows' values (the columns they read).
pub(super) struct RowFold {
    aggregates: Vec<AggregateExpr>,
    order_independent: bool,
    arena: RefCell<RowArena>,
}

impl RowFold {
    pub(super) fn new(aggregates: Vec<AggregateExpr>) -> RowFold {
        RowFold {
            order_independent: aggregates.iter().all(|a| a.func.is_order_independent()),
            aggregates,
            arena: RefCell::new(RowArena::new()),
        }
    }
}

impl GroupFold<Row> for RowFold {
    type Value = Row;
    type State = SmallVec<[Accumulator; 2]>;
    type Output = Row;

    fn init(&self) -> Self::State {
        self.aggregates
            .iter()
            .map(AggregateExpr::create_accumulator)
            .collect()
    }

    /// Updates every aggregate; when one refuses the row, those before it are rolled back, so
    /// a refused row leaves the group as it was.
    fn update(&self, state: &mut Self::State, values: &Row, diff: isize) -> Result<(), String> {
        // The values are the few columns the aggregates read: decoded on the stack.
        let datums: SmallVec<[Datum; 4]> = values.iter().collect();
        let mut arena = self.arena.borrow_mut();
        arena.clear();
        let diff = diff as i64;
        for (i, (agg, acc)) in self.aggregates.iter().zip(state.iter_mut()).enumerate() {
            if let Err(e) = agg.update(acc, &datums, diff, &arena) {
                let applied = self.aggregates.iter().zip(state.iter_mut()).take(i);
                for (agg, acc) in applied {
                    // Undoing what was just applied cannot fail.
                    let _ = agg.update(acc, &datums, -diff, &arena);
                }
                return Err(e.to_string());
            }
        }
        Ok(())
    }

    fn order_independent(&self) -> bool {
        self.order_independent
    }

    fn output(&self, key: &Row, state: &Self::State) -> Result<Row, String> {
        let mut row = Row::new();
        let mut packer = row.packer();
        packer.extend_by_row(key.as_row_ref());
        for (agg, acc) in self.aggregates.iter().zip(state) {
            agg.get_value(acc, &mut packer).map_err(|e| e.to_string())?;
        }
        Ok(row)
    }
}
