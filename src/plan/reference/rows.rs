//! Helpers of the reference interpreter over rows and change streams: refusals, key
//! projection, joined rows, and the differences between two accumulations as changes.

use std::collections::BTreeMap;

use crate::expr::{EvalError, RowArena};
use crate::repr::{Datum, DatumVec, Row, Ts};
use differential_temporal_operators::{Change, RowKind, Seq, SysTime};

use super::{Refused, Stream};
use crate::plan::JoinKind;

pub(super) fn refuse(time: SysTime, seq: Seq, reason: impl Into<String>) -> Refused {
    Refused {
        time,
        seq,
        reason: reason.into(),
    }
}

/// The columns `columns` of `row`, packed.
pub(super) fn project(row: &Row, columns: &[usize], datums: &mut DatumVec) -> Row {
    let datums = datums.borrow_with(row);
    Row::pack(columns.iter().map(|&c| datums[c]))
}

pub(super) fn has_null(key: &Row) -> bool {
    key.iter().any(|d| d.is_null())
}

pub(super) fn event_time(row: &Row, column: usize) -> Option<Ts> {
    match row.get(column)? {
        Datum::Timestamp(ts) => Some(ts),
        _ => None,
    }
}

/// The probe row joined with `version` (or padded / dropped), the residual checked on it.
pub(super) fn joined_row(
    probe: &Row,
    version: Option<&Row>,
    build_width: usize,
    kind: JoinKind,
    residual: Option<&crate::expr::ScalarExpr>,
    arena: &mut RowArena,
) -> Result<Option<Row>, EvalError> {
    let joined = |build: Option<&Row>| pad(probe, build, build_width);
    let matched = match (version, residual) {
        (Some(b), Some(r)) => {
            let candidate = joined(Some(b));
            arena.clear();
            let datums: Vec<Datum> = candidate.iter().collect();
            let pass = matches!(r.eval(&datums, arena)?, Datum::Bool(true));
            pass.then_some(candidate)
        }
        (Some(b), None) => Some(joined(Some(b))),
        (None, _) => None,
    };
    Ok(match (matched, kind) {
        (Some(row), _) => Some(row),
        (None, JoinKind::Left) => Some(joined(None)),
        (None, JoinKind::Inner) => None,
    })
}

/// The distinct system times, ascending.
pub(super) fn times(times: impl Iterator<Item = SysTime>) -> Vec<SysTime> {
    let mut times: Vec<SysTime> = times.collect();
    times.sort_unstable();
    times.dedup();
    times
}

/// A table-valued node as a stream: at each system time of its input, `f` maps the input's
/// accumulated rows (`(seq, row, multiplicity)`, positive multiplicities) to the node's rows,
/// and the stream carries the difference from the previous time. With `by_arrival` (an
/// append-only input) each arrival is its own entry with its `seq`; otherwise rows are
/// accumulated by value with `seq = 0` (an updating input has no arrival order).
pub(super) fn as_table_stream(
    changes: &Stream,
    by_arrival: bool,
    f: impl Fn(Vec<(Seq, Row, isize)>) -> Vec<Row>,
) -> Stream {
    let mut out = Vec::new();
    let mut previous: Vec<Row> = Vec::new();
    for at in times(changes.iter().map(|(t, _)| *t)) {
        let mut table: BTreeMap<(Seq, Row), isize> = BTreeMap::new();
        for (_, change) in changes.iter().filter(|(t, _)| *t <= at) {
            let seq = if by_arrival { change.seq } else { 0 };
            *table.entry((seq, change.row.clone())).or_insert(0) += change.kind.sign();
        }
        let rows = table
            .into_iter()
            .filter(|(_, count)| *count > 0)
            .map(|((seq, row), count)| (seq, row, count))
            .collect();
        let mut now = f(rows);
        now.sort();
        diff_into(&mut out, at, &previous, &now);
        previous = now;
    }
    out
}

pub(super) fn consolidate(mut rows: Vec<(Row, isize)>) -> Vec<(Row, isize)> {
    rows.sort();
    let mut out: Vec<(Row, isize)> = Vec::new();
    for (row, count) in rows {
        match out.last_mut() {
            Some((last, c)) if *last == row => *c += count,
            _ => out.push((row, count)),
        }
    }
    out.retain(|(_, c)| *c != 0);
    out
}

/// Appends to `out`, at `time`, the changes that turn the rows `before` into `after`.
pub(super) fn diff_into(out: &mut Stream, time: SysTime, before: &[Row], after: &[Row]) {
    let count = |rows: &[Row]| rows.iter().map(|r| (r.clone(), 1)).collect::<Vec<_>>();
    diff_counts_into(
        out,
        time,
        &consolidate(count(before)),
        &consolidate(count(after)),
    );
}

/// Appends to `out`, at `time`, the changes that turn the multiset `before` into `after`
/// (both consolidated); inserts carry `seq = time`, as a sink's changelog of a table does.
pub(super) fn diff_counts_into(
    out: &mut Stream,
    time: SysTime,
    before: &[(Row, isize)],
    after: &[(Row, isize)],
) {
    let mut delta: BTreeMap<&Row, isize> = BTreeMap::new();
    for (row, c) in before {
        *delta.entry(row).or_insert(0) -= c;
    }
    for (row, c) in after {
        *delta.entry(row).or_insert(0) += c;
    }
    for (row, d) in delta {
        let kind = if d > 0 {
            RowKind::Insert
        } else {
            RowKind::Delete
        };
        for _ in 0..d.unsigned_abs() {
            out.push((time, Change::new(time, kind, row.clone())));
        }
    }
}

/// The probe row, then the build row or `build_width` NULLs.
pub(super) fn pad(probe: &Row, build: Option<&Row>, build_width: usize) -> Row {
    let mut row = Row::new();
    let mut packer = row.packer();
    packer.extend_by_row(probe.as_row_ref());
    match build {
        Some(b) => packer.extend_by_row(b.as_row_ref()),
        None => packer.extend(std::iter::repeat_n(Datum::Null, build_width)),
    }
    row
}
