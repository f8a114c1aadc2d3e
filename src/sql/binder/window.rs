//! Window aggregation in SQL, in its two forms, both lowered onto the Table API's
//! [`window_aggregate`] (the plan's [`WindowAgg`](crate::plan::WindowAgg)):
//!
//! * the window table-valued functions in `FROM`, then `GROUP BY window_start, window_end,
//!   keys`: `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))`, `HOP(.., slide, size [,
//!   offset])`, `CUMULATE(.., step, size [, offset])`, `SESSION(.., gap)`, arguments positional
//!   or named (`DATA =>`, `TIMECOL =>`, `SIZE =>`, `SLIDE =>`, `STEP =>`, `OFFSET =>`, `GAP
//!   =>`); the items may use `window_start`, `window_end`, `window_time`. A session is per
//!   `GROUP BY` key, as Flink's window operator keeps its sessions per group key;
//!   `SESSION(TABLE t PARTITION BY k, ..)` (or `PARTITION BY (k1, k2)`) is accepted when every
//!   partition column is a group key (sqlparser does not read the clause: the parser's
//!   `parser::session` rewrite turns it into the internal named argument `PARTITION_KEYS => (k1,
//!   k2)`);
//! * the legacy group windows: `GROUP BY TUMBLE(ts, size), keys` (or `HOP(ts, slide, size)`,
//!   `SESSION(ts, gap)`) with `TUMBLE_START`, `TUMBLE_END`, `TUMBLE_ROWTIME` (`HOP_*`,
//!   `SESSION_*`) of the same arguments in the items.
//!
//! A window TVF whose rows are read (no `GROUP BY`, `HAVING` or aggregate: `SELECT * FROM
//! TABLE(TUMBLE(..))`, a projection, a WHERE, a join, an `OVER` or the `ROW_NUMBER()` of a
//! window Top-N over them) is the plan's [`WindowAssign`](crate::plan::WindowAssign) ([`rows`],
//! wherever a `FROM` takes a relation); SESSION's rows are refused, as in Flink.
//!
//! In final mode the allowed lateness is `SET 'table.exec.emit.allow-lateness' = '10 ms'`.

use sqlparser::ast::{
    self, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, SetExpr, Spanned,
};
use sqlparser::tokenizer::Span;

use super::expr::interval_millis;
use super::over;
use super::query::{Binder, Bound};
use super::scope::Scope;
use crate::expr::{col, Expr};
use crate::plan::lower::{contains_aggregate, time_column, transform, window_aggregate};
use crate::plan::{PlanError, RelExpr, WindowSpec};
use crate::repr::{DataType, Datum, Field, Schema};
use crate::sql::error::SqlError;
use crate::sql::parser::session::PARTITION_KEYS;

/// The window a query groups by.
pub(super) struct SqlWindow {
    /// The time attribute column.
    time: Expr,
    spec: WindowSpec,
    /// A legacy group window: the call in `GROUP BY`, whose `_START`/`_END`/`_ROWTIME` the items
    /// use; `None` for a window TVF.
    legacy: Option<(String, Vec<Expr>)>,
    /// A SESSION TVF's `PARTITION BY` columns.
    partition: Vec<String>,
}

/// The window TVF of a `SELECT` whose `FROM` is one and which aggregates it (`GROUP BY`,
/// `HAVING` or an aggregate in the items: a window aggregation), with its table bound and, in
/// scope, the table's columns and `window_start`, `window_end`, `window_time`. A select that
/// reads the TVF's rows gets `None` here and the rows from its `FROM` ([`rows`]).
pub(super) fn tvf(
    binder: &Binder<'_>,
    select: &ast::Select,
) -> Result<Option<(Bound, SqlWindow)>, SqlError> {
    let [from] = select.from.as_slice() else {
        return Ok(None);
    };
    let Some((input, window)) = call(binder, &from.relation)? else {
        return Ok(None);
    };
    let grouped =
        !matches!(&select.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
    let aggregated = || {
        !over::used(select)
            && (binder.select_list(&input.scope, &select.projection, None))
                .is_ok_and(|items| items.iter().any(contains_aggregate))
    };
    if !(grouped || select.having.is_some() || aggregated()) {
        return Ok(None);
    }
    if !from.joins.is_empty() {
        return Err(SqlError::at(
            from.relation.span(),
            "a window table-valued function cannot be joined here: aggregate it in a subquery",
        ));
    }
    Ok(Some((input, window)))
}

/// The rows of the window TVF `factor` (Flink's window TVF read as a table: each row once per
/// window, then `window_start`, `window_end`, `window_time`), or `None` when `factor` is not
/// a window TVF. Errors: those of [`RelExpr::window_assign`] (a SESSION window, a time column
/// that is no time attribute...) and of the arguments.
pub(super) fn rows(
    binder: &Binder<'_>,
    factor: &ast::TableFactor,
) -> Result<Option<Bound>, SqlError> {
    let Some((input, window)) = call(binder, factor)? else {
        return Ok(None);
    };
    let plan = time_column(&input.plan, &window.time)
        .and_then(|time| input.plan.window_assign(time, window.spec))
        .map_err(|e| SqlError::at(factor.span(), e.to_string()))?;
    Ok(Some(Bound {
        plan,
        scope: input.scope,
    }))
}

/// The window TVF call `factor` (`TABLE(TUMBLE(..))` and the others), with its table bound
/// and, in scope, the table's columns and `window_start`, `window_end`, `window_time`; `None`
/// when `factor` is not one.
fn call(
    binder: &Binder<'_>,
    factor: &ast::TableFactor,
) -> Result<Option<(Bound, SqlWindow)>, SqlError> {
    // `TABLE(TUMBLE(..))`, or the call alone (`FROM TUMBLE(TABLE t, ..)`), which Flink takes
    // too (Calcite reads a table function call in FROM without TABLE(..)).
    let (function, args, alias) = match factor {
        ast::TableFactor::TableFunction {
            expr: ast::Expr::Function(f),
            alias,
        } => match &f.args {
            FunctionArguments::List(list) => (&f.name, list.args.as_slice(), alias),
            _ => (&f.name, &[][..], alias),
        },
        ast::TableFactor::Table {
            name,
            args: Some(args),
            alias,
            version: None,
            ..
        } => (name, args.args.as_slice(), alias),
        _ => return Ok(None),
    };
    let name = function.to_string().to_ascii_uppercase();
    let parameters: &[&str] = match name.as_str() {
        "TUMBLE" => &["DATA", "TIMECOL", "SIZE", "OFFSET"],
        "HOP" => &["DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"],
        "CUMULATE" => &["DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"],
        "SESSION" => &["DATA", "TIMECOL", "GAP", PARTITION_KEYS],
        _ => return Ok(None),
    };
    let span = factor.span();
    let args = arguments(&name, args, parameters, span)?;
    // The argument of parameter `p`; `None` when not given (or not a parameter of this TVF).
    let arg = |p: &str| {
        parameters
            .iter()
            .position(|q| *q == p)
            .and_then(|i| args[i])
    };
    let plan = match arg("DATA") {
        Some(ast::Expr::Subquery(q)) => match q.body.as_ref() {
            SetExpr::Table(t) => match &t.table_name {
                Some(table) => binder.table(&ast::ObjectName::from(vec![table.clone()]))?,
                None => return Err(SqlError::at(span, "DATA takes TABLE name")),
            },
            _ => return Err(SqlError::at(span, "DATA takes TABLE name")),
        },
        _ => {
            return Err(SqlError::at(
                span,
                format!("{name} takes TABLE name as its first argument"),
            ))
        }
    };
    let time = match arg("TIMECOL") {
        Some(ast::Expr::Function(d)) if d.name.to_string().eq_ignore_ascii_case("DESCRIPTOR") => {
            match &d.args {
                FunctionArguments::List(l) => match l.args.as_slice() {
                    [FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::Identifier(i)))] => {
                        col(i.value.clone())
                    }
                    _ => return Err(SqlError::at(span, "DESCRIPTOR takes one column")),
                },
                _ => return Err(SqlError::at(span, "DESCRIPTOR takes one column")),
            }
        }
        _ => {
            return Err(SqlError::at(
                span,
                format!("{name} takes DESCRIPTOR(time column) as its second argument"),
            ))
        }
    };
    let millis = |p: &str| -> Result<Option<i64>, SqlError> {
        match arg(p) {
            None => Ok(None),
            Some(ast::Expr::Interval(i)) => interval_millis(i)
                .map(Some)
                .map_err(|m| SqlError::at(span, m)),
            Some(other) => Err(SqlError::at(
                other.span(),
                format!("{p} of {name} takes an INTERVAL, not {other}"),
            )),
        }
    };
    let required = |p: &str| {
        millis(p)?.ok_or_else(|| SqlError::at(span, format!("{name} needs its {p} argument")))
    };
    let spec = match name.as_str() {
        "TUMBLE" => WindowSpec::tumble(required("SIZE")?),
        "HOP" => WindowSpec::hop(required("SIZE")?, required("SLIDE")?),
        "SESSION" => WindowSpec::session(required("GAP")?),
        _ => WindowSpec::cumulate(required("SIZE")?, required("STEP")?),
    };
    let offset = match parameters.contains(&"OFFSET") {
        true => millis("OFFSET")?.unwrap_or(0),
        false => 0,
    };
    let spec = spec.with_offset(offset);
    let partition = match arg(PARTITION_KEYS) {
        None => Vec::new(),
        Some(keys) => partition_columns(keys)?,
    };
    // The names the query sees: the table's columns and the window's.
    let mut fields = plan.schema.fields.clone();
    for column in ["window_start", "window_end", "window_time"] {
        fields.push(Field::new(column, DataType::Timestamp(3).not_null()));
    }
    let seen = Schema::new(fields).map_err(|e| SqlError::at(span, e.to_string()))?;
    let qualifier = alias.as_ref().map(|a| a.name.value.clone());
    let scope = Scope::of(&RelExpr::scan("", seen, false), qualifier.as_deref());
    let window = SqlWindow {
        time,
        spec,
        legacy: None,
        partition,
    };
    Ok(Some((Bound { plan, scope }, window)))
}

/// The columns of a SESSION TVF's `PARTITION BY`, as the parser's `rewrite_partition` passes
/// them.
fn partition_columns(keys: &ast::Expr) -> Result<Vec<String>, SqlError> {
    let column = |e: &ast::Expr| match e {
        ast::Expr::Identifier(i) => Ok(i.value.clone()),
        ast::Expr::CompoundIdentifier(parts) => {
            Ok(parts.last().map(|p| p.value.clone()).unwrap_or_default())
        }
        other => Err(SqlError::at(
            other.span(),
            format!("PARTITION BY of SESSION takes columns, not {other}"),
        )),
    };
    match keys {
        ast::Expr::Tuple(items) => items.iter().map(column).collect(),
        ast::Expr::Nested(item) => Ok(vec![column(item)?]),
        other => Ok(vec![column(other)?]),
    }
}

/// The TVF's arguments in the order of `parameters`, from positional or named arguments (the
/// positional ones fill the parameters in order, whatever named ones stand between them).
fn arguments<'a>(
    function: &str,
    args: &'a [FunctionArg],
    parameters: &[&str],
    span: Span,
) -> Result<Vec<Option<&'a ast::Expr>>, SqlError> {
    let mut out = vec![None; parameters.len()];
    let mut positional = 0;
    for arg in args {
        let (slot, expr) = match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
                if positional < parameters.len() && parameters[positional] != PARTITION_KEYS =>
            {
                positional += 1;
                (positional - 1, e)
            }
            FunctionArg::Named {
                name,
                arg: FunctionArgExpr::Expr(e),
                ..
            } => match parameters
                .iter()
                .position(|p| p.eq_ignore_ascii_case(&name.value))
            {
                Some(slot) => (slot, e),
                None => {
                    return Err(SqlError::at(
                        span,
                        format!(
                            "{function} has no parameter {}; its parameters: {}",
                            name.value,
                            parameters
                                .iter()
                                .filter(|p| **p != PARTITION_KEYS)
                                .copied()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ))
                }
            },
            other => {
                return Err(SqlError::at(
                    span,
                    format!("unsupported argument {other} of {function}"),
                ))
            }
        };
        out[slot] = Some(expr);
    }
    Ok(out)
}

/// The legacy group window among the `GROUP BY` keys (`TUMBLE(ts, size)` or `HOP(ts, slide,
/// size)`), removed from them.
pub(super) fn legacy(keys: &mut Vec<Expr>) -> Result<Option<SqlWindow>, String> {
    let is_window = |k: &Expr| matches!(k, Expr::Call { func, .. } if ["tumble", "hop", "session"].contains(&func.as_str()));
    let Some(at) = keys.iter().position(is_window) else {
        return Ok(None);
    };
    let Expr::Call { func, args } = keys.remove(at) else {
        unreachable!("a window call")
    };
    if keys.iter().any(is_window) {
        return Err("a query can group by one group window only".to_string());
    }
    let interval = |e: &Expr| match e {
        Expr::Literal(l) => match l.datum() {
            Datum::IntervalDayTime(ms) => Some(ms),
            _ => None,
        },
        _ => None,
    };
    let spec = match (func.as_str(), args.as_slice()) {
        ("tumble", [_, size]) => interval(size).map(WindowSpec::tumble),
        ("session", [_, gap]) => interval(gap).map(WindowSpec::session),
        ("hop", [_, slide, size]) => interval(size)
            .zip(interval(slide))
            .map(|(s, l)| WindowSpec::hop(s, l)),
        _ => None,
    };
    let Some(spec) = spec else {
        return Err(format!(
            "{}: the group window takes a time attribute and {}",
            func.to_uppercase(),
            match func.as_str() {
                "tumble" => "a size INTERVAL",
                "session" => "a gap INTERVAL",
                _ => "a slide and a size INTERVAL",
            }
        ));
    };
    Ok(Some(SqlWindow {
        time: args[0].clone(),
        spec,
        legacy: Some((func, args)),
        partition: Vec::new(),
    }))
}

/// `SELECT items GROUP BY window, keys` over `plan`: a TVF's `window_start` and `window_end`
/// (and `window_time`) are taken out of the keys, which must name both; a legacy window's
/// `TUMBLE_START(..)` and so on become the window's columns.
pub(super) fn aggregate(
    window: &SqlWindow,
    plan: RelExpr,
    keys: Vec<Expr>,
    items: &[Expr],
    binder: &Binder<'_>,
) -> Result<RelExpr, PlanError> {
    let invalid = |m: String| PlanError::invalid("WindowAggregate", m);
    let lateness = binder.catalog.plan_options().allow_lateness_ms;
    let is = |k: &Expr, name: &str| matches!(k, Expr::Column(c) if c == name);
    let (keys, items) = match &window.legacy {
        None => {
            if !(keys.iter().any(|k| is(k, "window_start"))
                && keys.iter().any(|k| is(k, "window_end")))
            {
                return Err(invalid(format!(
                    "a window table-valued function ({}) is supported followed by GROUP BY window_start, window_end [, keys] (a window aggregation)",
                    window.spec.name()
                )));
            }
            if let Some(missing) = window
                .partition
                .iter()
                .find(|p| !keys.iter().any(|k| is(k, p)))
            {
                return Err(invalid(format!(
                    "the PARTITION BY column '{missing}' of SESSION must be a GROUP BY key (sessions are kept per group key)"
                )));
            }
            let keys = keys
                .into_iter()
                .filter(|k| {
                    !["window_start", "window_end", "window_time"]
                        .iter()
                        .any(|n| is(k, n))
                })
                .collect();
            (keys, items.to_vec())
        }
        Some((func, args)) => {
            let mut wrong = None;
            let items = items
                .iter()
                .map(|item| {
                    transform(item, &mut |e| {
                        let Expr::Call { func: f, args: a } = e else {
                            return None;
                        };
                        let (kind, property) = f.split_once('_')?;
                        let column = match property {
                            "start" => "window_start",
                            "end" => "window_end",
                            "rowtime" => "window_time",
                            _ => return None,
                        };
                        if kind != "tumble" && kind != "hop" && kind != "session" {
                            return None;
                        }
                        if kind != func || a != args {
                            wrong = Some(format!(
                                "{} must have the arguments of the group window {}(..) of the GROUP BY",
                                f.to_uppercase(),
                                func.to_uppercase()
                            ));
                        }
                        Some(col(column))
                    })
                })
                .collect();
            if let Some(message) = wrong {
                return Err(invalid(message));
            }
            (keys, items)
        }
    };
    window_aggregate(
        plan,
        &window.time,
        window.spec,
        &keys,
        &items,
        lateness,
        &binder.registry,
    )
}
