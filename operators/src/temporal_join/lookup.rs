//! The processing-time temporal join (lookup join): each probe row joins the build key's
//! current version at the system time it arrives, once.

use std::collections::BTreeMap;

use differential_dataflow::operators::arrange::Arranged;
use differential_dataflow::trace::TraceReader;
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::{CapabilitySet, Operator};
use timely::progress::Antichain;

use super::{join_row, JoinKey, JoinKind, Joined};
use crate::version::cursor::VersionCursor;
use crate::version::VersionTrace;
use crate::{Change, SysTime};

/// Processing-time temporal join / lookup join (Flink `FOR SYSTEM_TIME AS OF proctime`, rules
/// B17 and B18; shapes as in the [module docs](super)).
///
/// A probe row arriving at system time `s` joins its key's *current* version: the greatest
/// `(time, seq)` among the build versions received at system times `<= s` (a delete: no
/// match). The result is emitted at `s` and never revised, whatever the build side does later.
/// The probe row's event time plays no part. Residual predicate and INNER/LEFT as for
/// [`temporal_join`](super::temporal_join).
///
/// Cost: per probe row one key seek in the build trace (the current version is the key's first
/// value). State: probe rows of system times not yet complete; the build trace is held only at
/// the earliest such time.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::{lookup_join, JoinKind};
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
///     lookup_join(o, arrange_versions(r, "Rates"), JoinKind::Left, |_, _| true, "Lookup")
/// });
/// assert_eq!(out, vec![((7, Change::new(0, RowKind::Insert, (1, Some(114)))), 1, 1)]);
/// ```
pub fn lookup_join<'s, K, E, P, B, R>(
    probe: VecCollection<'s, SysTime, (K, Change<P>)>,
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
    type Update<K, P> = ((K, Change<P>), SysTime, isize);
    let mut trace = build.trace.clone();
    let pact = Exchange::new(|u: &Update<K, P>| (u.0).0.hashed().into());
    probe
        .inner
        .binary_frontier(build.stream, pact, Pipeline, name, move |_cap, _info| {
            let mut caps = CapabilitySet::<SysTime>::new();
            let mut pending: BTreeMap<SysTime, Vec<(K, Change<P>, isize)>> = BTreeMap::new();
            let mut ack = Antichain::from_elem(0);
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
                    for (k, change, diff) in rows {
                        // The key's first value present at `now` is its current version; a NULL
                        // key matches none (see [`JoinKey`]).
                        let version = (!k.is_null() && reader.seek_key(&k))
                            .then(|| reader.next_present(now).map(|v| v.2.clone()))
                            .flatten();
                        if let Some(row) = join_row(kind, &residual, &change, version.as_ref()) {
                            session.give(((k, row), now, diff));
                        }
                    }
                }

                // 3. Capabilities and compaction only for the earliest unprocessed time.
                let mut hold = Antichain::new();
                for t in pending
                    .keys()
                    .take(1)
                    .chain(probe_frontier.frontier().iter())
                    .chain(build_frontier.frontier().iter())
                {
                    hold.insert(*t);
                }
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
