//! The timely operator behind [`keyed_merge`](super::keyed_merge).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use foldhash::fast::RandomState;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::generic::OutputBuilder;

use super::{Folded, MergeRule, Merged, Refusal, Rejected};
use crate::pending::{Pending, Update};
use crate::{Change, RowKind, SysTime};

/// The output port of the changelog.
const CHANGELOG: usize = 0;
/// The output port of the rejected writes.
const REJECTED: usize = 1;

/// Builds an output's containers of updates of `D`.
type Builder<D> = CapacityContainerBuilder<Vec<Update<D>>>;

/// Folds each key's writes with `rule` and emits the merged table's changelog (see the module
/// docs of [`keyed_merge`](super) for shapes, order and cost).
///
/// # Idle-state retention
///
/// With `idle_retention = Some(r)` (in system-time epochs), a key whose state was last written
/// at system time `s` (by a write the rule accepted) is forgotten before the writes of any
/// system time `t >= s + r` are applied: the rule then sees `None`, as for a key never written
/// (Flink's state TTL, where the next row of an expired key is a first row again, semantics rule
/// A13). Nothing is emitted when state expires. The result depends on how input is cut into
/// system times (that is what a retention in epochs means), never on the number of workers.
/// Cost: one queue entry per key and written system time, popped once; expired state is freed
/// as soon as the input frontier passes `s + r`. `None` (or `Some(0)`, treated as `None`)
/// keeps state forever.
///
/// # Examples
///
/// Keep the greatest value written per key:
///
/// ```
/// use differential_temporal_operators::keyed_merge::{keyed_merge, Folded, MergeRule};
/// use differential_temporal_operators::testing::{batch, run_unary};
/// use differential_temporal_operators::{Change, RowKind};
///
/// struct Max;
/// impl MergeRule for Max {
///     type Write = i64;
///     type State = i64;
///     type Row = i64;
///     fn merge(&self, state: &mut Option<i64>, _kind: RowKind, w: &i64,
///              out: &mut Vec<(RowKind, i64)>) -> Folded {
///         match *state {
///             None => out.push((RowKind::Insert, *w)),
///             Some(old) if *w > old => {
///                 out.push((RowKind::UpdateBefore, old));
///                 out.push((RowKind::UpdateAfter, *w));
///             }
///             Some(_) => return Ok(None),
///         }
///         *state = Some(*w);
///         Ok(None)
///     }
/// }
///
/// let writes: Vec<_> = [5, 3, 9]
///     .iter()
///     .enumerate()
///     .map(|(seq, w)| (1u8, Change::new(seq as u64, RowKind::Insert, *w)))
///     .collect();
/// let out = run_unary(2, batch(&writes, &[]), |c| keyed_merge(c, Max, None, "Max").changelog);
/// let kinds: Vec<_> = out.iter().map(|((_, c), _, _)| (c.kind, c.row)).collect();
/// assert_eq!(kinds, vec![(RowKind::Insert, 5), (RowKind::UpdateBefore, 5), (RowKind::UpdateAfter, 9)]);
/// ```
pub fn keyed_merge<'s, K, R>(
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
    let mut builder = OperatorBuilder::new(name.to_owned(), writes.inner.scope());
    let exchange = Exchange::new(|u: &Update<(K, Change<R::Write>)>| (u.0).0.hashed());
    let mut input = builder.new_input(writes.inner, exchange);
    let (changelog_out, changelog) = builder.new_output();
    let (rejected_out, rejected) = builder.new_output();
    let mut changelog_out = OutputBuilder::<_, Builder<(K, Change<R::Row>)>>::from(changelog_out);
    let mut rejected_out = OutputBuilder::<_, Builder<(K, Rejected)>>::from(rejected_out);
    builder.build(move |_initial_caps| {
        // Writes of system times not yet complete, with a capability per output.
        let mut pending = Pending::new();
        // Per key: the system time of its last accepted write, and its state (never `None`
        // while the key is in the map).
        let mut state: HashMap<K, (SysTime, Option<R::State>), RandomState> = HashMap::default();
        // With a retention: keys by the system time they were written at (oldest first).
        let mut written: BTreeMap<SysTime, Vec<K>> = BTreeMap::new();
        let mut emitted = Vec::new();
        move |frontiers| {
            let frontier = &frontiers[0];
            let mut changelog_out = changelog_out.activate();
            let mut rejected_out = rejected_out.activate();
            // 1. Drain the input into per-time buffers, keeping capabilities per time.
            input.for_each(|cap, data| {
                pending.stash(data, |t| {
                    [cap.delayed(t, CHANGELOG), cap.delayed(t, REJECTED)]
                })
            });
            // 2. Apply the writes of every complete time, oldest time first, in `seq` order
            //    (whole records break ties, so the order never depends on arrival).
            while let Some(([changes_cap, rejected_cap], mut updates)) =
                pending.next_complete(frontier)
            {
                updates.sort_by(|((ka, a), _, da), ((kb, b), _, db)| {
                    a.cmp(b).then_with(|| ka.cmp(kb)).then(da.cmp(db))
                });
                let time = *changes_cap.time();
                let mut changes = changelog_out.session(&changes_cap);
                let mut refusals = rejected_out.session(&rejected_cap);
                if let Some(r) = retention {
                    expire(&mut state, &mut written, r, time);
                }
                for ((key, Change { seq, kind, row }), _t, diff) in updates {
                    if diff <= 0 {
                        // A retraction of a write cannot be applied to a fold.
                        if diff < 0 {
                            let reason = "retraction of a write: merge input must be insert-only";
                            let rejected = Rejected::invalid(seq, reason);
                            refusals.give(((key, rejected), time, 1));
                        }
                        continue;
                    }
                    let copies = diff.unsigned_abs();
                    let mut refuse = |refusal: Refusal| {
                        let rejected = refusal.at(seq);
                        refusals.give(((key.clone(), rejected), time, 1));
                    };
                    let mut fresh = None;
                    match state.get_mut(&key) {
                        Some((touched, slot)) => {
                            let accepted =
                                apply(&rule, slot, kind, row, copies, &mut emitted, &mut refuse);
                            if accepted && *touched != time {
                                *touched = time;
                                if retention.is_some() {
                                    written.entry(time).or_default().push(key.clone());
                                }
                            }
                            if slot.is_none() {
                                state.remove(&key);
                            }
                        }
                        None => {
                            let mut slot = None;
                            apply(&rule, &mut slot, kind, row, copies, &mut emitted, refuse);
                            fresh = slot;
                        }
                    }
                    // A rule that rejects leaves the state as it was: a new state means a
                    // write was accepted.
                    if let Some(s) = fresh {
                        if retention.is_some() {
                            written.entry(time).or_default().push(key.clone());
                        }
                        state.insert(key.clone(), (time, Some(s)));
                    }
                    // The key is cloned for every row but the last, which takes it.
                    if let Some((last_kind, last_row)) = emitted.pop() {
                        for (kind, row) in emitted.drain(..) {
                            changes.give(((key.clone(), Change::new(seq, kind, row)), time, 1));
                        }
                        changes.give(((key, Change::new(seq, last_kind, last_row)), time, 1));
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
    Merged {
        changelog: changelog.as_collection(),
        rejected: rejected.as_collection(),
    }
}

/// Folds `copies` copies of one write into `slot` (the last copy by value, so the rule can
/// move it), passing each refusal (and each applied copy's report) to `refuse`; returns
/// whether a copy was accepted.
fn apply<R: MergeRule>(
    rule: &R,
    slot: &mut Option<R::State>,
    kind: RowKind,
    write: R::Write,
    copies: usize,
    out: &mut Vec<(RowKind, R::Row)>,
    mut refuse: impl FnMut(Refusal),
) -> bool {
    let mut accepted = false;
    for _ in 1..copies {
        accepted |= report(rule.merge(slot, kind, &write, out), &mut refuse);
    }
    accepted |= report(rule.merge_owned(slot, kind, write, out), &mut refuse);
    accepted
}

/// Passes a fold's refusal (or an applied write's report) to `refuse`; returns whether the
/// write was applied.
fn report(folded: Folded, refuse: &mut impl FnMut(Refusal)) -> bool {
    match folded {
        Ok(report) => {
            report.into_iter().for_each(refuse);
            true
        }
        Err(refusal) => {
            refuse(refusal);
            false
        }
    }
}

/// Forgets the state of every key whose last accepted write is at a system time `s` with
/// `s + retention <= now`. `written` lists keys by the times they were written at; an entry is
/// stale (and skipped) when its key was written again later.
fn expire<K: Hash + Eq, S, H: BuildHasher>(
    state: &mut HashMap<K, (SysTime, S), H>,
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
