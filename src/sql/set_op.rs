//! Binding of a query body: a `SELECT`, a parenthesized query, or a set operation `left UNION |
//! INTERSECT | EXCEPT [ALL | DISTINCT] right` (`MINUS` is `EXCEPT`), onto the plan's `SetOp`
//! node. The output takes the left side's column names; the sides must have as many columns, of
//! the same types (the error names both sides' columns).

use sqlparser::ast::{SetExpr, SetOperator, SetQuantifier, Spanned};

use super::error::SqlError;
use super::query::{Binder, Bound};
use super::scope::Scope;
use crate::plan::SetOpKind;

impl Binder<'_> {
    /// The plan of a query body.
    pub(super) fn set_expr(&self, body: &SetExpr) -> Result<Bound, SqlError> {
        match body {
            SetExpr::Select(select) => self.select(select),
            SetExpr::Query(inner) => self.bind_query(inner),
            SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let op = match op {
                    SetOperator::Union => SetOpKind::Union,
                    SetOperator::Intersect => SetOpKind::Intersect,
                    SetOperator::Except | SetOperator::Minus => SetOpKind::Except,
                };
                let all = match set_quantifier {
                    SetQuantifier::All => true,
                    SetQuantifier::Distinct | SetQuantifier::None => false,
                    other => {
                        return Err(SqlError::at(
                            body.span(),
                            format!(
                                "{} {other} is not supported (ALL or DISTINCT only)",
                                op.sql(false)
                            ),
                        ))
                    }
                };
                let (left, right) = (self.set_expr(left)?, self.set_expr(right)?);
                let plan = left
                    .plan
                    .set_op(right.plan, op, all)
                    .map_err(|e| SqlError::at(body.span(), e.to_string()))?;
                let scope = Scope::of(&plan, None);
                Ok(Bound { plan, scope })
            }
            SetExpr::Values(_) => Err(super::unsupported::not_supported(
                body.span(),
                "VALUES (a table of literal rows)",
            )),
            other => Err(SqlError::at(
                other.span(),
                "this query form (INSERT, TABLE) is not supported",
            )),
        }
    }
}
