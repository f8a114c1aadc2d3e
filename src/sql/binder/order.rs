//! Binding of `ORDER BY`, `LIMIT`, `OFFSET` and `FETCH` onto the plan's `Sort` node, with its
//! streaming rules (case E05): `ORDER BY .. LIMIT n` (or `FETCH FIRST n ROWS ONLY`) is a Top-N;
//! `ORDER BY` alone needs the rowtime attribute, ascending, as its first key; the rest is
//! refused with the reason. Sort keys are columns of the query's result.

use sqlparser::ast::{self, LimitClause, OrderByKind, OrderBySort, Spanned, Value};

use super::query::{Binder, Bound};
use crate::expr::Expr;
use crate::plan::SortKey;
use crate::sql::error::SqlError;

impl Binder<'_> {
    /// `bound` sorted and limited as `query` says (unchanged without ORDER BY, LIMIT, FETCH).
    pub(super) fn order_limit(&self, bound: Bound, query: &ast::Query) -> Result<Bound, SqlError> {
        let mut order = Vec::new();
        if let Some(order_by) = &query.order_by {
            let OrderByKind::Expressions(exprs) = &order_by.kind else {
                return Err(SqlError::at(
                    order_by.span(),
                    "ORDER BY ALL is not supported",
                ));
            };
            let tr = self.translator(&bound.scope);
            for e in exprs {
                let column = match tr.expr(&e.expr)? {
                    Expr::Column(name) => bound.plan.schema.index_of(&name),
                    _ => None,
                };
                let (Some(column), None) = (column, &e.with_fill) else {
                    return Err(SqlError::at(
                        e.span(),
                        format!("ORDER BY takes columns of the result, not '{}'", e.expr),
                    ));
                };
                let descending = match &e.options.sort {
                    None | Some(OrderBySort::Asc) => false,
                    Some(OrderBySort::Desc) => true,
                    Some(OrderBySort::Using(_)) => {
                        return Err(SqlError::at(
                            e.span(),
                            "ORDER BY .. USING is not supported (ASC or DESC)",
                        ))
                    }
                };
                order.push(SortKey::new(column, descending, e.options.nulls_first));
            }
        }
        let (mut offset, mut fetch) = (0, None);
        match &query.limit_clause {
            Some(LimitClause::LimitOffset {
                limit,
                offset: skip,
                limit_by,
            }) if limit_by.is_empty() => {
                fetch = limit.as_ref().map(count).transpose()?;
                offset = skip
                    .as_ref()
                    .map(|o| count(&o.value))
                    .transpose()?
                    .unwrap_or(0);
            }
            Some(LimitClause::OffsetCommaLimit {
                offset: skip,
                limit,
            }) => {
                (offset, fetch) = (count(skip)?, Some(count(limit)?));
            }
            Some(other) => return Err(SqlError::at(other.span(), "LIMIT BY is not supported")),
            None => {}
        }
        if let Some(f) = &query.fetch {
            let Some(quantity) = f.quantity.as_ref().filter(|_| !f.with_ties && !f.percent) else {
                return Err(SqlError::at(
                    query.span(),
                    "FETCH takes a number of rows (WITH TIES and PERCENT are not supported)",
                ));
            };
            fetch = Some(count(quantity)?);
        }
        if order.is_empty() && fetch.is_none() && offset == 0 {
            return Ok(bound);
        }
        let span = query
            .order_by
            .as_ref()
            .map(|o| o.span())
            .or(query.limit_clause.as_ref().map(|l| l.span()))
            .unwrap_or_else(|| query.span());
        let plan = bound
            .plan
            .sort(order, offset, fetch)
            .map_err(|e| SqlError::at(span, e.to_string()))?;
        Ok(Bound {
            plan,
            scope: bound.scope,
        })
    }
}

/// A row count: a non-negative integer literal.
fn count(e: &ast::Expr) -> Result<usize, SqlError> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| {
        SqlError::at(
            e.span(),
            format!("a row count is a non-negative integer, not '{e}'"),
        )
    })
}
