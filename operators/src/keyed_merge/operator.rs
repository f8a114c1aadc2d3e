//! The timely operator behind [`keyed_merge`](super::keyed_merge).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::Operator;

use super::{MergeRule, Merged, Rejected};
use crate::pending::{Pending, Update};
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
    keyed_merge_with_retention(writes, rule, None, name)
}

/// [`keyed_merge`] with an optional idle-state retention (state TTL), in system-time epochs.
///
/// With `idle_retention = Some(r)`, a key whose state was last written at system time `s` (by a
/// write the rule accepted) is forgotten before the writes of any system time `t >= s + r` are
/// applied: the rule then sees `None`, as for a key never written (Flink's state TTL, where the
/// next row of an expired key is a first row again, semantics rule A13). Nothing is emitted
/// when state expires. The result depends on how input is cut into system times (that is what
/// a retention in epochs means), never on the number of workers.
///
/// Cost: as [`keyed_merge`], plus one queue entry per key and written system time, popped once;
/// expired state is freed as soon as the input frontier passes `s + r`.
/// `idle_retention = None` (or `Some(0)`, which is treated as `None`) keeps state forever.
pub fn keyed_merge_with_retention<'s, K, R>(
    writes: VecCollection<'s, SysTime, (K, Change<R::Write>)>,
    rule: R,
    idle_retention: Option<SysTime>,
    name: &str,
) -> Merged<'s, K, R::Row>
where
    K: ExchangeData + Hash,
    R: MergeRule,
{
    let retention = idle_retention.filter(|r| *r > 0);
    let exchange = Exchange::new(|u: &Update<(K, Change<R::Write>)>| (u.0).0.hashed());
    let outcomes = writes
        .inner
        .unary_frontier(exchange, name, move |_cap, _info| {
            // Writes of system times not yet complete.
            let mut pending = Pending::new();
            // Per key: the system time of its last accepted write, and its state.
            let mut state: HashMap<K, (SysTime, R::State)> = HashMap::new();
            // With a retention: keys by the system time they were written at (oldest first).
            let mut written: BTreeMap<SysTime, Vec<K>> = BTreeMap::new();
            let mut emitted = Vec::new();
            move |(input, frontier), output| {
                // 1. Drain the input into per-time buffers, keeping a capability per time.
                input.for_each(|cap, data| {
                    if let Some(cap) = cap.retain_least(output.output_index()) {
                        pending.stash(&cap, data);
                    }
                });
                // 2. Apply the writes of every complete time, oldest time first, in `seq` order.
                while let Some((cap, mut updates)) = pending.next_complete(frontier) {
                    updates.sort_by_key(|((_, change), _, _)| (change.seq, change.kind));
                    let mut session = output.session(&cap);
                    let time = *cap.time();
                    if let Some(r) = retention {
                        expire(&mut state, &mut written, r, time);
                    }
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
                        let (mut touched, mut slot) = match state.remove(&key) {
                            Some((touched, s)) => (Some(touched), Some(s)),
                            None => (None, None),
                        };
                        for _ in 0..diff {
                            let result =
                                rule.merge(&mut slot, change.kind, &change.row, &mut emitted);
                            if let Err(reason) = result {
                                let rejected = Rejected {
                                    seq: change.seq,
                                    reason,
                                };
                                session.give(((key.clone(), Err(rejected)), time, 1));
                            } else if touched != Some(time) {
                                touched = Some(time);
                                if retention.is_some() {
                                    written.entry(time).or_default().push(key.clone());
                                }
                            }
                            for (kind, row) in emitted.drain(..) {
                                let out: Outcome<R::Row> = Ok(Change::new(change.seq, kind, row));
                                session.give(((key.clone(), out), time, 1));
                            }
                        }
                        if let (Some(s), Some(t)) = (slot, touched) {
                            state.insert(key, (t, s));
                        }
                    }
                }
                // 3. With a retention, free the state that no future write can see: every
                //    future write has a time at or after the input frontier.
                if let Some(r) = retention {
                    match frontier.frontier().first() {
                        Some(&f) => expire(&mut state, &mut written, r, f),
                        None => {
                            state.clear();
                            written.clear();
                        }
                    }
                }
                // 4. Capabilities are held only for pending times (dropped with their entries).
            }
        });
    Merged::from_outcomes(outcomes.as_collection())
}

/// Forgets the state of every key whose last accepted write is at a system time `s` with
/// `s + retention <= now`. `written` lists keys by the times they were written at; an entry is
/// stale (and skipped) when its key was written again later.
fn expire<K: Hash + Eq, S>(
    state: &mut HashMap<K, (SysTime, S)>,
    written: &mut BTreeMap<SysTime, Vec<K>>,
    retention: SysTime,
    now: SysTime,
) {
    while let Some(entry) = written.first_entry() {
        if entry.key().saturating_add(retention) > now {
            break;
        }
        let at = *entry.key();
        for key in entry.remove() {
            if state.get(&key).is_some_and(|(touched, _)| *touched == at) {
                state.remove(&key);
            }
        }
    }
}
