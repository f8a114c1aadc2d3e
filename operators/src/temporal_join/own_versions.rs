//! The build versions a final-mode temporal join keeps itself, bounded by rule B11: the state
//! Flink's `TemporalRowTimeJoinOperator` keeps, without a shared arrangement (see
//! [`temporal_join_final_pruned`](super::temporal_join_final_pruned)).

use std::collections::{BTreeMap, VecDeque};
use std::hash::{BuildHasher, Hash};

use differential_dataflow::consolidation::consolidate;
use differential_dataflow::ExchangeData;
use foldhash::fast::RandomState;
use hashbrown::HashTable;

use super::build_side::BuildSide;
use super::due::Due;
use super::firing::{fired, Fired, Waiting};
use super::idle::IdleKeys;
use super::{JoinKey, JoinKind};
use crate::prefetch::{prefetch, AHEAD};
use crate::watermark::Watermark;
use crate::{SysTime, Version};

/// One version of a key with its count (present iff not zero).
type Counted<E, B> = (Version<E, B>, isize);

/// The build versions a final-mode join keeps itself (see
/// [`temporal_join_final_pruned`](super::temporal_join_final_pruned)).
pub(super) struct OwnVersions<K, E, B> {
    /// Versions received, by system time, until the epochs before them are visited.
    received: BTreeMap<SysTime, Vec<(K, Version<E, B>, isize)>>,
    /// Per key, its present versions, hashed by `hasher`.
    versions: HashTable<(K, KeyVersions<E, B>)>,
    hasher: RandomState,
    /// `(event time, key)`: when the watermark passes the time, the key's oldest versions may
    /// be pruned. At most one live entry a key (see [`KeyVersions::due`]).
    due: Due<E, K>,
}

/// A key's present versions.
struct KeyVersions<E, B> {
    /// In `(time, seq, row)` order.
    list: Vec<Counted<E, B>>,
    /// The time of the key's live entry in `due` (an entry of another time is stale): at
    /// most the time of its second oldest version group, whose passing lets the oldest go
    /// (`None`: no entry, the key has one group).
    due: Option<E>,
}

impl<E, B> Default for KeyVersions<E, B> {
    fn default() -> Self {
        KeyVersions {
            list: Vec::new(),
            due: None,
        }
    }
}

impl<E: Ord + Clone, B: Ord> KeyVersions<E, B> {
    /// Adds `diff` to the count of version `v`.
    fn update(&mut self, v: Version<E, B>, diff: isize) {
        let list = &mut self.list;
        // Versions mostly arrive newest last: the common case is a push.
        let at = match list.last() {
            Some((last, _)) if *last < v => Err(list.len()),
            _ => list.binary_search_by(|(x, _)| x.cmp(&v)),
        };
        match at {
            Ok(i) => {
                list[i].1 += diff;
                if list[i].1 == 0 {
                    list.remove(i);
                }
            }
            Err(i) => list.insert(i, (v, diff)),
        }
    }

    /// The time of the due entry the key needs (recorded as its `due`), if its second
    /// version group is older than its live entry or it has none.
    fn needs_entry(&mut self) -> Option<E> {
        let first = &self.list.first()?.0;
        let second = &self
            .list
            .iter()
            .find(|(v, _)| !same_group(v, first))?
            .0
            .time;
        if self.due.as_ref().is_some_and(|due| due <= second) {
            return None;
        }
        self.due = Some(second.clone());
        self.due.clone()
    }
}

impl<K, E, B> Default for OwnVersions<K, E, B> {
    fn default() -> Self {
        OwnVersions {
            received: BTreeMap::new(),
            versions: HashTable::new(),
            hasher: RandomState::default(),
            due: Due::default(),
        }
    }
}

impl<K, E, B> OwnVersions<K, E, B>
where
    K: ExchangeData + Hash,
    E: ExchangeData,
    B: ExchangeData,
{
    /// Adds `diff` to `key`'s version `v`; an insertion touches the key. The key gets a due
    /// entry if its second version group is new or older than its entry.
    fn insert(&mut self, k: K, v: Version<E, B>, d: isize, idle: Option<&mut IdleKeys<K, E>>) {
        if let (Some(idle), true) = (idle, d > 0) {
            idle.touch(&k, &v.time);
        }
        let hash = self.hasher.hash_one(&k);
        let due = match self.versions.find_entry(hash, |(x, _)| *x == k) {
            Ok(mut entry) => {
                let key = &mut entry.get_mut().1;
                key.update(v, d);
                if key.list.is_empty() {
                    entry.remove();
                    return;
                }
                key.needs_entry()
            }
            Err(_) => {
                let mut key = KeyVersions::default();
                key.update(v, d);
                if let Some(time) = key.needs_entry() {
                    self.due.push(time, k.clone());
                }
                let hasher = &self.hasher;
                (self.versions).insert_unique(hash, (k, key), |(x, _)| hasher.hash_one(x));
                return;
            }
        };
        if let Some(time) = due {
            self.due.push(time, k);
        }
    }
}

/// The version valid at `t` among a key's present versions `list`: of those with `time <= t`,
/// the one with the greatest `(time, seq)`, the least row among equals (the order in which the
/// arrangement's readers meet them).
///
/// A row fires once the watermark passes it, and a key keeps one version older than the
/// watermark (rule B11), so the answer is mostly one of the first versions: the search
/// gallops forward from the front (1, 2, 4, .. versions), reading the lines the firing
/// prefetched, rather than starting in the middle.
fn valid_in<'l, E: Ord, B>(list: &'l [Counted<E, B>], t: &E) -> Option<&'l Option<B>> {
    let mut high = 1;
    while high < list.len() && list[high].0.time <= *t {
        high *= 2;
    }
    let low = high / 2;
    let end = low + list[low..high.min(list.len())].partition_point(|(v, _)| v.time <= *t);
    let first = group_start(list, end.checked_sub(1)?);
    Some(&list[first].0.row)
}

/// `records` with equal `(key, version)`s' diffs summed and zeros dropped.
fn consolidated<K: Ord, E: Ord, B: Ord>(
    records: Vec<(K, Version<E, B>, isize)>,
) -> Vec<(K, Version<E, B>, isize)> {
    let mut pairs: Vec<_> = records.into_iter().map(|(k, v, d)| ((k, v), d)).collect();
    consolidate(&mut pairs);
    pairs.into_iter().map(|((k, v), d)| (k, v, d)).collect()
}

/// `a` and `b` have the same `(time, seq)`: neither supersedes the other.
fn same_group<E: PartialEq, B>(a: &Version<E, B>, b: &Version<E, B>) -> bool {
    a.time == b.time && a.seq == b.seq
}

/// The first index of the versions with the `(time, seq)` of `list[i]` (`list` ordered).
fn group_start<E: PartialEq, B>(list: &[Counted<E, B>], mut i: usize) -> usize {
    while i > 0 && same_group(&list[i - 1].0, &list[i].0) {
        i -= 1;
    }
    i
}

impl<K, E, B> BuildSide<K, E, B> for OwnVersions<K, E, B>
where
    K: ExchangeData + JoinKey + Hash,
    E: ExchangeData,
    B: ExchangeData,
{
    type Input = Vec<((K, Version<E, B>), SysTime, isize)>;

    fn receive(&mut self, input: &mut Self::Input, _idle: Option<&mut IdleKeys<K, E>>) {
        let mut last: Option<(SysTime, &mut Vec<_>)> = None;
        for ((k, v), t, d) in input.drain(..) {
            let at = match last {
                Some((time, at)) if time == t => at,
                _ => self.received.entry(t).or_default(),
            };
            at.push((k, v, d));
            last = Some((t, at));
        }
    }

    /// Inserts the versions of the system times before `now`; each insertion touches its key.
    fn advance_to(&mut self, now: SysTime, mut idle: Option<&mut IdleKeys<K, E>>) {
        let later = self.received.split_off(&now);
        let earlier = std::mem::replace(&mut self.received, later);
        for mut records in earlier.into_values() {
            // An epoch's insertion and retraction of one version cancel (as in a batch).
            if records.iter().any(|r| r.2 < 0) {
                records = consolidated(records);
            }
            for (k, v, d) in records {
                self.insert(k, v, d, idle.as_deref_mut());
            }
        }
    }

    /// The versions inserted are those of the system times before the firing's epoch (`seen`
    /// is one below it) and received since each key's last expiry: `forget` removed the rest.
    fn fire<P, R>(
        &mut self,
        ready: Vec<Waiting<K, E, P>>,
        _seen: SysTime,
        _idle: Option<&IdleKeys<K, E>>,
        kind: JoinKind,
        residual: &R,
    ) -> Vec<Fired<K, P, B>>
    where
        P: ExchangeData,
        R: Fn(&P, &B) -> bool,
    {
        // The rows in `(seq, kind)` order, equal ones in their order in the waiting runs: the
        // order is sorted, not the rows, each of which is moved once, into its output.
        let mut order: Vec<_> = (ready.iter().map(|r| (r.change.seq, r.change.kind)))
            .zip(0..)
            .collect();
        order.sort_unstable();
        // A NULL key matches no version (see [`JoinKey`]).
        let hashes: Vec<Option<u64>> = (ready.iter())
            .map(|r| (!r.key.is_null()).then(|| self.hasher.hash_one(&r.key)))
            .collect();
        let mut rows: Vec<Option<Waiting<K, E, P>>> = ready.into_iter().map(Some).collect();
        // The rows' keys come in no order the hardware can predict: a row's table entry is
        // prefetched `2 * AHEAD` rows before it fires, its versions (found through the entry,
        // by then cached) `AHEAD` rows before.
        let versions = &self.versions;
        let mut out = Vec::with_capacity(rows.len());
        let mut found = VecDeque::with_capacity(AHEAD + 1);
        let mut emit = |row: Option<Waiting<K, E, P>>, list: Option<&[Counted<E, B>]>| {
            let row = row.expect("each row fires once");
            let version = list.and_then(|list| valid_in(list, &row.time));
            out.extend(fired(row, version, kind, residual));
        };
        for (i, &(_, at)) in order.iter().enumerate() {
            if let Some(&(_, ahead)) = order.get(i + AHEAD) {
                prefetch(&rows[ahead]);
                if let Some(hash) = hashes[ahead] {
                    versions.iter_hash(hash).for_each(prefetch);
                }
            }
            let list = hashes[at].and_then(|hash| {
                let key = &rows[at].as_ref().expect("not fired yet").key;
                let (_, versions) = versions.find(hash, |(k, _)| k == key)?;
                prefetch(&versions.list[..versions.list.len().min(2)]);
                Some(&versions.list[..])
            });
            found.push_back((at, list));
            if found.len() > AHEAD {
                let (at, list) = found.pop_front().expect("more than AHEAD rows");
                emit(rows[at].take(), list);
            }
        }
        found
            .into_iter()
            .for_each(|(at, list)| emit(rows[at].take(), list));
        out
    }

    fn forget(&mut self, key: &K) {
        let hash = self.hasher.hash_one(key);
        if let Ok(entry) = self.versions.find_entry(hash, |(k, _)| k == key) {
            entry.remove();
        }
    }

    /// Rule B11: for each key with two version groups older than the watermark `At(x)`, drops
    /// those older than its newest one before `x` (every probe row fired from now on has a
    /// time `>= x`). The key's next entry is then at or after `x`.
    fn rise(&mut self, w: &Watermark<E>) {
        let Watermark::At(x) = w else {
            return;
        };
        let mut passed = Vec::new();
        self.due.take_before(x, &mut passed);
        let hashes: Vec<u64> = passed
            .iter()
            .map(|(_, k)| self.hasher.hash_one(k))
            .collect();
        for (i, (time, k)) in passed.into_iter().enumerate() {
            // Keys come in no predictable order: each one's entry is prefetched ahead.
            if let Some(&hash) = hashes.get(i + AHEAD) {
                self.versions.iter_hash(hash).for_each(prefetch);
            }
            let Some((_, key)) = self.versions.find_mut(hashes[i], |(x, _)| *x == k) else {
                continue;
            };
            if key.due.as_ref() != Some(&time) {
                continue;
            }
            key.due = None;
            let before = key.list.partition_point(|(v, _)| v.time < *x);
            if let Some(newest) = before.checked_sub(1) {
                let keep = group_start(&key.list, newest);
                key.list.drain(..keep);
            }
            if let Some(time) = key.needs_entry() {
                self.due.push(time, k);
            }
        }
    }

    fn hold(&mut self, _next: Option<SysTime>, _floor: Option<SysTime>) {}

    fn close(&mut self) {
        *self = OwnVersions::default();
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use super::*;
    use crate::{Change, RowKind};

    type Own = OwnVersions<u8, u64, char>;

    /// `key`'s present versions, if it has any.
    fn list<K: Hash + Eq, B>(own: &OwnVersions<K, u64, B>, key: K) -> Option<&[Counted<u64, B>]> {
        let found = own
            .versions
            .find(own.hasher.hash_one(&key), |(k, _)| *k == key);
        found.map(|(_, k)| &k.list[..])
    }

    /// The event times of `key`'s present versions.
    fn times<K: Hash + Eq, B>(own: &OwnVersions<K, u64, B>, key: K) -> Vec<u64> {
        let list = list(own, key).unwrap_or_default();
        list.iter().map(|(v, _)| v.time).collect()
    }

    /// Versions `(key, time, seq, row)` received at system time 0 and inserted.
    fn own(versions: &[(u8, u64, u64, char)]) -> Own {
        let mut own = Own::default();
        let mut input = (versions.iter())
            .map(|&(k, t, seq, row)| ((k, Version::row(t, seq, row)), 0, 1))
            .collect();
        own.receive(&mut input, None);
        own.advance_to(1, None);
        own
    }

    /// A rise to `At(x)` keeps a key's newest version before `x` and the later ones; a key
    /// with one version is never pruned, and no due entry outlives the versions it is for.
    #[test]
    fn a_rise_keeps_the_newest_version_before_the_watermark_and_the_later_ones() {
        let mut own = own(&[
            (1, 0, 0, 'a'),
            (1, 1, 1, 'b'),
            (1, 2, 2, 'c'),
            (1, 10, 3, 'd'),
        ]);
        own.insert(2, Version::row(0, 4, 'x'), 1, None);
        assert_eq!(times(&own, 1), [0, 1, 2, 10]);
        own.rise(&Watermark::At(2));
        assert_eq!(times(&own, 1), [1, 2, 10]);
        own.rise(&Watermark::At(11));
        assert_eq!((times(&own, 1), times(&own, 2)), (vec![10], vec![0]));
        assert!(
            own.due.is_empty(),
            "one version a key: nothing left to prune"
        );
        assert_eq!(valid_in(list(&own, 1).unwrap(), &10), Some(&Some('d')));
    }

    /// A version older than a key's others moves its second group earlier: the key's entry
    /// follows, so a rise between the two prunes it.
    #[test]
    fn an_older_version_inserted_later_is_pruned_at_the_next_rise() {
        let mut own = own(&[(1, 10, 0, 'a'), (1, 20, 1, 'b')]);
        own.insert(1, Version::row(5, 2, 'c'), 1, None);
        assert_eq!(times(&own, 1), [5, 10, 20]);
        own.rise(&Watermark::At(15));
        assert_eq!(times(&own, 1), [10, 20]);
    }

    /// Versions of equal `(time, seq)` are one group: the valid one is the least row, a rise
    /// keeps the group whole, and a rise that cannot prune ends (the next entry is later).
    #[test]
    fn versions_of_equal_time_and_seq_stay_together() {
        let mut own = own(&[(1, 5, 1, 'b'), (1, 5, 1, 'a'), (1, 7, 2, 'c')]);
        assert_eq!(valid_in(list(&own, 1).unwrap(), &6), Some(&Some('a')));
        own.rise(&Watermark::At(6));
        assert_eq!(times(&own, 1), [5, 5, 7]);
        own.rise(&Watermark::At(8));
        assert_eq!(times(&own, 1), [7]);
    }

    /// A retraction to no version removes the key; forgetting a key leaves stale entries that a
    /// rise skips.
    #[test]
    fn retracted_and_forgotten_keys_hold_nothing() {
        let mut own = own(&[(1, 1, 0, 'a'), (2, 1, 1, 'b'), (2, 3, 2, 'c')]);
        own.insert(1, Version::row(1, 0, 'a'), -1, None);
        assert!(list(&own, 1).is_none());
        own.forget(&2);
        own.rise(&Watermark::At(10));
        assert!(own.versions.is_empty() && own.due.is_empty());
    }

    /// The forward search finds the version a search from the middle finds, at every time, in
    /// lists of every length up to 40 with repeated times and groups of equal `(time, seq)`.
    #[test]
    fn the_forward_search_agrees_with_a_binary_search() {
        for len in 0..40u64 {
            let mut list: Vec<Counted<u64, u64>> = (0..len)
                .map(|i| (Version::row(i / 3 * 2, i / 2, i), 1))
                .collect();
            list.sort();
            for t in 0..len * 2 + 2 {
                let end = list.partition_point(|(v, _)| v.time <= t);
                let expected = end
                    .checked_sub(1)
                    .map(|i| &list[group_start(&list, i)].0.row);
                assert_eq!(valid_in(&list, &t), expected, "{len} versions, at {t}");
            }
        }
    }

    /// A firing of more rows than its prefetch window (in no `seq` order, NULL keys among
    /// them) gives each row the version a scan of its key's versions chooses, in `seq` order;
    /// a rise passing more keys than the window prunes each of them.
    #[test]
    fn many_rows_fire_with_their_valid_versions_and_many_keys_rise() {
        // Keys 1..=12, each with versions at times 0, 3, .. (seq = the time), and a second
        // version at time 6 and seq 6: of the two, the least row is chosen.
        let mut versions = Vec::new();
        for k in 1..=12u8 {
            for t in (0..k as u64 % 5 + 2).map(|i| i * 3) {
                versions.push((k, t, t, char::from(b'a' + t as u8)));
            }
            versions.push((k, 6, 6, 'Z'));
        }
        let mut own = OwnVersions::<Option<u8>, u64, char>::default();
        let mut input = (versions.iter())
            .map(|&(k, t, seq, row)| ((Some(k), Version::row(t, seq, row)), 0, 1))
            .collect();
        own.receive(&mut input, None);
        own.advance_to(1, None);
        // 60 probe rows, `seq` a permutation of 0..60, every 13th key NULL.
        let ready: Vec<Waiting<Option<u8>, u64, u32>> = (0..60u64)
            .map(|i| Waiting {
                time: i % 17,
                key: (i % 13 != 0).then_some((i % 13) as u8),
                change: Change::new(i * 37 % 60, RowKind::Insert, i as u32),
                diff: 1,
            })
            .collect();
        let mut rows: Vec<_> = ready
            .iter()
            .map(|r| (r.change.seq, r.key, r.time))
            .collect();
        rows.sort();
        let expected: Vec<_> = (rows.into_iter())
            .map(|(seq, key, time)| {
                let chosen = (versions.iter())
                    .filter(|&&(k, t, _, _)| Some(k) == key && t <= time)
                    .map(|&(_, t, s, row)| (t, s, Reverse(row)))
                    .max();
                (seq, chosen.map(|(_, _, Reverse(row))| row))
            })
            .collect();
        let fired = own.fire(ready, 0, None, JoinKind::Left, &|_: &u32, _: &char| true);
        let fired: Vec<_> = (fired.into_iter())
            .map(|(_, change, _)| (change.seq, change.row.1))
            .collect();
        assert_eq!(fired, expected);
        own.rise(&Watermark::At(7));
        for k in 1..=12u8 {
            let mut kept: Vec<u64> = (versions.iter())
                .filter(|&&(x, t, _, _)| x == k && t >= 6)
                .map(|&(_, t, _, _)| t)
                .collect();
            kept.sort();
            assert_eq!(times(&own, Some(k)), kept, "key {k}");
        }
    }
}
