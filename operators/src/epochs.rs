//! The loop shared by the operators that visit their input's system times in order, each with the
//! [watermark](crate::watermark) in force for it: the final-mode window aggregation and the OVER
//! aggregation, keep-first deduplication and the interval join. The operator's own state and
//! rules are an [`EpochLogic`]; this module buffers the records of incomplete system times,
//! feeds the inputs' watermark collections into a [`Combined`] watermark (the least of them, as
//! an operator's watermark is the minimum of its inputs' in Flink, leaving out the inputs idle
//! for the idle timeout),
//! calls the logic once per complete system time in order (also for a system time where only a
//! watermark rose), calls it once more when the inputs end, and holds capabilities only while
//! work waits.

use std::collections::BTreeMap;

use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Concat, Exchange, Operator};

use crate::combined::Combined;
use crate::watermark::Watermark;
use crate::SysTime;

/// An operator's state and rules, driven by [`drive`].
pub(crate) trait EpochLogic<R, E, O> {
    /// The records of the complete system time `now` (none when only the watermark rose),
    /// under the watermark `w` in force for it; outputs go to `give`, at `now`.
    fn epoch(
        &mut self,
        now: SysTime,
        w: &Watermark<E>,
        records: Vec<(R, isize)>,
        give: &mut dyn FnMut(O),
    );

    /// Whether state waits for the watermark to rise (it is emitted when the input ends).
    fn waiting(&self) -> bool;

    /// The input has ended (the watermark is `+infinity`): emit what waits, and free it all.
    fn end(&mut self, give: &mut dyn FnMut(O));
}

/// The operator's input: a record (exchanged by `route`) or a watermark candidate of the
/// watermark collection with that index.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum In<R, E> {
    Row(R),
    Mark(usize, Watermark<E>),
}

/// Runs `logic` over `records`, routed to workers by `route`, with the watermark collections
/// `watermarks`, one per input, combined with the idle timeout `idle_timeout` in system times
/// (`0`: off; see [`crate::combined`]) (see the [module docs](self)). Each output is given with diff
/// `+1` at the system time it was produced in; when the input ends, at the system time after the
/// last watermark record (or later, the last input frontier seen).
pub(crate) fn drive<'s, R, E, O, L>(
    records: VecCollection<'s, SysTime, R>,
    watermarks: Vec<VecCollection<'s, SysTime, Watermark<E>>>,
    idle_timeout: SysTime,
    route: impl Fn(&R) -> u64 + 'static,
    name: &str,
    mut logic: L,
) -> VecCollection<'s, SysTime, O>
where
    R: ExchangeData,
    E: ExchangeData,
    O: ExchangeData,
    L: EpochLogic<R, E, O> + 'static,
{
    let rows = records.map(In::Row).inner.exchange(
        move |(x, _, _): &(In<R, E>, SysTime, isize)| match x {
            In::Row(r) => route(r),
            In::Mark(..) => 0,
        },
    );
    let inputs = watermarks.len();
    let input = (watermarks.into_iter().enumerate()).fold(rows, |rows, (i, marks)| {
        rows.concat(marks.map(move |w| In::Mark(i, w)).inner)
    });
    input
        .unary_frontier(Pipeline, name, move |_cap, _info| {
            let mut caps = CapabilitySet::<SysTime>::new();
            let mut arrivals: BTreeMap<SysTime, Vec<(R, isize)>> = BTreeMap::new();
            let mut marks = Combined::new(inputs, idle_timeout);
            move |(input, frontier), output| {
                // 1. Drain: records by system time, watermark candidates into the tracker.
                input.for_each(|cap, data| {
                    for c in cap.retain_stamp(output.output_index()).iter() {
                        caps.insert(c.clone());
                    }
                    for (x, t, diff) in data.drain(..) {
                        match x {
                            In::Row(r) => arrivals.entry(t).or_default().push((r, diff)),
                            In::Mark(i, w) => marks.observe(i, t, w),
                        }
                    }
                });

                // 2. Visit the complete system times in order (once the input has ended, none
                //    after the end: `Max` takes over there).
                if frontier.is_empty() {
                    marks.ended();
                }
                loop {
                    let next = arrivals.keys().next().copied();
                    let next = next.into_iter().chain(marks.next_rise()).min();
                    let Some(now) = next else { break };
                    if frontier.less_equal(&now) {
                        break;
                    }
                    let records = arrivals.remove(&now).unwrap_or_default();
                    let w = marks.at(now);
                    let cap = caps.delayed(&now);
                    let mut session = output.session(&cap);
                    logic.epoch(now, &w, records, &mut |o| session.give((o, now, 1)));
                }

                // 3. End of input: what waits is emitted once, at the last input frontier seen
                //    (the held capability), at least the system time after the last watermark.
                if frontier.is_empty() {
                    if logic.waiting() {
                        let held = caps.iter().map(|c| *c.time()).min().unwrap_or(0);
                        let end = marks.end_epoch().max(held);
                        let cap = caps.delayed(&end);
                        let mut session = output.session(&cap);
                        logic.end(&mut |o| session.give((o, end, 1)));
                    }
                    caps = CapabilitySet::new();
                    return;
                }

                // 4. Hold a capability only while work waits: at the earliest system time still
                //    to visit, or, while only state waits for the watermark, at the input
                //    frontier (where it is emitted if the input ends).
                let waiting = logic.waiting() || !arrivals.is_empty() || marks.rising();
                match caps.iter().map(|c| *c.time()).min() {
                    Some(held) if waiting => {
                        let target = (arrivals.keys().next().copied().into_iter())
                            .chain(marks.next_rise())
                            .chain(frontier.frontier().iter().copied())
                            .min()
                            .unwrap_or(held)
                            .max(held);
                        caps.downgrade([target]);
                    }
                    _ => caps = CapabilitySet::new(),
                }
            }
        })
        .as_collection()
}
