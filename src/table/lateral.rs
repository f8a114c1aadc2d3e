//! Lateral joins with table functions and UNNEST (Flink's `joinLateral` /
//! `leftOuterJoinLateral` with a `TableFunction`, SQL's `LATERAL TABLE (f(..))` and
//! `UNNEST(..)`): the plan of a [`Correlate`](crate::plan::Correlate), shared by the Table API
//! and the SQL binder.

use std::sync::Arc;

use crate::expr::{
    bind_scalar, bind_table_call, table_function_schema, Expr, FunctionRegistry, TableFunction,
};
use crate::plan::{join_schema, left_condition_error, unnest_columns, Expansion, JoinKind};
use crate::plan::{PlanError, RelExpr};
use crate::repr::{Datum, Schema};

use super::{TableEnv, TableError};

impl TableEnv {
    /// Registers a table function (UDTF) under its [`TableFunction::name`], callable in
    /// [`Table::join_lateral`](super::Table::join_lateral) and SQL's `LATERAL TABLE (f(..))`
    /// (Flink's `createTemporarySystemFunction("split", SplitFunction.class)`). Its name must
    /// not be a built-in's or another function's.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use differential_temporal::expr::{Collector, TableFunction};
    /// use differential_temporal::repr::{DataType, Datum, Field};
    /// use differential_temporal::table::TableEnv;
    ///
    /// /// Flink's `SplitFunction`: each word of a string with its length.
    /// struct Split;
    /// impl TableFunction for Split {
    ///     fn name(&self) -> &str { "split" }
    ///     fn arguments(&self) -> Vec<DataType> { vec![DataType::STRING] }
    ///     fn output(&self) -> Vec<Field> {
    ///         vec![Field::new("word", DataType::STRING.nullable()),
    ///              Field::new("length", DataType::Int.nullable())]
    ///     }
    ///     fn eval(&self, args: &[Datum<'_>], out: &mut Collector<'_>) -> Result<(), String> {
    ///         if let Datum::Str(s) = args[0] {
    ///             for word in s.split(' ') {
    ///                 out.collect([Datum::Str(word), Datum::Int(word.chars().count() as i64)]);
    ///             }
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// let env = TableEnv::new();
    /// env.register_table_function(Arc::new(Split)).unwrap();
    /// assert!(env.register_table_function(Arc::new(Split)).is_err());
    /// ```
    pub fn register_table_function(&self, udtf: Arc<dyn TableFunction>) -> Result<(), TableError> {
        self.register_with(|functions| functions.register_table(udtf))
    }
}

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
    args: Vec<crate::expr::ScalarExpr>,
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

/// A lateral call and its column aliases: `call(..).as_columns(["word", "length"])` (Flink's
/// `call(..).as("word", "length")`) gives the call and the names; any other expression is the
/// call itself, without aliases.
pub(super) fn aliased_call(call: &Expr) -> (&Expr, Option<Vec<String>>) {
    if let Expr::Call { func, args } = call {
        if func == crate::expr::AS_COLUMNS {
            if let Some((inner, names)) = args.split_first() {
                let names: Option<Vec<String>> = (names.iter())
                    .map(|n| match n {
                        Expr::Literal(l) => match l.datum() {
                            Datum::Str(s) => Some(s.to_string()),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect();
                if let Some(names) = names {
                    return (inner, Some(names));
                }
            }
        }
    }
    (call, None)
}
