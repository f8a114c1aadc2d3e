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
//!   defined by value order, as the reference interpreter defines it. A row the input retracts
//!   more often than it inserts it is reported at its last retraction ([`multiset`]).
//!
//! Accumulators read each input row's key columns and the columns the aggregates read where they
//! lie in the row ([`keys`]); a key of one integer column is kept as an `i64` (an `Option<i64>`
//! when nullable), and aggregates that are all counters (COUNT, exact SUM / AVG) keep a group's
//! state in a few `i64` words and read their columns in place ([`counters`]).
//! Recomputation splits each row into `(group key, values)` first. Either way each group's
//! output row is the key, then the aggregates.

mod counters;
mod keys;
mod multiset;

use std::cell::RefCell;

use smallvec::SmallVec;

use crate::expr::{Accumulator, AggregateExpr, RowArena};
use crate::repr::{prefix_len, ColumnSpans, Datum, Row};
use differential_temporal_operators::group_aggregate::{
    group_aggregate_by, Aggregated, GroupFold, GroupKey,
};
use differential_temporal_operators::keyed_merge::Rejected;
use differential_temporal_operators::{Change, RowKind, SysTime};

use self::counters::{CounterFold, Counters};
use self::keys::{IntGroupKey, OutputKey, RowGroupKey};
use super::{split_map, Collection, RenderContext};

pub(crate) use self::keys::KeyKind;
pub(super) use self::multiset::{aggregated_row, held, overdrawn, Held};

/// `GROUP BY group` with `aggregates` over `input` (see the [module docs](self)); `key` says
/// whether `group` is one integer column ([`KeyKind::of`]).
pub(super) fn reduce<'s>(
    ctx: &mut RenderContext<'s>,
    input: Collection<'s>,
    append_only: bool,
    group: Vec<usize>,
    key: KeyKind,
    mut aggregates: Vec<AggregateExpr>,
) -> Collection<'s> {
    let order_independent = aggregates.iter().all(|a| a.func.is_order_independent());
    if append_only || order_independent {
        // Accumulators fold in arrival order and report a refused row by its position. The
        // operator finds each row's key and values where they lie in it.
        let changes = match input {
            Collection::Changelog(c) => c,
            Collection::Table(t) => t.map(|row| Change::new(0, RowKind::Insert, row)),
        };
        let aggregated = match key {
            KeyKind::Int { nullable: false } => {
                accumulate::<_, i64>(changes, IntGroupKey::new(group[0]), aggregates)
            }
            KeyKind::Int { nullable: true } => {
                accumulate::<_, Option<i64>>(changes, IntGroupKey::new(group[0]), aggregates)
            }
            KeyKind::Columns => accumulate(changes, RowGroupKey::new(group), aggregates),
        };
        ctx.refused.push(aggregated.rejected);
        return Collection::Table(aggregated.table);
    }
    // Recomputation over a multiset lets equal values collapse: no `seq` (a row's position
    // names only a row retracted more often than inserted, see `multiset`). The key and values
    // are copied out of the row's bytes, not decoded and encoded again.
    let read = read_columns(&mut aggregates);
    let mut spans = ColumnSpans::new();
    let width = prefix_len(group.iter().chain(&read).copied());
    let mut split_row = move |row: &Row| {
        let located = spans.locate(row, width);
        (located.project(&group), located.project(&read))
    };
    let positioned = input.into_positions(move |row| split_row(row));
    ctx.refused
        .push(overdrawn(positioned.clone(), "group aggregation"));
    let keyed = positioned.map(|(key_values, _)| key_values);
    let reduced = keyed.reduce_named(
        "Reduce",
        move |key: &Row, rows: &[(&Row, isize)], out: &mut Vec<(Result<Row, String>, isize)>| {
            out.push((aggregated_row(key, &aggregates, rows), 1));
        },
    );
    let (rows, refused) = split_map(reduced, |(_, r)| {
        r.map_err(|reason| Rejected::invalid(0, reason))
    });
    ctx.refused.push(refused);
    Collection::Table(rows)
}

/// The accumulators of `aggregates` per key `grouping` over `changes`: counters in the
/// smallest of 2, 4 or 8 words that holds them ([`Counters`]), else one [`Accumulator`] per
/// aggregate ([`RowFold`]).
fn accumulate<'s, G, K>(
    changes: differential_dataflow::VecCollection<'s, SysTime, Change<Row>>,
    grouping: G,
    aggregates: Vec<AggregateExpr>,
) -> Aggregated<'s, Row>
where
    G: GroupKey<Change<Row>, Key = K, Value = Row>,
    K: OutputKey,
{
    let name = "GroupAggregate";
    match Counters::new(&aggregates) {
        Some(c) if c.words() <= 2 => {
            group_aggregate_by(changes, grouping, CounterFold::<2>::new(c), name)
        }
        Some(c) if c.words() <= 4 => {
            group_aggregate_by(changes, grouping, CounterFold::<4>::new(c), name)
        }
        Some(c) if c.words() <= 8 => {
            group_aggregate_by(changes, grouping, CounterFold::<8>::new(c), name)
        }
        _ => group_aggregate_by(changes, grouping, RowFold::new(aggregates), name),
    }
}

/// A group's accumulators, one per aggregate, inline for up to two.
pub(super) type Accumulators = SmallVec<[Accumulator; 2]>;

/// The accumulators of a group with no rows.
fn accumulators(aggregates: &[AggregateExpr]) -> Accumulators {
    aggregates
        .iter()
        .map(AggregateExpr::create_accumulator)
        .collect()
}

/// Group `key`'s output row: the key, then the value of each of `aggregates` from its
/// accumulator in `state`, or the error of the first that cannot be computed (an overflow).
fn output_row<K: OutputKey>(
    key: &K,
    aggregates: &[AggregateExpr],
    state: &[Accumulator],
) -> Result<Row, String> {
    let mut row = Row::new();
    let mut packer = row.packer();
    key.pack_key(&mut packer);
    for (agg, acc) in aggregates.iter().zip(state) {
        agg.get_value(acc, &mut packer).map_err(|e| e.to_string())?;
    }
    Ok(row)
}

/// The columns the aggregates read, ascending; the aggregates are renumbered onto them (so they
/// read a row of only those columns).
pub(super) fn read_columns(aggregates: &mut [AggregateExpr]) -> Vec<usize> {
    let mut read = aggregate_columns(aggregates);
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

/// The columns the aggregates' arguments and FILTERs read, unordered, with repeats.
fn aggregate_columns(aggregates: &[AggregateExpr]) -> Vec<usize> {
    let mut read = Vec::new();
    for agg in aggregates {
        agg.args
            .iter()
            .chain(&agg.filter)
            .for_each(|e| e.columns(&mut read));
    }
    read
}

/// The aggregates of a group as accumulators over its rows (whole rows, or rows of only the
/// columns the aggregates read, renumbered by [`read_columns`]).
pub(super) struct RowFold {
    aggregates: Vec<AggregateExpr>,
    /// How many leading columns of a row the aggregates read.
    width: usize,
    order_independent: bool,
    arena: RefCell<RowArena>,
}

impl RowFold {
    pub(super) fn new(aggregates: Vec<AggregateExpr>) -> RowFold {
        RowFold {
            width: prefix_len(aggregate_columns(&aggregates)),
            order_independent: aggregates.iter().all(|a| a.func.is_order_independent()),
            aggregates,
            arena: RefCell::new(RowArena::new()),
        }
    }
}

impl<K: OutputKey> GroupFold<K> for RowFold {
    type Value = Row;
    type State = Accumulators;
    type Output = Row;

    fn init(&self) -> Self::State {
        accumulators(&self.aggregates)
    }

    /// Updates every aggregate; when one refuses the row, those before it are rolled back, so
    /// a refused row leaves the group as it was.
    fn update(&self, state: &mut Self::State, values: &Row, diff: isize) -> Result<(), String> {
        // The few leading columns the aggregates read, decoded on the stack.
        let mut datums = [Datum::Null; 4];
        let wide: SmallVec<[Datum; 8]>;
        let datums: &[Datum] = match self.width <= datums.len() {
            true => {
                let mut n = 0;
                for (slot, datum) in datums.iter_mut().zip(values.iter().take(self.width)) {
                    (*slot, n) = (datum, n + 1);
                }
                &datums[..n]
            }
            false => {
                wide = values.iter().take(self.width).collect();
                &wide
            }
        };
        let mut arena = self.arena.borrow_mut();
        arena.clear();
        let diff = diff as i64;
        for (i, (agg, acc)) in self.aggregates.iter().zip(state.iter_mut()).enumerate() {
            if let Err(e) = agg.update(acc, datums, diff, &arena) {
                let applied = self.aggregates.iter().zip(state.iter_mut()).take(i);
                for (agg, acc) in applied {
                    // Undoing what was just applied cannot fail.
                    let _ = agg.update(acc, datums, -diff, &arena);
                }
                return Err(e.to_string());
            }
        }
        Ok(())
    }

    fn order_independent(&self) -> bool {
        self.order_independent
    }

    fn output(&self, key: &K, state: &Self::State) -> Result<Row, String> {
        output_row(key, &self.aggregates, state)
    }
}
