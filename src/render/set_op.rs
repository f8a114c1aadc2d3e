//! Rendering of the set operations with differential's `concat`, `negate`, `distinct` and
//! `threshold`, over the inputs as tables (see [`SetOpKind`] for the multiplicities):
//!
//! * `UNION ALL` is `concat`; `UNION` its `distinct`;
//! * `EXCEPT ALL` keeps `max(m - n, 0)` of each row: a `threshold` over `left - right`;
//! * `INTERSECT ALL` is `min(m, n) = m - max(m - n, 0)`: the left minus `EXCEPT ALL`;
//! * `INTERSECT` and `EXCEPT` without `ALL` are the `ALL` forms over the `distinct` inputs.

use crate::plan::SetOpKind;
use crate::repr::Row;
use differential_dataflow::VecCollection;
use differential_temporal_operators::SysTime;

use super::Collection;

type Rows<'s> = VecCollection<'s, SysTime, Row>;

/// `left <op> [ALL] right`.
pub(super) fn render<'s>(
    left: Collection<'s>,
    right: Collection<'s>,
    op: SetOpKind,
    all: bool,
) -> Collection<'s> {
    let (left, right) = (left.into_table(), right.into_table());
    let (left, right) = match all || op == SetOpKind::Union {
        true => (left, right),
        false => (left.distinct(), right.distinct()),
    };
    Collection::Table(match op {
        SetOpKind::Union if all => left.concat(right),
        SetOpKind::Union => left.concat(right).distinct(),
        SetOpKind::Except => except_all(left, right),
        SetOpKind::Intersect => left.clone().concat(except_all(left, right).negate()),
    })
}

/// Each row `max(m - n, 0)` times.
fn except_all<'s>(left: Rows<'s>, right: Rows<'s>) -> Rows<'s> {
    left.concat(right.negate())
        .threshold_named("SetOp: EXCEPT ALL", |_, count| (*count).max(0))
}
