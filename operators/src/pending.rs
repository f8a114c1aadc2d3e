//! Updates held back until their system time is complete: the first phase of every operator
//! here that must see all of a system time's updates before acting on them (folds in `seq`
//! order, pairing retractions with insertions).

use std::collections::BTreeMap;

use timely::dataflow::operators::Capability;
use timely::progress::frontier::MutableAntichain;

use crate::SysTime;

/// An update of a collection: `(record, system time, diff)`.
pub(crate) type Update<D> = (D, SysTime, isize);

/// Updates grouped by system time, each group with a capability to emit at that time.
///
/// Capabilities are held only while a group waits, so an operator using this holds nothing once
/// every time it has seen is complete.
pub(crate) struct Pending<D> {
    by_time: BTreeMap<SysTime, (Capability<SysTime>, Vec<Update<D>>)>,
}

impl<D> Pending<D> {
    /// Nothing pending.
    pub(crate) fn new() -> Self {
        Pending {
            by_time: BTreeMap::new(),
        }
    }

    /// Moves a message's updates into their time's group. `cap` must be at or before every
    /// update's time (the message's capability, retained).
    pub(crate) fn stash(&mut self, cap: &Capability<SysTime>, updates: &mut Vec<Update<D>>) {
        for update in updates.drain(..) {
            self.by_time
                .entry(update.1)
                .or_insert_with(|| (cap.delayed(&update.1), Vec::new()))
                .1
                .push(update);
        }
    }

    /// Removes the oldest group if `frontier` has passed its time (no more updates can come).
    pub(crate) fn next_complete(
        &mut self,
        frontier: &MutableAntichain<SysTime>,
    ) -> Option<(Capability<SysTime>, Vec<Update<D>>)> {
        let entry = self.by_time.first_entry()?;
        if frontier.less_equal(entry.key()) {
            return None;
        }
        Some(entry.remove())
    }
}
