//! Aggregate functions over groups: COUNT, COUNT(*), SUM, AVG, MIN, MAX, FIRST_VALUE,
//! LAST_VALUE, LISTAGG, STDDEV/VAR, and UDAFs, each with DISTINCT and FILTER (WHERE ..).
//!
//! Two ways to run one: [`AggregateExpr::eval_group`] folds a group given as a consolidated
//! multiset (what a differential `reduce` hands over), and an [`Accumulator`] is updated row by
//! row, with retraction and merge (windows, UDAFs). Both use the same accumulator, so they
//! agree. Every built-in retracts exactly: MIN/MAX and FIRST/LAST_VALUE keep the multiset they
//! need.
//!
//! Result types are Flink's (`org.apache.flink.table.planner.functions.aggfunctions`): COUNT
//! is BIGINT NOT NULL; SUM of an integer type is that type (`IntSumAggFunction` is INT), of
//! DECIMAL(p, s) DECIMAL(38, s) (`LogicalTypeMerging.findSumAggType`); AVG of an integer type is
//! that type, computed as a BIGINT sum divided by the count (`IntAvgAggFunction`: integer
//! division), of DECIMAL(p, s) DECIMAL(38, max(6, s)) (`findAvgAggType`); MIN, MAX, FIRST_VALUE,
//! LAST_VALUE keep the argument's type; all but COUNT are NULL over an empty group (or one of
//! NULLs only).

mod accumulator;
mod udaf;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use smallvec::SmallVec;

use crate::repr::{ColumnType, Datum, RowPacker};

use super::arena::RowArena;
use super::error::EvalError;
use super::func::Numeric;
use super::scalar::{ScalarExpr, ScalarKind};

pub(crate) use accumulator::overflow as overflow_error;
pub use accumulator::Accumulator;
pub(crate) use accumulator::{add_exact, Exact};
pub use udaf::{AggregateUdf, UdafAccumulator};

/// An aggregate function with its argument types resolved.
#[derive(Clone, Debug)]
pub enum AggregateFunc {
    /// `COUNT(x, ...)`: rows where every argument is non-NULL.
    Count,
    /// `COUNT(*)`: rows.
    CountStar,
    /// `SUM(x)`, accumulated as the kind says (integers in `i128`, checked at the end against
    /// the result type).
    Sum(Numeric),
    /// `AVG(x)`: the kind of the result (`Numeric::Decimal { left }` is the input's scale).
    Avg(Numeric),
    /// `MIN(x)`.
    Min,
    /// `MAX(x)`.
    Max,
    /// `FIRST_VALUE(x)`: the first non-NULL value in arrival order.
    FirstValue,
    /// `LAST_VALUE(x)`: the last non-NULL value in arrival order.
    LastValue,
    /// `LISTAGG(x [, sep])`: the non-NULL values in arrival order joined by the separator
    /// (`,` by default; a literal).
    ListAgg(Arc<str>),
    /// `STDDEV_POP(x)` in DOUBLE.
    StddevPop,
    /// `STDDEV_SAMP(x)` in DOUBLE.
    StddevSamp,
    /// `VAR_POP(x)` in DOUBLE.
    VarPop,
    /// `VAR_SAMP(x)` in DOUBLE.
    VarSamp,
    /// A registered UDAF.
    Udaf(Arc<dyn AggregateUdf>),
}

impl PartialEq for AggregateFunc {
    fn eq(&self, other: &Self) -> bool {
        use AggregateFunc::*;
        match (self, other) {
            (Sum(a), Sum(b)) | (Avg(a), Avg(b)) => a == b,
            (ListAgg(a), ListAgg(b)) => a == b,
            (Udaf(a), Udaf(b)) => Arc::ptr_eq(a, b),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

impl AggregateFunc {
    /// Whether the value depends only on the multiset of rows, not on the order they were
    /// accumulated and retracted in: COUNT, MIN, MAX, and SUM / AVG in exact arithmetic
    /// (integers, DECIMAL). Floating-point sums round differently in another order, and
    /// FIRST_VALUE, LAST_VALUE, LISTAGG and user aggregates follow arrival order.
    pub fn is_order_independent(&self) -> bool {
        match self {
            AggregateFunc::Count
            | AggregateFunc::CountStar
            | AggregateFunc::Min
            | AggregateFunc::Max => true,
            AggregateFunc::Sum(kind) | AggregateFunc::Avg(kind) => {
                !matches!(kind, Numeric::Float | Numeric::Double)
            }
            _ => false,
        }
    }
}

/// A bound aggregate call.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateExpr {
    /// The function.
    pub func: AggregateFunc,
    /// Its arguments, over the input row (LISTAGG's separator is in the function).
    pub args: Vec<ScalarExpr>,
    /// DISTINCT: each distinct argument tuple counts once, however many rows carry it.
    pub distinct: bool,
    /// FILTER (WHERE ..): only rows where it is TRUE are aggregated.
    pub filter: Option<ScalarExpr>,
    /// The result type.
    pub ty: ColumnType,
}

impl AggregateExpr {
    /// This aggregate as a `GROUP BY` with grouping columns (or a window) types it, where every
    /// group holds a row: `SUM`, `AVG`, `MIN` and `MAX` of a `NOT NULL` argument without
    /// `FILTER` are `NOT NULL` (Calcite's `AGG_SUM`, `AVG_AGG_FUNCTION` and
    /// `ARG0_NULLABLE_IF_EMPTY`, which Flink's SQL uses: nullable only when the call has no
    /// group, `GROUP BY ()`, or a filter). The binder types them nullable, as over an empty
    /// group or an OVER frame.
    ///
    /// ```
    /// use differential_temporal::expr::{bind_aggregate, lit, FunctionRegistry};
    /// use differential_temporal::repr::Schema;
    ///
    /// let registry = FunctionRegistry::new();
    /// let sum = bind_aggregate(&lit(1).sum(), &Schema::default(), &registry).unwrap();
    /// assert_eq!(sum.ty.to_string(), "INT");
    /// assert_eq!(sum.in_keyed_group().ty.to_string(), "INT NOT NULL");
    /// ```
    pub fn in_keyed_group(mut self) -> AggregateExpr {
        let of_argument = matches!(
            self.func,
            AggregateFunc::Sum(_) | AggregateFunc::Avg(_) | AggregateFunc::Min | AggregateFunc::Max
        );
        if of_argument && self.filter.is_none() && self.args.iter().all(|a| !a.ty.nullable) {
            self.ty.nullable = false;
        }
        self
    }

    /// The aggregate over one group given as a consolidated multiset: each distinct input row's
    /// datums with its multiplicity (> 0), in the order FIRST_VALUE / LAST_VALUE / LISTAGG are
    /// to see them (the caller sorts by arrival). Applies FILTER and DISTINCT; pushes the
    /// result (one datum) into `packer`.
    ///
    /// ```
    /// use differential_temporal::expr::{bind_aggregate, col, lit, FunctionRegistry};
    /// use differential_temporal::repr::{DataType, Datum, Row, Schema};
    ///
    /// let schema = Schema::builder().column("b", DataType::BigInt.nullable()).build().unwrap();
    /// let registry = FunctionRegistry::new();
    /// let sum = bind_aggregate(&col("b").sum().filter(col("b").gt(lit(1i64))), &schema, &registry).unwrap();
    /// let rows = [[Datum::Int(1)], [Datum::Int(5)], [Datum::Null]];
    /// let group = rows.iter().map(|r| (&r[..], 2)); // each row twice
    /// let mut out = Row::new();
    /// sum.eval_group(group, &mut out.packer()).unwrap();
    /// assert_eq!(out.get(0), Some(Datum::Int(10)));
    /// ```
    pub fn eval_group<'a, I>(&self, rows: I, packer: &mut RowPacker<'_>) -> Result<(), EvalError>
    where
        I: Iterator<Item = (&'a [Datum<'a>], usize)>,
    {
        let mut acc = self.create_accumulator();
        let mut arena = RowArena::new();
        for (row, times) in rows {
            self.update(&mut acc, row, times as i64, &arena)?;
            arena.clear();
        }
        self.get_value(&acc, packer)
    }

    /// Adds (`diff > 0`) or retracts (`diff < 0`) one input row `diff.abs()` times, applying
    /// FILTER; `arena` holds what the arguments compute and may be cleared afterwards.
    pub fn update(
        &self,
        acc: &mut Accumulator,
        row: &[Datum<'_>],
        diff: i64,
        arena: &RowArena,
    ) -> Result<(), EvalError> {
        if diff == 0 {
            return Ok(());
        }
        let (times, add) = (diff.unsigned_abs(), diff > 0);
        // COUNT(*) and an aggregate of one column, unfiltered (the usual shapes), read the row
        // directly; others evaluate their arguments.
        match (&self.filter, self.args.as_slice()) {
            (None, []) => return acc.update(self, &[], times, add),
            (None, [arg]) => {
                if let ScalarKind::Column(c) = arg.kind {
                    let value = row.get(c).unwrap_or(&Datum::Null);
                    return acc.update(self, std::slice::from_ref(value), times, add);
                }
            }
            _ => {}
        }
        // The row's datums live as long as this call; evaluation borrows them and the arena.
        let args = self.arguments(row, arena)?;
        let Some(args) = args else {
            return Ok(());
        };
        acc.update(self, &args, times, add)
    }

    /// Adds the state of `other`, an accumulator of this aggregate (a window's panes, a
    /// two-phase aggregation); DISTINCT counts each tuple once across both.
    pub fn merge(&self, acc: &mut Accumulator, other: Accumulator) -> Result<(), EvalError> {
        acc.merge(self, other)
    }

    /// Pushes the value of `acc`, an accumulator of this aggregate, into `packer` (one datum),
    /// or the overflow error of a SUM / AVG whose value does not fit the result type.
    pub fn get_value(
        &self,
        acc: &Accumulator,
        packer: &mut RowPacker<'_>,
    ) -> Result<(), EvalError> {
        acc.get_value(self, packer)
    }

    /// The argument values on `row`, or `None` when FILTER rejects it.
    fn arguments<'a>(
        &'a self,
        row: &[Datum<'a>],
        arena: &'a RowArena,
    ) -> Result<Option<SmallVec<[Datum<'a>; 2]>>, EvalError> {
        if let Some(filter) = &self.filter {
            if filter.eval(row, arena)? != Datum::Bool(true) {
                return Ok(None);
            }
        }
        let mut args = SmallVec::new();
        for arg in &self.args {
            args.push(arg.eval(row, arena)?);
        }
        Ok(Some(args))
    }

    /// Whether the function can retract: false only for a UDAF without `retract`; the plan
    /// rejects those over an updating input.
    pub fn supports_retraction(&self) -> bool {
        match &self.func {
            AggregateFunc::Udaf(udaf) => udaf.has_retract(),
            _ => true,
        }
    }

    /// A fresh accumulator for one group.
    pub fn create_accumulator(&self) -> Accumulator {
        Accumulator::new(&self.func, self.distinct)
    }
}
