//! The timely operator behind [`to_changelog`].

use std::hash::Hash;

use differential_dataflow::consolidation::consolidate_updates;
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::Operator;

use super::pair_changes;
use crate::pending::{Pending, Update};
use crate::{Change, ChangelogMode, SysTime};

/// Turns a collection of `(key, value)` into its changelog (see the [module docs](super) for
/// the rule, shapes, order and cost).
///
/// # Examples
///
/// A key inserted at system time 0, updated at 1 and deleted at 2:
///
/// ```
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::to_changelog::to_changelog;
/// use differential_temporal_operators::{ChangelogMode, RowKind};
///
/// let epochs = vec![
///     vec![(('k', 1), 1)],
///     vec![(('k', 1), -1), (('k', 2), 1)],
///     vec![(('k', 2), -1)],
/// ];
/// let out = run_unary(2, epochs, |c| to_changelog(c, ChangelogMode::Retract, "ToChangelog"));
/// let rows: Vec<_> = out.iter().map(|((_, c), t, _)| (*t, c.kind, c.row)).collect();
/// assert_eq!(rows, vec![
///     (0, RowKind::Insert, 1),
///     (1, RowKind::UpdateBefore, 1),
///     (1, RowKind::UpdateAfter, 2),
///     (2, RowKind::Delete, 2),
/// ]);
/// ```
pub fn to_changelog<'s, K, V>(
    collection: VecCollection<'s, SysTime, (K, V)>,
    mode: ChangelogMode,
    name: &str,
) -> VecCollection<'s, SysTime, (K, Change<V>)>
where
    K: ExchangeData + Hash,
    V: ExchangeData,
{
    let exchange = Exchange::new(|u: &Update<(K, V)>| (u.0).0.hashed());
    collection
        .inner
        .unary_frontier(exchange, name, move |_cap, _info| {
            // Changes of system times not yet complete.
            let mut pending = Pending::new();
            move |(input, frontier), output| {
                // 1. Drain the input into per-time buffers, keeping a capability per time.
                let port = output.output_index();
                input.for_each(|cap, data| pending.stash(data, |t| cap.delayed(t, port)));
                // 2. For every complete time: consolidate (sorts by key, then value) and pair
                //    each key's retractions with its insertions.
                while let Some((cap, mut updates)) = pending.next_complete(frontier) {
                    let time = *cap.time();
                    consolidate_updates(&mut updates);
                    let mut session = output.session(&cap);
                    let mut start = 0;
                    while start < updates.len() {
                        let key = &(updates[start].0).0;
                        let end = start
                            + updates[start..]
                                .iter()
                                .take_while(|((k, _), _, _)| k == key)
                                .count();
                        let changes: Vec<(V, isize)> = updates[start..end]
                            .iter()
                            .map(|((_, v), _, d)| (v.clone(), *d))
                            .collect();
                        for change in pair_changes(time, &changes) {
                            if let Some(kind) = mode.render(change.kind) {
                                let change = Change::new(change.seq, kind, change.row);
                                session.give(((key.clone(), change), time, 1));
                            }
                        }
                        start = end;
                    }
                }
                // 3. Capabilities are held only for pending times (dropped with their entries).
            }
        })
        .as_collection()
}
