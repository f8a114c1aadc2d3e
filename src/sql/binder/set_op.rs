//! Binding of a query body: a `SELECT`, a parenthesized query, or a set operation `left UNION |
//! INTERSECT | EXCEPT [ALL | DISTINCT] right` (`MINUS` is `EXCEPT`), onto the plan's `SetOp`
//! node. The output takes the left side's column names; the sides must have as many columns,
//! each pair of a common type that both sides are cast to (Flink's least restrictive type,
//! `LogicalTypeMerging.findCommonType`: `''` and a STRING are STRING, INT and BIGINT are
//! BIGINT); pairs without one are refused (the error names both sides' columns).

use sqlparser::ast::{SetExpr, SetOperator, SetQuantifier, Spanned};

use super::query::{Binder, Bound};
use super::scope::Scope;
use crate::expr::{bind_scalar, col, common_type, FunctionRegistry};
use crate::plan::{PlanError, RelExpr, SetOpKind};
use crate::repr::DataType;
use crate::sql::error::SqlError;

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
                let plan = widened(left.plan, right.plan, &self.registry)
                    .and_then(|(left, right)| left.set_op(right, op, all))
                    .map_err(|e| SqlError::at(body.span(), e.to_string()))?;
                let scope = Scope::of(&plan, None);
                Ok(Bound { plan, scope })
            }
            SetExpr::Values(_) => Err(crate::sql::unsupported::not_supported(
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

/// Both inputs of a set operation with each column pair cast to its common type, where there is
/// one and a side differs from it (a pair without one is left for the set operation to refuse).
fn widened(
    left: RelExpr,
    right: RelExpr,
    registry: &FunctionRegistry,
) -> Result<(RelExpr, RelExpr), PlanError> {
    let common: Vec<Option<DataType>> = (left.schema.fields.iter())
        .zip(&right.schema.fields)
        .map(|(l, r)| common_type(&l.ty.data_type, &r.ty.data_type))
        .collect();
    Ok((
        cast_columns(left, &common, registry)?,
        cast_columns(right, &common, registry)?,
    ))
}

/// `plan` with column `i` cast to `types[i]` where that is given and differs, names and order
/// kept.
fn cast_columns(
    plan: RelExpr,
    types: &[Option<DataType>],
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let fields = plan.schema.fields.clone();
    let casts: Vec<(usize, DataType)> = (fields.iter().zip(types).enumerate())
        .filter_map(|(i, (f, t))| t.clone().filter(|t| *t != f.ty.data_type).map(|t| (i, t)))
        .collect();
    if casts.is_empty() {
        return Ok(plan);
    }
    let free = |i: usize| {
        (0..)
            .map(|n| format!("$cast{i}_{n}"))
            .find(|name| fields.iter().all(|f| &f.name != name))
            .expect("a free name")
    };
    let exprs = (casts.iter())
        .map(|(i, t)| {
            let cast = col(fields[*i].name.as_str()).cast(t.clone());
            Ok((bind_scalar(&cast, &plan.schema, registry)?, free(*i)))
        })
        .collect::<Result<Vec<_>, PlanError>>()?;
    let width = fields.len();
    let columns = (0..width)
        .map(|i| match casts.iter().position(|(c, _)| *c == i) {
            Some(k) => width + k,
            None => i,
        })
        .collect();
    let names = fields.iter().map(|f| f.name.clone()).collect();
    plan.map(exprs)?.project(columns, Some(names))
}
