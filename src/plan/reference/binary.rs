//! The reference of the two-input table operators, the regular join and the set operations:
//! each a function of the two inputs' multisets at a system time, recomputed at every time.

use std::collections::BTreeMap;

use crate::expr::RowArena;
use crate::plan::{joined_row, EquiJoin, SetOpKind};
use crate::repr::{Datum, DatumVec, Row};
use differential_temporal_operators::SysTime;

use super::{consolidate, diff_counts_into, has_null, project, snapshot, times, Stream};

/// A multiset: rows with positive multiplicities.
type Table = [(Row, isize)];

/// The stream of a node whose table at each system time is `f(left's table, right's table)`.
pub(super) fn table_stream(
    left: &Stream,
    right: &Stream,
    f: impl Fn(&Table, &Table) -> Vec<(Row, isize)>,
) -> Stream {
    let table = |stream: &Stream, at: SysTime| {
        let mut rows = snapshot(stream, at);
        rows.retain(|(_, count)| *count > 0);
        rows
    };
    let mut out = Vec::new();
    let mut previous = Vec::new();
    for at in times(left.iter().chain(right).map(|(t, _)| *t)) {
        let now = consolidate(f(&table(left, at), &table(right, at)));
        diff_counts_into(&mut out, at, &previous, &now);
        previous = now;
    }
    out
}

/// The regular join of two tables, pair by pair: a pair matches when its keys are equal and
/// free of NULLs and the residual is TRUE (an error counts as not TRUE); rows of a kept side
/// without a match are padded.
pub(super) fn equi_join(join: &EquiJoin, left: &Table, right: &Table) -> Vec<(Row, isize)> {
    let key = |row: &Row, columns: &[usize]| {
        let k = project(row, columns, &mut DatumVec::new());
        (!has_null(&k)).then_some(k)
    };
    let widths = (join.left.schema.len(), join.right.schema.len());
    let joined = |l: Option<&Row>, r: Option<&Row>| joined_row(l, r, widths);
    let mut arena = RowArena::new();
    let mut passes = |row: &Row| match &join.residual {
        None => true,
        Some(residual) => {
            arena.clear();
            let datums: Vec<Datum> = row.iter().collect();
            matches!(residual.eval(&datums, &arena), Ok(Datum::Bool(true)))
        }
    };
    let right_keys: Vec<Option<Row>> = right.iter().map(|(r, _)| key(r, &join.right_key)).collect();
    let mut right_matched = vec![false; right.len()];
    let mut out = Vec::new();
    for (l, l_count) in left {
        let mut matched = false;
        if let Some(k) = key(l, &join.left_key) {
            for (j, (r, r_count)) in right.iter().enumerate() {
                if right_keys[j].as_ref() != Some(&k) {
                    continue;
                }
                let row = joined(Some(l), Some(r));
                if passes(&row) {
                    matched = true;
                    right_matched[j] = true;
                    out.push((row, l_count * r_count));
                }
            }
        }
        if !matched && join.join_type.keeps_left() {
            out.push((joined(Some(l), None), *l_count));
        }
    }
    if join.join_type.keeps_right() {
        for ((r, r_count), matched) in right.iter().zip(right_matched) {
            if !matched {
                out.push((joined(None, Some(r)), *r_count));
            }
        }
    }
    out
}

/// `left <op> [ALL] right` over multiplicities (the table of [`SetOpKind`]).
pub(super) fn set_op(op: SetOpKind, all: bool, left: &Table, right: &Table) -> Vec<(Row, isize)> {
    let mut counts: BTreeMap<&Row, (isize, isize)> = BTreeMap::new();
    for (row, m) in left {
        counts.entry(row).or_default().0 += m;
    }
    for (row, n) in right {
        counts.entry(row).or_default().1 += n;
    }
    counts
        .into_iter()
        .map(|(row, (m, n))| {
            let (m, n) = match all {
                true => (m, n),
                false => (m.min(1), n.min(1)),
            };
            let times = match op {
                SetOpKind::Union if all => m + n,
                SetOpKind::Union => (m + n).min(1),
                SetOpKind::Intersect => m.min(n),
                SetOpKind::Except => (m - n).max(0),
            };
            (row.clone(), times)
        })
        .collect()
}
