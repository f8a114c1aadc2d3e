//! Small harnesses that run a dataflow on 1..n worker threads over scripted input and collect
//! its output: used by this crate's tests, property tests and benchmarks, and usable by yours.
//!
//! Input is given as *epochs*: `epochs[s]` holds the `(record, diff)` updates entered at system
//! time `s`. Records are dealt round-robin across workers (worker `i` feeds the records at
//! positions `p` with `p % workers == i`), so every exchange in the dataflow is exercised. The
//! output is returned as consolidated `(record, system time, diff)` triples, sorted, so two runs
//! compare equal exactly when they produced the same collection at every system time.

use std::cell::RefCell;
use std::rc::Rc;

use differential_dataflow::consolidation::consolidate_updates;
use differential_dataflow::input::InputSession;
use differential_dataflow::{ExchangeData, VecCollection};
use timely::dataflow::ProbeHandle;

use crate::SysTime;

/// Updates entered at one system time: `(record, diff)` pairs.
pub type Epoch<D> = Vec<(D, isize)>;

/// Consolidated, sorted output of a dataflow: `(record, system time, diff)`.
pub type Updates<D> = Vec<(D, SysTime, isize)>;

/// Runs `build` over one input on `workers` threads, feeding `epochs[s]` at system time `s`.
///
/// Returns the output's updates, consolidated and sorted (see the module docs).
pub fn run_unary<I, O, F>(workers: usize, epochs: Vec<Epoch<I>>, build: F) -> Updates<O>
where
    I: ExchangeData + Sync,
    O: ExchangeData,
    F: for<'s> Fn(VecCollection<'s, SysTime, I>) -> VecCollection<'s, SysTime, O>
        + Send
        + Sync
        + 'static,
{
    run_binary(
        workers,
        epochs,
        Vec::<Epoch<()>>::new(),
        move |input, _unused| build(input),
    )
}

/// Runs `build` over two inputs on `workers` threads, feeding `left[s]` and `right[s]` at system
/// time `s`. Both inputs are closed after the longer script ends.
///
/// Returns the output's updates, consolidated and sorted (see the module docs).
pub fn run_binary<L, R, O, F>(
    workers: usize,
    left: Vec<Epoch<L>>,
    right: Vec<Epoch<R>>,
    build: F,
) -> Updates<O>
where
    L: ExchangeData + Sync,
    R: ExchangeData + Sync,
    O: ExchangeData,
    F: for<'s> Fn(
            VecCollection<'s, SysTime, L>,
            VecCollection<'s, SysTime, R>,
        ) -> VecCollection<'s, SysTime, O>
        + Send
        + Sync
        + 'static,
{
    let left = std::sync::Arc::new(left);
    let right = std::sync::Arc::new(right);
    let guards = timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut left_in = InputSession::<SysTime, L, isize>::new();
        let mut right_in = InputSession::<SysTime, R, isize>::new();
        let probe = ProbeHandle::new();
        let seen = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&seen);
        worker.dataflow::<SysTime, _, _>(|scope| {
            let l = left_in.to_collection(scope);
            let r = right_in.to_collection(scope);
            build(l, r)
                .inspect(move |(d, t, r)| sink.borrow_mut().push((d.clone(), *t, *r)))
                .probe_with(&probe);
        });
        let rounds = left.len().max(right.len());
        for s in 0..rounds {
            if let Some(epoch) = left.get(s) {
                for (p, (d, r)) in epoch.iter().enumerate() {
                    if p % peers == index {
                        left_in.update(d.clone(), *r);
                    }
                }
            }
            if let Some(epoch) = right.get(s) {
                for (p, (d, r)) in epoch.iter().enumerate() {
                    if p % peers == index {
                        right_in.update(d.clone(), *r);
                    }
                }
            }
            let next = s as SysTime + 1;
            left_in.advance_to(next);
            right_in.advance_to(next);
            left_in.flush();
            right_in.flush();
            worker.step_while(|| probe.less_than(left_in.time()));
        }
        drop(left_in);
        drop(right_in);
        while worker.step() {}
        seen.take()
    })
    .expect("timely workers start");
    let mut out: Vec<(O, SysTime, isize)> = guards
        .join()
        .into_iter()
        .flat_map(|r| r.expect("worker finished without panic"))
        .collect();
    consolidate_updates(&mut out);
    out
}

/// Accumulates updates up to and including system time `at`: the collection's content then.
pub fn content_at<D: Ord + Clone>(updates: &[(D, SysTime, isize)], at: SysTime) -> Vec<(D, isize)> {
    let mut acc: Vec<(D, isize)> = updates
        .iter()
        .filter(|(_, t, _)| *t <= at)
        .map(|(d, _, r)| (d.clone(), *r))
        .collect();
    differential_dataflow::consolidation::consolidate(&mut acc);
    acc
}

/// Cuts `rows` into epochs at the given sorted cut points (each row with diff `+1`).
///
/// `cuts = [2, 5]` over 7 rows gives epochs `[0..2], [2..5], [5..7]`: consecutive rows stay in
/// order, so source sequence numbers grow with system time, as they do in the CSV sources.
pub fn batch<D: Clone>(rows: &[D], cuts: &[usize]) -> Vec<Epoch<D>> {
    let mut epochs = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&rows.len())) {
        let cut = cut.clamp(start, rows.len());
        epochs.push(rows[start..cut].iter().map(|d| (d.clone(), 1)).collect());
        start = cut;
    }
    epochs
}

/// Random cut points for [`batch`]-style epoch splitting in the operators' proptests: up to
/// `cuts - 1` positions in `0..rows`, ascending.
#[cfg(test)]
pub(crate) fn arb_cuts(
    rows: usize,
    cuts: usize,
) -> impl proptest::strategy::Strategy<Value = Vec<usize>> {
    use proptest::strategy::Strategy;
    proptest::collection::vec(0..rows, 0..cuts).prop_map(|mut c| {
        c.sort_unstable();
        c
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_is_worker_count_independent() {
        let epochs = batch(&[1u64, 2, 3, 4, 5, 6, 7], &[2, 5]);
        let one = run_unary(1, epochs.clone(), |c| c.map(|x| x % 3).consolidate());
        let four = run_unary(4, epochs, |c| c.map(|x| x % 3).consolidate());
        assert_eq!(one, four);
        assert_eq!(content_at(&one, 0), vec![(1, 1), (2, 1)]);
        assert_eq!(content_at(&one, 2), vec![(0, 2), (1, 3), (2, 2)]);
    }
}
