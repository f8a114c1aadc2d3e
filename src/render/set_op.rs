//! Rendering of the set operations with differential's `concat`, `negate` and `threshold`,
//! over the inputs as tables (see [`SetOpKind`] for the multiplicities):
//!
//! * `UNION ALL` is `concat`; `UNION` the rows the concatenation holds, once (as Flink plans
//!   it: a group aggregation over the `UNION ALL`);
//! * `EXCEPT ALL` keeps `max(m - n, 0)` of each row: a `threshold` over `left - right`;
//! * `INTERSECT ALL` is `min(m, n) = m - max(m - n, 0)`: the left minus `EXCEPT ALL`;
//! * `INTERSECT` and `EXCEPT` without `ALL` are the `ALL` forms over the inputs' rows once.
//!
//! An updating input is read as the rows it holds ([`held`]): a row retracted more often than
//! inserted counts zero times, and each such retraction is refused at its position.

use crate::plan::SetOpKind;
use crate::repr::Row;
use differential_dataflow::VecCollection;
use differential_temporal_operators::SysTime;

use super::reduce::{self, Held};
use super::{Collection, RenderContext};

type Rows<'s> = VecCollection<'s, SysTime, Row>;

/// `left <op> [ALL] right`, each input with whether it is append-only.
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    left: (Collection<'s>, bool),
    right: (Collection<'s>, bool),
    op: SetOpKind,
    all: bool,
) -> Collection<'s> {
    let node = "set operation";
    Collection::Table(match op {
        SetOpKind::Union if all => left.0.into_table().concat(right.0.into_table()),
        SetOpKind::Union => {
            let union = match (left.0, right.0) {
                (Collection::Changelog(l), Collection::Changelog(r)) => {
                    Collection::Changelog(l.concat(r))
                }
                (l, r) => Collection::Table(l.into_table().concat(r.into_table())),
            };
            held(ctx, union, left.1 && right.1, Held::Once, node)
        }
        _ => {
            let times = if all { Held::Counted } else { Held::Once };
            let left = held(ctx, left.0, left.1, times, node);
            let right = held(ctx, right.0, right.1, times, node);
            match op {
                SetOpKind::Except => except_all(left, right),
                _ => left.clone().concat(except_all(left, right).negate()),
            }
        }
    })
}

/// The rows `input` holds, each once or as often as held (`times`); an updating input's
/// retractions of rows not held are refused into `ctx` (named by the operator `node`). An
/// append-only input holds each of its rows.
pub(super) fn held<'s>(
    ctx: &mut RenderContext<'s>,
    input: Collection<'s>,
    append_only: bool,
    times: Held,
    node: &'static str,
) -> Rows<'s> {
    match (append_only, times) {
        (true, Held::Once) => input.into_table().distinct(),
        (true, Held::Counted) => input.into_table(),
        (false, _) => {
            let (rows, refused) = reduce::held(input.into_positions(Row::clone), node, times);
            ctx.refused.push(refused);
            rows
        }
    }
}

/// Each row `max(m - n, 0)` times (`m`, `n` >= 0: the counts of rows held).
fn except_all<'s>(left: Rows<'s>, right: Rows<'s>) -> Rows<'s> {
    left.concat(right.negate())
        .threshold_named("SetOp: EXCEPT ALL", |_, count| (*count).max(0))
}
