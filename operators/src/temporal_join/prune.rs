//! A versions arrangement kept bounded by the watermarks of a final-mode temporal join
//! (rule B11).

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeMap, BinaryHeap};

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::operators::iterate::Variable;
use differential_dataflow::trace::{Cursor, Navigable, TraceReader};
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Operator};
use timely::progress::Antichain;

use super::marks::{combined, Mark};
use crate::version::cursor::VersionCursor;
use crate::version::{seek_target, version_of, VersionTrace};
use crate::watermark::Watermark;
use crate::{arrange_versions, SysTime, Version};

/// Arranges `versions` like [`arrange_versions`], and retracts from the arrangement the versions
/// no final-mode join over the same watermarks can choose any more (rule B11: once the combined
/// watermark `W = min(probe W, build W)` has passed a key's latest version, the older versions of
/// that key are dropped).
///
/// Shapes: `versions` are `(key, Version)` records; the watermark collections and `idle_timeout`
/// (system times, `0`: off) are those given to
/// [`temporal_join_final`](super::temporal_join_final) (see
/// [`JoinConfig::idle_timeout`](super::JoinConfig::idle_timeout)). Returns the shared arrangement to give it
/// (and any other reader: they all see the pruned table, which is exact for event times `>= W`).
///
/// Why it is exact: at the first epoch `s` whose combined watermark is `At(x)`, for every key
/// holding a version with time `< x`, every present version older than the newest one with time
/// `< x` is retracted, at system time `s + 1` (the retractions are fed back into the
/// arrangement). The join fires at `s` with the versions of times `< s`, and every probe row it
/// fires later has an event time `>= x`, so it chooses the kept version or a newer one.
/// Late build versions (B10) enter as usual and are pruned at a later rise.
///
/// Precondition: no version behind the combined watermark is retracted (diff `-1`; the versions
/// [`versions_from_changelog`](crate::versioned::versions_from_changelog) makes of a changelog
/// whose records all have diff `+1`, as the command line's, are never retracted: a `-D` is a
/// delete version). Such a retraction would uncover older
/// versions that may be pruned already, so the join would see no version (or a stale one)
/// where [`arrange_versions`] gives the exact answer; it is not detected. Flink's state cleanup
/// has the same limit (its versions are never retracted). Retractions of versions at or after
/// the watermark are exact.
///
/// Cost: per version one entry in a heap by event time (O(log n), no allocation) until the
/// watermark passes it; per rise, a sort of the keys it passed, one seek per such key and a
/// walk over that key's versions newer than the watermark and the ones retracted. State: the
/// arrangement, O(keys + versions at or after the watermark) once compacted, plus that heap.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::arrange_versions_pruned;
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::watermark::watermarks;
/// use differential_temporal_operators::version::version_of;
/// use differential_temporal_operators::Version;
///
/// // Versions of key 1 at times 1, 2, 3 (epoch 0) and 9 (epoch 1), lateness 0. The watermark
/// // 3 of epoch 1 passes 1 and 2: 1 is retracted (fed back at epoch 2); the watermark 9 of
/// // epoch 2 passes 3: 2 is retracted (at epoch 3). 3 and 9 stay.
/// let epochs = vec![
///     vec![((1u8, Version::row(1i64, 0, 'a')), 1), ((1, Version::row(2, 1, 'b')), 1),
///          ((1, Version::row(3, 2, 'c')), 1)],
///     vec![((1, Version::row(9, 3, 'd')), 1)],
/// ];
/// let out = run_unary(2, epochs, |v| {
///     let wm = watermarks(v.clone(), |(_, v): &(u8, Version<i64, char>)| v.time, |m: &i64| *m, "Wm");
///     arrange_versions_pruned(v, wm.clone(), wm, 0, "Pruned").as_collection(|k, v| (*k, version_of(v)))
/// });
/// let v = |t, s, r| (1, Version::row(t, s, r));
/// assert_eq!(out, vec![
///     (v(1, 0, 'a'), 0, 1), (v(1, 0, 'a'), 2, -1), (v(2, 1, 'b'), 0, 1), (v(2, 1, 'b'), 3, -1),
///     (v(3, 2, 'c'), 0, 1), (v(9, 3, 'd'), 1, 1),
/// ]);
/// ```
pub fn arrange_versions_pruned<'s, K, E, V>(
    versions: VecCollection<'s, SysTime, (K, Version<E, V>)>,
    probe_watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    build_watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    idle_timeout: SysTime,
    name: &str,
) -> Arranged<'s, VersionTrace<K, E, V>>
where
    K: ExchangeData + Hashable,
    E: ExchangeData,
    V: ExchangeData,
{
    let (variable, retracted) = Variable::new(versions.scope(), 1);
    let arranged = arrange_versions(versions.concat(retracted), name);
    let marks = probe_watermarks
        .map(Mark::Probe)
        .concat(build_watermarks.map(Mark::Build));
    variable.set(retractions(&arranged, marks, idle_timeout, name));
    arranged
}

/// The retractions of [`arrange_versions_pruned`], emitted at the epoch of each rise.
fn retractions<'s, K, E, V>(
    arranged: &Arranged<'s, VersionTrace<K, E, V>>,
    marks: VecCollection<'s, SysTime, Mark<E>>,
    idle_timeout: SysTime,
    name: &str,
) -> VecCollection<'s, SysTime, (K, Version<E, V>)>
where
    K: ExchangeData + Hashable,
    E: ExchangeData,
    V: ExchangeData,
{
    let mut trace = Some(arranged.trace.clone());
    let name = format!("{name}Prune");
    marks
        .inner
        .binary_frontier(
            arranged.stream.clone(),
            Pipeline,
            Pipeline,
            &name,
            move |_cap, _info| {
                let mut caps = CapabilitySet::<SysTime>::new();
                let mut marks = combined(idle_timeout);
                // `(event time, key)` of each version received, oldest first, until the
                // watermark passes it (a heap: no allocation per version).
                let mut expiry: BinaryHeap<Reverse<(E, K)>> = BinaryHeap::new();
                // Per key, the time of the version kept at its last prune: every live version
                // older than it was retracted then.
                let mut kept_at: BTreeMap<K, E> = BTreeMap::new();
                let mut ack = Antichain::from_elem(0);
                move |(marks_in, marks_frontier), (build_in, build_frontier), output| {
                    marks_in.for_each(|cap, data| {
                        for c in cap.retain_stamp(output.output_index()).iter() {
                            caps.insert(c.clone());
                        }
                        for (m, t, _) in data.drain(..) {
                            m.observe_into(t, &mut marks);
                        }
                    });
                    build_in.for_each(|_cap, spans| {
                        for span in spans.drain(..) {
                            ack.clone_from(span.upper());
                            let Some(batch) = span.inner else { continue };
                            let mut cur = batch.cursor();
                            while let Some(k) = cur.get_key(&batch) {
                                while let Some(val) = cur.get_val(&batch) {
                                    let mut added = false;
                                    cur.map_times(&batch, |_, d| added |= *d > 0);
                                    if added {
                                        expiry.push(Reverse((val.0 .0.clone(), k.clone())));
                                    }
                                    cur.step_val(&batch);
                                }
                                cur.step_key(&batch);
                            }
                        }
                    });
                    let Some(handle) = trace.as_mut() else { return };
                    handle.advance_upper(&mut ack);
                    if marks_frontier.is_empty() && build_frontier.is_empty() {
                        // Nothing can be pruned any more once both inputs have ended.
                        trace = None;
                        caps = CapabilitySet::new();
                        return;
                    }
                    while let Some(now) = marks.next_rise() {
                        if marks_frontier.less_equal(&now) || build_frontier.less_equal(&now) {
                            break;
                        }
                        let Watermark::At(x) = marks.at(now) else {
                            continue;
                        };
                        // The keys with versions the watermark passed, in key order, each
                        // with the oldest such version's time (popped oldest first, and the
                        // stable sort keeps a key's first entry first).
                        let mut due: Vec<(K, E)> = Vec::new();
                        while let Some(top) = expiry.peek_mut().filter(|top| top.0 .0 < x) {
                            let Reverse((time, k)) = PeekMut::pop(top);
                            due.push((k, time));
                        }
                        if due.is_empty() {
                            continue;
                        }
                        due.sort_by(|a, b| a.0.cmp(&b.0));
                        due.dedup_by(|later, first| later.0 == first.0);
                        let batches = handle.batches_through(ack.borrow());
                        let mut reader = VersionCursor::new(batches.expect("trace readable"));
                        let cap = caps.delayed(&now);
                        let mut session = output.session(&cap);
                        for (k, oldest_due) in due {
                            if !reader.seek_key(&k) {
                                continue;
                            }
                            // Below the version kept last time and below every version that
                            // came due now there is nothing live to retract: stop there, not
                            // at the key's first version (retracted versions stay in the
                            // trace until its batches merge).
                            let stop = match kept_at.get(&k) {
                                Some(last) if *last < oldest_due => last.clone(),
                                _ => oldest_due,
                            };
                            reader.seek_val(&seek_target(x.clone()));
                            let mut kept = None;
                            loop {
                                let mut count = 0;
                                let Some(val) = reader.next_val(|t, d| {
                                    if *t <= now {
                                        count += d;
                                    }
                                }) else {
                                    break;
                                };
                                if val.0 .0 < stop {
                                    break;
                                }
                                if count == 0 || val.0 .0 >= x {
                                    continue;
                                }
                                match kept {
                                    Some(_) => {
                                        session.give(((k.clone(), version_of(val)), now, -count))
                                    }
                                    None => kept = Some(val.0 .0.clone()),
                                }
                            }
                            if let Some(time) = kept {
                                kept_at.insert(k, time);
                            }
                        }
                    }
                    // Hold a capability only for rises still to visit; compaction at the
                    // earliest epoch still to read (reads count the times `<= now`).
                    let next = (marks.next_rise().into_iter())
                        .chain(marks_frontier.frontier().iter().copied())
                        .chain(build_frontier.frontier().iter().copied())
                        .min();
                    handle.set_logical_compaction(Antichain::from_iter(next).borrow());
                    handle.set_physical_compaction(ack.borrow());
                    match marks.next_rise() {
                        Some(t) => caps.downgrade([t]),
                        None => caps = CapabilitySet::new(),
                    }
                }
            },
        )
        .as_collection()
}
