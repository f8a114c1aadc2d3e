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
//! the rowtime attribute, by arrival when it is the proctime attribute. Every other
//! `ROW_NUMBER()` subquery filtered by `rn <= N`, `rn < N` or `rn = 1` (Flink's Top-N:
//! `docs/dev/table/sql/queries/topn.md`; any ORDER BY columns, PARTITION BY optional) becomes a
//! `TopN` whose row number is `rn` where the outer query selects it. Keep-last by rowtime is
//! the versioned view of Flink's versioned-table page. `SELECT .. FROM t QUALIFY rn = 1` (with
//! `ROW_NUMBER() OVER (..) AS rn` in the select list, or the call inline in `QUALIFY`) is the
//! same deduplication without the subquery; Flink's grammar has no QUALIFY, Databricks',
//! Snowflake's and DuckDB's do.

use sqlparser::ast::{
    self, GroupByExpr, OrderBySort, SelectItem, SetExpr, Spanned, TableFactor, WindowType,
};
use sqlparser::tokenizer::Span;

use super::expr::Translator;
use super::query::{split_and, Binder, Bound};
use super::scope::Scope;
use crate::expr::{col, lit, Expr};
use crate::plan::lower::project;
use crate::plan::{DedupOrder, Keep, RelExpr, SortKey};
use crate::sql::error::SqlError;

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
    /// The `ORDER BY` items.
    order: &'q [ast::OrderByExpr],
    /// The whole OVER call, for error positions.
    call: &'q ast::Expr,
    /// `N` of `rn <= N` (1 for `rn = 1`).
    limit: usize,
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
    let Some((rownum, call)) = inner.projection.iter().find_map(aliased_row_number) else {
        return Ok(None);
    };
    let alias = alias.as_ref().map(|a| a.name.value.as_str());
    finish(inner, alias, &rownum.value, call, conjuncts).map(Some)
}

/// Recognises `select ... QUALIFY rn = 1` as a deduplication of `select` itself: `rn` is
/// either the alias of a `ROW_NUMBER() OVER (..)` select item or the call written inline
/// (`QUALIFY ROW_NUMBER() OVER (..) = 1`). The `rn = 1` conjunct is removed from
/// `conjuncts`, the conjuncts of the QUALIFY clause.
///
/// Errors: a QUALIFY without ROW_NUMBER, or one that is not `rn = 1` (a Top-N), or a
/// window that is not `PARTITION BY` columns `ORDER BY` one time attribute.
pub(super) fn recognize_qualify<'q>(
    select: &'q ast::Select,
    qualify: &'q ast::Expr,
    conjuncts: &mut Vec<ast::Expr>,
) -> Result<Dedup<'q>, SqlError> {
    let (rownum, call) = match select.projection.iter().find_map(aliased_row_number) {
        Some((alias, call)) => (alias.value.as_str(), call),
        None => match inline_row_number(qualify) {
            Some(call) => ("", call),
            None => {
                return Err(SqlError::at(
                    qualify.span(),
                    "QUALIFY is supported as Flink's deduplication only: QUALIFY ROW_NUMBER() OVER (PARTITION BY key ORDER BY time_attribute) = 1",
                ))
            }
        },
    };
    finish(select, None, rownum, call, conjuncts)
}

/// `ROW_NUMBER() OVER (..) AS rn` as a select item: its alias and the call.
fn aliased_row_number(item: &SelectItem) -> Option<(&ast::Ident, &ast::Expr)> {
    match item {
        SelectItem::ExprWithAlias { expr, alias } if window_of(expr).is_some() => {
            Some((alias, expr))
        }
        _ => None,
    }
}

/// The window of a `ROW_NUMBER() OVER (..)` call.
fn window_of(e: &ast::Expr) -> Option<&ast::WindowSpec> {
    match e {
        ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("ROW_NUMBER") => {
            match &f.over {
                Some(WindowType::WindowSpec(spec)) => Some(spec),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A `ROW_NUMBER() OVER (..)` call compared in a top-level conjunct of `e`.
fn inline_row_number(e: &ast::Expr) -> Option<&ast::Expr> {
    match e {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => inline_row_number(left).or_else(|| inline_row_number(right)),
        ast::Expr::Nested(inner) => inline_row_number(inner),
        ast::Expr::BinaryOp { left, right, .. } => [left, right]
            .into_iter()
            .map(|side| side.as_ref())
            .find(|side| window_of(side).is_some()),
        _ => None,
    }
}

/// The deduplication of `inner` once its ROW_NUMBER call is found: takes the `rn = 1`
/// conjunct out of `conjuncts` and checks the window.
fn finish<'q>(
    inner: &'q ast::Select,
    alias: Option<&'q str>,
    rownum: &str,
    call: &'q ast::Expr,
    conjuncts: &mut Vec<ast::Expr>,
) -> Result<Dedup<'q>, SqlError> {
    let window = window_of(call).expect("a ROW_NUMBER() OVER call");
    let Some((position, limit)) = (conjuncts.iter().enumerate())
        .find_map(|(i, c)| row_limit(c, rownum, call).map(|n| (i, n)))
    else {
        let name = if rownum.is_empty() {
            "ROW_NUMBER()"
        } else {
            rownum
        };
        return Err(SqlError::at(
            call.span(),
            format!(
                "ROW_NUMBER() is supported in Flink's Top-N and deduplication patterns: the outer query must filter WHERE {name} <= N (or {name} < N, {name} = 1)"
            ),
        ));
    };
    conjuncts.remove(position);
    if window.order_by.is_empty() || window.window_frame.is_some() {
        return Err(SqlError::at(
            call.span(),
            "ROW_NUMBER() needs an ORDER BY and no window frame",
        ));
    }
    Ok(Dedup {
        inner,
        alias,
        rownum: rownum.to_string(),
        partition: &window.partition_by,
        order: &window.order_by,
        call,
        limit,
    })
}

/// `N` when `c` is `rn <= N`, `rn < N + 1` or `rn = 1` (either side, `N >= 1`), `rn` the
/// alias `rownum` or the ROW_NUMBER `call` itself (Flink's Top-N conditions).
fn row_limit(c: &ast::Expr, rownum: &str, call: &ast::Expr) -> Option<usize> {
    let ast::Expr::BinaryOp { left, op, right } = c else {
        return None;
    };
    let is_rn = |e: &ast::Expr| match e {
        ast::Expr::Identifier(i) => i.value == rownum,
        ast::Expr::CompoundIdentifier(p) => p.last().is_some_and(|i| i.value == rownum),
        e => e == call,
    };
    let number = |e: &ast::Expr| match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<usize>().ok(),
            _ => None,
        },
        _ => None,
    };
    use ast::BinaryOperator as B;
    let limit = match (is_rn(left), number(right), op, is_rn(right), number(left)) {
        (true, Some(1), B::Eq, ..) | (.., true, Some(1)) if *op == B::Eq => 1,
        (true, Some(n), B::LtEq, ..) | (_, _, B::GtEq, true, Some(n)) => n,
        (true, Some(n), B::Lt, ..) | (_, _, B::Gt, true, Some(n)) => n.saturating_sub(1),
        _ => return None,
    };
    (limit >= 1).then_some(limit)
}

/// The `Dedup` node over `input` for `pattern` when it is Flink's deduplication (`rn = 1`,
/// PARTITION BY columns, ORDER BY one time attribute), else its `TopN` node with the row number
/// as the column `$rank`. Returns the plan and whether it is a Top-N.
pub(super) fn plan(
    input: RelExpr,
    pattern: &Dedup<'_>,
    tr: &Translator<'_>,
) -> Result<(RelExpr, bool), SqlError> {
    let column = |e: &ast::Expr| -> Result<usize, SqlError> {
        match tr.expr(e)? {
            Expr::Column(name) => Ok(input.schema.index_of(&name).unwrap_or(usize::MAX)),
            _ => Err(SqlError::at(
                e.span(),
                format!("ROW_NUMBER() partitions and orders by columns, not by '{e}'"),
            )),
        }
    };
    let key = pattern
        .partition
        .iter()
        .map(column)
        .collect::<Result<Vec<_>, _>>()?;
    let time_order = |time: usize| {
        if input
            .schema
            .rowtime
            .as_ref()
            .is_some_and(|r| r.column == time)
        {
            Some(DedupOrder::EventTime)
        } else if input.schema.proctime == Some(time) {
            Some(DedupOrder::Arrival)
        } else {
            None
        }
    };
    let order = match pattern.order {
        [order] if pattern.limit == 1 && !key.is_empty() => {
            time_order(column(&order.expr)?).map(|by| (by, order))
        }
        _ => None,
    };
    if let Some((by, order)) = order {
        let keep = match order.options.sort {
            Some(OrderBySort::Desc) => Keep::Last,
            _ => Keep::First,
        };
        return input
            .dedup(key, keep, by)
            .map(|plan| (plan, false))
            .map_err(|e| SqlError::at(pattern.call.span(), e.to_string()));
    }
    let order = (pattern.order.iter())
        .map(|o| {
            let descending = matches!(o.options.sort, Some(OrderBySort::Desc));
            Ok(SortKey::new(
                column(&o.expr)?,
                descending,
                o.options.nulls_first,
            ))
        })
        .collect::<Result<Vec<_>, SqlError>>()?;
    input
        .top_n(key, order, pattern.limit, Some("$rank"))
        .map(|plan| (plan, true))
        .map_err(|e| SqlError::at(pattern.call.span(), e.to_string()))
}

impl Binder<'_> {
    /// `SELECT .. QUALIFY rn = 1`: the deduplication of `select` itself.
    pub(super) fn qualify(
        &self,
        select: &ast::Select,
        qualify: &ast::Expr,
    ) -> Result<Bound, SqlError> {
        let grouped = !matches!(&select.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
        if grouped || select.having.is_some() || select.distinct.is_some() {
            return Err(SqlError::at(
                select.span(),
                "QUALIFY with GROUP BY, HAVING or DISTINCT is not supported (QUALIFY is the deduplication ROW_NUMBER() .. = 1)",
            ));
        }
        let mut conjuncts = Vec::new();
        split_and(qualify, &mut conjuncts);
        let pattern = recognize_qualify(select, qualify, &mut conjuncts)?;
        if let Some(rest) = conjuncts.first() {
            return Err(SqlError::at(
                rest.span(),
                format!("QUALIFY takes the deduplication filter only (ROW_NUMBER() .. = 1); move '{rest}' to WHERE or an outer query"),
            ));
        }
        self.dedup(pattern)
    }

    /// The deduplication subquery of `pattern`, as a derived table (its ROW_NUMBER column is
    /// the constant 1).
    pub(super) fn dedup(&self, pattern: Dedup<'_>) -> Result<Bound, SqlError> {
        let mut conjuncts = Vec::new();
        if let Some(selection) = &pattern.inner.selection {
            split_and(selection, &mut conjuncts);
        }
        let input = self.from(&pattern.inner.from, &mut conjuncts)?;
        let input = self.filter(input, conjuncts)?;
        let (plan, top_n) = plan(input.plan, &pattern, &self.translator(&input.scope))?;
        let (scope, rank) = match top_n {
            true => (input.scope.with_columns(&["$rank".into()]), col("$rank")),
            false => (input.scope, lit(1i64)),
        };
        let rownum = (pattern.rownum.as_str(), rank);
        let items = self.select_list(&scope, &pattern.inner.projection, Some(rownum))?;
        let span = pattern
            .inner
            .projection
            .first()
            .map_or(Span::empty(), |i| i.span());
        let plan =
            project(plan, &items, &self.registry).map_err(|e| SqlError::at(span, e.to_string()))?;
        let scope = Scope::of(&plan, pattern.alias);
        Ok(Bound { plan, scope })
    }
}
