//! The per-key state of [`ttl_join`](super::ttl_join) and its rule for one change: Flink's
//! `StreamingJoinOperator.processElement` over `JoinRecordStateView` (an inner side) and
//! `OuterJoinRecordStateView` (a kept side, whose rows also count their associations).

use std::collections::BTreeMap;

use crate::retention::Retention;
use crate::SysTime;

/// A live row of one side: its multiplicity (`> 0`), the system time it was last written at,
/// and, on a kept side, its number of associations (Flink's `numOfAssociations`: the partners
/// counted when it was written, plus the partners' changes since; a partner's expiry does not
/// change it). Its padded row is in the output while `associations <= 0`.
#[derive(Clone, Copy, Debug)]
struct Entry {
    count: isize,
    written: SysTime,
    associations: isize,
}

/// One side's live rows of a key.
pub(super) struct Rows<V> {
    rows: BTreeMap<V, Entry>,
}

impl<V: Ord> Rows<V> {
    pub(super) fn new() -> Self {
        Rows {
            rows: BTreeMap::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Frees the rows whose retention has run out at `now` (`expiry(written) <= now`): nothing
    /// is emitted, as Flink's state TTL clears state without output.
    pub(super) fn expire(&mut self, retention: &Retention<SysTime>, now: SysTime) {
        self.rows
            .retain(|_, entry| retention.expiry(&entry.written) > now);
    }
}

/// One side as a change sees it: its live rows and whether its unmatched rows are padded.
pub(super) struct Side<'a, V> {
    pub(super) rows: &'a mut Rows<V>,
    pub(super) kept: bool,
}

/// Applies the change `diff` of `row` (a side's consolidated change at `now`) against the
/// other side's live rows, giving each output row with its signed multiplicity to `emit(this,
/// other, diff)` (`None` for a padded side):
///
/// 1. `row` is joined with every live partner `o` (equal key, `pass(row, o)`): `diff * count(o)`
///    times; on a kept side without any live partner it is padded, `diff` times;
/// 2. on a kept other side, each partner's association count moves by `diff` (which writes it,
///    so its retention restarts, as Flink's `updateNumOfAssociations` is a state write); its
///    padded row is retracted when the count rises above 0 and emitted when it falls to 0;
/// 3. `row`'s own state: an insertion adds `diff` copies (its associations now the live
///    partners' count); a retraction removes up to `diff` copies of a live row and changes
///    nothing for a row no longer in state (Flink's `retractRecord`). A row still live after the
///    change is written at `now`.
///
/// Without expiry this keeps the output equal to the join of the two tables.
pub(super) fn apply<X, Y>(
    this: Side<'_, X>,
    other: Side<'_, Y>,
    (row, diff, now): (X, isize, SysTime),
    pass: impl Fn(&X, &Y) -> bool,
    emit: &mut impl FnMut(Option<&X>, Option<&Y>, isize),
) where
    X: Ord,
{
    let mut partners = 0;
    for (o, entry) in other.rows.rows.iter_mut() {
        if !pass(&row, o) {
            continue;
        }
        partners += entry.count;
        emit(Some(&row), Some(o), diff * entry.count);
        if other.kept {
            let was_padded = entry.associations <= 0;
            entry.associations += diff;
            entry.written = now;
            match (was_padded, entry.associations <= 0) {
                (true, false) => emit(None, Some(o), -entry.count),
                (false, true) => emit(None, Some(o), entry.count),
                _ => {}
            }
        }
    }
    if this.kept && partners == 0 {
        emit(Some(&row), None, diff);
    }
    let rows = &mut this.rows.rows;
    if diff > 0 {
        let entry = rows.entry(row).or_insert(Entry {
            count: 0,
            written: now,
            associations: 0,
        });
        entry.count += diff;
        entry.written = now;
        entry.associations = partners;
    } else if let Some(entry) = rows.get_mut(&row) {
        entry.count += diff;
        entry.written = now;
        if entry.count <= 0 {
            rows.remove(&row);
        }
    }
}
