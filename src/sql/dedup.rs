//! Flink's deduplication pattern (`docs/dev/table/sql/queries/deduplication.md`):
//!
//! ```sql
//! SELECT cols FROM (
//!   SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY time_attr [ASC|DESC]) AS rn
//!   FROM t) [alias]
//! WHERE rn = 1
//! ```
//!
//! becomes `Dedup`: keep-first for ASC, keep-last for DESC, by event time when `time_attr` is
//! the rowtime attribute, by arrival when it is the proctime attribute. Keep-last by rowtime is
//! the versioned view of Flink's versioned-table page.

use sqlparser::ast::{self, OrderBySort, SelectItem, SetExpr, Spanned, TableFactor, WindowType};

use super::error::SqlError;
use super::expr::Translator;
use crate::expr::Expr;
use crate::plan::{DedupOrder, Keep, RelExpr};

/// A recognised deduplication.
pub(super) struct Dedup<'q> {
    /// The subquery with the ROW_NUMBER item.
    pub inner: &'q ast::Select,
    /// The subquery's alias.
    pub alias: Option<&'q str>,
    /// The ROW_NUMBER item's alias.
    pub rownum: String,
    /// `PARTITION BY` expressions.
    partition: &'q [ast::Expr],
    /// The single `ORDER BY` item.
    order: &'q ast::OrderByExpr,
    /// The whole OVER call, for error positions.
    call: &'q ast::Expr,
}

/// Recognises `outer` as a deduplication: its FROM is one subquery whose select list has
/// `ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..) AS rn`. The `rn = 1` conjunct (also
/// `rn <= 1`, `rn < 2`) is removed from `conjuncts`.
///
/// Errors: the ROW_NUMBER subquery without `rn = 1` in the outer WHERE (a Top-N, not
/// supported), or a window that is not `PARTITION BY` columns `ORDER BY` one time attribute.
pub(super) fn recognize<'q>(
    outer: &'q ast::Select,
    conjuncts: &mut Vec<ast::Expr>,
) -> Result<Option<Dedup<'q>>, SqlError> {
    let [from] = outer.from.as_slice() else {
        return Ok(None);
    };
    let TableFactor::Derived {
        subquery, alias, ..
    } = &from.relation
    else {
        return Ok(None);
    };
    if !from.joins.is_empty() {
        return Ok(None);
    }
    let SetExpr::Select(inner) = subquery.body.as_ref() else {
        return Ok(None);
    };
    let Some((rownum, call, window)) = inner.projection.iter().find_map(|item| match item {
        SelectItem::ExprWithAlias {
            expr: call @ ast::Expr::Function(f),
            alias,
        } if f.name.to_string().eq_ignore_ascii_case("ROW_NUMBER") => match &f.over {
            Some(WindowType::WindowSpec(spec)) => Some((alias, call, spec)),
            _ => None,
        },
        _ => None,
    }) else {
        return Ok(None);
    };
    let Some(position) = conjuncts
        .iter()
        .position(|c| is_first_row(c, &rownum.value))
    else {
        return Err(SqlError::at(
            call.span(),
            format!(
                "ROW_NUMBER() is supported as Flink's deduplication only: the outer query must filter WHERE {} = 1 (Top-N is not supported)",
                rownum.value
            ),
        ));
    };
    conjuncts.remove(position);
    let [order] = window.order_by.as_slice() else {
        return Err(SqlError::at(
            call.span(),
            "deduplication orders by exactly one time attribute: ORDER BY rowtime or proctime [ASC | DESC]",
        ));
    };
    if window.partition_by.is_empty() || window.window_frame.is_some() {
        return Err(SqlError::at(
            call.span(),
            "deduplication needs PARTITION BY key columns and no window frame",
        ));
    }
    Ok(Some(Dedup {
        inner,
        alias: alias.as_ref().map(|a| a.name.value.as_str()),
        rownum: rownum.value.clone(),
        partition: &window.partition_by,
        order,
        call,
    }))
}

/// Whether `c` is `rn = 1`, `rn <= 1` or `rn < 2` (either side).
fn is_first_row(c: &ast::Expr, rownum: &str) -> bool {
    let ast::Expr::BinaryOp { left, op, right } = c else {
        return false;
    };
    let is_rn = |e: &ast::Expr| match e {
        ast::Expr::Identifier(i) => i.value == rownum,
        ast::Expr::CompoundIdentifier(p) => p.last().is_some_and(|i| i.value == rownum),
        _ => false,
    };
    let number = |e: &ast::Expr| match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<i64>().ok(),
            _ => None,
        },
        _ => None,
    };
    use ast::BinaryOperator as B;
    match (is_rn(left), number(right), op) {
        (true, Some(1), B::Eq | B::LtEq) | (true, Some(2), B::Lt) => true,
        _ => matches!(
            (is_rn(right), number(left), op),
            (true, Some(1), B::Eq | B::GtEq) | (true, Some(2), B::Gt)
        ),
    }
}

/// The `Dedup` node over `input` for `pattern`.
pub(super) fn plan(
    input: RelExpr,
    pattern: &Dedup<'_>,
    tr: &Translator<'_>,
) -> Result<RelExpr, SqlError> {
    let column = |e: &ast::Expr| -> Result<usize, SqlError> {
        match tr.expr(e)? {
            Expr::Column(name) => Ok(input.schema.index_of(&name).unwrap_or(usize::MAX)),
            _ => Err(SqlError::at(
                e.span(),
                format!("deduplication partitions and orders by columns, not by '{e}'"),
            )),
        }
    };
    let key = pattern
        .partition
        .iter()
        .map(column)
        .collect::<Result<Vec<_>, _>>()?;
    let time = column(&pattern.order.expr)?;
    let order = if input
        .schema
        .rowtime
        .as_ref()
        .is_some_and(|r| r.column == time)
    {
        DedupOrder::EventTime
    } else if input.schema.proctime == Some(time) {
        DedupOrder::Arrival
    } else {
        return Err(SqlError::at(
            pattern.order.expr.span(),
            format!(
                "deduplication orders by a time attribute, but '{}' is neither the rowtime nor the proctime attribute of its input (declare a WATERMARK for it)",
                pattern.order.expr
            ),
        ));
    };
    let keep = match pattern.order.options.sort {
        Some(OrderBySort::Desc) => Keep::Last,
        _ => Keep::First,
    };
    input
        .dedup(key, keep, order)
        .map_err(|e| SqlError::at(pattern.call.span(), e.to_string()))
}
