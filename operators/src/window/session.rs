//! Session windows in final mode: per key, the runs of rows at most a gap apart, each session's
//! aggregate emitted once the watermark passes its end, then revised by late rows within an
//! allowed lateness (Flink's session `WindowOperator` with an event-time trigger, late firing
//! with delay 0 and `table.exec.emit.allow-lateness`).
//!
//! Input records are `(K, (E, Seq, V))`: the group key, the row's event time `t`, its `seq` and
//! the values the fold reads. A row's own window is `[t, end(t))` (`end(t) = t + gap`); a
//! session is `[first, end(last))` over its first and last rows; two rows are in one session
//! when, sorted by time, each is [`within_gap`] of the one before (`later <= end(earlier)`: rows
//! exactly the gap apart share a session, as Flink's `TimeWindow.intersects` includes the end).
//! So the sessions are the connected runs of the key's accepted rows, whatever their arrival
//! order. Per system time `s`, with `W` the [watermark](crate::watermark) in force for `s`:
//!
//! 1. every session whose end `W` has reached (`end <= W`: Flink's watermark, `W - 1`, has
//!    reached the session's `window_time`, `end - 1`) emits its row (diff `+1`);
//! 2. every session whose `lateness(end)` `W` has passed (`lateness(end) < W`) is freed;
//! 3. the records of `s` are added, in `seq` order: a row whose `lateness(t)` `W` has passed is
//!    refused as late ([`Rejected`], with its `seq`), never silently dropped; a record with a
//!    non-positive diff is refused as invalid (sessions take inserts only); else the row joins
//!    the sessions it is within the gap of, merging them (their emitted rows are retracted);
//! 4. every session that changed at `s` shows its new row at once if `W` has reached its end,
//!    and none while it has not (a late row that moves a fired session's end beyond `W`
//!    retracts its row until the watermark reaches the new end).
//!
//! The lateness test is on the row's own time, not its window's: a row is accepted iff
//! `t + lateness >= W`. A session it may join ends at `end(last) >= t`, so it is never one
//! already freed; were rows judged by their window's end, as Flink does, a row could arrive
//! within the gap of a session freed a moment before and open a new session, and the sessions
//! would depend on the watermark's timing.
//!
//! When the input ends, every session not yet emitted emits (the watermark is `+infinity`).
//! The output never depends on the number of workers, only on the input and how it is grouped
//! into system times (as the watermark is): it is, at every system time, the sessions of each
//! key's accepted rows whose end the watermark has reached, each folded in `seq` order.
//!
//! Cost: per row a range probe of its key's sessions and one fold update; a merge, or a row
//! whose `seq` is below one of its session's, refolds the session's rows in `seq` order (the
//! key's live rows at most). State: per live session its rows, accumulator and emitted row; a
//! session is freed, rows and all, when the watermark passes `lateness(end)`.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use differential_dataflow::consolidation::consolidate;
use differential_dataflow::{ExchangeData, Hashable, VecCollection};

use super::{current_row, due, reached, replace_emitted, split, Outcome};
use crate::epochs::{drive, EpochLogic};
use crate::group_aggregate::{Aggregated, GroupFold};
use crate::keyed_merge::Rejected;
use crate::watermark::Watermark;
use crate::{Seq, SysTime};

/// The session rule: a row at `later` is in the session of a row at `earlier <= later` when
/// `later <= end(earlier)` (`end(t) = t + gap`), the gap itself included.
pub fn within_gap<E: Ord>(earlier: &E, later: &E, end: impl Fn(&E) -> E) -> bool {
    *later <= end(earlier)
}

/// The sessions of one key's event times `times` (sorted ascending) under the rule of
/// [`within_gap`]: the ranges of `times` cut where a time is beyond the gap of the one before.
///
/// ```
/// use differential_temporal_operators::window::session_runs;
///
/// // Gap 5: 0 and 5 share a session (the gap itself included), 11 starts one.
/// assert_eq!(session_runs(&[0i64, 5, 11], |t| t + 5), vec![0..2, 2..3]);
/// ```
pub fn session_runs<E: Ord>(times: &[E], end: impl Fn(&E) -> E) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut first = 0;
    for i in 1..=times.len() {
        if i == times.len() || !within_gap(&times[i - 1], &times[i], &end) {
            out.push(first..i);
            first = i;
        }
    }
    out
}

/// One live session of one key (its first event time is its key in the key's map): its last
/// event time, its rows by `seq` with their multiplicities, its accumulator and row count, and
/// the row it shows (`None` before it fired).
struct Session<E, V, S, O> {
    last: E,
    rows: Vec<(Seq, V, isize)>,
    state: S,
    count: isize,
    emitted: Option<O>,
}

/// Aggregates `rows` per key into session windows, emitting on the watermark (see the
/// [module docs](self)). The fold's key is `(key, start, end)`, the session's bounds. `end`
/// maps an event time to the end of its own window (`t + gap`, monotone, `end(t) > t`);
/// `lateness` maps an event time to the last watermark under which it is accepted (`t + allowed
/// lateness`, monotone, `lateness(t) >= t`). `watermarks` is the input's watermark collection
/// ([`watermarks`](crate::watermark::watermarks)).
///
/// # Examples
///
/// Counts per session with a gap of 5 and a lateness of 3, one key: the sessions {1, 2} and
/// {8, 9} end at 7 and 14; the row at 4 arrives under the watermark 9 beyond the lateness
/// (`4 + 3 < 9`) and is refused; the row at 7 (`7 + 3 >= 9`) bridges both sessions.
///
/// ```
/// use differential_temporal_operators::group_aggregate::GroupFold;
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::watermark::watermarks;
/// use differential_temporal_operators::window::session_aggregate_final;
///
/// struct Count;
/// impl GroupFold<(u8, i64, i64)> for Count {
///     type Value = ();
///     type State = isize;
///     type Output = (i64, i64, isize);
///     fn init(&self) -> isize { 0 }
///     fn update(&self, s: &mut isize, _: &(), diff: isize) -> Result<(), String> {
///         *s += diff;
///         Ok(())
///     }
///     fn output(&self, k: &(u8, i64, i64), s: &isize) -> Result<(i64, i64, isize), String> {
///         Ok((k.1, k.2, *s))
///     }
/// }
///
/// // (key, (event time, seq, ())), one epoch each: 1, 2, 8, 9 (watermark 8), 4 (watermark 9:
/// // 4 + 3 < 9, refused), 7 (watermark 9: 7 + 3 >= 9, accepted).
/// let record = |t: i64, seq| ((0u8, (t, seq, ())), 1);
/// let epochs = vec![
///     vec![record(1, 1), record(2, 2)],
///     vec![record(8, 3)],
///     vec![record(9, 4)],
///     vec![record(4, 5)],
///     vec![record(7, 6)],
/// ];
/// let out = run_unary(1, epochs, |rows| {
///     let marks = watermarks(rows.clone(), |(_, (t, _, _)): &(u8, (i64, u64, ()))| *t, |m: &i64| *m, "Wm");
///     let result = session_aggregate_final(rows, marks, Count, |t: &i64| t + 5, |t: &i64| t + 3, "Session");
///     result.table.concat(result.rejected.map(|r| (-1, r.seq as i64, 1)))
/// });
/// // Epoch 2 (watermark 8): {1, 2} ends at 7 and fires. Epoch 3 refuses the row at 4 (seq 5).
/// // Epoch 4: the row at 7 joins {1, 2} and {8, 9} (7 <= 2 + 5 and 8 <= 7 + 5): the fired
/// // session is retracted and the merged one, ending at 14 > 9, waits for the end of input.
/// assert_eq!(
///     out,
///     vec![((-1, 5, 1), 3, 1), ((1, 7, 2), 2, 1), ((1, 7, 2), 4, -1), ((1, 14, 5), 5, 1)]
/// );
/// ```
pub fn session_aggregate_final<'s, K, E, F, G, L>(
    rows: VecCollection<'s, SysTime, (K, (E, Seq, F::Value))>,
    watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    fold: F,
    end: G,
    lateness: L,
    name: &str,
) -> Aggregated<'s, F::Output>
where
    K: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    F: GroupFold<(K, E, E)>,
    F::Output: PartialEq,
    G: Fn(&E) -> E + 'static,
    L: Fn(&E) -> E + 'static,
{
    let logic = FinalSessions {
        fold,
        end,
        lateness,
        fired: Watermark::Min,
        keys: HashMap::new(),
        to_fire: BTreeMap::new(),
        to_free: BTreeMap::new(),
    };
    let route = |(k, _): &(K, (E, Seq, F::Value))| k.hashed();
    let (table, rejected) = split(drive(rows, vec![watermarks], 0, route, name, logic));
    Aggregated { table, rejected }
}

/// A key's live sessions by first event time.
type Sessions<E, F, K> = BTreeMap<
    E,
    Session<
        E,
        <F as GroupFold<(K, E, E)>>::Value,
        <F as GroupFold<(K, E, E)>>::State,
        <F as GroupFold<(K, E, E)>>::Output,
    >,
>;

/// The state of [`session_aggregate_final`] and its rules per system time.
struct FinalSessions<K, E, F: GroupFold<(K, E, E)>, G, L> {
    fold: F,
    end: G,
    lateness: L,
    /// The watermark the sessions were last fired under.
    fired: Watermark<E>,
    keys: HashMap<K, Sessions<E, F, K>>,
    /// Sessions `(key, first)` by the end they fire at and by the time they are freed after;
    /// a session that grew or merged leaves a stale entry, checked when it is due.
    to_fire: BTreeMap<E, Vec<(K, E)>>,
    to_free: BTreeMap<E, Vec<(K, E)>>,
}

impl<K, E, F, G, L> FinalSessions<K, E, F, G, L>
where
    K: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    F: GroupFold<(K, E, E)>,
    F::Output: PartialEq,
    G: Fn(&E) -> E + 'static,
    L: Fn(&E) -> E + 'static,
{
    /// Shows the row of session `(key, first)` if `w` has reached its end, else none.
    fn show(
        &mut self,
        key: &K,
        first: &E,
        w: &Watermark<E>,
        give: &mut dyn FnMut(Outcome<F::Output>),
    ) {
        let Some(s) = self.keys.get_mut(key).and_then(|m| m.get_mut(first)) else {
            return;
        };
        let end = (self.end)(&s.last);
        let now = match Watermark::At(end.clone()) <= *w {
            true => current_row(
                &self.fold,
                &(key.clone(), first.clone(), end),
                &s.state,
                s.count,
                give,
            ),
            false => None,
        };
        replace_emitted(&mut s.emitted, now, give);
    }

    /// Adds an accepted row to its key's sessions (merging those it bridges); returns the
    /// session's first event time, or `None` when the fold refused the row.
    fn add(
        &mut self,
        key: &K,
        t: E,
        row: (Seq, F::Value, isize),
        give: &mut dyn FnMut(Outcome<F::Output>),
    ) -> Option<E> {
        let (fold, end) = (&self.fold, &self.end);
        let sessions = self.keys.entry(key.clone()).or_default();
        // The sessions the row is within the gap of: a run ending at the last one starting
        // at or before `end(t)` (sessions are disjoint, so their last times grow with their first).
        let joined: Vec<E> = (sessions.range(..=end(&t)).rev())
            .take_while(|(_, s)| within_gap(&s.last, &t, end))
            .map(|(first, _)| first.clone())
            .collect();
        let seq = row.0;
        let first = match joined.last() {
            Some(first) if *first < t => first.clone(),
            _ => t.clone(),
        };
        if let [only] = joined.as_slice() {
            let s = sessions.get_mut(only).expect("a joined session");
            if s.rows.last().is_none_or(|(last, _, _)| *last < seq) {
                fold.update(&mut s.state, &row.1, row.2)
                    .map_err(|e| give(Err(Rejected::invalid(seq, e))))
                    .ok()?;
                s.count += row.2;
                s.rows.push(row);
                s.last = s.last.clone().max(t);
                if first != *only {
                    let s = sessions.remove(only).expect("a joined session");
                    sessions.insert(first.clone(), s);
                }
                return Some(first);
            }
        }
        // A new session, a merge, or a row out of `seq` order: fold the rows again.
        let mut rows: Vec<(Seq, F::Value, isize)> = (joined.iter())
            .flat_map(|f| sessions[f].rows.iter().cloned())
            .chain([row])
            .collect();
        rows.sort_by_key(|(seq, _, _)| *seq);
        let (mut state, mut count) = (fold.init(), 0);
        let mut refused = Vec::new();
        rows.retain(
            |(s, value, diff)| match fold.update(&mut state, value, *diff) {
                Ok(()) => {
                    count += diff;
                    true
                }
                Err(reason) => {
                    refused.push(Rejected::invalid(*s, reason));
                    false
                }
            },
        );
        if !rows.iter().any(|(s, _, _)| *s == seq) {
            // A refused row neither opens, grows nor bridges sessions: they stay as they were.
            give(Err(
                refused.swap_remove(refused.iter().position(|r| r.seq == seq)?)
            ));
            if sessions.is_empty() {
                self.keys.remove(key);
            }
            return None;
        }
        for r in refused {
            give(Err(r));
        }
        let mut last = t;
        let mut emitted = None;
        for f in &joined {
            let s = sessions.remove(f).expect("a joined session");
            last = last.max(s.last);
            match (joined.len(), s.emitted) {
                (1, shown) => emitted = shown,
                // The merged sessions' rows are retracted; the merged one shows when due.
                (_, Some(old)) => give(Ok((old, -1))),
                (_, None) => {}
            }
        }
        let session = Session {
            last,
            rows,
            state,
            count,
            emitted,
        };
        sessions.insert(first.clone(), session);
        Some(first)
    }
}

impl<K, E, F, G, L> EpochLogic<(K, (E, Seq, F::Value)), E, Outcome<F::Output>>
    for FinalSessions<K, E, F, G, L>
where
    K: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    F: GroupFold<(K, E, E)>,
    F::Output: PartialEq,
    G: Fn(&E) -> E + 'static,
    L: Fn(&E) -> E + 'static,
{
    fn epoch(
        &mut self,
        _now: SysTime,
        w: &Watermark<E>,
        mut records: Vec<((K, (E, Seq, F::Value)), isize)>,
        give: &mut dyn FnMut(Outcome<F::Output>),
    ) {
        if *w > self.fired {
            for (key, first) in reached(w, &mut self.to_fire) {
                self.show(&key, &first, w, give);
            }
            for (key, first) in due(w, &mut self.to_free) {
                let Some(sessions) = self.keys.get_mut(&key) else {
                    continue;
                };
                if sessions
                    .get(&first)
                    .is_some_and(|s| w.passed(&(self.lateness)(&(self.end)(&s.last))))
                {
                    sessions.remove(&first);
                }
                if sessions.is_empty() {
                    self.keys.remove(&key);
                }
            }
            self.fired = w.clone();
        }
        consolidate(&mut records);
        records.sort_by_key(|((_, (_, seq, _)), _)| *seq);
        let mut touched = Vec::new();
        for ((key, (t, seq, value)), diff) in records {
            if diff <= 0 {
                give(Err(Rejected::invalid(
                    seq,
                    "a retraction: session windows consume inserts only",
                )));
                continue;
            }
            if w.passed(&(self.lateness)(&t)) {
                let reason = format!(
                    "late row: its event time {t:?} is behind the watermark {w} by more than the allowed lateness"
                );
                give(Err(Rejected::late(seq, reason)));
                continue;
            }
            if let Some(first) = self.add(&key, t, (seq, value, diff), give) {
                let last = &self.keys[&key][&first].last;
                let end = (self.end)(last);
                let free = (self.lateness)(&end);
                self.to_fire
                    .entry(end)
                    .or_default()
                    .push((key.clone(), first.clone()));
                self.to_free
                    .entry(free)
                    .or_default()
                    .push((key.clone(), first.clone()));
                touched.push((key, first));
            }
        }
        for (key, first) in touched {
            self.show(&key, &first, w, give);
        }
    }

    fn waiting(&self) -> bool {
        !self.to_fire.is_empty()
    }

    fn end(&mut self, give: &mut dyn FnMut(Outcome<F::Output>)) {
        for (key, first) in due(&Watermark::Max, &mut self.to_fire) {
            self.show(&key, &first, &Watermark::Max, give);
        }
        self.keys.clear();
        self.to_free.clear();
    }
}
