//! A GROUP BY's aggregates when each is a counter: `COUNT(*)`, `COUNT(x)`, or an exact
//! `SUM(x)` / `AVG(x)` (over integers or DECIMALs), without DISTINCT or FILTER, `x` a column.
//!
//! Their accumulators are Flink's (the same [`Accumulator`]s as [`RowFold`](super::RowFold)'s,
//! with the same results, NULLs and overflow errors); what differs is how a row reaches them:
//! the columns they read are read in place from the packed row by their tags
//! ([`ColumnCursor`]), the others skipped, instead of every leading column being decoded into
//! datums and each aggregate dispatching on its arguments and FILTER per row.

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

    /// Applies `signed` copies of `row` to `acc`, the accumulator of the aggregate that reads
    /// it as `read`, reading its column with `cursor`.
    #[inline]
    fn apply(
        agg: &AggregateExpr,
        read: Read,
        acc: &mut Accumulator,
        cursor: &mut ColumnCursor<'_>,
        signed: i64,
    ) -> Result<(), String> {
        match read {
            Read::Rows => acc.add_count(signed),
            Read::NonNull(c) => {
                if cursor.number(c) != Number::Null {
                    acc.add_count(signed);
                }
            }
            Read::Exact(c) => {
                let value = match cursor.number(c) {
                    Number::Int(v) => v as i128,
                    Number::Decimal(v) => v,
                    // NULL, and (which the plan's types rule out) anything else: skipped, as
                    // the accumulator skips it.
                    Number::Null | Number::Other => return Ok(()),
                };
                acc.add_exact(value, signed, &agg.ty)
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
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
    fn update(&self, state: &mut Self::State, row: &Row, diff: isize) -> Result<(), String> {
        let mut cursor = ColumnCursor::new(row);
        let signed = diff as i64;
        let parts = self.aggregates.iter().zip(&self.reads);
        for (i, ((agg, &read), acc)) in parts.clone().zip(state.iter_mut()).enumerate() {
            if let Err(e) = CounterFold::apply(agg, read, acc, &mut cursor, signed) {
                for ((agg, &read), acc) in parts.zip(state.iter_mut()).take(i) {
                    // Undoing what was just applied cannot fail.
                    let _ = CounterFold::apply(agg, read, acc, &mut cursor, -signed);
                }
                return Err(e);
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
