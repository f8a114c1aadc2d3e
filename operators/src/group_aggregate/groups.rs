//! The live groups of [`group_aggregate_by`](super::group_aggregate_by): a dense slab of
//! groups, each holding its key, and a hash index of slot numbers.
//!
//! The index stores only a `u32` slot per group (4 bytes, against a key and a slot in a map),
//! so it stays in cache far longer than the groups; a lookup probes it and compares the key in
//! the group's slot, the memory the update touches next anyway. A changed group is remembered
//! by its slot, so emitting its row costs no second probe. Removing a group moves the last slot
//! into the hole (the slab stays dense: memory follows the live groups), so removals are
//! applied after a system time's slots are no longer needed, by [`Groups::remove_all`].

use hashbrown::HashTable;

use crate::prefetch::{prefetch, AHEAD};

/// A group's slot in [`Groups`].
pub(super) type Slot = u32;

/// The groups with rows (see the [module docs](self)). Keys are hashed and compared by the
/// caller (a [`GroupKey`](super::GroupKey)), so a key can be looked up from where it lies in a
/// record, without being copied out of it first.
pub(super) struct Groups<K, G> {
    index: HashTable<Slot>,
    slots: Vec<(K, G)>,
}

impl<K, G> Default for Groups<K, G> {
    fn default() -> Self {
        Groups {
            index: HashTable::new(),
            slots: Vec::new(),
        }
    }
}

impl<K, G> Groups<K, G> {
    /// Asks the CPU to bring the groups a key of hash `hash` may name into cache: a fold that
    /// looks a few updates ahead (see [`ahead`]) finds their groups there when it reaches
    /// them, instead of waiting on memory for each in turn.
    pub(super) fn prefetch(&self, hash: u64) {
        for &slot in self.index.iter_hash(hash) {
            self.prefetch_slot(slot);
        }
    }

    /// Asks the CPU to bring the group in `slot` into cache.
    pub(super) fn prefetch_slot(&self, slot: Slot) {
        if let Some(group) = self.slots.get(slot as usize) {
            prefetch(group);
        }
    }

    /// The slot of the key of hash `hash` for which `is_key` holds, created with the key and
    /// group `new()` if there is none. `rehash` gives a stored key's hash (the same function of
    /// the key as `hash`), for growing the index.
    ///
    /// # Panics
    ///
    /// When a worker holds more than `u32::MAX` groups.
    pub(super) fn get_or_insert(
        &mut self,
        hash: u64,
        is_key: impl Fn(&K) -> bool,
        new: impl FnOnce() -> (K, G),
        rehash: impl Fn(&K) -> u64,
    ) -> Slot {
        let Groups { index, slots } = self;
        if let Some(&slot) = index.find(hash, |&s| is_key(&slots[s as usize].0)) {
            return slot;
        }
        let slot = Slot::try_from(slots.len()).expect("at most u32::MAX groups per worker");
        slots.push(new());
        index.insert_unique(hash, slot, |&s| rehash(&slots[s as usize].0));
        slot
    }

    /// The key and group in `slot`.
    pub(super) fn get_mut(&mut self, slot: Slot) -> (&K, &mut G) {
        let (key, group) = &mut self.slots[slot as usize];
        (key, group)
    }

    /// Removes the groups in `slots` (distinct, sorted in descending order): each hole is
    /// filled by the last slot, whose index entry is repointed. `hash` gives a stored key's
    /// hash. Slot numbers handed out before are invalid afterwards.
    pub(super) fn remove_all(&mut self, removed: &[Slot], hash: impl Fn(&K) -> u64) {
        debug_assert!(removed.windows(2).all(|w| w[0] > w[1]));
        for &slot in removed {
            let entry = (self.index).find_entry(hash(&self.slots[slot as usize].0), |&s| s == slot);
            entry.expect("a live group is indexed").remove();
            let last = (self.slots.len() - 1) as Slot;
            self.slots.swap_remove(slot as usize);
            if slot != last {
                let moved =
                    (self.index).find_mut(hash(&self.slots[slot as usize].0), |&s| s == last);
                *moved.expect("a live group is indexed") = slot;
            }
        }
    }

    /// How many groups are live.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        debug_assert_eq!(self.index.len(), self.slots.len());
        self.slots.len()
    }
}

/// Feeds `items` to `f` in order, in batches of [`AHEAD`], calling `prefetch` on each item of
/// the next batch before `f` gets the items of this one, so that the groups they will touch
/// are on their way into cache (a fold's updates and the changed groups whose rows are emitted
/// both reach groups in an order the hardware cannot predict). A batch's prefetches run in a
/// tight loop of their own: a prefetch that must first read the hash index (a likely cache
/// miss itself) then overlaps the next ones, instead of waiting behind the work of a whole
/// update as it would interleaved with `f`.
pub(super) fn ahead<K, G, U>(
    groups: &mut Groups<K, G>,
    items: impl IntoIterator<Item = U>,
    prefetch: impl Fn(&Groups<K, G>, &U),
    mut f: impl FnMut(&mut Groups<K, G>, U),
) {
    let mut items = items.into_iter();
    let mut next = Vec::with_capacity(AHEAD);
    let mut current = Vec::with_capacity(AHEAD);
    loop {
        next.extend(items.by_ref().take(AHEAD));
        for item in &next {
            prefetch(groups, item);
        }
        for item in current.drain(..) {
            f(groups, item);
        }
        if next.is_empty() {
            return;
        }
        std::mem::swap(&mut current, &mut next);
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use foldhash::fast::RandomState;

    use super::*;

    /// The slot of `key`, created with group `init()` if it has none.
    fn get_or_insert(
        groups: &mut Groups<u32, u32>,
        hasher: &RandomState,
        key: u32,
        init: impl FnOnce() -> u32,
    ) -> Slot {
        let hash = hasher.hash_one(key);
        groups.prefetch(hash);
        groups.get_or_insert(
            hash,
            |k| *k == key,
            || (key, init()),
            |k| hasher.hash_one(k),
        )
    }

    /// `ahead` feeds every item once, in order, each after its prefetch, which comes at most
    /// `2 * AHEAD` items ahead.
    #[test]
    fn ahead_feeds_every_item_in_order_after_its_prefetch() {
        for n in [0, 1, AHEAD - 1, AHEAD, AHEAD + 1, 3 * AHEAD + 5] {
            let log = std::cell::RefCell::new(Vec::new());
            let mut groups: Groups<u32, u32> = Groups::default();
            ahead(
                &mut groups,
                0..n,
                |_, &i| log.borrow_mut().push(("prefetch", i)),
                |_, i| log.borrow_mut().push(("feed", i)),
            );
            let log = log.into_inner();
            let at = |event: (&str, usize)| log.iter().position(|&e| e == event);
            let fed: Vec<usize> = (log.iter())
                .filter(|(what, _)| *what == "feed")
                .map(|&(_, i)| i)
                .collect();
            assert_eq!(fed, (0..n).collect::<Vec<_>>());
            for i in 0..n {
                let (prefetched, fed) = (at(("prefetch", i)).unwrap(), at(("feed", i)).unwrap());
                // How many items were fed when item `i` was prefetched.
                let fed_before = log[..prefetched].iter().filter(|e| e.0 == "feed").count();
                assert!(
                    prefetched < fed && fed_before + 2 * AHEAD >= i,
                    "item {i}: {log:?}"
                );
            }
        }
    }

    /// Removing groups moves the last one into each hole and keeps every key findable.
    #[test]
    fn removal_keeps_the_slab_dense_and_the_index_right() {
        let hasher = RandomState::default();
        let mut groups: Groups<u32, u32> = Groups::default();
        let hash = |k: &u32| hasher.hash_one(k);
        for k in 0..10u32 {
            assert_eq!(get_or_insert(&mut groups, &hasher, k, || k * 100), k);
        }
        groups.remove_all(&[9, 4, 1], hash);
        assert_eq!(groups.len(), 7);
        for k in [0, 2, 3, 5, 6, 7, 8] {
            let slot = get_or_insert(&mut groups, &hasher, k, || unreachable!("key {k} is live"));
            assert_eq!(groups.get_mut(slot), (&k, &mut (k * 100)));
        }
        // A removed key comes back as a new group in the next free slot.
        let slot = get_or_insert(&mut groups, &hasher, 4, || 7);
        assert_eq!((slot, groups.get_mut(slot)), (7, (&4, &mut 7)));
        groups.remove_all(&[6, 5, 4, 3, 2, 1, 0], hash);
        assert_eq!(groups.len(), 1);
        assert_eq!(get_or_insert(&mut groups, &hasher, 4, || unreachable!()), 0);
    }
}
