//! The sequential model of [`session_aggregate_final`](super::session_aggregate_final), by its
//! definition rather than its state: at each system time `s`, every key's accepted rows cut
//! into sessions ([`session_runs`]), each shown once the watermark in force for `s` has
//! reached its end, folded in `seq` order.

use std::collections::BTreeMap;

use differential_dataflow::consolidation::{consolidate, consolidate_updates};

use super::session_runs;
use crate::testing::{Epoch, Updates};
use crate::watermark::Watermark;
use crate::{Seq, SysTime};

/// The session windows' parameters, as the operator takes them, and the watermark's.
pub struct Rules<'a, E, V> {
    /// `t -> t + gap`.
    pub end: &'a dyn Fn(&E) -> E,
    /// `t -> t + allowed lateness`.
    pub lateness: &'a dyn Fn(&E) -> E,
    /// `max -> watermark` (the watermark collection's delay).
    pub mark: &'a dyn Fn(&E) -> E,
    /// The values the fold refuses, whatever its state.
    pub invalid: &'a dyn Fn(&V) -> bool,
}

/// The sessions of `epochs` under `rules`, each shown as `output(key, start, end, values in seq
/// order)`: the table's updates by system time, consolidated, and the refused records' `seq`s
/// with theirs. The watermark in force at `s` is the greatest `mark(t)` over the records of
/// earlier system times, `+infinity` from the one after the last holding a record; a record is
/// refused when its diff is not positive, the watermark has passed `lateness(t)` or its value
/// is invalid.
pub fn sessions_final<K, E, V, O>(
    epochs: &[Epoch<(K, (E, Seq, V))>],
    rules: &Rules<'_, E, V>,
    output: impl Fn(&K, &E, &E, &[&V]) -> O,
) -> (Updates<O>, Updates<Seq>)
where
    K: Ord + Clone,
    E: Ord + Clone,
    V: Ord + Clone,
    O: Ord + Clone,
{
    let end_epoch = epochs
        .iter()
        .rposition(|e| !e.is_empty())
        .map_or(0, |s| s + 1);
    let mut accepted: BTreeMap<K, Vec<(E, Seq, V, isize)>> = BTreeMap::new();
    let (mut out, mut refused) = (Vec::new(), Vec::new());
    let mut shown: Vec<(O, isize)> = Vec::new();
    for s in 0..=end_epoch {
        let w = match s == end_epoch {
            true => Watermark::Max,
            false => (epochs[..s].iter().flatten())
                .map(|((_, (t, _, _)), _)| Watermark::At((rules.mark)(t)))
                .max()
                .unwrap_or(Watermark::Min),
        };
        let mut records = epochs.get(s).cloned().unwrap_or_default();
        consolidate(&mut records);
        records.sort_by_key(|((_, (_, seq, _)), _)| *seq);
        for ((k, (t, seq, v)), diff) in records {
            match diff > 0 && !w.passed(&(rules.lateness)(&t)) && !(rules.invalid)(&v) {
                true => accepted.entry(k).or_default().push((t, seq, v, diff)),
                false => refused.push((seq, s as SysTime, 1)),
            }
        }
        let mut table = Vec::new();
        for (k, rows) in &mut accepted {
            rows.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
            let times: Vec<E> = rows.iter().map(|r| r.0.clone()).collect();
            for run in session_runs(&times, rules.end) {
                let end = (rules.end)(&times[run.end - 1]);
                if Watermark::At(end.clone()) > w {
                    continue;
                }
                let mut members: Vec<&(E, Seq, V, isize)> = rows[run.clone()].iter().collect();
                members.sort_by_key(|r| r.1);
                let values: Vec<&V> = (members.iter())
                    .flat_map(|r| std::iter::repeat_n(&r.2, r.3 as usize))
                    .collect();
                table.push((output(k, &times[run.start], &end, &values), 1));
            }
        }
        let time = s as SysTime;
        out.extend(table.iter().map(|(o, d)| (o.clone(), time, *d)));
        out.extend(shown.drain(..).map(|(o, d)| (o, time, -d)));
        shown = table;
    }
    consolidate_updates(&mut out);
    consolidate_updates(&mut refused);
    (out, refused)
}
