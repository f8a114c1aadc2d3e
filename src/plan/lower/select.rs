//! Projections and aggregations: `SELECT items [GROUP BY keys]` lowered onto `Map`,
//! `Project` and `Reduce`, and the walks over expressions they need (aggregate calls, columns).

use crate::expr::{bind_aggregate, bind_scalar, col, AggregateExpr, Expr, FunctionRegistry};
use crate::plan::{PlanError, RelExpr};
use crate::repr::Schema;

/// The indices of `columns` (each a column reference) in `schema`.
pub(crate) fn column_indices(
    schema: &Schema,
    columns: &[Expr],
    operation: &'static str,
) -> Result<Vec<usize>, PlanError> {
    columns
        .iter()
        .map(|c| match c.unaliased() {
            Expr::Column(name) => Ok(schema.resolve(name)?),
            other => Err(PlanError::invalid(
                "Project",
                format!("{operation} takes columns, but '{other}' is an expression"),
            )),
        })
        .collect()
}

/// The output name of select item `i`: its alias, its column, or `EXPR$i`.
fn item_name(item: &Expr, i: usize) -> String {
    item.name().unwrap_or_else(|| format!("EXPR${i}"))
}

/// `SELECT items` without aggregates: plain columns are projected, other items computed by one
/// `Map` first.
pub(crate) fn project(
    plan: RelExpr,
    items: &[Expr],
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let width = plan.schema.len();
    let mut computed = Vec::new();
    let mut columns = Vec::with_capacity(items.len());
    let mut names = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        names.push(item_name(item, i));
        match item.unaliased() {
            Expr::Column(name) => columns.push(plan.schema.resolve(name)?),
            expr => {
                let bound = bind_scalar(expr, &plan.schema, registry)?;
                columns.push(width + computed.len());
                computed.push((bound, format!("$expr{i}")));
            }
        }
    }
    let plan = if computed.is_empty() {
        plan
    } else {
        plan.map(computed)?
    };
    plan.project(columns, Some(names))
}

/// `SELECT items GROUP BY keys`: the aggregates inside the items become one `Reduce` (named
/// `$agg<i>`), then the items are computed over its output. A key that is an expression, not
/// a column (`GROUP BY UPPER(a)`), is computed by a `Map` before the `Reduce` (named by its
/// alias, else `$key<i>`), and the items may use it: each occurrence of the key expression
/// outside an aggregate reads the key column (Flink's rule that a grouped query's items are
/// keys, aggregates, or expressions over them).
pub(crate) fn aggregate(
    plan: RelExpr,
    keys: &[Expr],
    items: &[Expr],
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    aggregate_with(plan, keys, items, registry, RelExpr::reduce)
}

/// [`aggregate`] with the grouping node built by `node` from `(input, group columns, named
/// aggregates)`: `Reduce`, or a window aggregation, whose output is the group columns, the
/// columns it adds (a window's bounds, which the items may use), then the aggregates.
pub(crate) fn aggregate_with(
    plan: RelExpr,
    keys: &[Expr],
    items: &[Expr],
    registry: &FunctionRegistry,
    node: impl FnOnce(RelExpr, Vec<usize>, Vec<(AggregateExpr, String)>) -> Result<RelExpr, PlanError>,
) -> Result<RelExpr, PlanError> {
    let width = plan.schema.len();
    let mut computed = Vec::new();
    let mut key_exprs = Vec::new();
    let mut group = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        match key.unaliased() {
            Expr::Column(name) => group.push(plan.schema.resolve(name)?),
            expr => {
                let name = key.name().unwrap_or_else(|| format!("$key{i}"));
                computed.push((bind_scalar(expr, &plan.schema, registry)?, name.clone()));
                group.push(width + key_exprs.len());
                key_exprs.push((expr.clone(), col(name)));
            }
        }
    }
    let plan = if computed.is_empty() {
        plan
    } else {
        plan.map(computed)?
    };
    let mut aggregates = Vec::new();
    let rewritten: Vec<Expr> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let name = item_name(item, i);
            let item = replace_aggregates(item.unaliased(), &mut aggregates);
            let item = transform(&item, &mut |e| {
                key_exprs
                    .iter()
                    .find(|(key, _)| key == e)
                    .map(|(_, column)| column.clone())
            });
            item.alias(name)
        })
        .collect();
    let bound = aggregates
        .iter()
        .enumerate()
        .map(|(i, agg)| {
            Ok((
                bind_aggregate(agg, &plan.schema, registry)?,
                format!("$agg{i}"),
            ))
        })
        .collect::<Result<Vec<_>, PlanError>>()?;
    let reduced = node(plan, group, bound)?;
    for item in &rewritten {
        let mut missing = None;
        visit_columns(item, &mut |name| {
            if missing.is_none() && reduced.schema.index_of(name).is_none() {
                missing = Some(name.to_string());
            }
        });
        if let Some(name) = missing {
            return Err(PlanError::invalid(
                "Reduce",
                format!("expression '{name}' is neither in the group_by keys nor inside an aggregate function"),
            ));
        }
    }
    project(reduced, &rewritten, registry)
}

/// Whether `expr` has an aggregate call anywhere.
pub(crate) fn contains_aggregate(expr: &Expr) -> bool {
    match expr {
        Expr::Aggregate { .. } => true,
        Expr::Column(_) | Expr::Literal(_) => false,
        Expr::Call { args, .. } => args.iter().any(contains_aggregate),
        Expr::Cast { expr, .. } | Expr::Alias(expr, _) => contains_aggregate(expr),
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => {
            operand.as_deref().is_some_and(contains_aggregate)
                || whens
                    .iter()
                    .any(|(w, t)| contains_aggregate(w) || contains_aggregate(t))
                || otherwise.as_deref().is_some_and(contains_aggregate)
        }
    }
}

/// `expr` with every aggregate call replaced by a reference to column `$agg<i>`, the calls
/// appended to `aggregates` (an aggregate written twice is computed once).
fn replace_aggregates(expr: &Expr, aggregates: &mut Vec<Expr>) -> Expr {
    transform(expr, &mut |e| {
        if !matches!(e, Expr::Aggregate { .. }) {
            return None;
        }
        let i = match aggregates.iter().position(|a| a == e) {
            Some(i) => i,
            None => {
                aggregates.push(e.clone());
                aggregates.len() - 1
            }
        };
        Some(col(format!("$agg{i}")))
    })
}

/// `expr` rewritten top-down: a subexpression for which `f` gives a replacement is replaced
/// (and not entered), every other one rebuilt from its rewritten children. Aggregate calls are
/// not entered.
pub(crate) fn transform(expr: &Expr, f: &mut impl FnMut(&Expr) -> Option<Expr>) -> Expr {
    if let Some(replacement) = f(expr) {
        return replacement;
    }
    let mut recurse = |e: &Expr| transform(e, f);
    match expr {
        Expr::Column(_) | Expr::Literal(_) | Expr::Aggregate { .. } => expr.clone(),
        Expr::Call { func, args } => Expr::Call {
            func: func.clone(),
            args: args.iter().map(&mut recurse).collect(),
        },
        Expr::Cast { expr, to, safe } => Expr::Cast {
            expr: Box::new(recurse(expr)),
            to: to.clone(),
            safe: *safe,
        },
        Expr::Alias(inner, name) => Expr::Alias(Box::new(recurse(inner)), name.clone()),
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => Expr::Case {
            operand: operand.as_deref().map(|o| Box::new(recurse(o))),
            whens: whens
                .iter()
                .map(|(w, t)| (recurse(w), recurse(t)))
                .collect(),
            otherwise: otherwise.as_deref().map(|o| Box::new(recurse(o))),
        },
    }
}

/// Calls `f` with every column name `expr` references.
fn visit_columns(expr: &Expr, f: &mut impl FnMut(&str)) {
    match expr {
        Expr::Column(name) => f(name),
        Expr::Literal(_) => {}
        Expr::Call { args, .. } | Expr::Aggregate { args, .. } => {
            args.iter().for_each(|a| visit_columns(a, f))
        }
        Expr::Cast { expr, .. } | Expr::Alias(expr, _) => visit_columns(expr, f),
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => {
            if let Some(o) = operand {
                visit_columns(o, f);
            }
            for (w, t) in whens {
                visit_columns(w, f);
                visit_columns(t, f);
            }
            if let Some(o) = otherwise {
                visit_columns(o, f);
            }
        }
    }
}
