//! User-defined aggregate functions: Flink's `AggregateFunction` (an accumulator created per
//! group, `accumulate`, optional `retract`, `merge`, `getValue`).

use std::any::Any;
use std::fmt::Debug;

use crate::repr::{ColumnType, Datum, RowPacker};

use crate::expr::error::{EvalError, ExprError};

/// An aggregate UDF. A UDAF without retraction ([`AggregateUdf::has_retract`] false) can only
/// aggregate an append-only input: the plan rejects it over an updating one, as Flink does.
pub trait AggregateUdf: Send + Sync + Debug {
    /// The name it is called by (case-insensitive).
    fn name(&self) -> &str;

    /// The result type for these argument types, or why they are not accepted.
    fn return_type(&self, args: &[ColumnType]) -> Result<ColumnType, ExprError>;

    /// A fresh accumulator (one per group).
    fn create_accumulator(&self) -> Box<dyn UdafAccumulator>;

    /// Whether its accumulators implement [`UdafAccumulator::retract`].
    fn has_retract(&self) -> bool;
}

/// The state of one group of a UDAF.
pub trait UdafAccumulator: Send + Debug {
    /// Adds one input row's argument values.
    fn accumulate(&mut self, args: &[Datum<'_>]) -> Result<(), String>;

    /// Removes one input row's argument values; only called when the UDAF says it has
    /// retraction. The default reports that it has not.
    fn retract(&mut self, _args: &[Datum<'_>]) -> Result<(), String> {
        Err("this aggregate function does not support retraction".into())
    }

    /// Adds another accumulator of the same UDAF (`other.as_any()` downcasts to the concrete
    /// type).
    fn merge(&mut self, other: &dyn UdafAccumulator) -> Result<(), String>;

    /// The result, pushed as one datum.
    fn get_value(&self, packer: &mut RowPacker<'_>) -> Result<(), String>;

    /// This accumulator as `Any`, for `merge`.
    fn as_any(&self) -> &dyn Any;
}

/// A UDAF's message as an evaluation error naming it.
pub(crate) fn udaf_error(name: &str) -> impl Fn(String) -> EvalError + '_ {
    move |message| EvalError::Udf {
        name: name.to_string(),
        message,
    }
}
