//! Binding of temporal joins, through the lowering the Table API shares
//! ([`plan_temporal_join`], [`plan_temporal_function_join`]), so SQL and the Table API agree:
//!
//! * `left JOIN build FOR SYSTEM_TIME AS OF left.time ON ..`: an event-time temporal join when
//!   `time` is the left side's rowtime, a lookup join when its proctime (Flink's rule);
//! * `left, LATERAL TABLE (f(left.time))`: the temporal table function `f` joined as of
//!   `left.time`, its condition the `ON` and the WHERE conjuncts naming only columns in scope.
//!   (`LATERAL TABLE` of a registered table function is bound in [`super::lateral`].)

use sqlparser::ast::{self, Spanned, TableFactor};

use super::query::{Binder, Bound};
use super::scope::{object_name, Scope};
use crate::expr::{lit, Expr};
use crate::plan::lower::{plan_temporal_function_join, plan_temporal_join};
use crate::plan::{join_schema, JoinKind};
use crate::sql::error::SqlError;

impl Binder<'_> {
    /// `left JOIN build FOR SYSTEM_TIME AS OF time ON on`: an event-time temporal join when
    /// `time` is the left side's rowtime, a lookup join when its proctime (Flink's rule).
    pub(super) fn temporal_join(
        &self,
        left: Bound,
        build: Bound,
        time: &ast::Expr,
        on: &ast::Expr,
        kind: JoinKind,
    ) -> Result<Bound, SqlError> {
        let time_column = match self.translator(&left.scope).expr(time)? {
            Expr::Column(name) => left.plan.schema.index_of(&name),
            _ => None,
        };
        let schema = &left.plan.schema;
        let lookup = match time_column {
            Some(c) if schema.rowtime.as_ref().is_some_and(|r| r.column == c) => false,
            Some(c) if schema.proctime == Some(c) => true,
            _ => {
                return Err(SqlError::at(
                    time.span(),
                    format!("Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field, but '{time}' is not the rowtime or proctime attribute of the left table"),
                ))
            }
        };
        let joined = join_schema(schema, &build.plan.schema, kind);
        let scope = left.scope.join(&build.scope, &joined);
        let condition = self.translator(&scope).expr(on)?;
        let plan = plan_temporal_join(
            left.plan,
            build.plan,
            &condition,
            kind,
            lookup,
            &self.registry,
        )
        .map_err(|e| SqlError::at(time.span().union(&on.span()), e.to_string()))?;
        Ok(Bound { plan, scope })
    }

    /// `left, LATERAL TABLE (f(left.time)) [AS r]`: the temporal table function `f` joined as
    /// of `left.time`; its condition is `on` (a JOIN's) and the WHERE conjuncts that name only
    /// columns in scope so far (Flink writes the key equality in WHERE).
    pub(super) fn lateral(
        &self,
        left: Bound,
        factor: &TableFactor,
        kind: JoinKind,
        on: Option<&ast::Expr>,
        conjuncts: &mut Vec<ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let TableFactor::Function {
            lateral: true,
            name,
            args,
            alias,
            ..
        } = factor
        else {
            return Err(SqlError::at(
                factor.span(),
                "expected LATERAL TABLE (temporal_table_function(time))",
            ));
        };
        let call = match args.as_slice() {
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Function(f)))]
                if name.to_string().eq_ignore_ascii_case("TABLE") =>
            {
                f
            }
            _ => {
                return Err(SqlError::at(
                    factor.span(),
                    "expected LATERAL TABLE (function(time_attribute))",
                ))
            }
        };
        let fname = object_name(&call.name);
        if self.registry.table(&fname).is_some() {
            return self.table_function(left, call, alias.as_ref(), kind, on);
        }
        let history = self
            .catalog
            .temporal_table_function(&fname)
            .map_err(|e| SqlError::at(call.name.span(), e.to_string()))?;
        let time = match &call.args {
            ast::FunctionArguments::List(list) => match list.args.as_slice() {
                [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(t))] => t,
                _ => return Err(SqlError::at(
                    call.span(),
                    "a temporal table function takes one argument: the left table's time attribute",
                )),
            },
            _ => {
                return Err(SqlError::at(
                    call.span(),
                    "a temporal table function takes one argument: the left table's time attribute",
                ))
            }
        };
        let time_column = match self.translator(&left.scope).expr(time)? {
            Expr::Column(n) => left
                .plan
                .schema
                .resolve(&n)
                .map_err(|e| SqlError::at(time.span(), e.to_string()))?,
            _ => {
                return Err(SqlError::at(
                    time.span(),
                    "the argument of a temporal table function is a time attribute column",
                ))
            }
        };
        let qualifier = alias
            .as_ref()
            .map_or(fname.clone(), |a| a.name.value.clone());
        let build_scope = Scope::of(&history, Some(&qualifier));
        let joined = join_schema(&left.plan.schema, &history.schema, kind);
        let scope = left.scope.join(&build_scope, &joined);
        let tr = self.translator(&scope);
        let mut condition: Vec<Expr> = on.map(|o| tr.expr(o)).transpose()?.into_iter().collect();
        let mut kept = Vec::new();
        for conjunct in conjuncts.drain(..) {
            match tr.expr(&conjunct) {
                Ok(e) => condition.push(e),
                Err(_) => kept.push(conjunct),
            }
        }
        *conjuncts = kept;
        let condition = condition
            .into_iter()
            .reduce(Expr::and)
            .unwrap_or_else(|| lit(true));
        let plan = plan_temporal_function_join(
            left.plan,
            history,
            time_column,
            &condition,
            kind,
            &self.registry,
        )
        .map_err(|e| SqlError::at(factor.span(), e.to_string()))?;
        Ok(Bound { plan, scope })
    }
}
