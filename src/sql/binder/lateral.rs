//! Binding of lateral joins with table functions and UNNEST onto the plan's `Correlate` node,
//! through the lowering the Table API shares (`plan::lower`), so SQL and the Table API agree:
//!
//! * `FROM t, LATERAL TABLE (f(t.a)) [AS T(x, y)]`, `t [CROSS] JOIN LATERAL TABLE (..) [ON ..]`
//!   and `t LEFT JOIN LATERAL TABLE (..) AS T(x) ON TRUE`, `f` a registered table function;
//! * `FROM t CROSS JOIN UNNEST(t.arr) [WITH ORDINALITY] AS u(x)`, `FROM t, UNNEST(..) ..` and
//!   `LEFT JOIN UNNEST(..) .. ON TRUE`.
//!
//! Column aliases `AS T(x, y)` rename the function's columns, one name each. An INNER join's
//! `ON` condition is checked on each joined row; a LEFT join takes `ON TRUE` only (Flink's
//! rule and message). The WHERE clause of a comma join stays a filter on the result.

use sqlparser::ast::{self, Spanned, TableAlias, TableFactor};
use sqlparser::tokenizer::Span;

use super::query::{Binder, Bound};
use super::scope::{object_name, Scope};
use crate::expr::{lit, Expr};
use crate::plan::lower::{plan_table_function, plan_unnest};
use crate::plan::{JoinKind, PlanError, RelExpr};
use crate::repr::Schema;
use crate::sql::error::SqlError;

/// Whether `factor` is `UNNEST(..)` (sqlparser reads it, in Flink's dialect, as a table
/// function call named UNNEST).
pub(super) fn is_unnest(factor: &TableFactor) -> bool {
    matches!(factor, TableFactor::Table { name, args: Some(_), .. }
        if name.to_string().eq_ignore_ascii_case("UNNEST"))
}

impl Binder<'_> {
    /// `left .. LATERAL TABLE (call) [AS alias]` with `call` a registered table function.
    pub(super) fn table_function(
        &self,
        left: Bound,
        call: &ast::Function,
        alias: Option<&TableAlias>,
        kind: JoinKind,
        on: Option<&ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let call_expr = self
            .translator(&left.scope)
            .expr(&ast::Expr::Function(call.clone()))?;
        let names = alias_columns(alias);
        let names = names.as_deref();
        let qualifier = alias.map_or_else(|| object_name(&call.name), |a| a.name.value.clone());
        self.lateral_join(
            left,
            &qualifier,
            names,
            on,
            call.span(),
            |probe, condition| {
                plan_table_function(probe, &call_expr, names, condition, kind, &self.registry)
            },
        )
    }

    /// `left .. UNNEST(collection) [WITH ORDINALITY] [AS alias]`.
    pub(super) fn unnest(
        &self,
        left: Bound,
        factor: &TableFactor,
        kind: JoinKind,
        on: Option<&ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let TableFactor::Table {
            args: Some(args),
            with_ordinality,
            alias,
            ..
        } = factor
        else {
            return Err(SqlError::at(factor.span(), "expected UNNEST(collection)"));
        };
        let collection = match args.args.as_slice() {
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))] => e,
            _ => return Err(SqlError::at(
                factor.span(),
                "UNNEST takes one ARRAY or MAP (UNNEST of several collections is not supported)",
            )),
        };
        let collection = self.translator(&left.scope).expr(collection)?;
        let names = alias_columns(alias.as_ref());
        let names = names.as_deref();
        let qualifier = alias.as_ref().map_or("UNNEST", |a| a.name.value.as_str());
        let ordinality = *with_ordinality;
        self.lateral_join(
            left,
            qualifier,
            names,
            on,
            factor.span(),
            |probe, condition| {
                plan_unnest(
                    probe,
                    &collection,
                    ordinality,
                    names,
                    condition,
                    kind,
                    &self.registry,
                )
            },
        )
    }

    /// The lateral join `plan` builds over `left` with a condition: first with TRUE, which
    /// gives the columns that `on` is translated against (the right ones named `names`, or as
    /// the plan names them, qualified by `qualifier`), then with `on` if there is one.
    fn lateral_join(
        &self,
        left: Bound,
        qualifier: &str,
        names: Option<&[String]>,
        on: Option<&ast::Expr>,
        span: Span,
        plan: impl Fn(RelExpr, &Expr) -> Result<RelExpr, PlanError>,
    ) -> Result<Bound, SqlError> {
        let unconditioned =
            plan(left.plan.clone(), &lit(true)).map_err(|e| SqlError::at(span, e.to_string()))?;
        let width = left.plan.schema.len();
        let mut fields = unconditioned.schema.fields[width..].to_vec();
        for (field, name) in fields.iter_mut().zip(names.unwrap_or_default()) {
            field.name = name.clone();
        }
        let columns = Schema {
            fields,
            primary_key: None,
            rowtime: None,
            proctime: None,
        };
        let right = Scope::of_schema(&columns, Some(qualifier));
        let scope = left.scope.join(&right, &unconditioned.schema);
        let plan = match on {
            None => unconditioned,
            Some(on) => {
                let condition = self.translator(&scope).expr(on)?;
                plan(left.plan, &condition).map_err(|e| SqlError::at(on.span(), e.to_string()))?
            }
        };
        Ok(Bound { plan, scope })
    }
}

/// The column aliases of `AS T(x, y)`, if any.
fn alias_columns(alias: Option<&TableAlias>) -> Option<Vec<String>> {
    let alias = alias?;
    (!alias.columns.is_empty())
        .then(|| alias.columns.iter().map(|c| c.name.value.clone()).collect())
}
