//! Keep-first deduplication by event time that emits on the watermark (Flink >= 2.1,
//! `RowTimeDeduplicateKeepFirstRowFunction`, semantics rule A9): insert-only output.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Concat, Exchange, Operator};

use super::rules::not_insert_only;
use super::OnWatermark;
use crate::keyed_merge::{Merged, Rejected};
use crate::retention::Retention;
use crate::watermark::{Watermark, WatermarkTracker};
use crate::{Change, RowKind, Seq, SysTime};

/// The operator's input: rows (exchanged by key) and watermark candidates (already broadcast).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum In<K, V, E> {
    Row(K, Change<V>),
    Mark(Watermark<E>),
}

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
/// again.
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
    type Update<K, V, E> = (In<K, V, E>, SysTime, isize);
    let rows = rows
        .map(|(k, c)| In::Row(k, c))
        .inner
        .exchange(|u: &Update<K, V, E>| match &u.0 {
            In::Row(k, _) => k.hashed(),
            In::Mark(_) => 0,
        });
    let input = rows.concat(watermarks.map(In::Mark).inner);

    let (retention, name) = (config.retained().cloned(), config.name());
    let outcomes = input.unary_frontier(Pipeline, name, move |_cap, _info| {
        let mut caps = CapabilitySet::<SysTime>::new();
        let mut arrivals: BTreeMap<SysTime, Vec<(K, Change<V>, isize)>> = BTreeMap::new();
        // Epochs at which the watermark may rise (one after each epoch with a candidate).
        let mut rises: BTreeSet<SysTime> = BTreeSet::new();
        let mut tracker = WatermarkTracker::new();
        let mut fired = Watermark::Min;
        let mut slots: HashMap<K, Slot<E, V>> = HashMap::new();
        // The waiting candidates by (event time, seq): the event-time timers.
        let mut timers: BTreeMap<(E, Seq), K> = BTreeMap::new();
        // With a retention: the emitted flags by the event time from which they are gone.
        let mut flags = retention.map(Flags::new);
        move |(input, frontier), output| {
            // 1. Drain: rows by epoch, watermark candidates into the tracker.
            input.for_each(|cap, data| {
                for c in cap.retain_stamp(output.output_index()).iter() {
                    caps.insert(c.clone());
                }
                for (x, t, diff) in data.drain(..) {
                    match x {
                        In::Row(k, c) => arrivals.entry(t).or_default().push((k, c, diff)),
                        In::Mark(w) => {
                            tracker.observe(t, w);
                            rises.insert(t + 1);
                        }
                    }
                }
            });

            // 2. Visit complete epochs in order: fire the candidates the epoch's watermark has
            //    passed, then apply the epoch's rows in `seq` order.
            loop {
                let next = [arrivals.keys().next(), rises.iter().next()]
                    .into_iter()
                    .flatten()
                    .min()
                    .copied();
                let Some(now) = next else { break };
                if frontier.less_equal(&now) {
                    break;
                }
                rises.remove(&now);
                let cap = caps.delayed(&now);
                let mut session = output.session(&cap);
                let w = tracker.at(now);
                if w > fired {
                    let emit = |o| session.give((o, now, 1));
                    fire(&w, &mut timers, &mut slots, flags.as_mut(), emit);
                    if let Some(flags) = flags.as_mut() {
                        flags.expire(&w, &mut slots);
                    }
                    fired = w.clone();
                }
                let Some(mut rows) = arrivals.remove(&now) else {
                    continue;
                };
                rows.sort_by_key(|(_, c, _)| (c.seq, c.kind));
                for (k, change, diff) in rows {
                    let time = time_of(&change.row);
                    let refusal = if diff < 0 {
                        Some("retraction of a row: dedup input must be insert-only".to_string())
                    } else if change.kind != RowKind::Insert {
                        Some(not_insert_only(change.kind))
                    } else if w.is_late(&time) {
                        Some(format!(
                            "late row: event time {time:?} is behind the watermark {w}"
                        ))
                    } else {
                        None
                    };
                    if let Some(reason) = refusal {
                        let rejected = Rejected {
                            seq: change.seq,
                            reason,
                        };
                        session.give(((k, Err(rejected)), now, 1));
                        continue;
                    }
                    // Extra copies of a row (diff > 1) tie with it, and an equal time loses.
                    match slots.get_mut(&k) {
                        Some(Slot::Emitted(_)) => {}
                        Some(Slot::Waiting(t, seq, row)) => {
                            if time < *t {
                                timers.remove(&(t.clone(), *seq));
                                timers.insert((time.clone(), change.seq), k);
                                (*t, *seq, *row) = (time, change.seq, change.row);
                            }
                        }
                        None => {
                            timers.insert((time.clone(), change.seq), k.clone());
                            slots.insert(k, Slot::Waiting(time, change.seq, change.row));
                        }
                    }
                }
            }

            // 3. End of input: the waiting candidates fire with `W = Max`, once, at the last
            //    input frontier seen (the held capability), at least the epoch after the last
            //    watermark record.
            if frontier.is_empty() {
                if !timers.is_empty() {
                    let held = caps.iter().map(|c| *c.time()).min().unwrap_or(0);
                    let end = tracker.end_epoch().max(held);
                    let cap = caps.delayed(&end);
                    let mut session = output.session(&cap);
                    fire(&Watermark::Max, &mut timers, &mut slots, None, |o| {
                        session.give((o, end, 1))
                    });
                }
                slots.clear();
                caps = CapabilitySet::new();
                return;
            }

            // 4. Hold a capability only while work waits: at the earliest epoch still to visit,
            //    or, while only candidates wait, at the input frontier (where they fire if the
            //    input ends). Rows still to come bring their own capabilities.
            let waiting = !timers.is_empty() || !arrivals.is_empty() || !rises.is_empty();
            match caps.iter().map(|c| *c.time()).min() {
                Some(held) if waiting => {
                    let target = [arrivals.keys().next(), rises.iter().next()]
                        .into_iter()
                        .flatten()
                        .chain(frontier.frontier().iter())
                        .min()
                        .copied()
                        .unwrap_or(held)
                        .max(held);
                    caps.downgrade([target]);
                }
                _ => caps = CapabilitySet::new(),
            }
        }
    });
    Merged::from_outcomes(outcomes.as_collection())
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
