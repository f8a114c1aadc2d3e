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
    by_time: BTreeMap<SysTime, (C, Vec<Update<D>>)>,
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
                .or_insert_with(|| (caps_at(&first), Vec::new()))
                .1;
            if group.is_empty() {
                std::mem::swap(group, updates);
            } else {
                group.append(updates);
            }
            return;
        }
        for update in updates.drain(..) {
            self.by_time
                .entry(update.1)
                .or_insert_with(|| (caps_at(&update.1), Vec::new()))
                .1
                .push(update);
        }
    }

    /// Removes the oldest group if `frontier` has passed its time (no more updates can come).
    pub(crate) fn next_complete(
        &mut self,
        frontier: &MutableAntichain<SysTime>,
    ) -> Option<(C, Vec<Update<D>>)> {
        let entry = self.by_time.first_entry()?;
        if frontier.less_equal(entry.key()) {
            return None;
        }
        Some(entry.remove())
    }
}
