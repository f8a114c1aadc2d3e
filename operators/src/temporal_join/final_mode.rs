//! The final-mode event-time temporal join: emits each probe row once, when the combined
//! watermark has passed its time (Flink's `TemporalRowTimeJoinOperator`).

use std::cmp::Reverse;
use std::collections::BTreeMap;

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::trace::TraceReader;
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Concat, Exchange, Operator};
use timely::progress::Antichain;

use super::idle::IdleKeys;
use super::marks::{Combined, Mark};
use super::{chosen, JoinKey, JoinKind, Joined};
use crate::keyed_merge::Rejected;
use crate::retention::Retention;
use crate::version::cursor::{VersionBatch, VersionCursor};
use crate::version::{seek_target, VersionTrace};
use crate::watermark::Watermark;
use crate::{Change, RowKind, Seq, SysTime};

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
    Mark(Mark<E>),
}

/// A probe row waiting for the watermark: (event time, key, change, diff).
type Waiting<E, K, P> = (E, K, Change<P>, isize);

/// The probe side's and the build side's watermark collections.
type Watermarks<'s, E> = (
    VecCollection<'s, SysTime, Watermark<E>>,
    VecCollection<'s, SysTime, Watermark<E>>,
);

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
/// The build side is read in place: this operator keeps a handle on the versions arrangement
/// (the versioned table's, shared with its other readers) and reads it at each firing, holding
/// its logical compaction only just below the next system time it will visit and its physical
/// compaction at the batches received. State of its own: the probe rows not yet fired, dropped
/// when emitted. To keep the arrangement itself bounded (rule B11), build it from
/// [`arrange_versions_pruned`](crate::temporal_join::arrange_versions_pruned) over the same watermarks.
///
/// Cost: per probe row one push on arrival; per firing, the ready rows are sorted by
/// (key, event time) and each key's versions are walked once, newest first, with one
/// O(log n) seek per distinct version chosen (a merge, not a seek per row); the output is
/// sorted by `seq`.
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
    K: ExchangeData + Hashable + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    T: Fn(&P) -> E + 'static,
    R: Fn(&P, &B) -> bool + 'static,
{
    let watermarks = (probe_watermarks, build_watermarks);
    join_final(
        probe, probe_time, build, watermarks, kind, residual, None, name,
    )
}

/// [`temporal_join_final`] with idle-state retention (Flink's `table.exec.state.ttl` on
/// `TemporalRowTimeJoinOperator`, rule B13), measured on the combined watermark (see
/// [`crate::retention`]).
///
/// Each probe row taken into the join (not late) and each build version received touches its
/// key at its event time. When the combined watermark rises past `retention.expiry(access)`,
/// `access` the greatest event time that touched the key, the key's state expires: every build
/// version received before that system time is forgotten, so a later probe row of the key
/// finds no version (INNER drops it, LEFT pads it) unless a version arrived after the expiry.
/// The key's probe rows have all been emitted by then (the watermark passed them first), so
/// expiry never drops a probe row. Expiry is checked each time the combined watermark rises.
///
/// Results depend on timing exactly as in Flink: on how far the watermark has moved when a row
/// arrives. They never depend on the number of workers. Retention is off in
/// [`temporal_join_final`].
///
/// Cost: per build version received one entry until the next firing, per touch an O(log n)
/// update of the key's access time; per rise, the expired keys. State: an access time per key
/// with live state and the system time of expiry per expired key (the versions arrangement
/// itself is shared and not shrunk by the retention: see
/// [`arrange_versions_pruned`](crate::temporal_join::arrange_versions_pruned) for that). Over a
/// pruned arrangement one case differs from the unpruned one: a late build version (B10,
/// reported by [`late_versions`](crate::temporal_join::late_versions)) received after its key
/// expired and older than a forgotten version may be pruned, so later probe rows do not see it.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::retention::Retention;
/// use differential_temporal_operators::temporal_join::{temporal_join_final_with_retention, JoinKind};
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::watermark::watermarks;
/// use differential_temporal_operators::{arrange_versions, Change, RowKind, Version};
///
/// // Epoch 0: key 1's rate at 5 and order at 6. Epoch 1: an order (key 2) and a rate (key 3)
/// // at 20. At epoch 2 the combined watermark is 20: the order at 6 fires, then key 1 expires
/// // (6 + 10 < 20), so its order at 21 (epoch 2) finds no rate when it fires at the end.
/// let order = |seq, k: u8, t: i64| ((k, Change::new(seq, RowKind::Insert, t)), 1);
/// let orders = vec![vec![order(0, 1, 6)], vec![order(1, 2, 20)], vec![order(2, 1, 21)]];
/// let rate = |k: u8, t: i64, seq, r: i64| ((k, Version::row(t, seq, r)), 1);
/// let rates = vec![vec![rate(1, 5, 0, 114)], vec![rate(3, 20, 1, 7)], vec![]];
/// let out = run_binary(1, orders, rates, |o, r| {
///     let o_wm = watermarks(o.clone(), |(_, c): &(u8, Change<i64>)| c.row, |m: &i64| *m, "OWm");
///     let r_wm = watermarks(r.clone(), |(_, v): &(u8, Version<i64, i64>)| v.time, |m: &i64| *m, "RWm");
///     let build = arrange_versions(r, "Rates");
///     let ttl = Retention::millis(10);
///     let j = temporal_join_final_with_retention(
///         o, |t: &i64| *t, build, o_wm, r_wm, JoinKind::Left, |_, _| true, ttl, "J",
///     );
///     j.joined
/// });
/// let row = |seq, k, t, rate, at| ((k, Change::new(seq, RowKind::Insert, (t, rate))), at, 1);
/// assert_eq!(out, vec![
///     row(0, 1, 6, Some(114), 2),
///     row(2, 1, 21, None, 3), // key 1 expired at epoch 2: its rate is forgotten
///     row(1, 2, 20, None, 3),
/// ]);
/// ```
pub fn temporal_join_final_with_retention<'s, K, E, P, B, T, R>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    probe_time: T,
    build: Arranged<'s, VersionTrace<K, E, B>>,
    probe_watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    build_watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    kind: JoinKind,
    residual: R,
    retention: Retention<E>,
    name: &str,
) -> FinalJoin<'s, K, P, B>
where
    K: ExchangeData + Hashable + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    T: Fn(&P) -> E + 'static,
    R: Fn(&P, &B) -> bool + 'static,
{
    let watermarks = (probe_watermarks, build_watermarks);
    let retention = Some(retention);
    join_final(
        probe, probe_time, build, watermarks, kind, residual, retention, name,
    )
}

/// The operator of [`temporal_join_final`] and [`temporal_join_final_with_retention`].
fn join_final<'s, K, E, P, B, T, R>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    probe_time: T,
    build: Arranged<'s, VersionTrace<K, E, B>>,
    (probe_watermarks, build_watermarks): Watermarks<'s, E>,
    kind: JoinKind,
    residual: R,
    retention: Option<Retention<E>>,
    name: &str,
) -> FinalJoin<'s, K, P, B>
where
    K: ExchangeData + Hashable + JoinKey,
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
        .map(|w| In::Mark(Mark::Probe(w)))
        .concat(build_watermarks.map(|w| In::Mark(Mark::Build(w))));
    let first = probe.concat(marks.inner);
    let Arranged { stream, trace } = build;
    let mut trace = Some(trace);

    let outcomes = first.binary_frontier(stream, Pipeline, Pipeline, name, move |_cap, _info| {
        let mut caps = CapabilitySet::<SysTime>::new();
        // Probe rows by the epoch they arrived in, until the epoch is visited.
        let mut arrivals: BTreeMap<SysTime, Vec<(K, Change<P>, isize)>> = BTreeMap::new();
        let mut marks = Combined::new();
        let mut fired = Watermark::Min;
        // Probe rows waiting for the watermark: one run per visited epoch, newest time first.
        let mut waiting: Vec<Vec<Waiting<E, K, P>>> = Vec::new();
        // Upper of the build batches received: the trace is read through it.
        let mut build_ack = Antichain::from_elem(0);
        let mut idle = retention.clone().map(IdleKeys::new);
        move |(first_in, first_frontier), (build_in, build_frontier), output| {
            // 1. Drain: probe rows by epoch, watermark candidates into trackers, build uppers.
            first_in.for_each(|cap, data| {
                for c in cap.retain_stamp(output.output_index()).iter() {
                    caps.insert(c.clone());
                }
                for (x, t, diff) in data.drain(..) {
                    match x {
                        In::Probe(k, c) => arrivals.entry(t).or_default().push((k, c, diff)),
                        In::Mark(m) => marks.observe(t, m),
                    }
                }
            });
            build_in.for_each(|_cap, spans| {
                for span in spans.drain(..) {
                    build_ack.clone_from(span.upper());
                    if let (Some(idle), Some(batch)) = (idle.as_mut(), span.inner) {
                        idle.receive(batch);
                    }
                }
            });
            if let Some(trace) = trace.as_mut() {
                trace.advance_upper(&mut build_ack);
            }
            let batches = |trace: &mut Option<VersionTrace<K, E, B>>| {
                let trace = trace.as_mut().expect("trace held while inputs are open");
                trace
                    .batches_through(build_ack.borrow())
                    .expect("build trace readable")
            };

            // 2. Visit complete epochs in order: fire at the epoch's watermark, then take its
            // probe rows (those behind the watermark are late).
            loop {
                let next = arrivals.keys().next().copied();
                let Some(now) = next.into_iter().chain(marks.next_rise()).min() else {
                    break;
                };
                if first_frontier.less_equal(&now) || build_frontier.less_equal(&now) {
                    break;
                }
                let cap = caps.delayed(&now);
                let mut session = output.session(&cap);
                let w = marks.at(now);
                if w > fired {
                    // Versions of the system times before `now`, of keys not expired since.
                    let seen = now.checked_sub(1);
                    if let Some(idle) = idle.as_mut() {
                        idle.apply_received_before(now);
                    }
                    if let Some(seen) = seen.filter(|_| has_ready(&w, &waiting)) {
                        let since = |k: &K| idle.as_ref().map_or(0, |i| i.since(k));
                        let read = Read {
                            batches: batches(&mut trace),
                            seen,
                            since,
                        };
                        let rows = fire(&w, &mut waiting, read, kind, &residual);
                        session
                            .give_iterator(rows.into_iter().map(|(k, j, d)| ((k, Ok(j)), now, d)));
                    }
                    if let Some(idle) = idle.as_mut() {
                        idle.expire(&w, now);
                    }
                    fired = w.clone();
                }
                let Some(probes) = arrivals.remove(&now) else {
                    continue;
                };
                let mut run = Vec::with_capacity(probes.len());
                for (k, change, diff) in probes {
                    let t = probe_time(&change.row);
                    if w.is_late(&t) {
                        let reason =
                            format!("late probe row: event time {t:?} is behind the watermark {w}");
                        let rejected = Rejected {
                            seq: change.seq,
                            reason,
                        };
                        session.give(((k, Err(rejected)), now, diff));
                    } else {
                        if let Some(idle) = idle.as_mut().filter(|_| !k.is_null()) {
                            idle.touch(&k, &t);
                        }
                        run.push((t, k, change, diff));
                    }
                }
                if !run.is_empty() {
                    run.sort_unstable_by(|a, b| b.0.cmp(&a.0));
                    waiting.push(run);
                }
            }

            // 3. End of every input: the remaining probe rows fire at W = Max, once.
            if first_frontier.is_empty() && build_frontier.is_empty() && arrivals.is_empty() {
                if !waiting.is_empty() {
                    let held = caps.iter().map(|c| *c.time()).min().unwrap_or(0);
                    let end = marks.end_epoch().max(held);
                    let cap = caps.delayed(&end);
                    let mut session = output.session(&cap);
                    let w = Watermark::Max;
                    let since = |k: &K| idle.as_ref().map_or(0, |i| i.since(k));
                    let read = Read {
                        batches: batches(&mut trace),
                        seen: SysTime::MAX,
                        since,
                    };
                    let rows = fire(&w, &mut waiting, read, kind, &residual);
                    session.give_iterator(rows.into_iter().map(|(k, j, d)| ((k, Ok(j)), end, d)));
                }
                trace = None;
                caps = CapabilitySet::new();
                return;
            }

            // 4. Hold a capability only while rows wait: at the earliest epoch still to visit.
            // Compaction: logical just below that epoch (a firing at `now` reads the versions of
            // the times before `now`), physical at the batches received.
            let next = (arrivals.keys().next().copied().into_iter())
                .chain(marks.next_rise())
                .chain(first_frontier.frontier().iter().copied())
                .chain(build_frontier.frontier().iter().copied())
                .min();
            if let Some(trace) = trace.as_mut() {
                let hold = Antichain::from_iter(next.map(|t| t.saturating_sub(1)));
                trace.set_logical_compaction(hold.borrow());
                trace.set_physical_compaction(build_ack.borrow());
            }
            let pending = !waiting.is_empty() || !arrivals.is_empty() || marks.rising();
            let held = caps.iter().map(|c| *c.time()).min();
            match held {
                // Once the probe side has ended the capability stays at the closing epoch (a
                // pruned build arrangement's frontier still moves: its retractions feed back).
                Some(_) if pending && first_frontier.is_empty() => {}
                Some(held) if pending => caps.downgrade([next.unwrap_or(held).max(held)]),
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

/// `true` iff the watermark `w` has passed some waiting probe row.
fn has_ready<E: Ord, K, P>(w: &Watermark<E>, waiting: &[Vec<Waiting<E, K, P>>]) -> bool {
    waiting
        .iter()
        .any(|run| run.last().is_some_and(|r| w.passed(&r.0)))
}

/// What a firing reads: the versions in `batches` present at system time `seen` and not present
/// before `since(key)` (the system time at which the key's state last expired, or `0`).
struct Read<K, E, B, S>
where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    batches: Vec<VersionBatch<K, E, B>>,
    seen: SysTime,
    since: S,
}

/// Takes the waiting probe rows the watermark `w` has passed and joins each with the version of
/// its key valid at its time among the versions `read` gives. Returns the output rows in `seq`
/// order.
///
/// The rows are sorted (through indices) by (key, time newest first) and each key's versions are
/// walked once in the same order: a probe row reuses the version found for the previous row of
/// its key when that version's time is still `<=` its own, else seeks forward.
fn fire<K, E, P, B, R, S>(
    w: &Watermark<E>,
    waiting: &mut Vec<Vec<Waiting<E, K, P>>>,
    read: Read<K, E, B, S>,
    kind: JoinKind,
    residual: &R,
) -> Vec<(K, Joined<P, B>, isize)>
where
    K: ExchangeData + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    R: Fn(&P, &B) -> bool,
    S: Fn(&K) -> SysTime,
{
    let mut ready = Vec::new();
    for run in waiting.iter_mut() {
        // Each run is sorted newest time first: the rows `w` passed are a suffix.
        let from = run.partition_point(|r| !w.passed(&r.0));
        ready.extend(run.drain(from..));
    }
    waiting.retain(|run| !run.is_empty());
    // Sorted through indices: the rows themselves stay where they are.
    let mut order: Vec<usize> = (0..ready.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        let (a, b) = (&ready[a], &ready[b]);
        a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0))
    });

    // Per ready row, the version chosen for it: an index into `versions`, or NONE.
    const NONE: usize = usize::MAX;
    let mut pick = vec![NONE; ready.len()];
    let mut versions: Vec<Option<B>> = Vec::new();
    let mut reader = VersionCursor::new(read.batches);
    let mut i = 0;
    while i < order.len() {
        let key = &ready[order[i]].1;
        // A NULL key matches no version (see [`JoinKey`]).
        let present = !key.is_null() && reader.seek_key(key);
        let since = (read.since)(key);
        // The choice for the previous row of this key, once sought: (version time, pick).
        let mut found: Option<(Option<E>, usize)> = None;
        while let Some(&r) = order.get(i).filter(|&&r| ready[r].1 == *key) {
            let t = &ready[r].0;
            let stale = found
                .as_ref()
                .is_none_or(|(ft, _)| ft.as_ref().is_some_and(|ft| ft > t));
            if present && stale {
                reader.seek_val(&seek_target(t.clone()));
                found = Some(match reader.next_present_since(since, read.seen) {
                    Some((Reverse(ft), _, row)) => {
                        versions.push(row.clone());
                        (Some(ft.clone()), versions.len() - 1)
                    }
                    None => (None, NONE),
                });
            }
            pick[r] = found.as_ref().map_or(NONE, |f| f.1);
            i += 1;
        }
    }

    // Emit in `seq` order, moving each probe row into its output row.
    let mut by_seq: Vec<(Seq, RowKind, usize)> = (ready.iter().enumerate())
        .map(|(i, r)| (r.2.seq, r.2.kind, i))
        .collect();
    by_seq.sort_unstable();
    let mut rows: Vec<Option<Waiting<E, K, P>>> = ready.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(rows.len());
    for (_, _, i) in by_seq {
        let Some((_, k, change, diff)) = rows[i].take() else {
            continue;
        };
        let version = versions.get(pick[i]);
        if let Some(matched) = chosen(kind, residual, &change.row, version) {
            let Change { seq, kind, row } = change;
            out.push((k, Change::new(seq, kind, (row, matched.cloned())), diff));
        }
    }
    out
}
