//! Recognising an interval join (Flink's `IntervalJoin`) in a regular join's condition.
//!
//! Flink's planner turns a regular join into an interval join when both inputs are append-only
//! with rowtime attributes and the ON condition bounds one rowtime by the other on both sides
//! (`IntervalJoinUtil.extractWindowBoundsFromPredicate`): `l.rt BETWEEN r.rt - INTERVAL '1'
//! MINUTE AND r.rt + INTERVAL '1' MINUTE`, or a pair of `>=`, `>`, `<=`, `<` comparisons, each
//! side a rowtime column plus or minus a day-time interval literal. Here the join keeps its whole
//! condition as the residual (so every pair is checked exactly as written) and records the
//! [`IntervalBounds`] it implies: in final mode the join is rendered onto the watermark-driven
//! [`interval_join`](differential_temporal_operators::interval_join) operator, whose state the
//! watermark frees; in incremental mode it is the regular join (exact at every system time, late
//! rows included). On an updating input, or without both bounds, it stays a regular join, as
//! Flink plans it.

use crate::expr::func::{CmpOp, IntervalOp};
use crate::expr::{ScalarExpr, ScalarFunc, ScalarKind};
use crate::repr::Datum;

use super::RelExpr;

/// The time window of an interval join: a left and a right row may match only when
/// `lower_ms <= left.rt - right.rt <= upper_ms` (a strict comparison is widened to inclusive
/// here and stays exact in the residual).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntervalBounds {
    /// The left input's rowtime column.
    pub left_time: usize,
    /// The right input's rowtime column (in the right's schema).
    pub right_time: usize,
    /// The least `left.rt - right.rt`, in milliseconds.
    pub lower_ms: i64,
    /// The greatest `left.rt - right.rt`, in milliseconds.
    pub upper_ms: i64,
}

/// The bounds `residual` (over the joined columns, left then right) puts on the two inputs'
/// rowtimes, when both are append-only with rowtime attributes and it has a lower and an upper
/// bound among its top-level conjuncts; the tightest of each when there are several.
pub(super) fn interval_bounds(
    left: &RelExpr,
    right: &RelExpr,
    residual: Option<&ScalarExpr>,
) -> Option<IntervalBounds> {
    if !left.mode.is_append_only() || !right.mode.is_append_only() {
        return None;
    }
    let left_time = left.schema.rowtime.as_ref()?.column;
    let right_time = right.schema.rowtime.as_ref()?.column;
    let (l, r) = (left_time, left.schema.len() + right_time);
    let (mut lower, mut upper) = (None::<i64>, None::<i64>);
    let mut conjuncts = vec![residual?];
    while let Some(e) = conjuncts.pop() {
        let ScalarKind::Call { func, args, .. } = &e.kind else {
            continue;
        };
        let op = match func {
            ScalarFunc::And => {
                conjuncts.extend(args);
                continue;
            }
            ScalarFunc::Cmp(op) => *op,
            _ => continue,
        };
        let (Some((ca, oa)), Some((cb, ob))) = (time_term(&args[0]), time_term(&args[1])) else {
            continue;
        };
        // `a + oa OP b + ob`, as a bound on `d = l - r`.
        let (op, x) = match (ca, cb) {
            (a, b) if a == l && b == r => (op, ob.checked_sub(oa)?),
            (a, b) if a == r && b == l => (flip(op)?, oa.checked_sub(ob)?),
            _ => continue,
        };
        match op {
            CmpOp::Ge | CmpOp::Gt => lower = Some(lower.map_or(x, |b| b.max(x))),
            CmpOp::Le | CmpOp::Lt => upper = Some(upper.map_or(x, |b| b.min(x))),
            CmpOp::Eq | CmpOp::Ne => {}
        }
    }
    Some(IntervalBounds {
        left_time,
        right_time,
        lower_ms: lower?,
        upper_ms: upper?,
    })
}

/// `column` or `column +/- INTERVAL 'n' <day-time unit>`: the column and the offset in
/// milliseconds.
fn time_term(e: &ScalarExpr) -> Option<(usize, i64)> {
    match &e.kind {
        ScalarKind::Column(c) => Some((*c, 0)),
        ScalarKind::Call {
            func:
                ScalarFunc::Interval(IntervalOp {
                    date: false,
                    months: false,
                    negate,
                }),
            args,
            ..
        } => {
            let ScalarKind::Column(c) = args[0].kind else {
                return None;
            };
            let ScalarKind::Literal(row) = &args[1].kind else {
                return None;
            };
            let Some(Datum::IntervalDayTime(ms)) = row.iter().next() else {
                return None;
            };
            Some((c, if *negate { ms.checked_neg()? } else { ms }))
        }
        _ => None,
    }
}

/// The comparison with its operands swapped (`a < b` is `b > a`).
fn flip(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Eq | CmpOp::Ne => return None,
    })
}
