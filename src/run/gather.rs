//! Gathering a run's output at worker 0 ([`gather`]), folded per worker first when only the
//! final contents matter, and consolidated into sorted lists there ([`expand`]).

use std::cell::RefCell;
use std::rc::Rc;

use differential_dataflow::consolidation::consolidate_updates;
use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::{Exchange, Probe};
use timely::dataflow::ProbeHandle;

use crate::error::Error;
use crate::operators::SysTime;
use crate::tail::Tail;

/// Exchanges a collection's updates to worker 0 and keeps them there with their system times,
/// moved out of the messages (not copied), and attaches `probe` to the flow.
///
/// With `consolidate` (the caller wants the collection's final contents, not its history),
/// each worker first folds its own updates into their net `(data, time, diff)` (see
/// [`fold_until_complete`]), dropping what cancels, and sends only the net updates when its
/// input is complete: a dedup's or a merge engine's churn (`-U`/`+U` pairs, one per replaced
/// row) then never reaches worker 0, which receives each worker's share of the final table
/// once. Memory on a worker is at most twice its share of that table. The probe then watches the flow *before* the fold, which
/// holds its capability until the end of input (so the driver's lag bound still advances).
/// Worker 0 only collects: what several workers sent of the same row is consolidated by the
/// caller's tail, after a parallel sort.
pub(crate) fn gather<'s, D: ExchangeData + Ord>(
    collection: VecCollection<'s, SysTime, D>,
    into: &Rc<RefCell<Vec<(D, SysTime, isize)>>>,
    consolidate: bool,
    probe: &ProbeHandle<SysTime>,
) {
    let sink = Rc::clone(into);
    let updates = if consolidate {
        fold_until_complete(collection.inner.probe_with(probe))
    } else {
        collection.inner
    };
    let gathered = updates
        .exchange(|_| 0)
        .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "Gather", move |_, _| {
            move |input, _| {
                let mut held = sink.borrow_mut();
                input.for_each(|_, updates| held.append(updates));
            }
        });
    if !consolidate {
        gathered.probe_with(probe);
    }
}

/// The net updates of a worker's share of a stream, emitted once its input is complete (see
/// [`gather`]), sorted by `(data, time)`.
///
/// Updates are appended to a buffer that is sorted and consolidated whenever it has doubled
/// since it was last consolidated, so it holds at most twice the live `(data, time)` entries
/// (plus one batch), and a row is compared, never hashed: output rows are long, and their
/// order is decided by a short prefix (an output line's `seq` and kind).
fn fold_until_complete<'s, D: ExchangeData + Ord>(
    updates: timely::dataflow::Stream<'s, SysTime, Vec<(D, SysTime, isize)>>,
) -> timely::dataflow::Stream<'s, SysTime, Vec<(D, SysTime, isize)>> {
    let mut net: Vec<(D, SysTime, isize)> = Vec::new();
    let mut consolidated = 0;
    let mut capability = None;
    updates.unary_frontier::<CapacityContainerBuilder<Vec<_>>, _, _, _>(
        Pipeline,
        "FoldUntilComplete",
        move |_, _| {
            move |(input, frontier), output| {
                let port = output.output_index();
                input.for_each(|cap, updates| {
                    if let Some(cap) = cap.retain_least(port) {
                        if capability
                            .as_ref()
                            .is_none_or(|held: &Capability<SysTime>| cap.time() < held.time())
                        {
                            capability = Some(cap);
                        }
                    }
                    net.append(updates);
                    if net.len() >= 2 * consolidated.max(FOLD_BATCH) {
                        consolidate_updates(&mut net);
                        consolidated = net.len();
                    }
                });
                if frontier.is_empty() {
                    if let Some(cap) = capability.take() {
                        consolidate_updates(&mut net);
                        output
                            .session(&cap)
                            .give_iterator(std::mem::take(&mut net).into_iter());
                    }
                }
            }
        },
    )
}

/// The fold's smallest consolidation: a buffer of fewer updates is left as it is.
const FOLD_BATCH: usize = 1 << 12;

/// The updates of `collection` at time 0: what is gathered of a command's output, whose
/// lines are placed by their source position, not by the system time they were emitted at.
pub(crate) fn at_time_zero<'s, D: ExchangeData>(
    collection: VecCollection<'s, SysTime, D>,
) -> VecCollection<'s, SysTime, D> {
    collection.inner.map(|(d, _, r)| (d, 0, r)).as_collection()
}

/// Consolidates gathered updates into a sorted list, one entry per unit of count (sorted on
/// the threads of `tail` first, so consolidation only merges neighbours).
pub(crate) fn expand<D: Ord + Clone + Send>(
    tail: &Tail,
    mut updates: Vec<(D, SysTime, isize)>,
    what: &str,
) -> Result<Vec<D>, Error> {
    tail.sort_unstable_by(&mut updates, |a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    consolidate_updates(&mut updates);
    if updates.iter().any(|(_, _, r)| *r < 0) {
        return Err(Error::Runtime(format!(
            "internal error: a {what} was retracted more often than emitted"
        )));
    }
    if updates.iter().all(|(_, _, r)| *r == 1) {
        // The usual case, collected in place (no second buffer of the output).
        return Ok(updates.into_iter().map(|(d, _, _)| d).collect());
    }
    Ok(updates
        .into_iter()
        .flat_map(|(d, _, r)| std::iter::repeat_n(d, r as usize))
        .collect())
}
#[cfg(test)]
mod tests {
    use super::*;
    use timely::dataflow::operators::vec::Input;
    use timely::dataflow::operators::Inspect;

    /// The fold sends each worker's net updates per `(data, time)` (cancelled ones dropped,
    /// negative ones kept) and nothing until its input is complete, whatever the batches the
    /// updates came in.
    #[test]
    fn fold_sends_net_updates_once_the_input_is_complete() {
        timely::execute_directly(|worker| {
            let seen = Rc::new(RefCell::new(Vec::new()));
            let sink = Rc::clone(&seen);
            let mut input = worker.dataflow::<SysTime, _, _>(|scope| {
                let (input, updates) = scope.new_input::<(u8, SysTime, isize)>();
                fold_until_complete(updates).inspect(move |u| sink.borrow_mut().push(*u));
                input
            });
            // Epoch 0: `1` inserted; `2` twice; `3` retracted (a net -1 stays).
            for update in [(1, 0, 1), (2, 0, 1), (2, 0, 1), (3, 0, -1)] {
                input.send(update);
            }
            input.advance_to(1);
            // Epoch 1: `1` retracted (cancels across batches), `4` at a later time, and `2`
            // at time 1, which nets apart from `2` at time 0.
            for update in [(1, 0, -1), (4, 1, 1), (2, 1, -1)] {
                input.send(update);
            }
            input.advance_to(2);
            for _ in 0..50 {
                worker.step();
            }
            assert!(
                seen.borrow().is_empty(),
                "sent before the input was complete"
            );
            drop(input);
            while worker.step() {}
            let mut net = seen.take();
            net.sort();
            assert_eq!(net, vec![(2, 0, 2), (2, 1, -1), (3, 0, -1), (4, 1, 1)]);
        });
    }

    /// Past [`FOLD_BATCH`] updates the fold consolidates as it goes: an insert and its later
    /// retraction, many batches apart, still cancel, and what is left is summed once.
    #[test]
    fn fold_consolidates_as_it_goes_over_many_batches() {
        let n = 5 * FOLD_BATCH as u32;
        timely::execute_directly(move |worker| {
            let seen = Rc::new(RefCell::new(Vec::new()));
            let sink = Rc::clone(&seen);
            let mut input = worker.dataflow::<SysTime, _, _>(|scope| {
                let (input, updates) = scope.new_input::<(u32, SysTime, isize)>();
                fold_until_complete(updates).inspect(move |u| sink.borrow_mut().push(*u));
                input
            });
            // Every value inserted, then (an epoch later) every odd one retracted and every
            // value divisible by 4 inserted again.
            for v in 0..n {
                input.send((v, 0, 1));
            }
            input.advance_to(1);
            worker.step();
            for v in 0..n {
                if v % 2 == 1 {
                    input.send((v, 0, -1));
                }
                if v % 4 == 0 {
                    input.send((v, 0, 1));
                }
            }
            drop(input);
            while worker.step() {}
            let net = seen.take();
            let expected: Vec<_> = (0..n)
                .step_by(2)
                .map(|v| (v, 0, if v % 4 == 0 { 2 } else { 1 }))
                .collect();
            assert_eq!(net, expected, "sorted, net, one entry per value");
        });
    }

    /// `expand` sorts the output (gathered at time 0, see `at_time_zero`), repeats a row by its
    /// net count (a row emitted twice is written twice), drops what cancelled, and refuses a
    /// net retraction as an internal error.
    #[test]
    fn expand_repeats_rows_by_their_count_and_refuses_a_net_retraction() {
        let tail = Tail::new(1);
        let updates = vec![
            ("b", 0, 1),
            ("a", 0, 1),
            ("c", 0, 1),
            ("b", 0, 1),
            ("c", 0, -1),
        ];
        assert_eq!(expand(&tail, updates, "row").unwrap(), ["a", "b", "b"]);
        let retracted = vec![("a", 0, 1), ("a", 0, -2)];
        let error = expand(&tail, retracted, "row").unwrap_err().to_string();
        assert!(
            error.contains("a row was retracted more often than emitted"),
            "{error}"
        );
    }
}
