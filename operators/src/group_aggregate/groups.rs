//! The live groups of [`group_aggregate`](super::group_aggregate): a dense slab of groups, each
//! holding its key, and a hash index of slot numbers.
//!
//! The index stores only a `u32` slot per group (4 bytes, against a key and a slot in a map),
//! so it stays in cache far longer than the groups; a lookup probes it and compares the key in
//! the group's slot, the memory the update touches next anyway. A changed group is remembered
//! by its slot, so emitting its row costs no second probe. Removing a group moves the last slot
//! into the hole (the slab stays dense: memory follows the live groups), so removals are
//! applied after a system time's slots are no longer needed, by [`Groups::remove_all`].

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};

use foldhash::fast::RandomState;
use hashbrown::HashTable;

use crate::SysTime;

/// A group's slot in [`Groups`].
pub(super) type Slot = u32;

/// The groups with rows, by key (see the [module docs](self)).
pub(super) struct Groups<K, G> {
    index: HashTable<Slot>,
    slots: Vec<(K, G)>,
    hasher: RandomState,
}

impl<K, G> Default for Groups<K, G> {
    fn default() -> Self {
        Groups {
            index: HashTable::new(),
            slots: Vec::new(),
            hasher: RandomState::default(),
        }
    }
}

impl<K: Hash + Eq, G> Groups<K, G> {
    /// The hash of `key`, after asking the CPU to bring the groups it may name into cache: a
    /// fold that looks a few updates ahead (see [`fold_ahead`]) finds their groups there when
    /// it reaches them, instead of waiting on memory for each in turn.
    pub(super) fn prefetch(&self, key: &K) -> u64 {
        let hash = self.hasher.hash_one(key);
        for &slot in self.index.iter_hash(hash) {
            prefetch(&self.slots[slot as usize]);
        }
        hash
    }

    /// The slot of `key`, whose hash is `hash` (from [`prefetch`](Self::prefetch)), created
    /// with group `init()` if it has none (`key` is moved into the new slot, or dropped).
    ///
    /// # Panics
    ///
    /// When a worker holds more than `u32::MAX` groups.
    pub(super) fn get_or_insert(&mut self, hash: u64, key: K, init: impl FnOnce() -> G) -> Slot {
        let Groups {
            index,
            slots,
            hasher,
        } = self;
        if let Some(&slot) = index.find(hash, |&s| slots[s as usize].0 == key) {
            return slot;
        }
        let slot = Slot::try_from(slots.len()).expect("at most u32::MAX groups per worker");
        slots.push((key, init()));
        index.insert_unique(hash, slot, |&s| hasher.hash_one(&slots[s as usize].0));
        slot
    }

    /// The key and group in `slot`.
    pub(super) fn get_mut(&mut self, slot: Slot) -> (&K, &mut G) {
        let (key, group) = &mut self.slots[slot as usize];
        (key, group)
    }

    /// Removes the groups in `slots` (distinct, sorted in descending order): each hole is
    /// filled by the last slot, whose index entry is repointed. Slot numbers handed out before
    /// are invalid afterwards.
    pub(super) fn remove_all(&mut self, removed: &[Slot]) {
        debug_assert!(removed.windows(2).all(|w| w[0] > w[1]));
        for &slot in removed {
            let hash = self.hasher.hash_one(&self.slots[slot as usize].0);
            let entry = self.index.find_entry(hash, |&s| s == slot);
            entry.expect("a live group is indexed").remove();
            let last = (self.slots.len() - 1) as Slot;
            self.slots.swap_remove(slot as usize);
            if slot != last {
                let hash = self.hasher.hash_one(&self.slots[slot as usize].0);
                let moved = self.index.find_mut(hash, |&s| s == last);
                *moved.expect("a live group is indexed") = slot;
            }
        }
    }

    /// The slot of `key`, created with group `init()` if it has none.
    #[cfg(test)]
    fn get_or_insert_now(&mut self, key: K, init: impl FnOnce() -> G) -> Slot {
        let hash = self.prefetch(&key);
        self.get_or_insert(hash, key, init)
    }

    /// How many groups are live.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        debug_assert_eq!(self.index.len(), self.slots.len());
        self.slots.len()
    }
}

/// How many updates [`fold_ahead`] looks ahead: enough memory requests in flight to hide most
/// of a cache miss, few enough that the prefetched groups are still cached when used.
const AHEAD: usize = 8;

/// Feeds keyed `updates` `((key, value), time, diff)` to `fold` in order, with the hash of
/// their key, prefetching the groups of the next [`AHEAD`] updates first.
pub(super) fn fold_ahead<K: Hash + Eq, G, U>(
    groups: &mut Groups<K, G>,
    updates: impl IntoIterator<Item = ((K, U), SysTime, isize)>,
    mut fold: impl FnMut(&mut Groups<K, G>, u64, ((K, U), SysTime, isize)),
) {
    let mut window = VecDeque::with_capacity(AHEAD + 1);
    for update in updates {
        window.push_back((groups.prefetch(&(update.0).0), update));
        if window.len() > AHEAD {
            if let Some((hash, update)) = window.pop_front() {
                fold(groups, hash, update);
            }
        }
    }
    for (hash, update) in window {
        fold(groups, hash, update);
    }
}

/// Asks the CPU to load the cache lines of `value` (at most two), without waiting for them.
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = (value as *const T).cast::<i8>();
        for offset in (0..std::mem::size_of::<T>().min(128)).step_by(64) {
            // SAFETY: prefetching is a hint; it never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Removing groups moves the last one into each hole and keeps every key findable.
    #[test]
    fn removal_keeps_the_slab_dense_and_the_index_right() {
        let mut groups: Groups<u32, u32> = Groups::default();
        for k in 0..10u32 {
            assert_eq!(groups.get_or_insert_now(k, || k * 100), k);
        }
        groups.remove_all(&[9, 4, 1]);
        assert_eq!(groups.len(), 7);
        for k in [0, 2, 3, 5, 6, 7, 8] {
            let slot = groups.get_or_insert_now(k, || unreachable!("key {k} is live"));
            assert_eq!(groups.get_mut(slot), (&k, &mut (k * 100)));
        }
        // A removed key comes back as a new group in the next free slot.
        let slot = groups.get_or_insert_now(4, || 7);
        assert_eq!((slot, groups.get_mut(slot)), (7, (&4, &mut 7)));
        groups.remove_all(&[6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups.get_or_insert_now(4, || unreachable!()), 0);
    }
}
