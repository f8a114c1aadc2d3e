//! Keep-first deduplication by event time that emits on the watermark (Flink >= 2.1,
//! `RowTimeDeduplicateKeepFirstRowFunction`, semantics rule A9): insert-only output.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use differential_dataflow::{ExchangeData, Hashable, VecCollection};

use super::rules::not_insert_only;
use super::OnWatermark;
use crate::epochs::{drive, EpochLogic};
use crate::keyed_merge::{Merged, Rejected};
use crate::retention::Retention;
use crate::watermark::Watermark;
use crate::{Change, RowKind, Seq, SysTime};

/// What a key holds: a candidate waiting for the watermark, or the mark of an emitted row.
enum Slot<E, V> {
    /// The earliest row so far: its event time, `seq` and content.
    Waiting(E, Seq, V),
    /// The key's row was emitted; every later row of the key is ignored. With a retention,
    /// the event time from which this flag is gone.
    Emitted(Option<E>),
}

/// One output: a changelog row or a refused (late or non-insert) row.
type Outcome<K, V> = (K, Result<Change<V>, Rejected>);

/// Keep-first by event time, final mode: see
/// [`Deduplicate::deduplicate_first_on_watermark`](super::Deduplicate::deduplicate_first_on_watermark).
/// With a retention in `config`, the "already emitted" flag of a key expires once the watermark
/// has passed `retention.expiry(time of the emitted row)`: the key's next row is a first row
/// again. The epoch loop is [`drive`]'s; the rules are [`KeepFirst`]'s.
pub(super) fn first_on_watermark<'s, K, V, E, F>(
    rows: VecCollection<'s, SysTime, (K, Change<V>)>,
    time_of: F,
    watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    config: OnWatermark<E>,
) -> Merged<'s, K, V>
where
    K: ExchangeData + Hash,
    V: ExchangeData,
    E: ExchangeData,
    F: Fn(&V) -> E + 'static,
{
    let name = config.name();
    let logic = KeepFirst {
        time_of,
        fired: Watermark::Min,
        slots: HashMap::new(),
        timers: BTreeMap::new(),
        flags: config.retained().cloned().map(Flags::new),
        config,
    };
    let route = |(k, _): &(K, Change<V>)| k.hashed();
    let outcomes = drive(rows, vec![watermarks], 0, route, name, logic);
    Merged::from_outcomes(outcomes)
}

/// The keep-first rules over one worker's keys.
struct KeepFirst<K, V, E, F> {
    time_of: F,
    /// The watermark the candidates were last fired at.
    fired: Watermark<E>,
    slots: HashMap<K, Slot<E, V>>,
    /// The waiting candidates by (event time, seq): the event-time timers.
    timers: BTreeMap<(E, Seq), K>,
    /// With a retention: the emitted flags by the event time from which they are gone.
    flags: Option<Flags<K, E>>,
    /// How late rows' reasons write event times.
    config: OnWatermark<E>,
}

impl<K, V, E, F> EpochLogic<(K, Change<V>), E, Outcome<K, V>> for KeepFirst<K, V, E, F>
where
    K: Hash + Eq + Clone,
    E: Ord + Clone + std::fmt::Debug,
    F: Fn(&V) -> E,
{
    /// Fires the candidates the epoch's watermark has passed, then applies the epoch's rows in
    /// `seq` order.
    fn epoch(
        &mut self,
        _now: SysTime,
        w: &Watermark<E>,
        mut rows: Vec<((K, Change<V>), isize)>,
        give: &mut dyn FnMut(Outcome<K, V>),
    ) {
        if *w > self.fired {
            fire(
                w,
                &mut self.timers,
                &mut self.slots,
                self.flags.as_mut(),
                &mut *give,
            );
            if let Some(flags) = self.flags.as_mut() {
                flags.expire(w, &mut self.slots);
            }
            self.fired = w.clone();
        }
        rows.sort_by_key(|((_, c), _)| (c.seq, c.kind));
        for ((k, change), diff) in rows {
            let time = (self.time_of)(&change.row);
            let seq = change.seq;
            let refusal = if diff < 0 {
                let reason = "retraction of a row: dedup input must be insert-only";
                Some(Rejected::invalid(seq, reason))
            } else if change.kind != RowKind::Insert {
                Some(Rejected::invalid(seq, not_insert_only(change.kind)))
            } else if w.is_late(&time) {
                let mark = self.config.time_text.mark(w);
                let time = self.config.time_text.time(&time);
                let reason = format!("late row: event time {time} is behind the watermark {mark}");
                Some(Rejected::late(seq, reason))
            } else {
                None
            };
            if let Some(refused) = refusal {
                give((k, Err(refused)));
                continue;
            }
            // Extra copies of a row (diff > 1) tie with it, and an equal time loses.
            match self.slots.get_mut(&k) {
                Some(Slot::Emitted(_)) => {}
                Some(Slot::Waiting(t, seq, row)) => {
                    if time < *t {
                        self.timers.remove(&(t.clone(), *seq));
                        self.timers.insert((time.clone(), change.seq), k);
                        (*t, *seq, *row) = (time, change.seq, change.row);
                    }
                }
                None => {
                    self.timers.insert((time.clone(), change.seq), k.clone());
                    self.slots
                        .insert(k, Slot::Waiting(time, change.seq, change.row));
                }
            }
        }
    }

    fn waiting(&self) -> bool {
        !self.timers.is_empty()
    }

    /// The waiting candidates fire with `W = Max`, once.
    fn end(&mut self, give: &mut dyn FnMut(Outcome<K, V>)) {
        fire(
            &Watermark::Max,
            &mut self.timers,
            &mut self.slots,
            None,
            give,
        );
        self.slots.clear();
    }
}

/// Emits, as `+I`, every waiting candidate whose event time the watermark `w` has passed, and
/// marks its key emitted (with the flag's expiry, given `flags`).
fn fire<K, V, E>(
    w: &Watermark<E>,
    timers: &mut BTreeMap<(E, Seq), K>,
    slots: &mut HashMap<K, Slot<E, V>>,
    mut flags: Option<&mut Flags<K, E>>,
    mut emit: impl FnMut(Outcome<K, V>),
) where
    K: Hash + Eq + Clone,
    E: Ord + Clone,
{
    let due = match w {
        Watermark::Min => return,
        Watermark::At(x) => {
            let rest = timers.split_off(&(x.clone(), 0));
            std::mem::replace(timers, rest)
        }
        Watermark::Max => std::mem::take(timers),
    };
    for (_, k) in due {
        let Some(slot) = slots.get_mut(&k) else {
            continue;
        };
        let Slot::Waiting(time, _, _) = slot else {
            continue;
        };
        let expiry = flags.as_deref_mut().map(|f| f.set(&k, time));
        if let Slot::Waiting(_, seq, row) = std::mem::replace(slot, Slot::Emitted(expiry)) {
            emit((k, Ok(Change::new(seq, RowKind::Insert, row))));
        }
    }
}

/// The idle-state retention of the emitted flags (Flink's state TTL on
/// `RowTimeDeduplicateKeepFirstRowFunction`'s flag, measured on the watermark: see
/// [`crate::retention`]). A flag is written once, when its row is emitted, and later rows of the
/// key do not write it (Flink's TTL is refreshed on writes), so it is gone from
/// `expiry(time of the emitted row)`.
struct Flags<K, E> {
    retention: Retention<E>,
    /// Keys by the expiry of their flag; an entry is stale if the key's flag has another one.
    expiry: BTreeMap<E, Vec<K>>,
}

impl<K: Hash + Eq + Clone, E: Ord + Clone> Flags<K, E> {
    fn new(retention: Retention<E>) -> Self {
        Flags {
            retention,
            expiry: BTreeMap::new(),
        }
    }

    /// Schedules the expiry of `key`'s flag, written for a row of event time `time`; returns it.
    fn set(&mut self, key: &K, time: &E) -> E {
        let at = self.retention.expiry(time);
        self.expiry.entry(at.clone()).or_default().push(key.clone());
        at
    }

    /// Removes every flag whose expiry the watermark `w` has passed: its key is new again.
    fn expire<V>(&mut self, w: &Watermark<E>, slots: &mut HashMap<K, Slot<E, V>>) {
        while let Some(entry) = self.expiry.first_entry() {
            if !w.passed(entry.key()) {
                break;
            }
            let (at, keys) = entry.remove_entry();
            for k in keys {
                if matches!(slots.get(&k), Some(Slot::Emitted(Some(e))) if *e == at) {
                    slots.remove(&k);
                }
            }
        }
    }
}
