//! Late build versions of the final-mode temporal join (rule B10): kept, and reported.

use std::collections::BTreeMap;

use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use serde::{Deserialize, Serialize};
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::{CapabilitySet, Operator};

use super::marks::{combined, Mark};
use crate::keyed_merge::Rejected;
use crate::watermark::{TimeText, Watermark};
use crate::{Seq, SysTime, Version};

/// The operator's input: a build version's key, time and seq, or a watermark record.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum In<K, E> {
    Version(K, E, Seq),
    Mark(Mark<E>),
}

/// The build versions that are late for [`temporal_join_final`](super::temporal_join_final):
/// those entered at a system time `s` with event time `t < W(s)`, the combined watermark in
/// force for the rows of `s` (the same test that makes a probe row late, rule B9).
///
/// A late version is not dropped (rule B10, as in Flink): the join stores it and every probe
/// row fired later sees it, but the probe rows already emitted are not revised. This reports
/// it so that it does not pass unnoticed: one `(key, Rejected)` per late inserted version (a
/// retraction, e.g. by [`arrange_versions_pruned`](super::arrange_versions_pruned), is not
/// reported), at the version's system time, with its `seq` and the reason `late build version:
/// event time T is behind the watermark W (kept for later probe rows; earlier results are not
/// revised)`.
///
/// Inputs: the versions the join's build arrangement is made of, the same two watermark
/// collections the join takes, the join's idle timeout in system times
/// ([`JoinConfig::idle_timeout`](super::JoinConfig::idle_timeout); `0`: off) and how the
/// reasons write event times ([`JoinConfig::time_texts`](super::JoinConfig::time_texts)). Whether a version is late depends on how rows are grouped into
/// epochs and on input order, never on the number of workers. Cost: one comparison per version;
/// state: the versions of epochs not yet complete.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::late_versions;
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::watermark::{watermarks, TimeText};
/// use differential_temporal_operators::{Change, RowKind, Version};
///
/// // Epoch 0: an order at 10, a rate at 15; epoch 1: a rate at 5, behind min(10, 15) = 10.
/// let orders = vec![vec![((1u8, Change::new(0, RowKind::Insert, 10i64)), 1)]];
/// let rates = vec![
///     vec![((1u8, Version::row(15i64, 1, 'a')), 1)],
///     vec![((1u8, Version::row(5i64, 2, 'b')), 1)],
/// ];
/// let out = run_binary(2, orders, rates, |o, r| {
///     let o_wm = watermarks(o, |(_, c): &(u8, Change<i64>)| c.row, |m: &i64| *m, "OWm");
///     let r_wm = watermarks(r.clone(), |(_, v): &(u8, Version<i64, char>)| v.time, |m: &i64| *m, "RWm");
///     late_versions(r, o_wm, r_wm, 0, TimeText::default(), "Late").map(|(k, r)| (k, r.seq, r.reason.into_owned()))
/// });
/// let reason = "late build version: event time 5 is behind the watermark 10 \
///               (kept for later probe rows; earlier results are not revised)";
/// assert_eq!(out, vec![((1, 2, reason.to_string()), 1, 1)]);
/// ```
pub fn late_versions<'s, K, E, B>(
    versions: VecCollection<'s, SysTime, (K, Version<E, B>)>,
    probe_watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    build_watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    idle_timeout: SysTime,
    time_text: TimeText<E>,
    name: &str,
) -> VecCollection<'s, SysTime, (K, Rejected)>
where
    K: ExchangeData,
    E: ExchangeData,
    B: ExchangeData,
{
    let input = versions
        .map(|(k, v)| In::Version(k, v.time, v.seq))
        .concat(probe_watermarks.map(|w| In::Mark(Mark::Probe(w))))
        .concat(build_watermarks.map(|w| In::Mark(Mark::Build(w))));
    input
        .inner
        .unary_frontier(Pipeline, name, move |_cap, _info| {
            let mut caps = CapabilitySet::<SysTime>::new();
            let mut arrivals: BTreeMap<SysTime, Vec<(K, E, Seq)>> = BTreeMap::new();
            let mut marks = combined(idle_timeout);
            move |(input, frontier), output| {
                input.for_each(|cap, data| {
                    for c in cap.retain_stamp(output.output_index()).iter() {
                        caps.insert(c.clone());
                    }
                    for (x, t, diff) in data.drain(..) {
                        match x {
                            In::Version(k, time, seq) if diff > 0 => {
                                arrivals.entry(t).or_default().push((k, time, seq))
                            }
                            In::Version(..) => {}
                            In::Mark(m) => m.observe_into(t, &mut marks),
                        }
                    }
                });
                // Epochs complete on this input, in order (the marks of every earlier epoch are
                // in); the epochs where the watermark may rise are visited too, to fold them.
                loop {
                    let next = arrivals.keys().next().copied();
                    let Some(now) = next.into_iter().chain(marks.next_rise()).min() else {
                        break;
                    };
                    if frontier.less_equal(&now) {
                        break;
                    }
                    let w = marks.at(now);
                    let Some(versions) = arrivals.remove(&now) else {
                        continue;
                    };
                    let cap = caps.delayed(&now);
                    let mut session = output.session(&cap);
                    for (k, time, seq) in versions {
                        if w.is_late(&time) {
                            let (time, mark) = (time_text.time(&time), time_text.mark(&w));
                            let reason = format!(
                                "late build version: event time {time} is behind the \
                                 watermark {mark} (kept for later probe rows; earlier results \
                                 are not revised)"
                            );
                            session.give(((k, Rejected::late(seq, reason)), now, 1));
                        }
                    }
                }
                match arrivals.keys().next() {
                    Some(&t) => caps.downgrade([t]),
                    None => caps = CapabilitySet::new(),
                }
            }
        })
        .as_collection()
}
