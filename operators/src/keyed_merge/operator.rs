//! The timely operator behind [`keyed_merge`](super::keyed_merge).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::{Capability, Operator};

use super::{MergeRule, Merged, Rejected};
use crate::{Change, SysTime};

/// What the operator emits before it is split into changelog and rejections.
type Outcome<V> = Result<Change<V>, Rejected>;

/// Folds each key's writes with `rule` and emits the merged table's changelog (see the module
/// docs of [`keyed_merge`](super) for shapes, order and cost).
///
/// # Examples
///
/// Keep the greatest value written per key:
///
/// ```
/// use differential_temporal_operators::keyed_merge::{keyed_merge, MergeRule};
/// use differential_temporal_operators::testing::{batch, run_unary};
/// use differential_temporal_operators::{Change, RowKind};
///
/// struct Max;
/// impl MergeRule for Max {
///     type Write = i64;
///     type State = i64;
///     type Row = i64;
///     fn merge(&self, state: &mut Option<i64>, _kind: RowKind, w: &i64,
///              out: &mut Vec<(RowKind, i64)>) -> Result<(), String> {
///         match *state {
///             None => out.push((RowKind::Insert, *w)),
///             Some(old) if *w > old => {
///                 out.push((RowKind::UpdateBefore, old));
///                 out.push((RowKind::UpdateAfter, *w));
///             }
///             Some(_) => return Ok(()),
///         }
///         *state = Some(*w);
///         Ok(())
///     }
/// }
///
/// let writes: Vec<_> = [5, 3, 9]
///     .iter()
///     .enumerate()
///     .map(|(seq, w)| (1u8, Change::new(seq as u64, RowKind::Insert, *w)))
///     .collect();
/// let out = run_unary(2, batch(&writes, &[]), |c| keyed_merge(c, Max, "Max").changelog);
/// let kinds: Vec<_> = out.iter().map(|((_, c), _, _)| (c.kind, c.row)).collect();
/// assert_eq!(kinds, vec![(RowKind::Insert, 5), (RowKind::UpdateBefore, 5), (RowKind::UpdateAfter, 9)]);
/// ```
pub fn keyed_merge<'s, K, R>(
    writes: VecCollection<'s, SysTime, (K, Change<R::Write>)>,
    rule: R,
    name: &str,
) -> Merged<'s, K, R::Row>
where
    K: ExchangeData + Hash,
    R: MergeRule,
{
    type Update<K, W> = ((K, Change<W>), SysTime, isize);
    let exchange = Exchange::new(|u: &Update<K, R::Write>| (u.0).0.hashed());
    let outcomes = writes
        .inner
        .unary_frontier(exchange, name, move |_cap, _info| {
            // Writes of system times not yet complete, with a capability to emit at that time.
            let mut pending: BTreeMap<SysTime, (Capability<SysTime>, Vec<Update<K, R::Write>>)> =
                BTreeMap::new();
            let mut state: HashMap<K, R::State> = HashMap::new();
            let mut emitted = Vec::new();
            move |(input, frontier), output| {
                // 1. Drain the input into per-time buffers, keeping a capability per time.
                input.for_each(|cap, data| {
                    let Some(cap) = cap.retain_least(output.output_index()) else {
                        return;
                    };
                    for update in data.drain(..) {
                        pending
                            .entry(update.1)
                            .or_insert_with(|| (cap.delayed(&update.1), Vec::new()))
                            .1
                            .push(update);
                    }
                });
                // 2. Apply the writes of every complete time, oldest time first, in `seq` order.
                while let Some(entry) = pending.first_entry() {
                    if frontier.less_equal(entry.key()) {
                        break;
                    }
                    let (cap, mut updates) = entry.remove();
                    updates.sort_by_key(|((_, change), _, _)| (change.seq, change.kind));
                    let mut session = output.session(&cap);
                    let time = *cap.time();
                    for ((key, change), _t, diff) in updates {
                        if diff < 0 {
                            let reason = "retraction of a write: merge input must be insert-only";
                            let rejected = Rejected {
                                seq: change.seq,
                                reason: reason.to_string(),
                            };
                            session.give(((key, Err(rejected)), time, 1));
                            continue;
                        }
                        let mut slot = state.remove(&key);
                        for _ in 0..diff {
                            let result =
                                rule.merge(&mut slot, change.kind, &change.row, &mut emitted);
                            if let Err(reason) = result {
                                let rejected = Rejected {
                                    seq: change.seq,
                                    reason,
                                };
                                session.give(((key.clone(), Err(rejected)), time, 1));
                            }
                            for (kind, row) in emitted.drain(..) {
                                let out: Outcome<R::Row> = Ok(Change::new(change.seq, kind, row));
                                session.give(((key.clone(), out), time, 1));
                            }
                        }
                        if let Some(s) = slot {
                            state.insert(key, s);
                        }
                    }
                }
                // 3. Capabilities are held only for pending times (dropped with their entries).
            }
        });
    let outcomes = outcomes.as_collection();
    let changelog = outcomes
        .clone()
        .flat_map(|(k, o): (K, Outcome<R::Row>)| o.ok().map(|c| (k, c)));
    let rejected = outcomes.flat_map(|(k, o): (K, Outcome<R::Row>)| o.err().map(|e| (k, e)));
    Merged {
        changelog,
        rejected,
    }
}
