//! Where the final-mode temporal join reads its build versions: a shared versions arrangement
//! ([`SharedVersions`], read in place) or versions of its own ([`super::own_versions`], kept
//! bounded by rule B11). The driver ([`super::final_mode`]) decides when to fire; a build side
//! holds the versions and picks each ready row's.

use differential_dataflow::trace::{Span, TraceReader};
use differential_dataflow::ExchangeData;
use timely::progress::Antichain;
use timely::Container;

use super::firing::{fire, Fired, Read, Waiting};
use super::idle::IdleKeys;
use super::{JoinKey, JoinKind};
use crate::version::cursor::VersionBatch;
use crate::version::VersionTrace;
use crate::watermark::Watermark;
use crate::SysTime;

/// The build versions of a final-mode join, as its driver sees them. The driver calls, per
/// activation, [`receive`](Self::receive) with the build input's messages; per visited epoch
/// `now`, [`advance_to`](Self::advance_to), then (at a rise) [`fire`](Self::fire),
/// [`forget`](Self::forget) for each expired key and [`rise`](Self::rise); then
/// [`hold`](Self::hold); at the end of every input [`close`](Self::close).
pub(super) trait BuildSide<K, E, B>: 'static {
    /// A message of the build input.
    type Input: Container;

    /// Takes a message of the build input (with a retention, `idle` records the keys the
    /// versions touch).
    fn receive(&mut self, input: &mut Self::Input, idle: Option<&mut IdleKeys<K, E>>);

    /// Epoch `now` is visited: the versions of the system times before it are complete.
    fn advance_to(&mut self, now: SysTime, idle: Option<&mut IdleKeys<K, E>>);

    /// Joins the `ready` rows against the versions of the system times `<= seen` (and, per key,
    /// received since `idle` last expired it); the output rows in `seq` order.
    fn fire<P, R>(
        &mut self,
        ready: Vec<Waiting<K, E, P>>,
        seen: SysTime,
        idle: Option<&IdleKeys<K, E>>,
        kind: JoinKind,
        residual: &R,
    ) -> Vec<Fired<K, P, B>>
    where
        P: ExchangeData,
        R: Fn(&P, &B) -> bool;

    /// `key`'s state expired (idle-state retention): its versions received so far are never
    /// read again.
    fn forget(&mut self, key: &K);

    /// The combined watermark rose to `w` (after the firing at that epoch).
    fn rise(&mut self, w: &Watermark<E>);

    /// The earliest epoch still to visit is `next` (`None`: none known); with a retention, no
    /// version may be merged across `floor` (see [`IdleKeys::compaction_floor`]).
    fn hold(&mut self, next: Option<SysTime>, floor: Option<SysTime>);

    /// Every input has ended and the last rows fired: release the versions.
    fn close(&mut self);
}

/// A versions arrangement, shared with its other readers, read in place through a trace handle.
pub(super) struct SharedVersions<K, E, B>
where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    /// Our handle on the arrangement, dropped once every input has ended.
    trace: Option<VersionTrace<K, E, B>>,
    /// Upper of the build batches received: the trace is read through it.
    acknowledged: Antichain<SysTime>,
}

impl<K, E, B> SharedVersions<K, E, B>
where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    pub(super) fn new(trace: VersionTrace<K, E, B>) -> Self {
        SharedVersions {
            trace: Some(trace),
            acknowledged: Antichain::from_elem(0),
        }
    }
}

impl<K, E, B> BuildSide<K, E, B> for SharedVersions<K, E, B>
where
    K: ExchangeData + JoinKey,
    E: ExchangeData,
    B: ExchangeData,
{
    type Input = Vec<Span<SysTime, VersionBatch<K, E, B>>>;

    /// The trace becomes readable through the batches' upper; with a retention, each batch's
    /// versions touch their keys when the epochs before them are visited.
    fn receive(&mut self, spans: &mut Self::Input, mut idle: Option<&mut IdleKeys<K, E>>) {
        for span in spans.drain(..) {
            self.acknowledged = span.upper().clone();
            if let (Some(idle), Some(batch)) = (idle.as_deref_mut(), span.inner) {
                idle.receive(batch);
            }
        }
        if let Some(trace) = self.trace.as_mut() {
            trace.advance_upper(&mut self.acknowledged);
        }
    }

    fn advance_to(&mut self, _now: SysTime, _idle: Option<&mut IdleKeys<K, E>>) {}

    fn fire<P, R>(
        &mut self,
        ready: Vec<Waiting<K, E, P>>,
        seen: SysTime,
        idle: Option<&IdleKeys<K, E>>,
        kind: JoinKind,
        residual: &R,
    ) -> Vec<Fired<K, P, B>>
    where
        P: ExchangeData,
        R: Fn(&P, &B) -> bool,
    {
        let trace = self
            .trace
            .as_mut()
            .expect("trace held while inputs are open");
        let batches = trace
            .batches_through(self.acknowledged.borrow())
            .expect("build trace readable");
        let read = Read {
            batches,
            seen,
            since: |k: &K| idle.map_or(0, |i| i.since(k)),
        };
        fire(ready, read, kind, residual)
    }

    /// Hidden by [`IdleKeys::since`], not removed: the arrangement is shared.
    fn forget(&mut self, _key: &K) {}

    /// Pruning a shared arrangement is [`arrange_versions_pruned`](super::arrange_versions_pruned)'s.
    fn rise(&mut self, _w: &Watermark<E>) {}

    /// Logical compaction just below `next` (a firing at `next` reads the versions of the times
    /// before it) and at most at `floor`; physical at the batches received.
    fn hold(&mut self, next: Option<SysTime>, floor: Option<SysTime>) {
        if let Some(trace) = self.trace.as_mut() {
            let below_next = next.map(|t| t.saturating_sub(1));
            let hold = Antichain::from_iter(match (below_next, floor) {
                (Some(h), Some(f)) => Some(h.min(f)),
                (h, f) => h.or(f),
            });
            trace.set_logical_compaction(hold.borrow());
            trace.set_physical_compaction(self.acknowledged.borrow());
        }
    }

    fn close(&mut self) {
        self.trace = None;
    }
}
