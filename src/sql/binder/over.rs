//! OVER aggregates in the select list (Flink's `docs/dev/table/sql/queries/over-agg.md`):
//!
//! ```sql
//! SELECT order_id, order_time, amount,
//!   SUM(amount) OVER (PARTITION BY product ORDER BY order_time
//!     RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) AS one_hour_prod_amount_sum
//! FROM Orders
//! ```
//!
//! and the same with `OVER w ... WINDOW w AS (PARTITION BY ..)`. Each OVER call becomes one
//! aggregate of a [`RelExpr::over`] node over the FROM (and WHERE) of the select; the select
//! items are then computed over its output, so `SUM(x) OVER w / COUNT(x) OVER w` works. Frames:
//! `ROWS BETWEEN n | UNBOUNDED PRECEDING AND CURRENT ROW`, `RANGE BETWEEN INTERVAL '..' unit |
//! UNBOUNDED PRECEDING AND CURRENT ROW`, the shorthand `ROWS n PRECEDING`, and no frame
//! (`RANGE UNBOUNDED PRECEDING`, Flink's default).
//!
//! Refused with the reason: every OVER call of a select not over the same window (Flink's rule),
//! an ORDER BY other than one ascending rowtime column, a FOLLOWING bound, GROUPS frames, a
//! window function that is not an aggregate (`ROW_NUMBER()` has its own patterns), OVER
//! together with GROUP BY.

use sqlparser::ast::{
    self, NamedWindowExpr, OrderBySort, SelectItem, Spanned, WindowFrameBound, WindowFrameUnits,
    WindowType,
};
use sqlparser::tokenizer::Span;

use super::expr::interval_millis;
use super::query::{Binder, Bound};
use super::scope::Scope;
use crate::expr::Expr;
use crate::plan::lower::over_select;
use crate::plan::OverFrame;
use crate::sql::error::SqlError;

/// One OVER call: the aggregate call without its OVER, the window it is over, and where it is.
struct Call {
    function: ast::Function,
    window: ast::WindowSpec,
    span: Span,
}

/// Whether any select item holds an OVER call.
pub(super) fn used(select: &ast::Select) -> bool {
    (select.projection.iter()).any(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            let mut calls = Vec::new();
            // A window that does not resolve counts as used: `select` reports it.
            rewrite(&mut e.clone(), &select.named_window, &mut calls).is_err() || !calls.is_empty()
        }
        _ => false,
    })
}

/// The select `select` with OVER calls, over its bound FROM and WHERE `input` (see the
/// [module docs](self)).
pub(super) fn select(
    binder: &Binder<'_>,
    select: &ast::Select,
    input: Bound,
) -> Result<Bound, SqlError> {
    // 1. Each OVER call out of the select items, in its place a column `$over{i}`.
    let mut calls = Vec::new();
    let mut projection = select.projection.clone();
    for (i, item) in projection.iter_mut().enumerate() {
        let renamed = match item {
            // An unnamed item with an OVER call is named as Calcite names it.
            SelectItem::UnnamedExpr(e) => {
                let before = calls.len();
                rewrite(e, &select.named_window, &mut calls)?;
                (calls.len() > before).then(|| (e.clone(), format!("EXPR${i}")))
            }
            SelectItem::ExprWithAlias { expr, .. } => {
                rewrite(expr, &select.named_window, &mut calls)?;
                None
            }
            _ => None,
        };
        if let Some((expr, name)) = renamed {
            *item = SelectItem::ExprWithAlias {
                expr,
                alias: ast::Ident::new(name),
            };
        }
    }
    // 2. One window for all of them.
    let first = &calls[0];
    if let Some(other) = calls.iter().find(|c| c.window != first.window) {
        return Err(SqlError::at(
            other.span,
            "All aggregates must be computed on the same window: this OVER window differs from the first one of the select",
        ));
    }
    let tr = binder.translator(&input.scope);
    let window = &first.window;
    let column = |e: &ast::Expr, what: &str| -> Result<usize, SqlError> {
        match tr.expr(e)? {
            Expr::Column(name) => Ok(input.plan.schema.index_of(&name).unwrap_or(usize::MAX)),
            _ => Err(SqlError::at(
                e.span(),
                format!("an OVER window {what} columns, not '{e}'"),
            )),
        }
    };
    let partition = (window.partition_by.iter())
        .map(|e| column(e, "partitions by"))
        .collect::<Result<Vec<_>, _>>()?;
    let [order] = window.order_by.as_slice() else {
        return Err(SqlError::at(
            first.span,
            "OVER windows' ordering in stream mode must be defined on a time attribute: ORDER BY exactly one rowtime or proctime column",
        ));
    };
    if matches!(order.options.sort, Some(OrderBySort::Desc)) {
        return Err(SqlError::at(
            order.span(),
            "OVER windows' ordering in stream mode must be ascending on a time attribute, not DESC",
        ));
    }
    let time = column(&order.expr, "orders by")?;
    let frame = frame(window, first.span)?;
    // 3. The aggregates, the node, then the select items over its output.
    let mut aggregates = Vec::new();
    for call in &calls {
        match tr.expr(&ast::Expr::Function(call.function.clone()))? {
            agg @ Expr::Aggregate { .. } => aggregates.push(agg),
            _ => {
                return Err(SqlError::at(
                    call.span,
                    format!(
                        "{} is not an aggregate function: OVER windows take COUNT, SUM, AVG, MIN and MAX (ROW_NUMBER() is supported in the deduplication pattern)",
                        call.function.name
                    ),
                ))
            }
        }
    }
    let names: Vec<String> = (0..calls.len()).map(|i| format!("$over{i}")).collect();
    let scope = input.scope.with_columns(&names);
    let items = binder.select_list(&scope, &projection, None)?;
    let span = select.projection.first().map_or(first.span, |i| i.span());
    let mut plan = over_select(
        input.plan,
        partition,
        time,
        frame,
        &aggregates,
        &items,
        &binder.registry,
    )
    .map_err(|e| SqlError::at(span, e.to_string()))?;
    if select.distinct.is_some() {
        plan = plan.distinct();
    }
    let scope = Scope::of(&plan, None);
    Ok(Bound { plan, scope })
}

/// Replaces each OVER call in `e` by the column `$over{i}`, `i` its position in `calls`.
/// Descends through arithmetic, casts and parentheses; an OVER call deeper is left to the
/// translator, which refuses it.
fn rewrite(
    e: &mut ast::Expr,
    named: &[ast::NamedWindowDefinition],
    calls: &mut Vec<Call>,
) -> Result<(), SqlError> {
    match e {
        ast::Expr::Function(f) if f.over.is_some() => {
            let span = f.span();
            let window = resolve(f.over.take().expect("checked"), named, span)?;
            calls.push(Call {
                function: f.clone(),
                window,
                span,
            });
            *e = ast::Expr::Identifier(ast::Ident::new(format!("$over{}", calls.len() - 1)));
            Ok(())
        }
        ast::Expr::BinaryOp { left, right, .. } => {
            rewrite(left, named, calls)?;
            rewrite(right, named, calls)
        }
        ast::Expr::UnaryOp { expr, .. }
        | ast::Expr::Nested(expr)
        | ast::Expr::Cast { expr, .. } => rewrite(expr, named, calls),
        _ => Ok(()),
    }
}

/// The window an OVER clause means: inline, or a `WINDOW w AS (...)` definition by name.
fn resolve(
    over: WindowType,
    named: &[ast::NamedWindowDefinition],
    span: Span,
) -> Result<ast::WindowSpec, SqlError> {
    let mut name = match over {
        WindowType::WindowSpec(spec) if spec.window_name.is_none() => return Ok(spec),
        WindowType::WindowSpec(spec) => {
            return Err(SqlError::at(
                span,
                format!(
                    "an OVER clause that refines the named window {} is not supported: define the whole window in WINDOW {} AS (...)",
                    spec.window_name.as_ref().expect("checked"),
                    spec.window_name.as_ref().expect("checked")
                ),
            ))
        }
        WindowType::NamedWindow(name) => name,
    };
    for _ in 0..=named.len() {
        let Some(def) = named.iter().find(|d| d.0.value == name.value) else {
            return Err(SqlError::at(
                span,
                format!(
                    "Window '{}' not found: define it with WINDOW {} AS (...)",
                    name, name
                ),
            ));
        };
        match &def.1 {
            NamedWindowExpr::WindowSpec(spec) => return Ok(spec.clone()),
            NamedWindowExpr::NamedWindow(next) => name = next.clone(),
        }
    }
    Err(SqlError::at(
        span,
        format!("the window '{name}' is defined in a cycle"),
    ))
}

/// The frame of `window` (see the [module docs](self)).
fn frame(window: &ast::WindowSpec, span: Span) -> Result<OverFrame, SqlError> {
    let Some(frame) = &window.window_frame else {
        return Ok(OverFrame::Range(None));
    };
    let refuse = |m: String| Err(SqlError::at(span, m));
    match &frame.end_bound {
        None | Some(WindowFrameBound::CurrentRow) => {}
        Some(bound) => {
            return refuse(format!(
            "OVER windows end at CURRENT ROW in streaming mode; the bound {bound} is not supported"
        ))
        }
    }
    let units = frame.units;
    let preceding = match &frame.start_bound {
        WindowFrameBound::Preceding(p) => p.as_deref(),
        WindowFrameBound::CurrentRow => {
            return Ok(match units {
                WindowFrameUnits::Rows => OverFrame::Rows(Some(0)),
                _ => OverFrame::Range(Some(0)),
            })
        }
        WindowFrameBound::Following(_) => {
            return refuse(format!(
                "OVER {units} FOLLOWING windows are not supported: a frame starts at n or UNBOUNDED PRECEDING and ends at CURRENT ROW"
            ))
        }
    };
    match (units, preceding) {
        (WindowFrameUnits::Rows, None) => Ok(OverFrame::Rows(None)),
        (WindowFrameUnits::Range, None) => Ok(OverFrame::Range(None)),
        (WindowFrameUnits::Rows, Some(ast::Expr::Value(v))) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<u64>().map(|n| OverFrame::Rows(Some(n))).or_else(|_| refuse(format!("ROWS {n} PRECEDING needs a non-negative integer number of rows"))),
            other => refuse(format!("ROWS n PRECEDING needs a number of rows, not {other}")),
        },
        (WindowFrameUnits::Range, Some(ast::Expr::Interval(interval))) => {
            interval_millis(interval).map(|p| OverFrame::Range(Some(p))).or_else(refuse)
        }
        (WindowFrameUnits::Range, Some(other)) => refuse(format!(
            "a RANGE frame over a time attribute is an interval: RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW, not {other} PRECEDING"
        )),
        (WindowFrameUnits::Rows, Some(other)) => refuse(format!(
            "ROWS n PRECEDING needs a number of rows, not {other}"
        )),
        (WindowFrameUnits::Groups, _) => refuse("GROUPS frames are not supported: use ROWS or RANGE".to_string()),
    }
}
