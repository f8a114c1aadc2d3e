//! The incremental event-time temporal join: a binary operator over the probe and build
//! arrangements.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::trace::cursor::cursor_list;
use differential_dataflow::trace::{Cursor, TraceReader};
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Operator};
use timely::progress::Antichain;

use super::{join_row, JoinKey, JoinKind, Joined, ProbeTrace};
use crate::version::cursor::VersionCursor;
use crate::version::{seek_target, VersionTrace, VersionVal};
use crate::{Change, Seq, SysTime};

/// The updates received at one system time, not yet processed.
struct Work<K, E, P, B> {
    /// New probe updates: `(key, probe time, change, diff)`.
    probes: Vec<(K, E, Change<P>, isize)>,
    /// Keys and values of build versions whose count changed.
    builds: Vec<(K, VersionVal<E, B>)>,
}

impl<K, E, P, B> Default for Work<K, E, P, B> {
    fn default() -> Self {
        Work {
            probes: Vec::new(),
            builds: Vec::new(),
        }
    }
}

/// A build version read for a key: time, seq, row, count before and after the system time.
type Read<E, B> = (E, Seq, Option<B>, isize, isize);

/// Incremental event-time temporal join (see the [module docs](super) for shapes and rules).
///
/// At every system time the output collection equals the temporal join of all probe rows and
/// build versions received so far (rules B3-B5, B8). Ties are broken by `seq`.
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
/// use differential_temporal_operators::temporal_join::{arrange_probe, temporal_join, JoinKind};
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
///     temporal_join(probe, build, JoinKind::Inner, |_, _| true, "Join")
/// });
/// let row = |rate| (1, Change::new(0, RowKind::Insert, ((10, 3), Some(rate))));
/// assert_eq!(out, vec![(row(114), 0, 1), (row(114), 1, -1), (row(116), 1, 1)]);
/// ```
pub fn temporal_join<'s, K, E, P, B, R>(
    probe: Arranged<'s, ProbeTrace<K, E, P>>,
    build: Arranged<'s, VersionTrace<K, E, B>>,
    kind: JoinKind,
    residual: R,
    name: &str,
) -> VecCollection<'s, SysTime, (K, Joined<P, B>)>
where
    K: ExchangeData + Hashable + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    R: Fn(&P, &B) -> bool + 'static,
{
    let mut probe_trace = probe.trace.clone();
    let mut build_trace = build.trace.clone();
    probe
        .stream
        .binary_frontier(
            build.stream,
            Pipeline,
            Pipeline,
            name,
            move |_cap, _info| {
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
                            let Some(batch) = span.inner else { continue };
                            let (mut cur, sto) = cursor_list(vec![batch]);
                            while let Some((k, t)) = cur.get_key(&sto) {
                                while let Some(change) = cur.get_val(&sto) {
                                    cur.map_times(&sto, |time, diff| {
                                        let work = pending.entry(*time).or_default();
                                        work.probes.push((
                                            k.clone(),
                                            t.clone(),
                                            change.clone(),
                                            *diff,
                                        ));
                                    });
                                    cur.step_val(&sto);
                                }
                                cur.step_key(&sto);
                            }
                        }
                    });
                    build_in.for_each(|cap, spans| {
                        for c in cap.retain_stamp(output.output_index()).iter() {
                            caps.insert(c.clone());
                        }
                        for span in spans.drain(..) {
                            build_ack.clone_from(span.upper());
                            let Some(batch) = span.inner else { continue };
                            let (mut cur, sto) = cursor_list(vec![batch]);
                            while let Some(k) = cur.get_key(&sto) {
                                while let Some(val) = cur.get_val(&sto) {
                                    cur.map_times(&sto, |time, _diff| {
                                        let work = pending.entry(*time).or_default();
                                        work.builds.push((k.clone(), val.clone()));
                                    });
                                    cur.step_val(&sto);
                                }
                                cur.step_key(&sto);
                            }
                        }
                    });
                    probe_trace.advance_upper(&mut probe_ack);
                    build_trace.advance_upper(&mut build_ack);

                    // 2. Process every system time both inputs have passed, in order.
                    while let Some((&now, _)) = pending.first_key_value() {
                        if probe_frontier.less_equal(&now) || build_frontier.less_equal(&now) {
                            break;
                        }
                        let work = pending.remove(&now).expect("first key exists");
                        let cap = caps.delayed(&now);
                        let mut session = output.session(&cap);
                        let mut emit = |k: &K, row: Joined<P, B>, diff: isize| {
                            session.give(((k.clone(), row), now, diff));
                        };
                        let probes = probe_trace.batches_through(probe_ack.borrow());
                        let builds = build_trace.batches_through(build_ack.borrow());
                        let (mut pc, ps) = cursor_list(probes.expect("probe trace readable"));
                        let mut reader = VersionCursor::new(builds.expect("build trace readable"));
                        let Work {
                            mut probes,
                            mut builds,
                        } = work;
                        // New probe rows and changed versions, by key.
                        probes.sort_by(|a, b| (&a.0, Reverse(&a.1)).cmp(&(&b.0, Reverse(&b.1))));
                        builds.sort();
                        builds.dedup();
                        let (mut pi, mut bi) = (0, 0);
                        let mut versions: Vec<Read<E, B>> = Vec::new();
                        while pi < probes.len() || bi < builds.len() {
                            let key = match (probes.get(pi), builds.get(bi)) {
                                (Some(p), Some(b)) => (&p.0).min(&b.0).clone(),
                                (Some(p), None) => p.0.clone(),
                                (None, Some(b)) => b.0.clone(),
                                (None, None) => unreachable!("loop condition"),
                            };
                            // A NULL key matches no version (see [`JoinKey`]).
                            let has_versions = !key.is_null() && reader.seek_key(&key);
                            // (a) Changed build versions: re-join the probe rows they affect.
                            let b_end = bi + builds[bi..].iter().take_while(|b| b.0 == key).count();
                            if b_end > bi && has_versions {
                                let changed = &builds[bi..b_end];
                                let t_min =
                                    changed.iter().map(|b| &b.1 .0 .0).min().unwrap().clone();
                                // Arrangement order is newest first: the first changed value is the
                                // greatest changed (time, seq).
                                let newest = (changed[0].1 .0 .0.clone(), changed[0].1 .1 .0);
                                let next = read_versions(
                                    &mut reader,
                                    &key,
                                    now,
                                    &t_min,
                                    &newest,
                                    &mut versions,
                                );
                                pc.seek_key(&ps, &(key.clone(), t_min));
                                while let Some((k, t)) = pc.get_key(&ps) {
                                    if *k != key || next.as_ref().is_some_and(|n| t >= n) {
                                        break;
                                    }
                                    let old_v = valid_at(&versions, t, |v| v.3 != 0);
                                    let new_v = valid_at(&versions, t, |v| v.4 != 0);
                                    if old_v.map(|v| (&v.0, v.1, &v.2))
                                        != new_v.map(|v| (&v.0, v.1, &v.2))
                                    {
                                        while let Some(change) = pc.get_val(&ps) {
                                            let mut count = 0;
                                            pc.map_times(&ps, |time, d| {
                                                if *time < now {
                                                    count += *d;
                                                }
                                            });
                                            if count != 0 {
                                                let old = old_v.map(|v| &v.2);
                                                let new = new_v.map(|v| &v.2);
                                                let old = join_row(kind, &residual, change, old);
                                                let new = join_row(kind, &residual, change, new);
                                                if old != new {
                                                    if let Some(row) = old {
                                                        emit(&key, row, -count);
                                                    }
                                                    if let Some(row) = new {
                                                        emit(&key, row, count);
                                                    }
                                                }
                                            }
                                            pc.step_val(&ps);
                                        }
                                    }
                                    pc.step_key(&ps);
                                }
                            }
                            bi = b_end;
                            // (b) New probe rows: one seek each into the build versions.
                            while let Some((k, t, change, diff)) = probes.get(pi) {
                                if *k != key {
                                    break;
                                }
                                let mut version = None;
                                if has_versions {
                                    reader.seek_key(&key);
                                    reader.seek_val(&seek_target(t.clone()));
                                    version = reader.next_present(now).map(|v| v.2.clone());
                                }
                                if let Some(row) =
                                    join_row(kind, &residual, change, version.as_ref())
                                {
                                    emit(&key, row, *diff);
                                }
                                pi += 1;
                            }
                        }
                    }

                    // 3. Hold capabilities only for unprocessed times. Compaction: logical strictly
                    // below every time still to process (so "before `now`" stays distinguishable
                    // from "at `now`"), physical at the uppers we read through.
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
            },
        )
        .as_collection()
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
    out: &mut Vec<Read<E, B>>,
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
        let (mut old, mut new) = (0, 0);
        let Some((Reverse(time), Reverse(seq), row)) = reader.next_val(|t, d| {
            if *t < now {
                old += d;
            }
            if *t <= now {
                new += d;
            }
        }) else {
            break;
        };
        if (time, seq) > (&newest.0, &newest.1) {
            if new != 0 {
                next = Some(time.clone());
            }
            continue;
        }
        if time < t_min {
            old_below |= old != 0;
            new_below |= new != 0;
        }
        if old != 0 || new != 0 {
            out.push((time.clone(), *seq, row.clone(), old, new));
        }
        if old_below && new_below {
            break;
        }
    }
    next
}

/// The version valid at `t` among `versions` (newest first) that satisfy `present`.
fn valid_at<'a, E: Ord, B>(
    versions: &'a [Read<E, B>],
    t: &E,
    present: impl Fn(&Read<E, B>) -> bool,
) -> Option<&'a Read<E, B>> {
    let start = versions.partition_point(|v| v.0 > *t);
    versions[start..].iter().find(|v| present(v))
}
