//! Window aggregations: `SELECT items GROUP BY window, keys` lowered onto the plan's
//! [`WindowAgg`](crate::plan::WindowAgg), for the Table API's group windows and SQL's window
//! TVFs and legacy group windows.

use crate::expr::{Expr, FunctionRegistry};
use crate::plan::{PlanError, RelExpr, WindowSpec};

use super::select::aggregate_with;

/// The column of the window's time attribute `time` (a column name) in `plan`. Errors: an
/// unknown column, an expression that is not a column.
pub(crate) fn time_column(plan: &RelExpr, time: &Expr) -> Result<usize, PlanError> {
    match time.unaliased() {
        Expr::Column(name) => Ok(plan.schema.resolve(name)?),
        other => Err(PlanError::invalid(
            "WindowAggregate",
            format!(
            "a window is defined over a time attribute column, not over the expression '{other}'"
            ),
        )),
    }
}

/// `SELECT items GROUP BY window, keys` over the windows `spec` of the rowtime column `time`:
/// the items may use `window_start`, `window_end` and `window_time`. Shared by the Table API and
/// the SQL forms (window TVFs and legacy group windows).
pub(crate) fn window_aggregate(
    plan: RelExpr,
    time: &Expr,
    spec: WindowSpec,
    keys: &[Expr],
    items: &[Expr],
    lateness_ms: i64,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let time = time_column(&plan, time)?;
    aggregate_with(plan, keys, items, registry, move |plan, group, aggs| {
        plan.window_agg(time, spec, group, aggs, lateness_ms)
    })
}
