//! OVER aggregations: `SELECT items` with aggregates over one OVER window lowered onto the
//! plan's [`Over`](crate::plan::Over) node.

use crate::expr::{bind_aggregate, Expr, FunctionRegistry};
use crate::plan::{OverFrame, PlanError, RelExpr};

use super::select::project;

/// `SELECT items` over `plan` with the OVER aggregates `calls` over one window: the items read
/// the input's columns and `$over{i}`, the value of `calls[i]`. Shared by the Table API and SQL.
pub(crate) fn over_select(
    plan: RelExpr,
    partition: Vec<usize>,
    time: usize,
    frame: OverFrame,
    calls: &[Expr],
    items: &[Expr],
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let aggregates = (calls.iter().enumerate())
        .map(|(i, call)| {
            Ok((
                bind_aggregate(call, &plan.schema, registry)?,
                format!("$over{i}"),
            ))
        })
        .collect::<Result<Vec<_>, PlanError>>()?;
    let plan = plan.over(partition, time, frame, aggregates)?;
    project(plan, items, registry)
}
