//! Temporal joins: `FOR SYSTEM_TIME AS OF` against a versioned table (event time), the
//! processing-time lookup join, and the join with a temporal table function's history.
//!
//! The condition is split into equality keys and a residual as [`split_condition`] does; the
//! residual is checked on the chosen version only (Flink's rule B5). Columns are named as in the
//! join's output: the probe's columns, then the build's, a build column whose name is taken
//! getting the suffix `0` (`currency0`).

use crate::expr::{bind_scalar, col, Expr, FunctionRegistry};
use crate::plan::{check_unfiltered_versions, join_schema, JoinKind, PlanError, RelExpr};
use crate::repr::{Rowtime, Schema};

use super::equi_join::{flatten_and, split_condition};

/// `probe JOIN build FOR SYSTEM_TIME AS OF probe.rowtime ON condition` (or `.proctime`, a
/// lookup join, when `lookup`): the condition split into equality keys and a residual, then
/// the plan node. Shared by the Table API and the SQL binder. `condition` names columns as the
/// join's output does ([`join_schema`]).
pub(crate) fn plan_temporal_join(
    probe: RelExpr,
    build: RelExpr,
    condition: &Expr,
    kind: JoinKind,
    lookup: bool,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    if !lookup {
        check_unfiltered_versions(&build)?;
    }
    plan_keyed_join(probe, build, condition, kind, lookup, registry)
}

/// [`plan_temporal_join`] without its check of the build side's versions (a temporal table function's
/// history may be filtered).
fn plan_keyed_join(
    probe: RelExpr,
    build: RelExpr,
    condition: &Expr,
    kind: JoinKind,
    lookup: bool,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let (width, build_width) = (probe.schema.len(), build.schema.len());
    let joined = join_schema(&probe.schema, &build.schema, kind);
    let (probe, condition) = computed_probe_keys(probe, &joined, condition, lookup, registry)?;
    let with_keys = probe.schema.len();
    let joined = join_schema(&probe.schema, &build.schema, kind);
    let (pk, bk, residual) = split_condition(with_keys, &joined, &condition, registry)?;
    let join = if lookup {
        probe.lookup_join(build, pk, bk, kind, residual)?
    } else {
        probe.temporal_join(build, pk, bk, kind, residual)?
    };
    if with_keys == width {
        return Ok(join);
    }
    // The computed key columns leave the output.
    let columns = (0..width).chain(with_keys..with_keys + build_width);
    join.project(columns.collect(), None)
}

/// The probe with a column appended per equality of `condition` between a build column and an
/// expression of probe columns that is not a column itself (`mod(b.auction, 10000) = s.key`),
/// and the condition comparing that column instead: Flink computes such a key on the probe
/// side (Calcite's `JoinPushExpressionsRule`). A lookup join also takes a constant
/// (`d.id = 1`, Flink's constant lookup key); an event-time temporal join keeps a constant in
/// its residual condition, checked on the chosen version, as Flink does.
fn computed_probe_keys(
    probe: RelExpr,
    joined: &Schema,
    condition: &Expr,
    lookup: bool,
    registry: &FunctionRegistry,
) -> Result<(RelExpr, Expr), PlanError> {
    let width = probe.schema.len();
    let build_column = |e: &Expr| match e.unaliased() {
        Expr::Column(c) => joined.resolve(c).is_ok_and(|i| i >= width),
        _ => false,
    };
    let probe_side = |e: &Expr| {
        if matches!(e.unaliased(), Expr::Column(_)) {
            return None;
        }
        let bound = bind_scalar(e, &probe.schema, registry).ok()?;
        let mut columns = Vec::new();
        bound.columns(&mut columns);
        (lookup || !columns.is_empty()).then_some(bound)
    };
    let mut conjuncts = Vec::new();
    flatten_and(condition, &mut conjuncts);
    let (mut keys, mut rewritten) = (Vec::new(), Vec::new());
    for conjunct in conjuncts {
        let pair = match conjunct.unaliased() {
            Expr::Call { func, args } if func == "=" && args.len() == 2 => {
                match (build_column(&args[0]), build_column(&args[1])) {
                    (true, false) => probe_side(&args[1]).map(|p| (p, &args[0])),
                    (false, true) => probe_side(&args[0]).map(|p| (p, &args[1])),
                    _ => None,
                }
            }
            _ => None,
        };
        match pair {
            Some((key, build)) => {
                let name = (keys.len()..)
                    .map(|n| format!("$key{n}"))
                    .find(|n| joined.index_of(n).is_none())
                    .expect("a free name");
                rewritten.push(col(name.as_str()).eq(build.clone()));
                keys.push((key, name));
            }
            None => rewritten.push(conjunct.clone()),
        }
    }
    if keys.is_empty() {
        return Ok((probe, condition.clone()));
    }
    let condition = rewritten
        .into_iter()
        .reduce(Expr::and)
        .expect("a conjunct per key");
    Ok((probe.map(keys)?, condition))
}

/// `probe, LATERAL TABLE (function(probe.time)) ... condition`: the probe's column `time`
/// becomes its rowtime and the probe joins the function's `history` (a versioned table) as of
/// it (Flink's temporal table function join). Shared by the Table API and the SQL binder.
pub(crate) fn plan_temporal_function_join(
    mut probe: RelExpr,
    history: RelExpr,
    time: usize,
    condition: &Expr,
    kind: JoinKind,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    if kind != JoinKind::Inner {
        return Err(PlanError::invalid(
            "TemporalTableFunctionJoin",
            "a temporal table function join supports INNER JOIN only (as in Flink): use \
             join_lateral / LATERAL TABLE without LEFT, or a LEFT JOIN .. FOR SYSTEM_TIME AS OF a \
             versioned table",
        ));
    }
    set_rowtime(&mut probe.schema, time)?;
    plan_keyed_join(probe, history, condition, kind, false, registry)
}

/// Makes `column` the rowtime attribute (keeping the declared watermark delay if it already is
/// one, else a delay of 0); it must be a TIMESTAMP or TIMESTAMP_LTZ column.
pub(crate) fn set_rowtime(schema: &mut Schema, column: usize) -> Result<(), PlanError> {
    if schema.rowtime.as_ref().is_some_and(|r| r.column == column) {
        return Ok(());
    }
    let field = &schema.fields[column];
    if !field.ty.data_type.is_timestamp() {
        return Err(PlanError::invalid(
            "TemporalJoin",
            format!(
                "the time attribute '{}' must be of type TIMESTAMP or TIMESTAMP_LTZ, but is of type {}",
                field.name, field.ty
            ),
        ));
    }
    schema.rowtime = Some(Rowtime {
        column,
        delay_ms: 0,
    });
    Ok(())
}
