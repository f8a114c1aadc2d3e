//! Regular joins (`JOIN`, `LEFT`/`RIGHT`/`FULL OUTER JOIN`) lowered onto the plan's
//! [`Join`](crate::plan::Node::Join) node, and the split of a join condition that every join
//! lowering shares.
//!
//! The condition is split into its conjuncts: each `left_column = right_column` equality is an
//! equality key, the rest is the residual, part of the ON clause (an outer join pads a row whose
//! partners all fail it). At least one equality is required (Flink's rule). Columns are named
//! as in the join's output: the left's, then the right's, a right column whose name is taken
//! getting the suffix `0` (`k0`).

use crate::expr::{bind_scalar, Expr, FunctionRegistry, ScalarExpr};
use crate::plan::{equi_join_schema, JoinType, PlanError, RelExpr};
use crate::repr::Schema;
use differential_temporal_operators::SysTime;

/// `left <join_type> JOIN right ON condition`: the condition split into equality keys and a
/// residual, then the plan node with the environment's state TTL in system times
/// ([`RelExpr::with_state_ttl`]; 0: off). Shared by the Table API and the SQL binder;
/// `condition` names columns as the join's output does ([`equi_join_schema`]), `shown` is the
/// condition as the user wrote it, for the message.
///
/// Errors: no equality key (Flink's message, with the condition), and what [`RelExpr::join`]
/// refuses.
pub(crate) fn plan_equi_join(
    left: RelExpr,
    right: RelExpr,
    condition: &Expr,
    shown: &str,
    (join_type, state_ttl): (JoinType, SysTime),
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let joined = equi_join_schema(&left.schema, &right.schema, join_type);
    let (left_key, right_key, residual) =
        split_condition(left.schema.len(), &joined, condition, registry)?;
    if left_key.is_empty() {
        return Err(PlanError::invalid(
            "Join",
            format!(
                "Invalid join condition: {shown}. At least one equi-join predicate is required."
            ),
        ));
    }
    left.join(right, left_key, right_key, join_type, residual)?
        .with_state_ttl(state_ttl)
}

/// Splits a join condition into equality keys (a column of the first `width` columns of
/// `joined`, the left or probe side, = a column of the rest) and the residual, bound against
/// the join's output schema `joined`.
pub(crate) fn split_condition(
    width: usize,
    joined: &Schema,
    condition: &Expr,
    registry: &FunctionRegistry,
) -> Result<(Vec<usize>, Vec<usize>, Option<ScalarExpr>), PlanError> {
    let mut conjuncts = Vec::new();
    flatten_and(condition, &mut conjuncts);
    let (mut probe_key, mut build_key, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for conjunct in conjuncts {
        let pair = match conjunct.unaliased() {
            Expr::Call { func, args } if func == "=" && args.len() == 2 => {
                match (args[0].unaliased(), args[1].unaliased()) {
                    (Expr::Column(a), Expr::Column(b)) => {
                        Some((joined.resolve(a)?, joined.resolve(b)?))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match pair {
            Some((a, b)) if a < width && b >= width => {
                probe_key.push(a);
                build_key.push(b - width);
            }
            Some((a, b)) if b < width && a >= width => {
                probe_key.push(b);
                build_key.push(a - width);
            }
            _ => rest.push(conjunct.clone()),
        }
    }
    let residual = rest
        .into_iter()
        .reduce(|a, b| a.and(b))
        .map(|r| bind_scalar(&r, joined, registry))
        .transpose()?;
    Ok((probe_key, build_key, residual))
}

/// The conjuncts of `expr` (its `AND` operands, flattened), in order.
pub(crate) fn flatten_and<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match expr.unaliased() {
        Expr::Call { func, args } if func.eq_ignore_ascii_case("and") => {
            args.iter().for_each(|a| flatten_and(a, out))
        }
        other => out.push(other),
    }
}
