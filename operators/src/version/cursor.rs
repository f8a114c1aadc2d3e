//! Reading one key's versions from the batches of a versions trace.
//!
//! Every operator that reads a versions trace ([`VersionSpine`]) reads it through
//! [`VersionCursor`] rather than differential's `CursorList` (from `cursor_list`), because of
//! how `CursorList::seek_val` behaves in differential-dataflow 0.26.0:
//!
//! * `CursorList::seek_val` (`src/trace/cursor/cursor_list.rs`, lines 185-190) calls `seek_val`
//!   on *every* batch cursor of the list, not only on those positioned at the current key.
//! * A batch cursor that has run past its batch's last key (after a `seek_key` to a key greater
//!   than all of its keys) has `key_cursor == keys.len()`. Its `seek_val`
//!   (`src/trace/implementations/ord_neu.rs`, lines 584-586) asks for
//!   `vals.bounds(key_cursor)`, which reads `offs[key_cursor + 1]` (`ord_neu.rs`, lines 68-70):
//!   index out of bounds, a panic.
//!
//! So seeking a key's values panics as soon as one batch of the trace holds only smaller keys,
//! e.g. a key present only in an early batch, then a later key's values sought. This cursor
//! keeps one cursor per batch, remembers which of them hold the current key, and seeks, merges
//! and steps only those.
//!
//! Cost: a trace has O(log n) batches. [`seek_key`](VersionCursor::seek_key) seeks every batch
//! (like `CursorList`); [`seek_val`](VersionCursor::seek_val) is one seek per batch holding the
//! key; each value read by [`next_val`](VersionCursor::next_val) compares the current values of
//! the batches holding the key and steps those at the least one.

use differential_dataflow::trace::{BatchCursor, Cursor, Navigable, TraceReader};
use differential_dataflow::ExchangeData;

use super::{VersionSpine, VersionVal};
use crate::SysTime;

/// A batch of a versions trace.
pub(crate) type VersionBatch<K, E, V> = <VersionSpine<K, E, V> as TraceReader>::Batch;

/// One cursor per batch of a versions trace, read one key at a time, keys in ascending order.
///
/// Values of the current key come out merged across batches in arrangement order (newest
/// version first), each once, with the updates of every batch holding it.
pub(crate) struct VersionCursor<K, E, V>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    cursors: Vec<BatchCursor<VersionSpine<K, E, V>>>,
    batches: Vec<VersionBatch<K, E, V>>,
    /// Indices of the cursors positioned at the current key.
    at_key: Vec<usize>,
}

impl<K, E, V> VersionCursor<K, E, V>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    /// A cursor over `batches` (e.g. from `TraceReader::batches_through`).
    pub(crate) fn new(batches: Vec<VersionBatch<K, E, V>>) -> Self {
        let cursors = batches.iter().map(|b| b.cursor()).collect();
        VersionCursor {
            cursors,
            batches,
            at_key: Vec::new(),
        }
    }

    /// Moves every batch forward to `key`, positioned at the key's first value. Keys must be
    /// sought in ascending order (seeking the current key again rewinds its values). Returns
    /// whether any batch holds the key.
    pub(crate) fn seek_key(&mut self, key: &K) -> bool {
        self.at_key.clear();
        for (i, (cur, batch)) in self.cursors.iter_mut().zip(&self.batches).enumerate() {
            cur.seek_key(batch, key);
            if cur.get_key(batch) == Some(key) {
                self.at_key.push(i);
            }
        }
        !self.at_key.is_empty()
    }

    /// Moves back to the current key's first value.
    pub(crate) fn rewind_vals(&mut self) {
        for &b in &self.at_key {
            self.cursors[b].rewind_vals(&self.batches[b]);
        }
    }

    /// Moves forward past the current key's values smaller than `target`.
    pub(crate) fn seek_val(&mut self, target: &VersionVal<E, V>) {
        for &b in &self.at_key {
            self.cursors[b].seek_val(&self.batches[b], target);
        }
    }

    /// The current key's next value (the least among the batches holding the key), without
    /// moving; `None` when its values are exhausted.
    pub(crate) fn get_val(&self) -> Option<&VersionVal<E, V>> {
        self.at_key
            .iter()
            .filter_map(|&b| self.cursors[b].get_val(&self.batches[b]))
            .min()
    }

    /// Moves past the current key's next value, calling `logic` with each of its updates
    /// `(system time, diff)` in every batch holding it, and returns it; `None` when the key's
    /// values are exhausted.
    pub(crate) fn next_val(
        &mut self,
        logic: impl FnMut(&SysTime, isize),
    ) -> Option<&VersionVal<E, V>> {
        let VersionCursor {
            cursors,
            batches,
            at_key,
        } = self;
        step(cursors, batches, at_key, logic)
    }

    /// Moves past the current key's values up to and including the next one present at system
    /// time `now` (its updates at times `<= now` sum to non-zero), and returns that one; `None`
    /// when there is none.
    pub(crate) fn next_present(&mut self, now: SysTime) -> Option<&VersionVal<E, V>> {
        self.next_present_since(0, now)
    }

    /// As [`next_present`](Self::next_present), counting only the values that were not present
    /// before system time `since` (their updates at times `< since` sum to zero): the versions
    /// received since a key's state expired (see [`crate::retention`]).
    pub(crate) fn next_present_since(
        &mut self,
        since: SysTime,
        now: SysTime,
    ) -> Option<&VersionVal<E, V>> {
        let VersionCursor {
            cursors,
            batches,
            at_key,
        } = self;
        loop {
            let (mut count, mut before) = (0, 0);
            let val = step(cursors, batches, at_key, |t, d| {
                if *t <= now {
                    count += d;
                }
                if *t < since {
                    before += d;
                }
            })?;
            if count != 0 && before == 0 {
                return Some(val);
            }
        }
    }
}

/// [`VersionCursor::next_val`] over the cursor's fields, so that the value returned borrows
/// only the batches.
fn step<'b, K, E, V>(
    cursors: &mut [BatchCursor<VersionSpine<K, E, V>>],
    batches: &'b [VersionBatch<K, E, V>],
    at_key: &[usize],
    mut logic: impl FnMut(&SysTime, isize),
) -> Option<&'b VersionVal<E, V>>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    if let [b] = *at_key {
        // One batch holds the key (the common case once the trace has merged): no minimum.
        let (cur, batch) = (&mut cursors[b], &batches[b]);
        let val = cur.get_val(batch)?;
        cur.map_times(batch, |t, d| logic(t, *d));
        cur.step_val(batch);
        return Some(val);
    }
    let val = at_key
        .iter()
        .filter_map(|&b| cursors[b].get_val(&batches[b]))
        .min()?;
    for &b in at_key {
        let (cur, batch) = (&mut cursors[b], &batches[b]);
        if cur.get_val(batch) == Some(val) {
            cur.map_times(batch, |t, d| logic(t, *d));
            cur.step_val(batch);
        }
    }
    Some(val)
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::rc::Rc;

    use differential_dataflow::trace::cursor::cursor_list;
    use differential_dataflow::trace::implementations::ValBuilder;
    use differential_dataflow::trace::{Builder, Cursor};

    use super::{VersionBatch, VersionCursor};
    use crate::version::{seek_target, VersionVal};
    use crate::SysTime;

    type Val = VersionVal<i64, char>;

    /// A batch of `((key, value), system time, diff)` updates, given in sorted order.
    fn batch(updates: Vec<((u8, Val), SysTime, isize)>) -> VersionBatch<u8, i64, char> {
        let mut builder = ValBuilder::<u8, Val, SysTime, isize>::default();
        builder.push(&mut updates.clone());
        Rc::new(builder.done().expect("non-empty batch"))
    }

    fn val(time: i64, seq: u64, row: char) -> Val {
        (Reverse(time), Reverse(seq), Some(row))
    }

    /// Three batches: key 1 only in the first, key 2 in the first and the last, key 3 only in
    /// the second. After seeking key 3 the first and last batches' cursors are past their last
    /// key.
    fn batches() -> Vec<VersionBatch<u8, i64, char>> {
        vec![
            batch(vec![
                ((1, val(5, 0, 'a')), 0, 1),
                ((2, val(7, 2, 'c')), 0, 1),
            ]),
            batch(vec![
                ((3, val(9, 4, 'e')), 1, 1),
                ((3, val(4, 3, 'd')), 1, 1),
            ]),
            batch(vec![
                ((2, val(8, 5, 'f')), 2, 1),
                ((2, val(7, 2, 'c')), 2, -1),
                ((2, val(3, 1, 'b')), 2, 1),
            ]),
        ]
    }

    /// Reads the current key's values with their summed diffs.
    fn drain(cursor: &mut VersionCursor<u8, i64, char>) -> Vec<(Val, isize)> {
        let mut out = Vec::new();
        loop {
            let mut count = 0;
            let Some(v) = cursor.next_val(|_, d| count += d) else {
                return out;
            };
            out.push((*v, count));
        }
    }

    /// The differential-dataflow 0.26 behaviour this cursor works around (see the module docs):
    /// if this stops panicking, `CursorList` could be used again.
    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn cursor_list_seek_val_panics_past_a_batch_end() {
        let (mut cur, sto) = cursor_list(batches());
        cur.seek_key(&sto, &3);
        cur.seek_val(&sto, &seek_target(5));
    }

    #[test]
    fn seeks_values_of_a_key_absent_from_exhausted_batches() {
        let mut cursor = VersionCursor::new(batches());
        assert!(cursor.seek_key(&1));
        assert_eq!(drain(&mut cursor), vec![(val(5, 0, 'a'), 1)]);
        // Key 2 is merged from the first and last batches, newest first, diffs summed.
        assert!(cursor.seek_key(&2));
        assert_eq!(
            drain(&mut cursor),
            vec![
                (val(8, 5, 'f'), 1),
                (val(7, 2, 'c'), 0),
                (val(3, 1, 'b'), 1)
            ]
        );
        // Key 3: the first and last batches are exhausted; seeking its values must not panic.
        assert!(cursor.seek_key(&3));
        cursor.seek_val(&seek_target(5));
        assert_eq!(cursor.get_val(), Some(&val(4, 3, 'd')));
        assert_eq!(drain(&mut cursor), vec![(val(4, 3, 'd'), 1)]);
        assert_eq!(cursor.get_val(), None);
        // Rewinding goes back to the key's first value.
        cursor.rewind_vals();
        assert_eq!(cursor.get_val(), Some(&val(9, 4, 'e')));
        assert!(!cursor.seek_key(&4));
        cursor.seek_val(&seek_target(5));
        assert_eq!(drain(&mut cursor), vec![]);
    }
}
