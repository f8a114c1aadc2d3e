//! Reading one key's versions from the batches of a versions trace.
//!
//! Differential's `CursorList::seek_val` seeks in every batch, including batches whose cursor
//! has run past their last key, which is out of bounds. This reader keeps one cursor per batch
//! and only seeks values in the batches that hold the key, merging them in value order.

use differential_dataflow::trace::cursor::Navigable;
use differential_dataflow::trace::Cursor;

use crate::version::VersionVal;
use crate::SysTime;

/// Cursors over the batches of a versions trace, read one key at a time.
pub(crate) struct VersionReader<C: Cursor> {
    parts: Vec<(C, C::Storage)>,
}

/// A version read at system time `now`: its value, its count before `now`, its count at `now`.
pub(crate) type Counted<E, B> = (VersionVal<E, B>, isize, isize);

impl<K, E, B, C> VersionReader<C>
where
    K: Ord + 'static,
    E: Ord + Clone + 'static,
    B: Ord + Clone + 'static,
    C: for<'a> Cursor<
        Key<'a> = &'a K,
        Val<'a> = &'a VersionVal<E, B>,
        TimeGat<'a> = &'a SysTime,
        DiffGat<'a> = &'a isize,
    >,
{
    /// A reader over `batches` (e.g. from `TraceReader::batches_through`).
    pub(crate) fn new<Bt: Navigable<Cursor = C>>(batches: Vec<Bt>) -> Self
    where
        C: Cursor<Storage = Bt>,
    {
        let parts = batches.into_iter().map(|b| (b.cursor(), b)).collect();
        VersionReader { parts }
    }

    /// Positions every batch at `key` (from its first value); keys must be asked in ascending
    /// order. Returns whether any batch holds the key.
    pub(crate) fn seek_key(&mut self, key: &K) -> bool {
        let mut found = false;
        for (cur, sto) in self.parts.iter_mut() {
            cur.seek_key(sto, key);
            found |= cur.get_key(sto) == Some(key);
        }
        found
    }

    /// Moves past the values of `key` smaller than `target` (after [`seek_key`](Self::seek_key)).
    pub(crate) fn seek_val(&mut self, key: &K, target: &VersionVal<E, B>) {
        for (cur, sto) in self.parts.iter_mut() {
            if cur.get_key(sto) == Some(key) {
                cur.seek_val(sto, target);
            }
        }
    }

    /// The next value of `key` in value order with its counts before and at `now`, or `None`
    /// when the key's values are exhausted.
    pub(crate) fn next(&mut self, key: &K, now: SysTime) -> Option<Counted<E, B>> {
        let mut least: Option<&VersionVal<E, B>> = None;
        for (cur, sto) in self.parts.iter() {
            if cur.get_key(sto) == Some(key) {
                if let Some(v) = cur.get_val(sto) {
                    if least.is_none_or(|l| v < l) {
                        least = Some(v);
                    }
                }
            }
        }
        let val = least?.clone();
        let (mut old, mut new) = (0, 0);
        for (cur, sto) in self.parts.iter_mut() {
            if cur.get_key(sto) == Some(key) && cur.get_val(sto) == Some(&val) {
                cur.map_times(sto, |t, d| {
                    if *t < now {
                        old += *d;
                    }
                    if *t <= now {
                        new += *d;
                    }
                });
                cur.step_val(sto);
            }
        }
        Some((val, old, new))
    }
}
