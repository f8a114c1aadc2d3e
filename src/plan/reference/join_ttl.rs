//! The reference of the regular join with a state TTL ([`EquiJoin::state_ttl`]): Flink's
//! streaming join over state that expires, simulated row by row over two flat lists of live
//! rows (no keyed state, no timers).
//!
//! At each system time `t` of either input, in order: every live row last written at or before
//! `t - ttl` is dropped (nothing is emitted); then each input's changes at `t`, consolidated
//! (the left's first), are applied one row at a time:
//! * the row is joined with every live row of the other side with an equal key free of NULLs
//!   whose joined row passes the residual, `diff * count` times; a kept side's row without any
//!   such partner is padded, `diff` times;
//! * on a kept other side, each partner's association count moves by `diff` and the partner is
//!   written at `t`; its padded row is retracted when the count rises above 0 and emitted when
//!   it falls back to 0 (a partner's expiry never changes a count);
//! * an insertion adds to the row's live copies (or makes it live), its association count set
//!   to its live partners' count; a retraction removes up to `diff` live copies, and does
//!   nothing to state for a row no longer live; a row still live is written at `t`.

use crate::expr::RowArena;
use crate::plan::{joined_row, EquiJoin};
use crate::repr::{Datum, DatumVec, Row};
use differential_temporal_operators::SysTime;

use super::{consolidate, diff_counts_into, has_null, project, times, Stream};

/// A live row of one side.
struct Live {
    row: Row,
    /// Its key, `None` when a key column is NULL (it never matches).
    key: Option<Row>,
    count: isize,
    written: SysTime,
    associations: isize,
}

/// The regular join `join` of the change streams `left` and `right` with rows expiring after
/// `ttl` system times (see the [module docs](self)).
pub(super) fn evaluate(join: &EquiJoin, ttl: SysTime, left: &Stream, right: &Stream) -> Stream {
    let mut sides: [Vec<Live>; 2] = [Vec::new(), Vec::new()];
    let mut out = Vec::new();
    for t in times(left.iter().chain(right).map(|(t, _)| *t)) {
        for side in &mut sides {
            side.retain(|live| live.written.saturating_add(ttl) > t);
        }
        let mut emitted = Vec::new();
        for (which, stream) in [left, right].into_iter().enumerate() {
            let changes = consolidate(
                (stream.iter().filter(|(time, _)| *time == t))
                    .map(|(_, change)| (change.row.clone(), change.kind.sign()))
                    .collect(),
            );
            for (row, diff) in changes {
                apply(join, &mut sides, which, (row, diff, t), &mut emitted);
            }
        }
        diff_counts_into(&mut out, t, &[], &consolidate(emitted));
    }
    out
}

/// One consolidated change of side `which` (0: left, 1: right), its output pushed to `out`.
fn apply(
    join: &EquiJoin,
    sides: &mut [Vec<Live>; 2],
    which: usize,
    (row, diff, t): (Row, isize, SysTime),
    out: &mut Vec<(Row, isize)>,
) {
    let widths = (join.left.schema.len(), join.right.schema.len());
    let kept = [join.join_type.keeps_left(), join.join_type.keeps_right()];
    let columns = [&join.left_key, &join.right_key];
    let k = project(&row, columns[which], &mut DatumVec::new());
    let key = (!has_null(&k)).then_some(k);
    // The output row of this side's `x` and the other side's `o` (either may be missing).
    let pair = |x: Option<&Row>, o: Option<&Row>| match which {
        0 => joined_row(x, o, widths),
        _ => joined_row(o, x, widths),
    };
    let mut arena = RowArena::new();
    let mut passes = |joined: &Row| match &join.residual {
        None => true,
        Some(residual) => {
            arena.clear();
            let datums: Vec<Datum> = joined.iter().collect();
            matches!(residual.eval(&datums, &arena), Ok(Datum::Bool(true)))
        }
    };
    let [left, right] = sides;
    let (mine, other) = match which {
        0 => (left, right),
        _ => (right, left),
    };
    let mut partners = 0;
    for o in other.iter_mut() {
        if key.is_none() || o.key != key {
            continue;
        }
        let joined = pair(Some(&row), Some(&o.row));
        if !passes(&joined) {
            continue;
        }
        partners += o.count;
        out.push((joined, diff * o.count));
        if kept[1 - which] {
            let before = o.associations <= 0;
            o.associations += diff;
            o.written = t;
            let after = o.associations <= 0;
            if before != after {
                let sign = if after { 1 } else { -1 };
                out.push((pair(None, Some(&o.row)), sign * o.count));
            }
        }
    }
    if kept[which] && partners == 0 {
        out.push((pair(Some(&row), None), diff));
    }
    match mine.iter().position(|live| live.row == row) {
        Some(i) => {
            let live = &mut mine[i];
            live.count += diff;
            live.written = t;
            if diff > 0 {
                live.associations = partners;
            }
            if live.count <= 0 {
                mine.remove(i);
            }
        }
        None if diff > 0 => mine.push(Live {
            row,
            key,
            count: diff,
            written: t,
            associations: partners,
        }),
        None => {}
    }
}
