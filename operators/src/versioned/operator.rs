//! The timely operators behind [`VersionedTable::as_of`](super::VersionedTable::as_of) and
//! [`VersionedTable::history`](super::VersionedTable::history).
//!
//! Both are one driver ([`per_changed_key`]) with a different per-key *answer*: the driver
//! listens to the arrangement's batches and, for every key in them, evaluates the answer over
//! the key's versions before the new batches and after each distinct system time of the key's
//! new updates (in order), emitting the difference at that system time. The answer reads the
//! key's versions through a [`KeyView`], which merges the trace (prior state) with the key's new
//! updates up to the system time being evaluated.

use std::cmp::Reverse;

use differential_dataflow::consolidation::{consolidate, consolidate_updates};
use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::trace::cursor::cursor_list;
use differential_dataflow::trace::{Cursor, TraceReader};
use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Operator};
use timely::progress::Antichain;

use super::HistoryRow;
use crate::version::cursor::VersionCursor;
use crate::version::{seek_target, VersionTrace, VersionVal};
use crate::SysTime;

/// A new update of the current key: `(value, system time, diff)`.
type Fresh<E, V> = (VersionVal<E, V>, SysTime, isize);

/// The versions of one key as of one system time: the prior trace plus new updates up to `at`.
pub(super) struct KeyView<'a, K, E, V>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    /// The trace's batches, positioned at the key.
    prior: &'a mut VersionCursor<K, E, V>,
    /// The key's new updates, sorted by value then time, consolidated.
    fresh: &'a [Fresh<E, V>],
    /// New updates at system times `<= at` count; `None`: none do (the state before them).
    at: Option<SysTime>,
}

impl<K, E, V> KeyView<'_, K, E, V>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    /// The event time of the oldest new update of the key.
    fn oldest_changed(&self) -> Option<&E> {
        // `fresh` is sorted newest first (`Reverse(time)` leads the value).
        self.fresh.last().map(|(val, _, _)| &val.0 .0)
    }

    /// Visits the key's present versions (positive accumulated count) in value order, newest
    /// first, starting at `from` (or at the newest), while `visit` returns `true`.
    ///
    /// Cost: one `seek_val` per trace batch holding the key, plus one step per value visited
    /// or stepped over (values whose count accumulates to zero).
    fn walk(
        &mut self,
        from: Option<&VersionVal<E, V>>,
        mut visit: impl FnMut(&VersionVal<E, V>) -> bool,
    ) {
        let prior = &mut *self.prior;
        prior.rewind_vals();
        if let Some(from) = from {
            prior.seek_val(from);
        }
        let fresh = self.fresh;
        let mut i = from.map_or(0, |from| fresh.partition_point(|(v, _, _)| v < from));
        loop {
            // The least value among the trace's batches and the new updates.
            let next_fresh = fresh.get(i).map(|(v, _, _)| v);
            let mut count = 0isize;
            let val = match next_fresh {
                Some(f) if prior.get_val().is_none_or(|p| f < p) => f,
                _ => match prior.next_val(|_t, d| count += d) {
                    Some(p) => p,
                    None => return,
                },
            };
            while let Some((_, t, d)) = fresh.get(i).filter(|(v, _, _)| v == val) {
                if self.at.is_some_and(|at| *t <= at) {
                    count += *d;
                }
                i += 1;
            }
            if count > 0 && !visit(val) {
                return;
            }
        }
    }
}

/// Runs `answer` for every key in the arrangement's new batches, before and after each distinct
/// system time of the key's new updates, and emits the differences at those system times.
///
/// `answer(key, view, out)` pushes the key's output records for the state `view` shows.
/// Capabilities are held only during an activation (no work is deferred); the trace handle's
/// logical and physical compaction follow the batches consumed.
fn per_changed_key<'s, K, E, V, O, F>(
    arranged: &Arranged<'s, VersionTrace<K, E, V>>,
    name: &str,
    mut answer: F,
) -> VecCollection<'s, SysTime, O>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
    O: ExchangeData,
    F: FnMut(&K, &mut KeyView<'_, K, E, V>, &mut Vec<O>) + 'static,
{
    // Our own handle on the shared trace: advanced below as batches are consumed.
    let mut trace = arranged.trace.clone();
    arranged
        .stream
        .clone()
        // Pipeline: the arrangement already sharded the versions by key.
        .unary_frontier(Pipeline, name, move |_cap, _info| {
            // The trace holds the state strictly before `lower`; new batches reach `upper`.
            let mut lower = Antichain::from_elem(SysTime::default());
            let mut upper = Antichain::from_elem(SysTime::default());
            let (mut fresh, mut times): (Vec<Fresh<E, V>>, Vec<SysTime>) = (vec![], vec![]);
            let (mut before, mut after, mut diffs) = (vec![], vec![], vec![]);
            move |(input, _frontier), output| {
                // 1. Drain the new batches, retaining capabilities for their stamps.
                lower.clone_from(&upper);
                let mut caps = CapabilitySet::new();
                let mut batches = Vec::new();
                input.for_each(|cap, spans| {
                    for c in cap.retain_stamp(output.output_index()).iter() {
                        caps.insert(c.clone());
                    }
                    for span in spans.drain(..) {
                        upper.clone_from(span.upper()); // spans arrive in order
                        batches.extend(span.inner); // `None`: an interval with no updates
                    }
                });
                // 2. Per key of the new batches: answer before, then after each system time.
                if !batches.is_empty() {
                    let mut session = output.session(&caps);
                    let (mut bcur, bsto) = cursor_list(batches);
                    // The physical compaction frontier is `lower`: a clean cut.
                    let prior = trace.batches_through(lower.borrow()).expect("clean cut");
                    let mut prior = VersionCursor::new(prior);
                    while let Some(key) = bcur.get_key(&bsto) {
                        fresh.clear();
                        while let Some(val) = bcur.get_val(&bsto) {
                            bcur.map_times(&bsto, |t, d| fresh.push((val.clone(), *t, *d)));
                            bcur.step_val(&bsto);
                        }
                        consolidate_updates(&mut fresh); // sorted by value, then time
                        times.clear();
                        times.extend(fresh.iter().map(|(_, t, _)| *t));
                        times.sort_unstable();
                        times.dedup();
                        prior.seek_key(key); // keys are visited in order
                        let mut view = KeyView {
                            prior: &mut prior,
                            fresh: &fresh,
                            at: None,
                        };
                        before.clear();
                        answer(key, &mut view, &mut before);
                        for &t in &times {
                            view.at = Some(t);
                            after.clear();
                            answer(key, &mut view, &mut after);
                            diffs.extend(before.drain(..).map(|o| (o, -1isize)));
                            diffs.extend(after.iter().map(|o| (o.clone(), 1isize)));
                            consolidate(&mut diffs);
                            session.give_iterator(diffs.drain(..).map(|(o, d)| (o, t, d)));
                            std::mem::swap(&mut before, &mut after);
                        }
                        bcur.step_key(&bsto);
                    }
                }
                // 3. Nothing is deferred: `caps` is dropped here. Release the trace up to the
                //    batches consumed: we never read it before `upper` again (logical), and
                //    `upper` stays a clean cut for the next `batches_through` (physical).
                trace.advance_upper(&mut upper);
                trace.set_logical_compaction(upper.borrow());
                trace.set_physical_compaction(upper.borrow());
            }
        })
        .as_collection()
}

/// The snapshot as of `t` (see [`VersionedTable::as_of`](super::VersionedTable::as_of)).
pub(super) fn as_of<'s, K, E, V>(
    arranged: &Arranged<'s, VersionTrace<K, E, V>>,
    t: E,
    name: &str,
) -> VecCollection<'s, SysTime, (K, V)>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    let target = seek_target::<E, V>(t);
    per_changed_key(arranged, name, move |key, view, out| {
        // The first present version at or after the target is the one valid at `t` (A3).
        view.walk(Some(&target), |val| {
            if let Some(row) = &val.2 {
                out.push((key.clone(), row.clone()));
            }
            false
        });
    })
}

/// The history (see [`VersionedTable::history`](super::VersionedTable::history)).
pub(super) fn history<'s, K, E, V>(
    arranged: &Arranged<'s, VersionTrace<K, E, V>>,
    name: &str,
) -> VecCollection<'s, SysTime, (K, HistoryRow<E, V>)>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    let mut effective: Vec<VersionVal<E, V>> = Vec::new();
    per_changed_key(arranged, name, move |key, view, out| {
        // Only rows from the last present version before the oldest changed event time onwards
        // can change: the versions older than that, and their successors, are untouched.
        let Some(oldest) = view.oldest_changed().cloned() else {
            return;
        };
        effective.clear();
        view.walk(None, |val| {
            // The first value of each event time is its greatest `seq` (A4).
            if effective.last().is_none_or(|last| last.0 != val.0) {
                effective.push(val.clone());
            }
            val.0 .0 >= oldest
        });
        let mut valid_to = None;
        for (Reverse(time), Reverse(seq), row) in effective.drain(..) {
            if let Some(row) = row {
                let valid_from = time.clone();
                out.push((
                    key.clone(),
                    HistoryRow {
                        valid_from,
                        valid_to,
                        seq,
                        row,
                    },
                ));
            }
            valid_to = Some(time);
        }
    })
}
