//! A versions arrangement kept bounded by the watermarks of a final-mode temporal join
//! (rule B11).

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeMap, BinaryHeap};

use differential_dataflow::batcher::{Batcher, Extract};
use differential_dataflow::operators::arrange::{Arranged, TraceAgent, TraceWriter};
use differential_dataflow::trace::implementations::ValBatcher;
use differential_dataflow::trace::{Description, Span, Trace, TraceReader};
use differential_dataflow::{ExchangeData, Hashable, VecCollection};
use timely::container::buffer::default_capacity;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::{CapabilitySet, Operator};
use timely::order::PartialOrder;
use timely::progress::frontier::AntichainRef;
use timely::progress::{Antichain, Stamp};

use super::marks::{combined, Mark};
use crate::combined::Combined;
use crate::version::cursor::{VersionBatch, VersionCursor};
use crate::version::{seek_target, VersionSpine, VersionTrace, VersionVal};
use crate::watermark::Watermark;
use crate::{SysTime, Version};

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
/// `< x` is retracted, at system time `s + 1` (the retractions go into the arrangement's next
/// batch). The join fires at `s` with the versions of times `< s`, and every probe row it
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
/// The arrangement prunes itself: one operator batches the versions as
/// [`arrange_versions`] would and adds each rise's retractions to the batch of `s + 1` before
/// sealing it, so the retractions are neither fed back through a loop nor exchanged again.
///
/// Cost: per version one entry in a heap by event time (O(log n), no allocation) until the
/// watermark passes it; per rise, a sort of the keys it passed, one seek per such key and a
/// walk over that key's versions newer than the watermark and the ones retracted, whose
/// retractions are batched once. State: the arrangement, O(keys + versions at or after the
/// watermark) once compacted, plus that heap.
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
/// // 3 of epoch 1 passes 1 and 2: 1 is retracted (at epoch 2); the watermark 9 of
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
///
/// [`arrange_versions`]: crate::arrange_versions
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
    type Update<K, E, V> = ((K, Version<E, V>), SysTime, isize);
    let scope = versions.scope();
    let marks = probe_watermarks
        .map(Mark::Probe)
        .concat(build_watermarks.map(Mark::Build));
    // Exchanged by key as `arrange_versions` does; the watermarks are broadcast already.
    let pact = Exchange::new(|u: &Update<K, E, V>| (u.0).0.hashed().into());
    let mut reader = None;
    let reader_out = &mut reader;
    let stream =
        versions
            .inner
            .binary_frontier(marks.inner, pact, Pipeline, name, move |_cap, info| {
                let activator = Some(scope.activator_for(info.address.clone()));
                let trace = VersionSpine::<K, E, V>::new(info.clone(), None, activator);
                let (handle, writer) = TraceAgent::new(trace, info.clone(), None);
                *reader_out = Some(handle.clone());
                let batcher = VersionBatcher::<K, E, V>::new(None, info.global_id);
                let mut state = Pruning::new(handle, writer, batcher, idle_timeout);
                move |(versions_in, versions_frontier), (marks_in, marks_frontier), output| {
                    // 1. Drain: versions into the batcher (and the heap), watermarks into `marks`.
                    versions_in.for_each(|cap, data| {
                        for c in cap.retain_stamp(output.output_index()).iter() {
                            state.caps.insert(c.clone());
                        }
                        state.receive(data);
                    });
                    marks_in.for_each(|cap, data| {
                        for c in cap.retain_stamp(output.output_index()).iter() {
                            state.caps.insert(c.clone());
                        }
                        for (m, t, _) in data.drain(..) {
                            m.observe_into(t, &mut state.marks);
                        }
                    });
                    let frontiers = [versions_frontier.frontier(), marks_frontier.frontier()];

                    // 2. Each rise both inputs have passed: seal the versions through its
                    //    epoch `s`, then batch its retractions at `s + 1`.
                    while let Some(now) = state.marks.next_rise() {
                        if frontiers.iter().any(|f| f.less_equal(&now)) {
                            break;
                        }
                        let through = Antichain::from_elem(now + 1);
                        state.seal(through, &mut |span, caps| output.session(caps).give(span));
                        state.prune(now);
                    }

                    // 3. Seal the times no version or retraction can still fall into: before
                    //    the versions' frontier, and at most through a rise still to visit or
                    //    the watermarks' frontier (a later rise's retractions come after it).
                    let mut upper: Antichain<SysTime> = frontiers[0].to_owned();
                    let bound = (state.marks.next_rise().into_iter())
                        .chain(frontiers[1].iter().copied())
                        .min();
                    if let Some(bound) = bound {
                        upper = Antichain::from_iter(upper.iter().map(|t| *t.min(&(bound + 1))));
                        if upper.is_empty() {
                            upper = Antichain::from_elem(bound + 1);
                        }
                    }
                    state.seal(upper, &mut |span, caps| output.session(caps).give(span));
                    state.hold(frontiers);
                }
            });
    Arranged {
        stream,
        trace: reader.expect("the operator's constructor ran"),
    }
}

/// The batcher of a versions arrangement.
type VersionBatcher<K, E, V> = ValBatcher<K, VersionVal<E, V>, SysTime, isize>;

/// The state of [`arrange_versions_pruned`]'s operator between activations.
struct Pruning<K, E, V>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    /// Capabilities for the updates in the batcher and the rises still to visit.
    caps: CapabilitySet<SysTime>,
    /// The versions received and the retractions made, not yet sealed into a batch.
    batcher: VersionBatcher<K, E, V>,
    /// Seals batches into the trace.
    writer: TraceWriter<VersionSpine<K, E, V>>,
    /// Our reader of the trace (`None` once every input has ended: nothing is pruned then).
    handle: Option<VersionTrace<K, E, V>>,
    /// The upper of the last batch sealed.
    sealed: Antichain<SysTime>,
    /// The combined watermark, per epoch.
    marks: Combined<E>,
    /// `(event time, key)` of each version received, oldest first, until the watermark passes
    /// it (a heap: no allocation per version).
    expiry: BinaryHeap<Reverse<(E, K)>>,
    /// Per key, the time of the version kept at its last prune: every live version older than
    /// it was retracted then.
    kept_at: BTreeMap<K, E>,
    /// The least time of an update in the batcher (`None`: it holds none).
    unsealed: Option<SysTime>,
    /// The records of the versions received, as arranged values (a buffer reused).
    buffer: Vec<((K, VersionVal<E, V>), SysTime, isize)>,
}

impl<K, E, V> Pruning<K, E, V>
where
    K: ExchangeData,
    E: ExchangeData,
    V: ExchangeData,
{
    fn new(
        handle: VersionTrace<K, E, V>,
        writer: TraceWriter<VersionSpine<K, E, V>>,
        batcher: VersionBatcher<K, E, V>,
        idle_timeout: SysTime,
    ) -> Self {
        Pruning {
            caps: CapabilitySet::new(),
            batcher,
            writer,
            handle: Some(handle),
            sealed: Antichain::from_elem(0),
            marks: combined(idle_timeout),
            expiry: BinaryHeap::new(),
            kept_at: BTreeMap::new(),
            unsealed: None,
            buffer: Vec::new(),
        }
    }

    /// Takes version records: each inserted one goes into the heap, all into the batcher.
    fn receive(&mut self, data: &mut Vec<((K, Version<E, V>), SysTime, isize)>) {
        self.buffer.clear();
        for ((k, v), t, d) in data.drain(..) {
            if d > 0 {
                self.expiry.push(Reverse((v.time.clone(), k.clone())));
            }
            self.buffer.push(((k, VersionVal::from(v)), t, d));
        }
        self.batch_buffer();
    }

    /// Moves the updates of the buffer into the batcher, at most a timely message's worth at a
    /// time: differential 0.26's chunker gives only the first chunk of a container its full
    /// capacity, so one large container (a rise's retractions) would be cut into chunks of a
    /// few updates, whose merging cost twice as much as batching them (measured by callgrind).
    fn batch_buffer(&mut self) {
        let least = self.buffer.iter().map(|u| u.1).min();
        self.unsealed = self.unsealed.into_iter().chain(least).min();
        let size = default_capacity::<((K, VersionVal<E, V>), SysTime, isize)>();
        let mut piece = Vec::with_capacity(size.min(self.buffer.len()));
        for update in self.buffer.drain(..) {
            piece.push(update);
            if piece.len() == size {
                self.batcher.insert(&mut piece);
                piece.clear();
            }
        }
        if !piece.is_empty() {
            self.batcher.insert(&mut piece);
        }
    }

    /// Seals the batcher's updates at times before `upper` (if it is beyond the last upper) as
    /// one batch into the trace, and `send`s it with the capabilities it retires, as
    /// differential's `arrange` does.
    fn seal(
        &mut self,
        upper: Antichain<SysTime>,
        send: &mut impl FnMut(Span<SysTime, VersionBatch<K, E, V>>, &CapabilitySet<SysTime>),
    ) {
        if upper == self.sealed || !PartialOrder::less_equal(&self.sealed, &upper) {
            return;
        }
        let retired: CapabilitySet<SysTime> = (self.caps.iter())
            .filter(|c| !upper.less_equal(c.time()))
            .cloned()
            .collect();
        if retired.is_empty() {
            // No capability before `upper`: no update before it either.
            self.writer.seal(upper.clone());
            self.sealed = upper;
            return;
        }
        let lower = std::mem::replace(&mut self.sealed, upper.clone());
        let description = Description::new(lower, upper.clone(), Antichain::from_elem(0));
        let (batch, retained) = self.batcher.extract(upper.borrow());
        self.unsealed = retained.iter().copied().min();
        let span = Span::new(description, batch.map(Into::into));
        let stamp = retired.iter().map(|c| *c.time()).collect::<Stamp<_>>();
        self.writer.insert(span.clone(), stamp);
        send(span, &retired);
    }

    /// Visits the rise of epoch `now` (the trace sealed through `now + 1`): for each key with
    /// versions the watermark `x` passed, batches at `now + 1` the retraction of every version
    /// present at `now` older than its newest one with time `< x`.
    fn prune(&mut self, now: SysTime) {
        let Watermark::At(x) = self.marks.at(now) else {
            return;
        };
        let Some(handle) = self.handle.as_mut() else {
            return;
        };
        // The keys with versions the watermark passed, in key order, each with the oldest such
        // version's time (popped oldest first, and the stable sort keeps a key's first entry
        // first).
        let mut due: Vec<(K, E)> = Vec::new();
        while let Some(top) = self.expiry.peek_mut().filter(|top| top.0 .0 < x) {
            let Reverse((time, k)) = PeekMut::pop(top);
            due.push((k, time));
        }
        if due.is_empty() {
            return;
        }
        due.sort_by(|a, b| a.0.cmp(&b.0));
        due.dedup_by(|later, first| later.0 == first.0);
        let batches = handle.batches_through(self.sealed.borrow());
        let mut reader = VersionCursor::new(batches.expect("trace readable"));
        self.buffer.clear();
        for (k, oldest_due) in due {
            if !reader.seek_key(&k) {
                continue;
            }
            // Below the version kept last time and below every version that came due now there
            // is nothing live to retract: stop there, not at the key's first version (retracted
            // versions stay in the trace until its batches merge).
            let stop = match self.kept_at.get(&k) {
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
                    Some(_) => self
                        .buffer
                        .push(((k.clone(), val.clone()), now + 1, -count)),
                    None => kept = Some(val.0 .0.clone()),
                }
            }
            if let Some(time) = kept {
                self.kept_at.insert(k, time);
            }
        }
        if !self.buffer.is_empty() {
            self.batch_buffer();
        }
    }

    /// Sets our reader's compaction and the capabilities for what is still to come: the updates
    /// in the batcher and the retractions of rises still to visit; drops the reader once every
    /// input has ended.
    fn hold(&mut self, frontiers: [AntichainRef<'_, SysTime>; 2]) {
        if frontiers.iter().all(|f| f.is_empty()) {
            // Nothing can be pruned any more once both inputs have ended.
            self.handle = None;
        }
        if let Some(handle) = self.handle.as_mut() {
            // Compaction at the earliest epoch still to read (reads count the times `<= now`).
            let next = (self.marks.next_rise().into_iter())
                .chain(frontiers.iter().flat_map(|f| f.iter().copied()))
                .min();
            handle.set_logical_compaction(Antichain::from_iter(next).borrow());
            handle.set_physical_compaction(self.sealed.borrow());
        }
        let rise = self.marks.next_rise().map(|t| t + 1);
        let held = self.caps.iter().map(|c| *c.time()).min();
        match (held, self.unsealed.into_iter().chain(rise).min()) {
            // Every unsealed update and every rise came with a capability at or before its
            // time, so `need` is at or after a held one.
            (Some(held), Some(need)) => self.caps.downgrade([need.max(held)]),
            _ => self.caps = CapabilitySet::new(),
        }
    }
}
