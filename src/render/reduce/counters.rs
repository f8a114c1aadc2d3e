//! A GROUP BY's aggregates when each is a counter: `COUNT(*)`, `COUNT(x)`, or an exact
//! `SUM(x)` / `AVG(x)` (over integers or DECIMALs), without DISTINCT or FILTER, `x` a column.
//!
//! Their accumulators are Flink's (the same [`Accumulator`]s as [`RowFold`](super::RowFold)'s,
//! with the same results, NULLs and overflow errors); what differs is how a row reaches them:
//! the columns they read are read in place from the packed row by their tags
//! ([`ColumnCursor`]), the others skipped, instead of every leading column being decoded into
//! datums and each aggregate dispatching on its arguments and FILTER per row.

use crate::expr::aggregate::overflow_error;
use crate::expr::func::Numeric;
use crate::expr::{Accumulator, AggregateExpr, AggregateFunc, ScalarKind};
use crate::repr::{ColumnCursor, Number, Row};
use differential_temporal_operators::group_aggregate::GroupFold;

use super::keys::OutputKey;
use super::{accumulators, output_row, Accumulators};

/// What one aggregate reads of a row: `Rows` nothing (`COUNT(*)`), the others a column.
#[derive(Clone, Copy, Debug)]
enum Read {
    /// `COUNT(*)`: every row.
    Rows,
    /// `COUNT(x)`: rows whose `x` is not NULL.
    NonNull(usize),
    /// An exact `SUM(x)` / `AVG(x)`: `x`'s integer or DECIMAL value, NULL skipped.
    Exact(usize),
}

/// The aggregates of a group as counters (see the [module docs](self)).
pub(super) struct CounterFold {
    aggregates: Vec<AggregateExpr>,
    /// What each aggregate reads, in aggregate order.
    reads: Vec<Read>,
}

impl CounterFold {
    /// The fold of `aggregates`, or `None` when one of them is not a counter.
    pub(super) fn new(aggregates: &[AggregateExpr]) -> Option<CounterFold> {
        let mut reads = Vec::with_capacity(aggregates.len());
        for agg in aggregates {
            if agg.distinct || agg.filter.is_some() {
                return None;
            }
            let column = match agg.args.as_slice() {
                [] => None,
                [arg] => match arg.kind {
                    ScalarKind::Column(c) => Some(c),
                    _ => return None,
                },
                _ => return None,
            };
            let exact = |n: &Numeric| matches!(n, Numeric::Int(_) | Numeric::Decimal { .. });
            reads.push(match (&agg.func, column) {
                (AggregateFunc::CountStar, _) => Read::Rows,
                (AggregateFunc::Count, Some(c)) => Read::NonNull(c),
                (AggregateFunc::Sum(n) | AggregateFunc::Avg(n), Some(c)) if exact(n) => {
                    Read::Exact(c)
                }
                _ => return None,
            });
        }
        Some(CounterFold {
            aggregates: aggregates.to_vec(),
            reads,
        })
    }

    /// Applies `signed` copies of the row under `cursor` to `acc`, the accumulator of an
    /// aggregate that reads it as `read`: `false` when the accumulator would overflow (it is
    /// then left as it was).
    #[inline(always)]
    fn apply(
        read: Read,
        acc: &mut Accumulator,
        cursor: &mut ColumnCursor<'_>,
        signed: i64,
    ) -> bool {
        match read {
            Read::Rows => acc.add_count(signed),
            Read::NonNull(c) => {
                if cursor.number(c) != Number::Null {
                    acc.add_count(signed);
                }
            }
            Read::Exact(c) => {
                return match cursor.number(c) {
                    Number::Int(v) => acc.add_exact(v as i128, signed),
                    Number::Decimal(v) => acc.add_exact(v, signed),
                    // NULL, and (which the plan's types rule out) anything else: skipped, as
                    // the accumulator skips it.
                    Number::Null | Number::Other => true,
                };
            }
        }
        true
    }
}

impl<K: OutputKey> GroupFold<K> for CounterFold {
    type Value = Row;
    type State = Accumulators;
    type Output = Row;

    fn init(&self) -> Self::State {
        accumulators(&self.aggregates)
    }

    /// Updates every aggregate; when one refuses the row (an overflow of its accumulator),
    /// those before it are rolled back, so a refused row leaves the group as it was.
    #[inline]
    fn update(&self, state: &mut Self::State, row: &Row, diff: isize) -> Result<(), String> {
        let mut cursor = ColumnCursor::new(row);
        let signed = diff as i64;
        let accumulators = state.as_mut_slice();
        for (i, (&read, acc)) in self.reads.iter().zip(accumulators.iter_mut()).enumerate() {
            if !CounterFold::apply(read, acc, &mut cursor, signed) {
                let applied = self.reads.iter().zip(accumulators.iter_mut()).take(i);
                for (&read, acc) in applied {
                    // Undoing what was just applied cannot overflow.
                    CounterFold::apply(read, acc, &mut cursor, -signed);
                }
                return Err(overflow_error(&self.aggregates[i].ty).to_string());
            }
        }
        Ok(())
    }

    fn order_independent(&self) -> bool {
        true
    }

    fn output(&self, key: &K, state: &Self::State) -> Result<Row, String> {
        output_row(key, &self.aggregates, state)
    }
}
