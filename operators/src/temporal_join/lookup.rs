//! The processing-time temporal join (lookup join): each probe row joins the build key's
//! current version at the system time it arrives, once.

use std::collections::BTreeMap;

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::trace::TraceReader;
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::{CapabilitySet, Operator};
use timely::progress::Antichain;

use super::idle::IdleEpochs;
use super::{join_row, JoinConfig, JoinKey, Joined, Residual};
use crate::version::cursor::VersionCursor;
use crate::version::VersionTrace;
use crate::{Change, SysTime};

/// Processing-time temporal join / lookup join (Flink `FOR SYSTEM_TIME AS OF proctime`, rules
/// B17 and B18; shapes as in the [module docs](super)).
///
/// A probe row arriving at system time `s` joins its key's *current* version: the greatest
/// `(time, seq)` among the build versions received at system times `<= s` (a delete: no
/// match). The result is emitted at `s` and never revised, whatever the build side does later.
/// The probe row's event time plays no part. `config` gives INNER/LEFT and the residual
/// predicate (as for [`temporal_join`](super::temporal_join)), the operator name (default
/// `"LookupJoin"`) and the retention.
///
/// Idle-state retention (Flink's `table.exec.state.ttl` on `TemporalProcessTimeJoinOperator`,
/// rule B17; off unless [`JoinConfig::retention`] sets one) is measured in system-time epochs,
/// the processing-time clock of this crate ([`Retention::epochs`](crate::retention::Retention::epochs)):
/// each probe row and each build version touches its key at the system time it arrives; a key
/// last touched at `s` expires at `retention.expiry(s)`, and the build versions received before
/// then are forgotten, so a later probe row finds only the versions received since (none: INNER
/// drops it, LEFT pads it), as Flink's idle-retention timer clears the key. Results then depend
/// on how input is cut into system times (Flink: on wall-clock timing), never on the number of
/// workers.
///
/// Cost: per probe row one key seek in the build trace (the current version is the key's first
/// value); with a retention, one O(log n) update of its key's last access per probe row and
/// build version. State: probe rows of system times not yet complete, the build trace held only
/// at the earliest such time; with a retention, the last access per key and the expiry per
/// expired key (the versions arrangement is shared and not shrunk; with a retention its
/// logical compaction is held below the earliest possible expiry, so that the versions received
/// before an expiry stay distinguishable from those received after it).
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::retention::Retention;
/// use differential_temporal_operators::temporal_join::{lookup_join, JoinConfig, JoinKind};
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::{arrange_versions, Change, RowKind, Version};
///
/// // The order of epoch 1 sees the rate of epoch 0, though its event time (1) is earlier.
/// let orders = vec![vec![], vec![((7u8, Change::new(0, RowKind::Insert, 1i64)), 1)]];
/// let rates = vec![
///     vec![((7u8, Version::row(5i64, 0, 114i64)), 1)],
///     vec![],
///     vec![((7u8, Version::row(6i64, 1, 116i64)), 1)], // later: does not revise the result
/// ];
/// let out = run_binary(2, orders, rates, |o, r| {
///     lookup_join(o, arrange_versions(r, "Rates"), JoinConfig::new(JoinKind::Left))
/// });
/// assert_eq!(out, vec![((7, Change::new(0, RowKind::Insert, (1, Some(114)))), 1, 1)]);
///
/// // With a retention of 2 epochs: the rate of epoch 0 is seen at epoch 1; nothing touches key
/// // 7 at epochs 2 and 3, so it expires at epoch 3 (1 + 2) and the order of epoch 4 finds none.
/// let order = |seq| vec![((7u8, Change::new(seq, RowKind::Insert, seq)), 1)];
/// let orders = vec![vec![], order(0), vec![], vec![], order(1)];
/// let rates = vec![vec![((7u8, Version::row(5i64, 0, 114i64)), 1)]];
/// let out = run_binary(1, orders, rates, |o, r| {
///     let config = JoinConfig::new(JoinKind::Left).retention(Retention::epochs(2));
///     lookup_join(o, arrange_versions(r, "Rates"), config)
/// });
/// let row = |seq, rate, at| ((7, Change::new(seq, RowKind::Insert, (seq, rate))), at, 1);
/// assert_eq!(out, vec![row(0, Some(114), 1), row(1, None, 4)]);
/// ```
pub fn lookup_join<'s, K, E, P, B, R>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
    build: Arranged<'s, VersionTrace<K, E, B>>,
    config: JoinConfig<R, SysTime>,
) -> VecCollection<'s, SysTime, (K, Joined<P, B>)>
where
    K: ExchangeData + Hashable + JoinKey,
    E: ExchangeData,
    P: ExchangeData,
    B: ExchangeData,
    R: Residual<P, B>,
{
    let (kind, residual, retention, name) = config.into_parts("LookupJoin");
    type Update<K, P> = ((K, Change<P>), SysTime, isize);
    let mut trace = build.trace.clone();
    let pact = Exchange::new(|u: &Update<K, P>| (u.0).0.hashed().into());
    probe
        .inner
        .binary_frontier(build.stream, pact, Pipeline, name, move |_cap, _info| {
            let mut caps = CapabilitySet::<SysTime>::new();
            let mut pending: BTreeMap<SysTime, Vec<(K, Change<P>, isize)>> = BTreeMap::new();
            let mut ack = Antichain::from_elem(0);
            let mut idle = retention.map(IdleEpochs::new);
            move |(probe_in, probe_frontier), (build_in, build_frontier), output| {
                // 1. Drain: probe rows by system time; build batches only move `ack`.
                probe_in.for_each(|cap, data| {
                    for c in cap.retain_stamp(output.output_index()).iter() {
                        caps.insert(c.clone());
                    }
                    for ((k, c), t, d) in data.drain(..) {
                        pending.entry(t).or_default().push((k, c, d));
                    }
                });
                build_in.for_each(|_cap, spans| {
                    for span in spans.drain(..) {
                        ack.clone_from(span.upper());
                        if let (Some(idle), Some(batch)) = (idle.as_mut(), span.inner) {
                            idle.receive(batch);
                        }
                    }
                });
                trace.advance_upper(&mut ack);

                // 2. Join the probe rows of every time both inputs have passed.
                while let Some(entry) = pending.first_entry() {
                    let now = *entry.key();
                    if probe_frontier.less_equal(&now) || build_frontier.less_equal(&now) {
                        break;
                    }
                    let mut rows = entry.remove();
                    rows.sort_by(|a, b| a.0.cmp(&b.0));
                    let cap = caps.delayed(&now);
                    let mut session = output.session(&cap);
                    let batches = trace.batches_through(ack.borrow());
                    let mut reader = VersionCursor::new(batches.expect("build trace readable"));
                    if let Some(idle) = idle.as_mut() {
                        idle.apply_received_before(now);
                    }
                    for (k, change, diff) in rows {
                        // The key's first value present at `now` (and received since its state
                        // last expired) is its current version; a NULL key matches none (see
                        // [`JoinKey`]).
                        let since = idle.as_ref().map_or(0, |i| i.since(&k, now));
                        let version = (!k.is_null() && reader.seek_key(&k))
                            .then(|| reader.next_present_since(since, now).map(|v| v.2.clone()))
                            .flatten();
                        if let Some(idle) = idle.as_mut().filter(|_| !k.is_null()) {
                            idle.touch(&k, now);
                        }
                        if let Some(row) = join_row(kind, &residual, &change, version.as_ref()) {
                            session.give(((k, row), now, diff));
                        }
                    }
                }

                if probe_frontier.is_empty() && pending.is_empty() {
                    // No probe row will come and none waits: no access matters any more.
                    idle = None;
                }

                // 3. Capabilities and compaction only for the earliest unprocessed time, and
                // with a retention at most its floor (see `IdleEpochs::compaction_floor`).
                let earliest = (pending.keys().take(1))
                    .chain(probe_frontier.frontier().iter())
                    .chain(build_frontier.frontier().iter())
                    .copied()
                    .min();
                let floor = idle.as_ref().and_then(IdleEpochs::compaction_floor);
                let hold = Antichain::from_iter(match (earliest, floor) {
                    (Some(t), Some(f)) => Some(t.min(f)),
                    (t, f) => t.or(f),
                });
                match pending.keys().next() {
                    Some(&t) => caps.downgrade([t]),
                    None => caps = CapabilitySet::new(),
                }
                trace.set_logical_compaction(hold.borrow());
                trace.set_physical_compaction(ack.borrow());
            }
        })
        .as_collection()
}
