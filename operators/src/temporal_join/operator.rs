//! The incremental event-time temporal join: a binary operator over the probe and build
//! arrangements.
//!
//! The operator is a driver: it drains both inputs into per-system-time [`Work`] and, for every
//! system time both inputs have passed, runs [`join_time`], which visits each key with new probe
//! rows or changed build versions once: [`Step::rejoin_changed`] re-joins the probe rows whose
//! version a build change altered, [`Step::join_probe`] joins each new probe row.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::convert::Infallible;

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::trace::cursor::{cursor_list, CursorList};
use differential_dataflow::trace::{BatchCursor, Cursor, TraceReader};
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Operator};
use timely::progress::Antichain;

use super::{join_row, JoinConfig, JoinKey, JoinKind, Joined, ProbeSpine, ProbeTrace, Residual};
use crate::version::cursor::{VersionBatch, VersionCursor};
use crate::version::{seek_target, VersionTrace, VersionVal};
use crate::{Change, Seq, SysTime};

/// A new probe update.
struct ProbeUpdate<K, E, P> {
    key: K,
    /// The probe row's event time.
    time: E,
    change: Change<P>,
    diff: isize,
}

/// A build version whose count changed at the system time processed. Ordered by key, then in
/// arrangement order (newest version first).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct ChangedVersion<K, E, B> {
    key: K,
    val: VersionVal<E, B>,
}

impl<K, E, B> ChangedVersion<K, E, B> {
    /// The version's event time.
    fn time(&self) -> &E {
        &self.val.0 .0
    }

    /// The version's source sequence number.
    fn seq(&self) -> Seq {
        self.val.1 .0
    }
}

/// The updates received at one system time, not yet processed.
struct Work<K, E, P, B> {
    probes: Vec<ProbeUpdate<K, E, P>>,
    builds: Vec<ChangedVersion<K, E, B>>,
}

impl<K, E, P, B> Default for Work<K, E, P, B> {
    fn default() -> Self {
        Work {
            probes: Vec::new(),
            builds: Vec::new(),
        }
    }
}

/// A build version read for a key, with its counts before and at the system time processed.
struct ReadVersion<E, B> {
    time: E,
    seq: Seq,
    row: Option<B>,
    /// Accumulated count at system times `< now`.
    before: isize,
    /// Accumulated count at system times `<= now`.
    after: isize,
}

/// The cursor over a probe trace's batches and its storage.
type ProbeCursor<K, E, P> = (
    CursorList<BatchCursor<ProbeSpine<K, E, P>>>,
    Vec<<ProbeSpine<K, E, P> as TraceReader>::Batch>,
);

/// Incremental event-time temporal join (see the [module docs](super) for shapes and rules).
///
/// At every system time the output collection equals the temporal join of all probe rows and
/// build versions received so far (rules B3-B5, B8). Ties are broken by `seq`. `config` gives
/// INNER/LEFT, the residual predicate and the operator name (default `"TemporalJoin"`); it has
/// no retention (its clock is [`Infallible`]): the join is exact at every system time.
///
/// Cost, per system time and key: a new probe row is one seek in the build trace (O(log n));
/// a changed build version `v` re-joins only the probe rows in `[v.time, next version time)`
/// (one seek in the probe trace and a scan of those rows) after reading the key's versions
/// newer than `v` (none when versions arrive in event-time order). State: the two shared
/// traces; this operator holds their compaction only at the earliest unprocessed system time.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::{
///     arrange_probe, temporal_join, JoinConfig, JoinKind,
/// };
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::{arrange_versions, Change, RowKind, Version};
///
/// // Orders (currency, Change<(time, amount)>) and rates (currency, Version<time, rate>).
/// let orders = vec![vec![((1u8, Change::new(0, RowKind::Insert, (10i64, 3i64))), 1)]];
/// let rates = vec![
///     vec![((1u8, Version::row(5i64, 0, 114i64)), 1)],
///     vec![((1u8, Version::row(8i64, 1, 116i64)), 1)], // late: re-versions the order
/// ];
/// let out = run_binary(1, orders, rates, |o, r| {
///     let probe = arrange_probe(o, |p: &(i64, i64)| p.0, "Orders");
///     let build = arrange_versions(r, "Rates");
///     temporal_join(probe, build, JoinConfig::new(JoinKind::Inner).named("Join"))
/// });
/// let row = |rate| (1, Change::new(0, RowKind::Insert, ((10, 3), Some(rate))));
/// assert_eq!(out, vec![(row(114), 0, 1), (row(114), 1, -1), (row(116), 1, 1)]);
/// ```
pub fn temporal_join<'s, K, E, P, B, R>(
    probe: Arranged<'s, ProbeTrace<K, E, P>>,
    build: Arranged<'s, VersionTrace<K, E, B>>,
    config: JoinConfig<R, Infallible>,
) -> VecCollection<'s, SysTime, (K, Joined<P, B>)>
where
    K: ExchangeData + Hashable + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    R: Residual<P, B>,
{
    let (kind, residual, _, name) = config.into_parts("TemporalJoin");
    let mut probe_trace = probe.trace.clone();
    let mut build_trace = build.trace.clone();
    let (stream, other) = (probe.stream, build.stream);
    let joined = stream.binary_frontier(other, Pipeline, Pipeline, name, move |_cap, _info| {
        let mut caps = CapabilitySet::<SysTime>::new();
        let mut pending: BTreeMap<SysTime, Work<K, E, P, B>> = BTreeMap::new();
        // Uppers of the batches received: the traces are read through these.
        let mut probe_ack = Antichain::from_elem(0);
        let mut build_ack = Antichain::from_elem(0);
        move |(probe_in, probe_frontier), (build_in, build_frontier), output| {
            // 1. Drain both inputs into per-time work, keeping capabilities.
            probe_in.for_each(|cap, spans| {
                for c in cap.retain_stamp(output.output_index()).iter() {
                    caps.insert(c.clone());
                }
                for span in spans.drain(..) {
                    probe_ack.clone_from(span.upper());
                    if let Some(batch) = span.inner {
                        drain_probes(batch, &mut pending);
                    }
                }
            });
            build_in.for_each(|cap, spans| {
                for c in cap.retain_stamp(output.output_index()).iter() {
                    caps.insert(c.clone());
                }
                for span in spans.drain(..) {
                    build_ack.clone_from(span.upper());
                    if let Some(batch) = span.inner {
                        drain_builds(batch, &mut pending);
                    }
                }
            });
            probe_trace.advance_upper(&mut probe_ack);
            build_trace.advance_upper(&mut build_ack);

            // 2. Process every system time both inputs have passed, in order.
            while let Some(entry) = pending.first_entry() {
                let now = *entry.key();
                if probe_frontier.less_equal(&now) || build_frontier.less_equal(&now) {
                    break;
                }
                let work = entry.remove();
                let cap = caps.delayed(&now);
                let mut session = output.session(&cap);
                let probes = probe_trace.batches_through(probe_ack.borrow());
                let builds = build_trace.batches_through(build_ack.borrow());
                let mut step = Step {
                    now,
                    kind,
                    residual: &residual,
                    probes: cursor_list(probes.expect("probe trace readable")),
                    reader: VersionCursor::new(builds.expect("build trace readable")),
                    versions: Vec::new(),
                };
                join_time(&mut step, work, |k, row, diff| {
                    session.give(((k.clone(), row), now, diff));
                });
            }

            // 3. Hold capabilities only for unprocessed times. Compaction: logical strictly
            // below every time still to process (so "before `now`" stays distinguishable from
            // "at `now`"), physical at the uppers we read through.
            let mut hold = Antichain::new();
            for t in pending
                .keys()
                .take(1)
                .chain(probe_frontier.frontier().iter())
                .chain(build_frontier.frontier().iter())
            {
                hold.insert(t.saturating_sub(1));
            }
            match pending.keys().next() {
                Some(&t) => caps.downgrade([t]),
                None => caps = CapabilitySet::new(),
            }
            probe_trace.set_logical_compaction(hold.borrow());
            build_trace.set_logical_compaction(hold.borrow());
            probe_trace.set_physical_compaction(probe_ack.borrow());
            build_trace.set_physical_compaction(build_ack.borrow());
        }
    });
    joined.as_collection()
}

/// Adds the updates of a probe batch to the work of their system times.
fn drain_probes<K, E, P, B>(
    batch: <ProbeSpine<K, E, P> as TraceReader>::Batch,
    pending: &mut BTreeMap<SysTime, Work<K, E, P, B>>,
) where
    K: ExchangeData,
    E: ExchangeData,
    P: ExchangeData,
{
    let (mut cur, sto) = cursor_list(vec![batch]);
    while let Some((key, time)) = cur.get_key(&sto) {
        while let Some(change) = cur.get_val(&sto) {
            cur.map_times(&sto, |at, diff| {
                pending.entry(*at).or_default().probes.push(ProbeUpdate {
                    key: key.clone(),
                    time: time.clone(),
                    change: change.clone(),
                    diff: *diff,
                });
            });
            cur.step_val(&sto);
        }
        cur.step_key(&sto);
    }
}

/// Adds the versions of a build batch to the work of the system times their counts changed at.
fn drain_builds<K, E, P, B>(
    batch: VersionBatch<K, E, B>,
    pending: &mut BTreeMap<SysTime, Work<K, E, P, B>>,
) where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    let (mut cur, sto) = cursor_list(vec![batch]);
    while let Some(key) = cur.get_key(&sto) {
        while let Some(val) = cur.get_val(&sto) {
            cur.map_times(&sto, |at, _diff| {
                pending.entry(*at).or_default().builds.push(ChangedVersion {
                    key: key.clone(),
                    val: val.clone(),
                });
            });
            cur.step_val(&sto);
        }
        cur.step_key(&sto);
    }
}

/// What the processing of one system time reads: both traces through the batches received,
/// the join's parameters, and a buffer for a key's versions.
struct Step<'r, K, E, P, B, R>
where
    K: ExchangeData,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
{
    now: SysTime,
    kind: JoinKind,
    residual: &'r R,
    probes: ProbeCursor<K, E, P>,
    reader: VersionCursor<K, E, B>,
    versions: Vec<ReadVersion<E, B>>,
}

/// Joins the work of system time `step.now`: per key (ascending), first the probe rows whose
/// version a changed build version altered, then the new probe rows. `emit(key, row, diff)`
/// receives the output updates.
fn join_time<K, E, P, B, R>(
    step: &mut Step<'_, K, E, P, B, R>,
    work: Work<K, E, P, B>,
    mut emit: impl FnMut(&K, Joined<P, B>, isize),
) where
    K: ExchangeData + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    R: Fn(&P, &B) -> bool,
{
    let Work {
        mut probes,
        mut builds,
    } = work;
    probes.sort_by(|a, b| (&a.key, Reverse(&a.time)).cmp(&(&b.key, Reverse(&b.time))));
    builds.sort();
    builds.dedup();
    let (mut probes, mut builds) = (&probes[..], &builds[..]);
    while let Some(key) = match (probes.first(), builds.first()) {
        (Some(p), Some(b)) => Some((&p.key).min(&b.key)),
        (p, b) => p.map(|p| &p.key).or(b.map(|b| &b.key)),
    } {
        let key = key.clone();
        // A NULL key matches no version (see [`JoinKey`]).
        let has_versions = !key.is_null() && step.reader.seek_key(&key);
        let changed = builds.iter().take_while(|b| b.key == key).count();
        if changed > 0 && has_versions {
            step.rejoin_changed(&key, &builds[..changed], &mut emit);
        }
        builds = &builds[changed..];
        let new = probes.iter().take_while(|p| p.key == key).count();
        for update in &probes[..new] {
            step.join_probe(update, has_versions, &mut emit);
        }
        probes = &probes[new..];
    }
}

impl<K, E, P, B, R> Step<'_, K, E, P, B, R>
where
    K: ExchangeData + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    R: Fn(&P, &B) -> bool,
{
    /// Re-joins the probe rows of `key` whose chosen version the `changed` build versions (of
    /// this key, in arrangement order) altered: those in `[oldest changed time, next present
    /// version newer than every change)`. Emits a retraction of the old output row and the new
    /// one, with the probe row's accumulated count before `now`.
    fn rejoin_changed(
        &mut self,
        key: &K,
        changed: &[ChangedVersion<K, E, B>],
        emit: &mut impl FnMut(&K, Joined<P, B>, isize),
    ) {
        let (now, kind, residual) = (self.now, self.kind, self.residual);
        let t_min = changed.iter().map(|b| b.time()).min().expect("non-empty");
        // Arrangement order is newest first: the first changed value is the greatest
        // changed (time, seq).
        let newest = (changed[0].time().clone(), changed[0].seq());
        let next = read_versions(
            &mut self.reader,
            key,
            now,
            t_min,
            &newest,
            &mut self.versions,
        );
        let versions = &self.versions;
        let (pc, ps) = &mut self.probes;
        pc.seek_key(ps, &(key.clone(), t_min.clone()));
        while let Some((k, t)) = pc.get_key(ps) {
            if k != key || next.as_ref().is_some_and(|n| t >= n) {
                break;
            }
            let old_v = valid_at(versions, t, |v| v.before != 0);
            let new_v = valid_at(versions, t, |v| v.after != 0);
            if old_v.map(|v| (&v.time, v.seq, &v.row)) != new_v.map(|v| (&v.time, v.seq, &v.row)) {
                while let Some(change) = pc.get_val(ps) {
                    let mut count = 0;
                    pc.map_times(ps, |time, d| {
                        if *time < now {
                            count += *d;
                        }
                    });
                    if count != 0 {
                        let old = join_row(kind, residual, change, old_v.map(|v| &v.row));
                        let new = join_row(kind, residual, change, new_v.map(|v| &v.row));
                        if old != new {
                            if let Some(row) = old {
                                emit(key, row, -count);
                            }
                            if let Some(row) = new {
                                emit(key, row, count);
                            }
                        }
                    }
                    pc.step_val(ps);
                }
            }
            pc.step_key(ps);
        }
    }

    /// Joins a new probe update with the version of its key valid at its time (one seek).
    fn join_probe(
        &mut self,
        update: &ProbeUpdate<K, E, P>,
        has_versions: bool,
        emit: &mut impl FnMut(&K, Joined<P, B>, isize),
    ) {
        let mut version = None;
        if has_versions {
            self.reader.seek_key(&update.key);
            self.reader.seek_val(&seek_target(update.time.clone()));
            version = self.reader.next_present(self.now).map(|v| v.2.clone());
        }
        let row = join_row(self.kind, self.residual, &update.change, version.as_ref());
        if let Some(row) = row {
            emit(&update.key, row, update.diff);
        }
    }
}

/// Reads the versions of `key` that a change at or below `newest` (and at or after `t_min`) can
/// make visible, into `out`, newest first, with their counts before and at `now`. Returns the
/// time of the smallest present version greater than `newest`: probe rows at or after it are
/// unaffected.
///
/// Scans the versions newer than `newest` (the forward-only cursors start at the newest), then
/// down to the first version below `t_min` present before `now` and the first present at `now`.
fn read_versions<K, E, B>(
    reader: &mut VersionCursor<K, E, B>,
    key: &K,
    now: SysTime,
    t_min: &E,
    newest: &(E, Seq),
    out: &mut Vec<ReadVersion<E, B>>,
) -> Option<E>
where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    out.clear();
    reader.seek_key(key);
    let mut next = None;
    let (mut old_below, mut new_below) = (false, false);
    loop {
        let (mut before, mut after) = (0, 0);
        let Some((Reverse(time), Reverse(seq), row)) = reader.next_val(|t, d| {
            if *t < now {
                before += d;
            }
            if *t <= now {
                after += d;
            }
        }) else {
            break;
        };
        if (time, seq) > (&newest.0, &newest.1) {
            if after != 0 {
                next = Some(time.clone());
            }
            continue;
        }
        if time < t_min {
            old_below |= before != 0;
            new_below |= after != 0;
        }
        if before != 0 || after != 0 {
            out.push(ReadVersion {
                time: time.clone(),
                seq: *seq,
                row: row.clone(),
                before,
                after,
            });
        }
        if old_below && new_below {
            break;
        }
    }
    next
}

/// The version valid at `t` among `versions` (newest first) that satisfy `present`.
fn valid_at<'a, E: Ord, B>(
    versions: &'a [ReadVersion<E, B>],
    t: &E,
    present: impl Fn(&ReadVersion<E, B>) -> bool,
) -> Option<&'a ReadVersion<E, B>> {
    let start = versions.partition_point(|v| v.time > *t);
    versions[start..].iter().find(|v| present(v))
}
