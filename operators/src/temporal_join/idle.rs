//! Idle-state retention of the temporal joins (Flink's state TTL, rules B13 and B17).
//!
//! [`IdleKeys`], for the final-mode join, measures it on the watermark (see
//! [`crate::retention`]). Every probe row taken into the join and every build version received touches its key. When
//! the combined watermark rises past [`Retention::expiry`] of a key's access time, the key
//! expires: the build versions received before that system time are hidden from every later
//! firing (the versions arrangement is shared, so they are hidden, not removed). The key's
//! probe rows have all fired by then: each has an event time `<=` the access time, so the
//! watermark passed it first.

use std::collections::BTreeMap;

use differential_dataflow::trace::cursor::cursor_list;
use differential_dataflow::trace::Cursor;
use differential_dataflow::ExchangeData;

use crate::retention::Retention;
use crate::version::cursor::VersionBatch;
use crate::watermark::Watermark;
use crate::SysTime;

/// The access times (event times) of a final-mode join's keys and the system times at which
/// keys expired.
pub(super) struct IdleKeys<K, E> {
    retention: Retention<E>,
    /// Build versions received, by system time, until applied: `(key, event time)`.
    received: BTreeMap<SysTime, Vec<(K, E)>>,
    /// The access time of each key with live state.
    access: BTreeMap<K, E>,
    /// Keys by the expiry of an access time; an entry is stale once its key was touched later.
    expiry: BTreeMap<E, Vec<K>>,
    /// The system time at which each expired key last expired.
    expired: BTreeMap<K, SysTime>,
    /// The system time of the first expiry (a lower bound of every key's expiry).
    first_expiry: Option<SysTime>,
}

impl<K: ExchangeData, E: ExchangeData> IdleKeys<K, E> {
    /// No key touched yet.
    pub(super) fn new(retention: Retention<E>) -> Self {
        IdleKeys {
            retention,
            received: BTreeMap::new(),
            access: BTreeMap::new(),
            expiry: BTreeMap::new(),
            expired: BTreeMap::new(),
            first_expiry: None,
        }
    }

    /// Records the insertions of a build batch, to be applied by
    /// [`apply_received_before`](Self::apply_received_before).
    pub(super) fn receive<B: ExchangeData>(&mut self, batch: VersionBatch<K, E, B>) {
        insertions(batch, |time, k, t| {
            let at = self.received.entry(time).or_default();
            at.push((k.clone(), t.clone()));
        });
    }

    /// Touches the keys of the build versions received at system times before `now`.
    pub(super) fn apply_received_before(&mut self, now: SysTime) {
        let later = self.received.split_off(&now);
        for (k, t) in std::mem::replace(&mut self.received, later)
            .into_values()
            .flatten()
        {
            self.touch(&k, &t);
        }
    }

    /// A row of `key` with event time `time` was taken into the join's state.
    pub(super) fn touch(&mut self, key: &K, time: &E) {
        match self.access.get_mut(key) {
            Some(access) if *access >= *time => return,
            Some(access) => *access = time.clone(),
            None => {
                self.access.insert(key.clone(), time.clone());
            }
        }
        let at = self.retention.expiry(time);
        self.expiry.entry(at).or_default().push(key.clone());
    }

    /// Expires, at system time `now`, every key whose access time's expiry the watermark `w`
    /// has passed, telling `forget` each.
    pub(super) fn expire(&mut self, w: &Watermark<E>, now: SysTime, mut forget: impl FnMut(&K)) {
        while let Some(entry) = self.expiry.first_entry() {
            if !w.passed(entry.key()) {
                break;
            }
            let (at, keys) = entry.remove_entry();
            for k in keys {
                let current = self.access.get(&k);
                if current.is_some_and(|a| self.retention.expiry(a) == at) {
                    self.access.remove(&k);
                    forget(&k);
                    self.expired.insert(k, now);
                    self.first_expiry.get_or_insert(now);
                }
            }
        }
    }

    /// The system time from which `key`'s build versions are visible: when it last expired, or
    /// `0`.
    pub(super) fn since(&self, key: &K) -> SysTime {
        self.expired.get(key).copied().unwrap_or(0)
    }

    /// The latest logical compaction of the versions trace under which [`since`](Self::since)
    /// still tells the versions received before each expiry from those received after: one
    /// below the first expiry (compaction advances the system times below it to it, which would
    /// make a hidden version look received at its key's expiry). `None` before any expiry.
    pub(super) fn compaction_floor(&self) -> Option<SysTime> {
        self.first_expiry.map(|s| s.saturating_sub(1))
    }
}

/// The processing-time join's retention, in system-time epochs: a key last touched at system
/// time `s` has expired from `retention.expiry(s)` on (`s + epochs`, see
/// [`Retention::epochs`]).
pub(super) struct IdleEpochs<K> {
    retention: Retention<SysTime>,
    /// Keys of the build versions received, by system time, until applied.
    received: BTreeMap<SysTime, Vec<K>>,
    /// The system time of each key's last touch.
    access: BTreeMap<K, SysTime>,
    /// The system time at which each key's state last expired, as far as touches have shown.
    expired: BTreeMap<K, SysTime>,
    /// The system time of the first touch (no key can expire before its expiry).
    first_touch: Option<SysTime>,
}

impl<K: ExchangeData> IdleEpochs<K> {
    /// No key touched yet.
    pub(super) fn new(retention: Retention<SysTime>) -> Self {
        IdleEpochs {
            retention,
            received: BTreeMap::new(),
            access: BTreeMap::new(),
            expired: BTreeMap::new(),
            first_touch: None,
        }
    }

    /// Records the keys of the insertions of a build batch, to be applied by
    /// [`apply_received_before`](Self::apply_received_before).
    pub(super) fn receive<E: ExchangeData, B: ExchangeData>(
        &mut self,
        batch: VersionBatch<K, E, B>,
    ) {
        insertions(batch, |time, k, _| {
            self.received.entry(time).or_default().push(k.clone());
            // A received version touches its key: no compaction may merge its time with later
            // ones before the touch is applied (a probe row that finds its key expired must
            // still tell it from the versions received since).
            self.first_touch = Some(self.first_touch.map_or(time, |first| first.min(time)));
        });
    }

    /// Touches the keys of the build versions received at system times before `now`, in order.
    pub(super) fn apply_received_before(&mut self, now: SysTime) {
        let later = self.received.split_off(&now);
        for (time, keys) in std::mem::replace(&mut self.received, later) {
            for k in keys {
                self.touch(&k, time);
            }
        }
    }

    /// `key` is touched at system time `now` (touches of a key come in time order).
    pub(super) fn touch(&mut self, key: &K, now: SysTime) {
        let since = self.since(key, now);
        if since > 0 {
            self.expired.insert(key.clone(), since);
        }
        self.access.insert(key.clone(), now);
        self.first_touch.get_or_insert(now);
    }

    /// The latest logical compaction of the versions trace under which
    /// [`since`](Self::since) still tells the versions received before each expiry from those
    /// received after: one below the earliest expiry possible (compaction advances the system
    /// times below it to it). `None` before any touch.
    pub(super) fn compaction_floor(&self) -> Option<SysTime> {
        let first = self.first_touch?;
        Some(self.retention.expiry(&first).saturating_sub(1))
    }

    /// The system time from which `key`'s build versions are visible at `now`: when its state
    /// last expired, or `0`.
    pub(super) fn since(&self, key: &K, now: SysTime) -> SysTime {
        match self.access.get(key) {
            Some(a) if self.retention.expiry(a) <= now => self.retention.expiry(a),
            _ => self.expired.get(key).copied().unwrap_or(0),
        }
    }
}

/// Calls `logic(system time, key, event time)` for every insertion (positive diff) in `batch`.
fn insertions<K, E, B>(batch: VersionBatch<K, E, B>, mut logic: impl FnMut(SysTime, &K, &E))
where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    let (mut cur, sto) = cursor_list(vec![batch]);
    while let Some(k) = cur.get_key(&sto) {
        while let Some(val) = cur.get_val(&sto) {
            cur.map_times(&sto, |time, diff| {
                if *diff > 0 {
                    logic(*time, k, &val.0 .0);
                }
            });
            cur.step_val(&sto);
        }
        cur.step_key(&sto);
    }
}
