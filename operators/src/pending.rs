//! Updates held back until their system time is complete: the first phase of every operator
//! here that must see all of a system time's updates before acting on them (folds in `seq`
//! order, pairing retractions with insertions).

use std::collections::BTreeMap;

use timely::progress::frontier::MutableAntichain;

use crate::SysTime;

/// An update of a collection: `(record, system time, diff)`.
pub(crate) type Update<D> = (D, SysTime, isize);

/// Updates grouped by system time, each group with the capabilities `C` to emit at that time
/// (one `Capability`, or one per output port).
///
/// Capabilities are held only while a group waits, so an operator using this holds nothing once
/// every time it has seen is complete.
pub(crate) struct Pending<D, C> {
    by_time: BTreeMap<SysTime, (C, Batches<D>)>,
}

/// A system time's updates as the messages brought them: kept as separate batches so that
/// stashing a message never reallocates and copies what was stashed before.
pub(crate) struct Batches<D> {
    batches: Vec<Vec<Update<D>>>,
}

impl<D> Batches<D> {
    fn new() -> Self {
        Batches {
            batches: Vec::new(),
        }
    }

    fn push(&mut self, update: Update<D>) {
        match self.batches.last_mut() {
            Some(batch) => batch.push(update),
            None => self.batches.push(vec![update]),
        }
    }

    /// The updates in one vector, in arrival order (one batch is moved, several are copied
    /// once into a vector of the exact size).
    pub(crate) fn into_vec(mut self) -> Vec<Update<D>> {
        if self.batches.len() == 1 {
            return self.batches.pop().unwrap_or_default();
        }
        let mut all = Vec::with_capacity(self.batches.iter().map(Vec::len).sum());
        for mut batch in self.batches {
            all.append(&mut batch);
        }
        all
    }

    /// Whether one of the updates satisfies `f`.
    pub(crate) fn any(&self, f: impl FnMut(&Update<D>) -> bool) -> bool {
        self.batches.iter().flatten().any(f)
    }

    /// The updates in arrival order, without copying them into one vector.
    pub(crate) fn into_updates(self) -> impl Iterator<Item = Update<D>> {
        self.batches.into_iter().flatten()
    }
}

impl<D, C> Pending<D, C> {
    /// Nothing pending.
    pub(crate) fn new() -> Self {
        Pending {
            by_time: BTreeMap::new(),
        }
    }

    /// Moves a message's updates into their time's group; `caps_at(t)` mints the capabilities
    /// of a time `t` seen for the first time (from the message's capability, which is at or
    /// before every update's time).
    ///
    /// A message whose updates share one time (the usual case) costs one map probe.
    pub(crate) fn stash(
        &mut self,
        updates: &mut Vec<Update<D>>,
        mut caps_at: impl FnMut(&SysTime) -> C,
    ) {
        let Some(first) = updates.first().map(|u| u.1) else {
            return;
        };
        if updates.iter().all(|u| u.1 == first) {
            let group = &mut self
                .by_time
                .entry(first)
                .or_insert_with(|| (caps_at(&first), Batches::new()))
                .1;
            group.batches.push(std::mem::take(updates));
            return;
        }
        for update in updates.drain(..) {
            self.by_time
                .entry(update.1)
                .or_insert_with(|| (caps_at(&update.1), Batches::new()))
                .1
                .push(update);
        }
    }

    /// Removes the oldest group if `frontier` has passed its time (no more updates can come),
    /// with its updates in one vector.
    pub(crate) fn next_complete(
        &mut self,
        frontier: &MutableAntichain<SysTime>,
    ) -> Option<(C, Vec<Update<D>>)> {
        self.next_complete_batches(frontier)
            .map(|(caps, batches)| (caps, batches.into_vec()))
    }

    /// As [`next_complete`](Self::next_complete), with the updates in their batches.
    pub(crate) fn next_complete_batches(
        &mut self,
        frontier: &MutableAntichain<SysTime>,
    ) -> Option<(C, Batches<D>)> {
        let entry = self.by_time.first_entry()?;
        if frontier.less_equal(entry.key()) {
            return None;
        }
        Some(entry.remove())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_time_and_releases_complete_times_oldest_first() {
        let mut pending = Pending::new();
        let mut minted = Vec::new();
        // A one-time message moves in whole; a mixed one is split by time.
        let mut one_time = vec![("a", 1, 1), ("b", 1, 1)];
        pending.stash(&mut one_time, |t| {
            minted.push(*t);
            *t
        });
        let mut mixed = vec![("c", 0, 1), ("d", 1, -1), ("e", 0, 1)];
        pending.stash(&mut mixed, |t| {
            minted.push(*t);
            *t
        });
        assert!(one_time.is_empty() && mixed.is_empty());
        // Capabilities are minted once per time.
        assert_eq!(minted, vec![1, 0]);
        let at_one = MutableAntichain::from_elem(1);
        let zero = vec![("c", 0, 1), ("e", 0, 1)];
        assert_eq!(pending.next_complete(&at_one), Some((0, zero)));
        assert_eq!(pending.next_complete(&at_one), None);
        let closed = MutableAntichain::new();
        let one = vec![("a", 1, 1), ("b", 1, 1), ("d", 1, -1)];
        assert_eq!(pending.next_complete(&closed), Some((1, one)));
        assert_eq!(pending.next_complete(&closed), None);
    }
}
