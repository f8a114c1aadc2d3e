//! The final-mode event-time temporal join: emits each probe row once, when the combined
//! watermark has passed its time (Flink's `TemporalRowTimeJoinOperator`).

use std::collections::{BTreeMap, BTreeSet};

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::trace::cursor::cursor_list;
use differential_dataflow::trace::Cursor;
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Concat, Exchange, Operator};

use super::{join_row, JoinKind, Joined};
use crate::keyed_merge::Rejected;
use crate::version::{VersionTrace, VersionVal};
use crate::watermark::{Watermark, WatermarkTracker};
use crate::{Change, Seq, SysTime};

/// The outputs of [`temporal_join_final`].
pub struct FinalJoin<'s, K: 'static, P: 'static, B: 'static> {
    /// The joined rows, append-only: `(key, Change<(probe row, build row)>)`, diff as the probe's.
    pub joined: VecCollection<'s, SysTime, (K, Joined<P, B>)>,
    /// Late probe rows (behind the combined watermark on arrival, rule B9): not joined, reported
    /// with their `seq` and the reason. Count them with `late.count()` or by their number.
    pub late: VecCollection<'s, SysTime, (K, Rejected)>,
}

/// The operator's first input: probe rows (exchanged by key) and both watermark collections
/// (already broadcast).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum In<K, P, E> {
    Probe(K, Change<P>),
    ProbeWatermark(Watermark<E>),
    BuildWatermark(Watermark<E>),
}

/// Per-key build state: versions by `(time, seq)`, each with its rows and their counts.
type Versions<E, B> = BTreeMap<(E, Seq), Vec<(Option<B>, isize)>>;

/// Event-time temporal join, final mode (see the [module docs](super) for shapes and rules).
///
/// Each probe row with time `t` is emitted once, append-only, at the first system time `s` whose
/// combined watermark `W(s) = min(probe W(s), build W(s))` has passed it (`t < W(s)`, i.e.
/// Flink's `t <= watermark`, rule B7), joined with the version valid at `t` among the build
/// versions of system times `< s`; never revised. Watermarks come from
/// [`watermarks`](crate::watermark::watermarks) (or [`no_watermark`](crate::watermark::no_watermark))
/// over each input. A probe row of epoch `s` with `t < W(s)` is late (B9): it goes to
/// [`FinalJoin::late`]. Late build versions are kept and seen by later firings (B10). When every
/// input has ended, the remaining probe rows fire with `W = Max` at the *closing epoch*: the
/// last input frontier this operator saw before the inputs closed, or the epoch after the last
/// watermark record if that is later. A driver that advances its inputs to a final epoch and
/// lets the dataflow catch up before closing them (as [`crate::testing::run_binary`] and the
/// command-line tool do) makes this the final epoch, whatever the workers. Rows fired together
/// are ordered by their `seq` (B7).
///
/// Memory is bounded by the watermark (B11): buffered probe rows are dropped when emitted; after
/// each firing at `W`, for every key whose versions `W` has passed, only the latest version with
/// time `< W` and the versions at or after `W` are kept (an index by version time finds those
/// keys without scanning). The build arrangement's trace handle is released at once: this
/// operator reads only its stream of new batches.
///
/// Cost: per probe row O(log n) to buffer and one range lookup when fired; per build version
/// O(log n) to store and O(log n) amortized to prune.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::{temporal_join_final, JoinKind};
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::watermark::watermarks;
/// use differential_temporal_operators::{arrange_versions, Change, RowKind, Version};
///
/// // Epoch 0: an order at time 10 and a rate at 5; epoch 1: a rate at 12 (watermark 12 > 10).
/// let orders = vec![vec![((1u8, Change::new(0, RowKind::Insert, 10i64)), 1)]];
/// let rates = vec![
///     vec![((1u8, Version::row(5i64, 0, 114i64)), 1)],
///     vec![((1u8, Version::row(12i64, 1, 116i64)), 1)],
/// ];
/// let out = run_binary(2, orders, rates, |o, r| {
///     let o_wm = watermarks(o.clone(), |(_, c): &(u8, Change<i64>)| c.row, |m: &i64| *m, "OWm");
///     let r_wm = watermarks(r.clone(), |(_, v): &(u8, Version<i64, i64>)| v.time, |m: &i64| *m, "RWm");
///     let build = arrange_versions(r, "Rates");
///     temporal_join_final(o, |t: &i64| *t, build, o_wm, r_wm, JoinKind::Left, |_, _| true, "J").joined
/// });
/// // The combined watermark at epoch 2 is min(10, 12) = 10, which has not passed time 10: the
/// // order fires at the end of input, epoch 2, with W = Max, joined with the rate valid at 10.
/// assert_eq!(out, vec![((1, Change::new(0, RowKind::Insert, (10, Some(114)))), 2, 1)]);
/// ```
pub fn temporal_join_final<'s, K, E, P, B, T, R>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    probe_time: T,
    build: Arranged<'s, VersionTrace<K, E, B>>,
    probe_watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    build_watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    kind: JoinKind,
    residual: R,
    name: &str,
) -> FinalJoin<'s, K, P, B>
where
    K: ExchangeData + Hashable,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    T: Fn(&P) -> E + 'static,
    R: Fn(&P, &B) -> bool + 'static,
{
    type Update<K, P, E> = (In<K, P, E>, SysTime, isize);
    let probe =
        probe
            .map(|(k, c)| In::Probe(k, c))
            .inner
            .exchange(|u: &Update<K, P, E>| match &u.0 {
                In::Probe(k, _) => k.hashed().into(),
                _ => 0,
            });
    let marks = probe_watermarks
        .map(In::ProbeWatermark)
        .concat(build_watermarks.map(In::BuildWatermark));
    let first = probe.concat(marks.inner);
    // Only the stream of new batches is read; dropping the handle releases the trace.
    let Arranged { stream, trace } = build;
    drop(trace);

    let outcomes = first.binary_frontier(stream, Pipeline, Pipeline, name, move |_cap, _info| {
        let mut caps = CapabilitySet::<SysTime>::new();
        type Arrivals<K, E, P, B> = (
            Vec<(K, Change<P>, isize)>,
            Vec<(K, VersionVal<E, B>, isize)>,
        );
        let mut arrivals: BTreeMap<SysTime, Arrivals<K, E, P, B>> = BTreeMap::new();
        // Epochs at which a watermark may rise (one after each epoch with a candidate).
        let mut rises: BTreeSet<SysTime> = BTreeSet::new();
        let (mut probe_wm, mut build_wm) = (WatermarkTracker::new(), WatermarkTracker::new());
        let mut fired = Watermark::Min;
        // Probe rows waiting for the watermark, by (time, seq, arrival counter).
        let mut buffered: BTreeMap<(E, Seq, u64), (K, Change<P>, isize)> = BTreeMap::new();
        let mut counter = 0u64;
        let mut versions: BTreeMap<K, Versions<E, B>> = BTreeMap::new();
        // Keys to prune once the watermark passes a time: one entry per stored version.
        let mut expiry: BTreeMap<E, Vec<K>> = BTreeMap::new();
        move |(first_in, first_frontier), (build_in, build_frontier), output| {
            // 1. Drain: probe rows and build batches by epoch, watermark candidates into trackers.
            first_in.for_each(|cap, data| {
                for c in cap.retain_stamp(output.output_index()).iter() {
                    caps.insert(c.clone());
                }
                for (x, t, diff) in data.drain(..) {
                    match x {
                        In::Probe(k, c) => arrivals.entry(t).or_default().0.push((k, c, diff)),
                        In::ProbeWatermark(w) => {
                            probe_wm.observe(t, w);
                            rises.insert(t + 1);
                        }
                        In::BuildWatermark(w) => {
                            build_wm.observe(t, w);
                            rises.insert(t + 1);
                        }
                    }
                }
            });
            build_in.for_each(|cap, spans| {
                for c in cap.retain_stamp(output.output_index()).iter() {
                    caps.insert(c.clone());
                }
                for span in spans.drain(..) {
                    let Some(batch) = span.inner else { continue };
                    let (mut cur, sto) = cursor_list(vec![batch]);
                    while let Some(k) = cur.get_key(&sto) {
                        while let Some(val) = cur.get_val(&sto) {
                            cur.map_times(&sto, |t, d| {
                                let entry = arrivals.entry(*t).or_default();
                                entry.1.push((k.clone(), val.clone(), *d));
                            });
                            cur.step_val(&sto);
                        }
                        cur.step_key(&sto);
                    }
                }
            });

            // 2. Visit complete epochs in order: fire at the epoch's watermark, then apply its
            // arrivals (probe rows behind the watermark are late).
            loop {
                let next = [arrivals.keys().next(), rises.iter().next()]
                    .into_iter()
                    .flatten()
                    .min()
                    .copied();
                let Some(now) = next else { break };
                if first_frontier.less_equal(&now) || build_frontier.less_equal(&now) {
                    break;
                }
                rises.remove(&now);
                let cap = caps.delayed(&now);
                let mut session = output.session(&cap);
                let w = probe_wm.at(now).min(build_wm.at(now));
                if w > fired {
                    fire(
                        &w,
                        &mut buffered,
                        &versions,
                        kind,
                        &residual,
                        |k, row, d| session.give(((k, Ok(row)), now, d)),
                    );
                    prune(&w, &mut versions, &mut expiry);
                    fired = w.clone();
                }
                let Some((probes, builds)) = arrivals.remove(&now) else {
                    continue;
                };
                for (k, change, diff) in probes {
                    let t = probe_time(&change.row);
                    if w.is_late(&t) {
                        let reason = format!(
                            "late probe row: event time {t:?} is behind the watermark {w:?}"
                        );
                        let rejected = Rejected {
                            seq: change.seq,
                            reason,
                        };
                        session.give(((k, Err(rejected)), now, diff));
                    } else {
                        buffered.insert((t, change.seq, counter), (k, change, diff));
                        counter += 1;
                    }
                }
                for (k, val, diff) in builds {
                    let (time, seq, row) = (val.0 .0, val.1 .0, val.2);
                    let rows = versions
                        .entry(k.clone())
                        .or_default()
                        .entry((time.clone(), seq))
                        .or_default();
                    match rows.binary_search_by(|(r, _)| r.cmp(&row)) {
                        Ok(i) => rows[i].1 += diff,
                        Err(i) => rows.insert(i, (row, diff)),
                    }
                    rows.retain(|(_, c)| *c != 0);
                    if rows.is_empty() {
                        versions
                            .get_mut(&k)
                            .expect("inserted above")
                            .remove(&(time.clone(), seq));
                    }
                    expiry.entry(time).or_default().push(k);
                }
            }

            // 3. End of every input: the remaining probe rows fire at W = Max, once.
            if first_frontier.is_empty() && build_frontier.is_empty() && arrivals.is_empty() {
                if !buffered.is_empty() {
                    let held = caps.iter().map(|c| *c.time()).min().unwrap_or(0);
                    let end = probe_wm.end_epoch().max(build_wm.end_epoch()).max(held);
                    let cap = caps.delayed(&end);
                    let mut session = output.session(&cap);
                    fire(
                        &Watermark::Max,
                        &mut buffered,
                        &versions,
                        kind,
                        &residual,
                        |k, row, d| session.give(((k, Ok(row)), end, d)),
                    );
                }
                versions.clear();
                expiry.clear();
                caps = CapabilitySet::new();
                return;
            }

            // 4. Hold a capability only while rows wait: at the earliest epoch still to visit.
            let waiting = !buffered.is_empty() || !arrivals.is_empty() || !rises.is_empty();
            let held = caps.iter().map(|c| *c.time()).min();
            match held {
                Some(held) if waiting => {
                    let target = [arrivals.keys().next(), rises.iter().next()]
                        .into_iter()
                        .flatten()
                        .chain(first_frontier.frontier().iter())
                        .chain(build_frontier.frontier().iter())
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
    let outcomes = outcomes.as_collection();
    let joined = outcomes
        .clone()
        .flat_map(|(k, o): (K, Result<Joined<P, B>, Rejected>)| o.ok().map(|j| (k, j)));
    let late =
        outcomes.flat_map(|(k, o): (K, Result<Joined<P, B>, Rejected>)| o.err().map(|r| (k, r)));
    FinalJoin { joined, late }
}

/// Emits the buffered probe rows the watermark `w` has passed, joined with their versions.
fn fire<K, E, P, B, R>(
    w: &Watermark<E>,
    buffered: &mut BTreeMap<(E, Seq, u64), (K, Change<P>, isize)>,
    versions: &BTreeMap<K, Versions<E, B>>,
    kind: JoinKind,
    residual: &R,
    mut emit: impl FnMut(K, Joined<P, B>, isize),
) where
    K: Ord,
    E: Ord + Clone,
    P: Clone,
    B: Clone,
    R: Fn(&P, &B) -> bool,
{
    let due = match w {
        Watermark::Min => return,
        Watermark::At(x) => {
            let rest = buffered.split_off(&(x.clone(), 0, 0));
            std::mem::replace(buffered, rest)
        }
        Watermark::Max => std::mem::take(buffered),
    };
    for ((t, _, _), (k, change, diff)) in due {
        let version = versions
            .get(&k)
            .and_then(|m| m.range(..=(t, Seq::MAX)).next_back())
            .map(|(_, rows)| &rows[0].0);
        if let Some(row) = join_row(kind, residual, &change, version) {
            emit(k, row, diff);
        }
    }
}

/// Drops the versions no probe row can choose any more once the watermark is `w` (rule B11):
/// per key whose versions `w` passed, all but the latest version with time `< w` and those after.
fn prune<K: Ord, E: Ord + Clone, B>(
    w: &Watermark<E>,
    versions: &mut BTreeMap<K, Versions<E, B>>,
    expiry: &mut BTreeMap<E, Vec<K>>,
) {
    let Watermark::At(x) = w else { return };
    let rest = expiry.split_off(x);
    for k in std::mem::replace(expiry, rest).into_values().flatten() {
        let Some(m) = versions.get_mut(&k) else {
            continue;
        };
        if let Some(keep) = m
            .range(..(x.clone(), 0))
            .next_back()
            .map(|(v, _)| v.clone())
        {
            *m = m.split_off(&keep);
        }
    }
}
