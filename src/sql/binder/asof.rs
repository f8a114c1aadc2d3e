//! Binding of an ASOF join, in the form the parser's token rewrite (`parser::asof`) leaves it:
//! `ASOF JOIN r MATCH_CONDITION (ASOF_JOIN_SPEC(c, left, tolerance)) [ON o]`, through the
//! lowering the Table API shares ([`plan_asof_join`]).

use sqlparser::ast::{self, Spanned, TableFactor};

use super::query::{Binder, Bound};
use super::scope::Scope;
use crate::expr::Expr;
use crate::plan::lower::plan_asof_join;
use crate::plan::{join_schema, JoinKind, Tolerance};
use crate::repr::Datum;
use crate::sql::error::SqlError;
use crate::sql::parser::asof::MARKER;

impl Binder<'_> {
    /// `left ASOF [LEFT] JOIN factor MATCH_CONDITION (ASOF_JOIN_SPEC(c, left, tolerance)) [ON
    /// on]`, as the parser's rewrite leaves it: the condition is `on AND c`, lowered by
    /// [`plan_asof_join`].
    pub(super) fn asof_join(
        &self,
        left: Bound,
        factor: &TableFactor,
        spec: &ast::Expr,
        on: Option<&ast::Expr>,
    ) -> Result<Bound, SqlError> {
        let (condition, is_left, tolerance) = unmark(spec)?;
        let kind = if is_left {
            JoinKind::Left
        } else {
            JoinKind::Inner
        };
        let right = self.factor(factor)?;
        let mut joined = join_schema(&left.plan.schema, &right.plan.schema, kind);
        joined.rowtime = None;
        joined.proctime = None;
        let scope: Scope = left.scope.join(&right.scope, &joined);
        let tr = self.translator(&scope);
        let mut expr = tr.expr(condition)?;
        if let Some(on) = on {
            expr = tr.expr(on)?.and(expr);
        }
        let tolerance = tolerance.map(|t| self.tolerance(&scope, t)).transpose()?;
        let span = on.map_or_else(|| spec.span(), |on| on.span().union(&spec.span()));
        let plan = plan_asof_join(
            left.plan,
            right.plan,
            &expr,
            kind,
            tolerance,
            &self.registry,
        )
        .map_err(|e| SqlError::at(span, e.to_string()))?;
        Ok(Bound { plan, scope })
    }

    /// A `TOLERANCE`: an INTERVAL or an integer literal.
    fn tolerance(&self, scope: &Scope, t: &ast::Expr) -> Result<Tolerance, SqlError> {
        let refuse = || {
            SqlError::at(
                t.span(),
                format!("TOLERANCE takes an INTERVAL or an integer literal, not {t}"),
            )
        };
        match self.translator(scope).expr(t)? {
            Expr::Literal(literal) => match literal.datum() {
                Datum::IntervalDayTime(millis) => Ok(Tolerance::Interval { millis }),
                Datum::Int(n) => Ok(Tolerance::Number(n)),
                _ => Err(refuse()),
            },
            _ => Err(refuse()),
        }
    }
}

/// The parts of the marker: the match condition, LEFT or not, the tolerance.
fn unmark(spec: &ast::Expr) -> Result<(&ast::Expr, bool, Option<&ast::Expr>), SqlError> {
    let bad = || SqlError::at(spec.span(), "not an ASOF join's match condition");
    let ast::Expr::Function(f) = spec else {
        return Err(bad());
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return Err(bad());
    };
    let args: Vec<&ast::Expr> = list
        .args
        .iter()
        .filter_map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect();
    if f.name.to_string() != MARKER || args.len() != 3 {
        return Err(bad());
    }
    let left = matches!(args[1], ast::Expr::Value(v) if v.value == ast::Value::Boolean(true));
    let tolerance = match args[2] {
        ast::Expr::Value(v) if v.value == ast::Value::Null => None,
        t => Some(t),
    };
    Ok((args[0], left, tolerance))
}
