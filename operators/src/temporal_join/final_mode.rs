//! The final-mode event-time temporal join: emits each probe row once, when the combined
//! watermark has passed its time (Flink's `TemporalRowTimeJoinOperator`).

use std::collections::BTreeMap;

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use serde::{Deserialize, Serialize};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Concat, Exchange, OkErr, Operator};
use timely::dataflow::Stream;
use timely::progress::frontier::AntichainRef;

use super::build_side::{BuildSide, SharedVersions};
use super::firing::{Fired, Waiting, WaitingRuns};
use super::idle::IdleKeys;
use super::marks::{combined, Mark};
use super::{JoinConfig, JoinKey, JoinKind, Joined, Residual};
use crate::combined::Combined;
use crate::keyed_merge::Rejected;
use crate::retention::Retention;
use crate::version::VersionTrace;
use crate::watermark::{TimeText, Watermark};
use crate::{Change, SysTime};

/// The outputs of [`temporal_join_final`]: the joined rows as `O`, `(key, Change<(probe row,
/// build row)>)` but from
/// [`temporal_join_final_pruned_with`](super::temporal_join_final_pruned_with).
pub struct FinalJoin<'s, K: 'static, O: 'static> {
    /// The joined rows, append-only, diff as the probe's.
    pub joined: VecCollection<'s, SysTime, O>,
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

/// The probe side's and the build side's watermark collections, in this order.
pub type Watermarks<'s, E> = (
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
/// over each input, given as the pair `(probe side's, build side's)`. A probe row of epoch `s`
/// with `t < W(s)` is late (B9): it goes to [`FinalJoin::late`]. Late build versions are kept and seen by later firings (B10). When every
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
/// `config` gives INNER/LEFT, the residual predicate (checked against the chosen version only,
/// rule B5), the operator name (default `"TemporalJoinFinal"`) and the idle-state retention.
///
/// # Idle-state retention
///
/// Off unless [`JoinConfig::retention`] sets one: Flink's `table.exec.state.ttl` on
/// `TemporalRowTimeJoinOperator` (rule B13), measured on the combined watermark, in event time
/// (see [`crate::retention`]).
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
/// arrives. They never depend on the number of workers.
///
/// Cost: per build version received one entry until the next firing, per touch an O(log n)
/// update of the key's access time; per rise, the expired keys. State: an access time per key
/// with live state and the system time of expiry per expired key (the versions arrangement
/// itself is shared and not shrunk by the retention: see
/// [`arrange_versions_pruned`](crate::temporal_join::arrange_versions_pruned) for that). Once a
/// key has expired, this operator holds the arrangement's logical compaction below the first
/// expiry, so that the versions received before an expiry stay distinguishable from those
/// received after it (a retraction of a build version then no longer cancels its insertion in
/// the arrangement's batches). Over a
/// pruned arrangement one case differs from the unpruned one: a late build version (B10,
/// reported by [`late_versions`](crate::temporal_join::late_versions)) received after its key
/// expired and older than a forgotten version may be pruned, so later probe rows do not see it.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::{temporal_join_final, JoinConfig, JoinKind};
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
///     let config = JoinConfig::new(JoinKind::Left).named("J");
///     temporal_join_final(o, |t: &i64| *t, build, (o_wm, r_wm), config).joined
/// });
/// // The combined watermark at epoch 2 is min(10, 12) = 10, which has not passed time 10: the
/// // order fires at the end of input, epoch 2, with W = Max, joined with the rate valid at 10.
/// assert_eq!(out, vec![((1, Change::new(0, RowKind::Insert, (10, Some(114)))), 2, 1)]);
/// ```
///
/// With a retention of 10 ms:
///
/// ```
/// use differential_temporal_operators::retention::Retention;
/// use differential_temporal_operators::temporal_join::{temporal_join_final, JoinConfig, JoinKind};
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
///     let config = JoinConfig::new(JoinKind::Left).retention(Retention::millis(10));
///     temporal_join_final(o, |t: &i64| *t, build, (o_wm, r_wm), config).joined
/// });
/// let row = |seq, k, t, rate, at| ((k, Change::new(seq, RowKind::Insert, (t, rate))), at, 1);
/// assert_eq!(out, vec![
///     row(0, 1, 6, Some(114), 2),
///     row(2, 1, 21, None, 3), // key 1 expired at epoch 2: its rate is forgotten
///     row(1, 2, 20, None, 3),
/// ]);
/// ```
pub fn temporal_join_final<'s, K, E, P, B, T, R>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    probe_time: T,
    build: Arranged<'s, VersionTrace<K, E, B>>,
    (probe_watermarks, build_watermarks): Watermarks<'s, E>,
    config: JoinConfig<R, E>,
) -> FinalJoin<'s, K, (K, Joined<P, B>)>
where
    K: ExchangeData + Hashable + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    T: Fn(&P) -> E + 'static,
    R: Residual<P, B>,
{
    let Arranged { stream, trace } = build;
    final_join(
        probe,
        probe_time,
        (stream, SharedVersions::new(trace)),
        (probe_watermarks, build_watermarks),
        config,
        |k, j| (k, j),
    )
}

/// The final-mode join of `probe` against the versions `build` holds, fed by its input stream
/// (see [`temporal_join_final`]; the stream is read in place, so it must come partitioned as
/// the probe rows are: by the hash of the key), each joined row output as `output(key, row)`.
pub(super) fn final_join<'s, K, E, P, B, T, R, S, O>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    probe_time: T,
    (stream, build): (Stream<'s, SysTime, S::Input>, S),
    (probe_watermarks, build_watermarks): Watermarks<'s, E>,
    config: JoinConfig<R, E>,
    mut output: impl FnMut(K, Joined<P, B>) -> O + 'static,
) -> FinalJoin<'s, K, O>
where
    K: ExchangeData + Hashable + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    T: Fn(&P) -> E + 'static,
    R: Residual<P, B>,
    S: BuildSide<K, E, B>,
    O: differential_dataflow::Data,
{
    let (idle_timeout, time_text) = (config.idle_timed_out(), config.time_texts());
    let (kind, residual, retention, name) = config.into_parts("TemporalJoinFinal");
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
    let join = Join {
        kind,
        residual,
        probe_time,
        time_text,
    };

    type Outcomes<K, P, B> = CapacityContainerBuilder<Vec<(Outcome<K, P, B>, SysTime, isize)>>;
    let outcomes = first.binary_frontier::<_, Outcomes<K, P, B>, _, _, _, _>(
        stream,
        Pipeline,
        Pipeline,
        name,
        move |_cap, _info| {
            let mut caps = CapabilitySet::<SysTime>::new();
            let mut state = FinalJoinState::new(build, retention, idle_timeout);
            move |(first_in, first_frontier), (build_in, build_frontier), output| {
                // 1. Drain: probe rows by epoch, watermark candidates into trackers, the build
                //    input into the build side.
                first_in.for_each(|cap, data| {
                    for c in cap.retain_stamp(output.output_index()).iter() {
                        caps.insert(c.clone());
                    }
                    for (x, t, diff) in data.drain(..) {
                        state.receive(x, t, diff);
                    }
                });
                build_in.for_each(|_cap, data| state.build.receive(data, state.idle.as_mut()));
                let frontiers = [first_frontier.frontier(), build_frontier.frontier()];
                if frontiers.iter().all(|f| f.is_empty()) {
                    state.marks.ended();
                }

                // 2. Visit complete epochs in order: fire at the epoch's watermark, then take its
                //    probe rows (those behind the watermark are late).
                while let Some(now) = state.next_epoch(frontiers) {
                    let cap = caps.delayed(&now);
                    let mut session = output.session(&cap);
                    state.visit(now, &join, |o, diff| session.give((o, now, diff)));
                }

                // 3. End of every input: the remaining probe rows fire at W = Max, once, at the
                //    closing epoch.
                if frontiers.iter().all(|f| f.is_empty()) && state.arrivals.is_empty() {
                    if !state.waiting.is_empty() {
                        let held = caps.iter().map(|c| *c.time()).min().unwrap_or(0);
                        let end = state.marks.end_epoch().max(held);
                        let cap = caps.delayed(&end);
                        let mut session = output.session(&cap);
                        state.close(&join, |o, diff| session.give((o, end, diff)));
                    }
                    state.build.close();
                    caps = CapabilitySet::new();
                    return;
                }

                // 4. Hold a capability only while rows wait: at the earliest epoch still to visit.
                //    Once the probe side has ended the capability stays at the closing epoch (a
                //    pruned build arrangement's frontier still moves: it still seals retractions).
                let next = state.hold(frontiers);
                let held = caps.iter().map(|c| *c.time()).min();
                match held {
                    Some(_) if state.pending() && frontiers[0].is_empty() => {}
                    Some(held) if state.pending() => {
                        caps.downgrade([next.unwrap_or(held).max(held)])
                    }
                    _ => caps = CapabilitySet::new(),
                }
            }
        },
    );
    // One pass routes each outcome to its collection, moved, not cloned, and makes each
    // joined row its output.
    let (joined, late) =
        outcomes.ok_err::<Vec<_>, _, Vec<_>, _, _>(move |((k, o), t, d)| match o {
            Ok(j) => Ok((output(k, j), t, d)),
            Err(r) => Err(((k, r), t, d)),
        });
    FinalJoin {
        joined: joined.as_collection(),
        late: late.as_collection(),
    }
}

/// One output of the operator: a joined row, or a late probe row.
type Outcome<K, P, B> = (K, Result<Joined<P, B>, Rejected>);

/// What the join does with a probe row: its event time, INNER or LEFT, the residual predicate,
/// and how a late row's reason writes event times.
struct Join<T, R, E> {
    kind: JoinKind,
    residual: R,
    probe_time: T,
    time_text: TimeText<E>,
}

/// A probe row of an epoch not yet visited.
struct Arrival<K, P> {
    key: K,
    change: Change<P>,
    diff: isize,
}

/// The operator's state between activations.
struct FinalJoinState<K, E, P, S> {
    /// Probe rows by the epoch they arrived in, until the epoch is visited.
    arrivals: BTreeMap<SysTime, Vec<Arrival<K, P>>>,
    /// The combined watermark of both inputs, per epoch.
    marks: Combined<E>,
    /// The watermark of the last firing.
    fired: Watermark<E>,
    /// Probe rows taken into the join, waiting for the watermark.
    waiting: WaitingRuns<K, E, P>,
    /// Idle-state retention: the keys' access times and expiries (`None`: off).
    idle: Option<IdleKeys<K, E>>,
    /// The build versions.
    build: S,
}

impl<K, E, P, S> FinalJoinState<K, E, P, S>
where
    K: ExchangeData + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
{
    fn new(build: S, retention: Option<Retention<E>>, idle_timeout: SysTime) -> Self {
        FinalJoinState {
            arrivals: BTreeMap::new(),
            marks: combined(idle_timeout),
            fired: Watermark::Min,
            waiting: WaitingRuns::default(),
            idle: retention.map(IdleKeys::new),
            build,
        }
    }

    /// Takes a record of the first input at system time `t`.
    fn receive(&mut self, x: In<K, P, E>, t: SysTime, diff: isize) {
        match x {
            In::Probe(key, change) => {
                let arrival = Arrival { key, change, diff };
                self.arrivals.entry(t).or_default().push(arrival);
            }
            In::Mark(m) => m.observe_into(t, &mut self.marks),
        }
    }

    /// The earliest epoch still to visit (one with probe rows or a watermark rise), if both
    /// inputs have passed it.
    fn next_epoch(&self, frontiers: [AntichainRef<'_, SysTime>; 2]) -> Option<SysTime> {
        let next = self.arrivals.keys().next().copied();
        let now = next.into_iter().chain(self.marks.next_rise()).min()?;
        (!frontiers.iter().any(|f| f.less_equal(&now))).then_some(now)
    }

    /// Visits epoch `now`: fires the waiting rows its watermark has passed (then expires idle
    /// keys), and takes its probe rows: `emit`s those behind the watermark as late, keeps the
    /// others waiting.
    fn visit<B, T, R>(
        &mut self,
        now: SysTime,
        join: &Join<T, R, E>,
        mut emit: impl FnMut(Outcome<K, P, B>, isize),
    ) where
        S: BuildSide<K, E, B>,
        T: Fn(&P) -> E,
        R: Fn(&P, &B) -> bool,
    {
        let w = self.marks.at(now);
        self.build.advance_to(now, self.idle.as_mut());
        if w > self.fired {
            if let Some(idle) = self.idle.as_mut() {
                idle.apply_received_before(now);
            }
            // Versions of the system times before `now`, of keys not expired since.
            if let Some(seen) = now.checked_sub(1).filter(|_| self.waiting.has_ready(&w)) {
                for (k, j, d) in self.fire(&w, seen, join) {
                    emit((k, Ok(j)), d);
                }
            }
            if let Some(idle) = self.idle.as_mut() {
                idle.expire(&w, now, |k| self.build.forget(k));
            }
            self.build.rise(&w);
            self.fired = w.clone();
        }
        let Some(arrivals) = self.arrivals.remove(&now) else {
            return;
        };
        let mut run = Vec::with_capacity(arrivals.len());
        for Arrival { key, change, diff } in arrivals {
            let time = (join.probe_time)(&change.row);
            if w.is_late(&time) {
                let (time, mark) = (join.time_text.time(&time), join.time_text.mark(&w));
                let reason =
                    format!("late probe row: event time {time} is behind the watermark {mark}");
                let seq = change.seq;
                emit((key, Err(Rejected::late(seq, reason))), diff);
            } else {
                if let Some(idle) = self.idle.as_mut().filter(|_| !key.is_null()) {
                    idle.touch(&key, &time);
                }
                run.push(Waiting {
                    time,
                    key,
                    change,
                    diff,
                });
            }
        }
        self.waiting.push(run);
    }

    /// Every input has ended: the remaining rows fire at `W = Max`, reading every version.
    fn close<B, T, R>(
        &mut self,
        join: &Join<T, R, E>,
        mut emit: impl FnMut(Outcome<K, P, B>, isize),
    ) where
        S: BuildSide<K, E, B>,
        R: Fn(&P, &B) -> bool,
    {
        self.build.advance_to(SysTime::MAX, self.idle.as_mut());
        for (k, j, d) in self.fire(&Watermark::Max, SysTime::MAX, join) {
            emit((k, Ok(j)), d);
        }
    }

    /// Takes the waiting rows `w` has passed and joins them against the versions present at
    /// system time `seen` (and, per key, received since its state last expired).
    fn fire<B, T, R>(
        &mut self,
        w: &Watermark<E>,
        seen: SysTime,
        join: &Join<T, R, E>,
    ) -> Vec<Fired<K, P, B>>
    where
        S: BuildSide<K, E, B>,
        R: Fn(&P, &B) -> bool,
    {
        let ready = self.waiting.take_ready(w);
        let idle = self.idle.as_ref();
        (self.build).fire(ready, seen, idle, join.kind, &join.residual)
    }

    /// Tells the build side the earliest epoch still to visit and returns it.
    fn hold<B>(&mut self, frontiers: [AntichainRef<'_, SysTime>; 2]) -> Option<SysTime>
    where
        S: BuildSide<K, E, B>,
    {
        let next = (self.arrivals.keys().next().copied().into_iter())
            .chain(self.marks.next_rise())
            .chain(frontiers.iter().flat_map(|f| f.iter().copied()))
            .min();
        // With a retention, at most the expiries' floor (see `IdleKeys::compaction_floor`).
        let floor = self.idle.as_ref().and_then(IdleKeys::compaction_floor);
        self.build.hold(next, floor);
        next
    }

    /// `true` iff rows wait or an epoch is still to visit.
    fn pending(&self) -> bool {
        !self.waiting.is_empty() || !self.arrivals.is_empty() || self.marks.rising()
    }
}
