//! A firing of the final-mode temporal join: the waiting probe rows the watermark has passed,
//! each joined with the version of its key valid at its event time, emitted in `seq` order.
//!
//! The driver ([`super::final_mode`]) decides *when* to fire; this module decides *what*: it
//! takes the ready rows out of the [`WaitingRuns`], walks each key's versions once with a
//! [`Picker`] (the per-key step) and builds the output rows.

use std::cmp::Reverse;

use differential_dataflow::ExchangeData;

use super::{chosen, JoinKey, JoinKind, Joined};
use crate::version::cursor::{VersionBatch, VersionCursor};
use crate::version::seek_target;
use crate::watermark::Watermark;
use crate::{Change, SysTime};

/// A probe row taken into the join, waiting for the watermark to pass its event time.
pub(super) struct Waiting<K, E, P> {
    /// The row's event time (`probe_time(row)`).
    pub(super) time: E,
    /// The join key.
    pub(super) key: K,
    /// The probe change, moved into its output row when it fires.
    pub(super) change: Change<P>,
    /// The probe record's diff, carried to the output.
    pub(super) diff: isize,
}

/// The waiting probe rows: one run per visited epoch, each sorted newest time first, so the rows
/// a watermark has passed are a suffix of every run.
pub(super) struct WaitingRuns<K, E, P> {
    runs: Vec<Vec<Waiting<K, E, P>>>,
}

impl<K, E, P> Default for WaitingRuns<K, E, P> {
    fn default() -> Self {
        WaitingRuns { runs: Vec::new() }
    }
}

impl<K, E: Ord, P> WaitingRuns<K, E, P> {
    /// Adds the rows of one epoch.
    pub(super) fn push(&mut self, run: Vec<Waiting<K, E, P>>)
    where
        E: Clone,
    {
        if !run.is_empty() {
            self.runs
                .push(sorted_by_key(run, |r| Reverse(r.time.clone())));
        }
    }

    /// `true` iff no row waits.
    pub(super) fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// `true` iff the watermark `w` has passed some waiting row.
    pub(super) fn has_ready(&self, w: &Watermark<E>) -> bool {
        // Each run's oldest row is its last.
        let passed = |run: &Vec<Waiting<K, E, P>>| run.last().is_some_and(|r| w.passed(&r.time));
        self.runs.iter().any(passed)
    }

    /// Removes and returns the rows `w` has passed.
    pub(super) fn take_ready(&mut self, w: &Watermark<E>) -> Vec<Waiting<K, E, P>> {
        let mut ready = Vec::new();
        for run in self.runs.iter_mut() {
            let from = run.partition_point(|r| !w.passed(&r.time));
            ready.extend(run.drain(from..));
        }
        self.runs.retain(|run| !run.is_empty());
        ready
    }
}

/// What a firing reads: the versions in `batches` present at system time `seen` and not present
/// before `since(key)` (the system time at which the key's state last expired, or `0`).
pub(super) struct Read<K, E, B, S>
where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    pub(super) batches: Vec<VersionBatch<K, E, B>>,
    pub(super) seen: SysTime,
    pub(super) since: S,
}

/// An output row of a firing: key, joined change, diff.
pub(super) type Fired<K, P, B> = (K, Joined<P, B>, isize);

/// Joins each of the `ready` probe rows with the version of its key valid at its time among the
/// versions `read` gives. Returns the output rows in `seq` order (INNER drops the unmatched).
///
/// The rows are sorted (through indices) by (key, time newest first) and each key's versions are
/// walked once in the same order by [`Picker::pick_key`].
pub(super) fn fire<K, E, P, B, R, S>(
    ready: Vec<Waiting<K, E, P>>,
    read: Read<K, E, B, S>,
    kind: JoinKind,
    residual: &R,
) -> Vec<Fired<K, P, B>>
where
    K: ExchangeData + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    R: Fn(&P, &B) -> bool,
    S: Fn(&K) -> SysTime,
{
    // Sorted through indices: the rows themselves stay where they are.
    let mut order: Vec<usize> = (0..ready.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        let (a, b) = (&ready[a], &ready[b]);
        a.key.cmp(&b.key).then_with(|| b.time.cmp(&a.time))
    });
    let mut picker = Picker {
        reader: VersionCursor::new(read.batches),
        seen: read.seen,
        versions: Vec::new(),
        picks: vec![None; ready.len()],
    };
    for rows in order.chunk_by(|&a, &b| ready[a].key == ready[b].key) {
        let key = &ready[rows[0]].key;
        picker.pick_key(key, (read.since)(key), rows, &ready);
    }
    picker.emit_in_seq_order(ready, kind, residual)
}

/// The per-key step of a firing: chooses the version each ready row joins.
struct Picker<K, E, B>
where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    /// The build versions, positioned key by key in ascending key order.
    reader: VersionCursor<K, E, B>,
    /// Versions present at this system time count.
    seen: SysTime,
    /// The distinct versions chosen so far (`None`: a delete version).
    versions: Vec<Option<B>>,
    /// Per ready row, the index in `versions` of its version (`None`: no version).
    picks: Vec<Option<usize>>,
}

/// The version found for the previous row of a key: its event time and its pick.
struct Found<E> {
    time: E,
    pick: usize,
}

impl<K, E, B> Picker<K, E, B>
where
    K: ExchangeData + JoinKey,
    E: ExchangeData,
    B: ExchangeData,
{
    /// Picks the version of `key` valid at each of its ready rows `rows` (indices into `ready`,
    /// newest time first) among the versions received since system time `since`.
    ///
    /// A row reuses the version found for the previous row when that version's time is still
    /// `<=` its own; otherwise it seeks forward (versions are ordered newest first too), so each
    /// key's versions are walked once, with one O(log n) seek per distinct version chosen.
    fn pick_key<P>(&mut self, key: &K, since: SysTime, rows: &[usize], ready: &[Waiting<K, E, P>]) {
        // A NULL key matches no version (see [`JoinKey`]); nor does an absent one.
        if key.is_null() || !self.reader.seek_key(key) {
            return;
        }
        // `None` once a seek found nothing: no older version exists for the later rows either.
        let mut found: Option<Option<Found<E>>> = None;
        for &r in rows {
            let t = &ready[r].time;
            let stale = match &found {
                None => true,
                Some(Some(f)) => f.time > *t,
                Some(None) => false,
            };
            if stale {
                found = Some(self.seek(t, since));
            }
            self.picks[r] = found.as_ref().and_then(|f| f.as_ref().map(|f| f.pick));
        }
    }

    /// The key's newest version with time `<= t`, present at `seen` and received since `since`.
    fn seek(&mut self, t: &E, since: SysTime) -> Option<Found<E>> {
        self.reader.seek_val(&seek_target(t.clone()));
        let (Reverse(time), _, row) = self.reader.next_present_since(since, self.seen)?;
        let found = Found {
            time: time.clone(),
            pick: self.versions.len(),
        };
        self.versions.push(row.clone());
        Some(found)
    }

    /// The output rows of the `ready` rows in `seq` order, each probe row moved into its row.
    fn emit_in_seq_order<P, R>(
        self,
        ready: Vec<Waiting<K, E, P>>,
        kind: JoinKind,
        residual: &R,
    ) -> Vec<Fired<K, P, B>>
    where
        P: ExchangeData,
        R: Fn(&P, &B) -> bool,
    {
        let rows: Vec<(Waiting<K, E, P>, Option<usize>)> =
            ready.into_iter().zip(self.picks).collect();
        // Equal (seq, kind) rows keep their order, as in the waiting runs.
        let rows = sorted_by_key(rows, |(r, _)| (r.change.seq, r.change.kind));
        let mut out = Vec::with_capacity(rows.len());
        for (row, pick) in rows {
            let version = pick.map(|i| &self.versions[i]);
            out.extend(fired(row, version, kind, residual));
        }
        out
    }
}

/// The output row of the ready `row` given the version chosen for it (`None`: no version;
/// `Some(None)`: a delete version), the probe row moved into it; `None` if INNER drops it.
pub(super) fn fired<K, E, P, B: Clone, R>(
    row: Waiting<K, E, P>,
    version: Option<&Option<B>>,
    kind: JoinKind,
    residual: &R,
) -> Option<Fired<K, P, B>>
where
    R: Fn(&P, &B) -> bool,
{
    let matched = chosen(kind, residual, &row.change.row, version)?.cloned();
    let Change { seq, kind, row: p } = row.change;
    Some((row.key, Change::new(seq, kind, (p, matched)), row.diff))
}

/// `rows` sorted by `key`, stably (equal keys keep their order), each row moved once: the
/// `(key, index)` pairs are sorted, not the rows, which for the firing's rows (a probe change,
/// its key and time: ~100 bytes as packed rows) is several times fewer bytes moved than sorting
/// them in place.
pub(super) fn sorted_by_key<T, S: Ord>(rows: Vec<T>, key: impl Fn(&T) -> S) -> Vec<T> {
    let mut order: Vec<(S, usize)> = rows.iter().map(key).zip(0..).collect();
    order.sort_unstable();
    let mut slots: Vec<Option<T>> = rows.into_iter().map(Some).collect();
    (order.into_iter())
        .map(|(_, i)| slots[i].take().expect("a permutation takes each row once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::sorted_by_key;

    /// Sorting through the index permutation is stable and moves every row.
    #[test]
    fn sorted_by_key_is_a_stable_sort() {
        let rows = vec![(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (1, 'e')];
        let mut expected = rows.clone();
        expected.sort_by_key(|r| r.0);
        assert_eq!(sorted_by_key(rows, |r| r.0), expected);
        assert_eq!(sorted_by_key(Vec::<(u8, char)>::new(), |r| r.0), vec![]);
    }
}
