//! ASOF joins (`ASOF [LEFT] JOIN` in SQL, `asof_join` in the Table API) lowered onto the plan's
//! [`AsofJoin`](crate::plan::AsofJoin) node.
//!
//! The condition is split into its conjuncts (DuckDB's `ON` form of the ASOF join):
//! * `probe_column = build_column`: an equality key;
//! * `probe_column >= build_column` (or `>`, `<=`, `<`, either operand first), or
//!   `NEAREST(probe_column, build_column)`: the match condition, exactly one;
//! * a condition on build columns alone: a filter on the build side, applied before the match
//!   is chosen (the match is the closest build row that passes it);
//! * anything else (a condition on probe columns, or on both sides beyond the above) is
//!   refused: it would have to be checked on the match, after the choice, which is not what a
//!   filter in a subquery means; write it in `WHERE` or in a subquery.
//!
//! Columns are named as in the join's output: the probe's, then the build's, a build column
//! whose name is taken getting the suffix `0` (`t0`).

use crate::expr::{bind_scalar, Expr, FunctionRegistry};
use crate::plan::{join_schema, AsofMatch, AsofOrder, JoinKind, PlanError, RelExpr, Tolerance};
use crate::repr::Schema;

use super::equi_join::flatten_and;

/// `probe ASOF [kind] JOIN build ON condition` with `tolerance`: the condition split as the
/// [module documentation](self) says, the build-side filters applied to `build`, then the plan
/// node. Shared by the Table API and the SQL binder; `condition` names columns as the join's
/// output does ([`join_schema`]).
pub(crate) fn plan_asof_join(
    probe: RelExpr,
    build: RelExpr,
    condition: &Expr,
    kind: JoinKind,
    tolerance: Option<Tolerance>,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    const NODE: &str = "AsofJoin";
    let width = probe.schema.len();
    let joined = join_schema(&probe.schema, &build.schema, kind);
    let mut conjuncts = Vec::new();
    flatten_and(condition, &mut conjuncts);
    let (mut probe_key, mut build_key) = (Vec::new(), Vec::new());
    let mut order: Option<(usize, usize, AsofMatch)> = None;
    let mut build = build;
    for conjunct in conjuncts {
        match sides(conjunct, &joined, width)? {
            Some((p, b, None)) => {
                probe_key.push(p);
                build_key.push(b);
            }
            Some((p, b, Some(condition))) => {
                if order.replace((p, b, condition)).is_some() {
                    return Err(PlanError::invalid(
                        NODE,
                        format!("an ASOF join takes one match condition, but '{conjunct}' is a second one"),
                    ));
                }
            }
            None => {
                let mut bound = bind_scalar(conjunct, &joined, registry)?;
                if bound.is_literal_true() {
                    continue;
                }
                let mut columns = Vec::new();
                bound.columns(&mut columns);
                if columns.iter().any(|&c| c < width) {
                    return Err(PlanError::invalid(
                        NODE,
                        format!(
                            "the condition '{conjunct}' is not an equality of a probe and a build column, the match condition, or a condition on the build side alone (applied before the match is chosen); write a condition on the probe side in WHERE or in a subquery"
                        ),
                    ));
                }
                let to_build: Vec<usize> =
                    (0..joined.len()).map(|c| c.saturating_sub(width)).collect();
                bound.permute(&to_build);
                build = build.filter(bound)?;
            }
        }
    }
    let Some((p, b, condition)) = order else {
        return Err(PlanError::invalid(
            NODE,
            "an ASOF join needs a match condition between a probe and a build column: probe.t >= build.t (or >, <=, <) or NEAREST(probe.t, build.t)",
        ));
    };
    let order = AsofOrder {
        probe: p,
        build: b,
        condition,
        tolerance,
    };
    probe.asof_join(build, probe_key, build_key, order, kind)
}

/// A conjunct between a probe and a build column, as `(probe column, build column, condition)`:
/// `None` for an equality key, `Some` for a match condition (read as `probe <condition>
/// build`); `Ok(None)` for any other conjunct.
fn sides(
    conjunct: &Expr,
    joined: &Schema,
    width: usize,
) -> Result<Option<(usize, usize, Option<AsofMatch>)>, PlanError> {
    let Expr::Call { func, args } = conjunct.unaliased() else {
        return Ok(None);
    };
    let condition = match func.to_ascii_lowercase().as_str() {
        "=" => None,
        ">=" => Some(AsofMatch::Ge),
        ">" => Some(AsofMatch::Gt),
        "<=" => Some(AsofMatch::Le),
        "<" => Some(AsofMatch::Lt),
        "nearest" => Some(AsofMatch::Nearest),
        _ => return Ok(None),
    };
    let [a, b] = args.as_slice() else {
        return Ok(None);
    };
    let (Expr::Column(a), Expr::Column(b)) = (a.unaliased(), b.unaliased()) else {
        return Ok(None);
    };
    let (a, b) = (joined.resolve(a)?, joined.resolve(b)?);
    Ok(match (a < width, b < width) {
        (true, false) => Some((a, b - width, condition)),
        (false, true) => Some((b, a - width, condition.map(AsofMatch::flipped))),
        _ => None,
    })
}
