//! A sequential model of deduplication: one loop over the rows in arrival order with a
//! `BTreeMap` of kept rows. Used by the tests and benchmarks as the expected output.

use std::collections::BTreeMap;

use super::rules::not_insert_only;
use super::{DedupConfig, DedupOrder, Keep};
use crate::keyed_merge::Rejected;
use crate::retention::Retention;
use crate::testing::Updates;
use crate::{Change, RowKind, SysTime};

/// The expected outputs of a deduplication, as `(record, system time, diff)` updates sorted
/// like [`crate::testing::run_unary`]'s output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected<K, V> {
    /// The result's changelog.
    pub changelog: Updates<(K, Change<V>)>,
    /// The refused rows.
    pub rejected: Updates<(K, Rejected)>,
}

/// What the model keeps per key.
struct Kept<E, V> {
    /// System time of the key's last accepted row (for the idle-state retention).
    touched: SysTime,
    /// Event time of the kept row.
    time: E,
    /// The kept row.
    row: V,
}

/// Deduplicates `epochs[s]`, the rows entered at system time `s` in arrival order, by `config`.
pub fn deduplicate<K, V, E>(
    epochs: &[Vec<(K, Change<V>)>],
    config: DedupConfig,
    time_of: impl Fn(&V) -> E,
) -> Expected<K, V>
where
    K: Ord + Clone,
    V: Ord + Clone,
    E: Ord,
{
    let mut kept: BTreeMap<K, Kept<E, V>> = BTreeMap::new();
    let mut changelog = Vec::new();
    let mut rejected = Vec::new();
    for (sys, rows) in epochs.iter().enumerate() {
        let sys = sys as SysTime;
        for (key, change) in rows {
            let emit = |kind, row: &V| {
                (
                    (key.clone(), Change::new(change.seq, kind, row.clone())),
                    sys,
                    1,
                )
            };
            if change.kind != RowKind::Insert {
                let reason = not_insert_only(change.kind);
                rejected.push(((key.clone(), Rejected::invalid(change.seq, reason)), sys, 1));
                continue;
            }
            if let (Some(r), Some(k)) = (config.idle_state_retention, kept.get(key)) {
                if r > 0 && k.touched + r <= sys {
                    kept.remove(key);
                }
            }
            let time = time_of(&change.row);
            let Some(old) = kept.get_mut(key) else {
                changelog.push(emit(RowKind::Insert, &change.row));
                let row = change.row.clone();
                kept.insert(
                    key.clone(),
                    Kept {
                        touched: sys,
                        time,
                        row,
                    },
                );
                continue;
            };
            old.touched = sys;
            let replace = match (config.order, config.keep) {
                (DedupOrder::EventTime, Keep::Last) => time >= old.time,
                (DedupOrder::EventTime, Keep::First) => time < old.time,
                (DedupOrder::Arrival, Keep::Last) => old.row != change.row,
                (DedupOrder::Arrival, Keep::First) => false,
            };
            if replace {
                changelog.push(emit(RowKind::UpdateBefore, &old.row));
                changelog.push(emit(RowKind::UpdateAfter, &change.row));
                old.time = time;
                old.row = change.row.clone();
            }
        }
    }
    changelog.sort();
    rejected.sort();
    Expected {
        changelog,
        rejected,
    }
}

/// Keep-first by event time emitted on the watermark (rule A9) over `epochs[s]`, the rows of
/// system time `s`. The watermark in force at `s` is `lateness(max event time of every row of
/// the epochs before s)`. The input is taken to advance to system time `epochs.len()` and
/// then close, so the watermark is `+infinity` at `epochs.len()`.
///
/// With a `retention` (rule A13): after the candidates of an epoch are emitted, every emitted
/// flag whose `retention.expiry(time of the emitted row)` the watermark has passed is removed.
pub fn first_on_watermark<K, V, E>(
    epochs: &[Vec<(K, Change<V>)>],
    time_of: impl Fn(&V) -> E,
    lateness: impl Fn(&E) -> E,
    retention: Option<&Retention<E>>,
) -> Expected<K, V>
where
    K: Ord + Clone,
    V: Ord + Clone,
    E: Ord + Clone + std::fmt::Debug,
{
    let mut max: Option<E> = None;
    // Per key: `Ok((time, seq, row))` while waiting, `Err(time of the emitted row)` once emitted.
    let mut slots: BTreeMap<K, Result<(E, u64, V), E>> = BTreeMap::new();
    let mut changelog = Vec::new();
    let mut rejected = Vec::new();
    let end = epochs.len();
    for sys in 0..=end {
        let watermark = max.as_ref().map(&lateness);
        let passed = |t: &E| sys == end || watermark.as_ref().is_some_and(|w| t < w);
        for (key, slot) in slots.iter_mut() {
            let Ok((t, seq, row)) = slot else { continue };
            if passed(t) {
                let change = Change::new(*seq, RowKind::Insert, row.clone());
                changelog.push(((key.clone(), change), sys as SysTime, 1));
                let emitted = t.clone();
                *slot = Err(emitted);
            }
        }
        if let (Some(retention), Some(w)) = (retention, watermark.as_ref()) {
            // An emitted flag is gone once the watermark has passed its expiry.
            slots.retain(|_, slot| match slot {
                Ok(_) => true,
                Err(t) => retention.expiry(t) >= *w,
            });
        }
        let rows = epochs.get(sys).map_or(&[][..], |rows| &rows[..]);
        for (key, change) in rows {
            let time = time_of(&change.row);
            let late = watermark.as_ref().is_some_and(|w| time < *w);
            let refusal = if change.kind != RowKind::Insert {
                Some(Rejected::invalid(change.seq, not_insert_only(change.kind)))
            } else if late {
                let w = crate::watermark::Watermark::At(watermark.clone().expect("late"));
                let reason = format!("late row: event time {time:?} is behind the watermark {w}");
                Some(Rejected::late(change.seq, reason))
            } else {
                None
            };
            if let Some(refused) = refusal {
                rejected.push(((key.clone(), refused), sys as SysTime, 1));
            } else {
                match slots.get_mut(key) {
                    None => {
                        let waiting = Ok((time.clone(), change.seq, change.row.clone()));
                        slots.insert(key.clone(), waiting);
                    }
                    Some(Ok(w)) if time < w.0 => {
                        *w = (time.clone(), change.seq, change.row.clone())
                    }
                    Some(_) => {}
                }
            }
        }
        for (_, change) in rows {
            let t = time_of(&change.row);
            if max.as_ref().is_none_or(|m| *m < t) {
                max = Some(t);
            }
        }
    }
    changelog.sort();
    rejected.sort();
    Expected {
        changelog,
        rejected,
    }
}
