//! Lateral joins with table functions and UNNEST (Flink's `joinLateral` /
//! `leftOuterJoinLateral` with a `TableFunction`, SQL's `LATERAL TABLE (f(..))` and
//! `UNNEST(..)`): the plan of a [`Correlate`](crate::plan::Correlate).

use crate::expr::{
    bind_scalar, bind_table_call, table_function_schema, Expr, FunctionRegistry, ScalarExpr,
};
use crate::plan::{join_schema, left_condition_error, unnest_columns, Expansion, JoinKind};
use crate::plan::{PlanError, RelExpr};
use crate::repr::{Datum, Schema};

/// `probe, LATERAL TABLE (call) AS T(names) ON condition`: the table function `call` names,
/// its columns renamed to `names` if given.
pub(crate) fn plan_table_function(
    probe: RelExpr,
    call: &Expr,
    names: Option<&[String]>,
    condition: &Expr,
    kind: JoinKind,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let (function, args) = bind_table_call(call, &probe.schema, registry)?;
    let columns = table_function_schema(&call.to_string(), function.0.output(), names)?;
    correlate(
        probe,
        Expansion::Function(function),
        args,
        columns,
        condition,
        kind,
        registry,
    )
}

/// `probe CROSS JOIN UNNEST(collection) [WITH ORDINALITY] AS t(names)` (or LEFT .. ON TRUE).
pub(crate) fn plan_unnest(
    probe: RelExpr,
    collection: &Expr,
    ordinality: bool,
    names: Option<&[String]>,
    condition: &Expr,
    kind: JoinKind,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let arg = bind_scalar(collection, &probe.schema, registry)?;
    let text = format!("UNNEST({collection})");
    let fields = unnest_columns(&arg.ty, ordinality, &text)?;
    let columns = table_function_schema(&text, fields, names)?;
    let expansion = Expansion::Unnest { ordinality };
    correlate(
        probe,
        expansion,
        vec![arg],
        columns,
        condition,
        kind,
        registry,
    )
}

/// The correlate node: a literal TRUE condition is none; any other is bound over the output
/// columns, and refused for a LEFT join with Flink's message.
fn correlate(
    probe: RelExpr,
    expansion: Expansion,
    args: Vec<ScalarExpr>,
    columns: Schema,
    condition: &Expr,
    kind: JoinKind,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let literal_true =
        matches!(condition.unaliased(), Expr::Literal(l) if matches!(l.datum(), Datum::Bool(true)));
    let condition = match (literal_true, kind) {
        (true, _) => None,
        (false, JoinKind::Left) => {
            return Err(PlanError::invalid(
                "Correlate",
                left_condition_error(&condition.to_string()),
            ))
        }
        (false, JoinKind::Inner) => {
            let joined = join_schema(&probe.schema, &columns, kind);
            Some(bind_scalar(condition, &joined, registry)?)
        }
    };
    probe.correlate(expansion, args, columns, kind, condition)
}
