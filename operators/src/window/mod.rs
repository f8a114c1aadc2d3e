//! Window aggregation in final mode: each window's aggregate emitted once, when the watermark
//! passes the window, then revised by late rows within an allowed lateness. Fixed windows
//! (tumbling, sliding, cumulating) are [`window_aggregate_final`], below; session windows, whose
//! bounds depend on the key's other rows and merge, are [`session_aggregate_final`]. Row-count
//! windows, which fire on their last row rather than on the watermark, are
//! [`count_window_aggregate`].
//!
//! Fixed windows: each window's aggregate emitted once, when the watermark
//! passes the window, then revised by late rows within an allowed lateness (Flink's
//! `WindowOperator` with an event-time trigger, late firing with delay 0 and
//! `table.exec.emit.allow-lateness`).
//!
//! Input records are `(K, (E, Seq, V))`: the key of one window of one group (the window's bounds
//! are part of `K`), the window's last event time `max` (`end - 1`), the row's `seq` and the
//! values the fold reads; a row that falls in several windows (sliding, cumulating) is one record
//! per window. Per system time `s`, with `W` the [watermark](crate::watermark) in force for `s`:
//!
//! 1. every window not yet emitted whose `max` `W` has passed emits its row (diff `+1`);
//! 2. every window whose `close(max)` (`max + lateness`) `W` has passed is freed;
//! 3. the records of `s` are folded in, in `seq` order; a record whose window's `close(max)` `W`
//!    has passed is refused as late ([`Rejected`], with its `seq`), never silently dropped;
//! 4. a window `W` has passed that changed at `s` (a late row, or a window seen for the first
//!    time behind the watermark) emits its new row at once, retracting the one emitted before.
//!
//! When the input ends, every window not yet emitted emits (the watermark is `+infinity`). So
//! the output is append-only without lateness and updating with it; it never depends on the
//! number of workers, only on the input and how it is grouped into system times (as the
//! watermark is).
//!
//! Cost: per record one hash probe and one fold update; per window one timer to fire and one to
//! free. State: the windows not yet freed, each with its accumulator and the row it emitted.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use foldhash::fast::RandomState;

use crate::epochs::{drive, EpochLogic};
use crate::group_aggregate::{Aggregated, GroupFold};
use crate::keyed_merge::Rejected;
use crate::watermark::Watermark;
use crate::{Seq, SysTime};

pub mod count;
pub mod session;
#[cfg(test)]
mod session_reference;
#[cfg(test)]
mod session_tests;

pub use count::count_window_aggregate;
pub use session::{session_aggregate_final, session_runs, within_gap};

/// One window of one group: its accumulator, row count, last event time and the row it
/// emitted (`None` before it fired, or while it has no row).
struct Window<E, S, O> {
    state: S,
    rows: isize,
    max: E,
    emitted: Option<O>,
}

/// An output of the operator: a change of the table, or a refused row.
pub(crate) type Outcome<O> = Result<(O, isize), Rejected>;

/// Aggregates `rows` per window key with `fold`, emitting on the watermark (see the
/// [module docs](self)). `watermarks` is the input's watermark collection
/// ([`watermarks`](crate::watermark::watermarks)); `close` maps a window's last event time to
/// the event time from which it is freed (`max + allowed lateness`; monotone, `close(e) >= e`).
///
/// # Examples
///
/// Counts per window of 10 (keys are window starts), lateness 5: a row for window 0 arriving
/// under the watermark 12 revises it; one arriving under the watermark 20 is refused.
///
/// ```
/// use differential_temporal_operators::group_aggregate::GroupFold;
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::watermark::watermarks;
/// use differential_temporal_operators::window::window_aggregate_final;
///
/// struct Count;
/// impl GroupFold<i64> for Count {
///     type Value = ();
///     type State = isize;
///     type Output = (i64, isize);
///     fn init(&self) -> isize { 0 }
///     fn update(&self, s: &mut isize, _: &(), diff: isize) -> Result<(), String> {
///         *s += diff;
///         Ok(())
///     }
///     fn output(&self, k: &i64, s: &isize) -> Result<(i64, isize), String> { Ok((*k, *s)) }
/// }
///
/// // (window start, (event time, seq, ())): epochs [3, 12], [8], [20], [9].
/// let record = |t: i64, seq| ((t / 10 * 10, (t, seq, ())), 1);
/// let epochs = vec![
///     vec![record(3, 1), record(12, 2)],
///     vec![record(8, 3)],
///     vec![record(20, 4)],
///     vec![record(9, 5)],
/// ];
/// let out = run_unary(2, epochs, |rows| {
///     let marks = watermarks(rows.clone(), |(_, (t, _, _)): &(i64, (i64, u64, ()))| *t, |m: &i64| *m, "Wm");
///     let windows = rows.map(|(k, (_, seq, v))| (k, (k + 9, seq, v)));
///     let result = window_aggregate_final(windows, marks, Count, |m: &i64| m + 5, "Window");
///     result.table.concat(result.rejected.map(|r| (-1, r.seq as isize)))
/// });
/// // Epoch 1: the watermark 12 passes window 0 (last time 9), which fires with 1 row, and the
/// // late row 8 revises it at once: the two cancel, the table holds (0, 2). Epoch 3: under the
/// // watermark 20 window 0 (closing at 14) is gone and the row 9 (seq 5) is refused; window 10
/// // fires. The end of input fires window 20.
/// assert_eq!(
///     out,
///     vec![((-1, 5), 3, 1), ((0, 2), 1, 1), ((10, 1), 3, 1), ((20, 1), 4, 1)]
/// );
/// ```
pub fn window_aggregate_final<'s, K, E, F, C>(
    rows: VecCollection<'s, SysTime, (K, (E, Seq, F::Value))>,
    watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    fold: F,
    close: C,
    name: &str,
) -> Aggregated<'s, F::Output>
where
    K: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    F: GroupFold<K>,
    F::Output: PartialEq,
    C: Fn(&E) -> E + 'static,
{
    let logic = FinalWindows {
        fold,
        close,
        fired: Watermark::Min,
        windows: HashMap::default(),
        to_fire: BTreeMap::new(),
        to_free: BTreeMap::new(),
    };
    let outcomes = drive(
        rows,
        vec![watermarks],
        0,
        |(k, _): &(K, (E, Seq, F::Value))| k.hashed(),
        name,
        logic,
    );
    let (table, rejected) = split(outcomes);
    Aggregated { table, rejected }
}

/// The state of [`window_aggregate_final`] and its rules per system time.
struct FinalWindows<K, E, F: GroupFold<K>, C> {
    fold: F,
    close: C,
    /// The watermark the windows were last fired under.
    fired: Watermark<E>,
    /// The open windows, hashed with foldhash (a window key is a few packed datums; SipHash
    /// was a tenth of Nexmark q5's instructions).
    windows: HashMap<K, Window<E, F::State, F::Output>, RandomState>,
    /// The windows waiting to fire by their last event time, and every window by the event
    /// time from which it is freed.
    to_fire: BTreeMap<E, Vec<K>>,
    to_free: BTreeMap<E, Vec<K>>,
}

impl<K, E, F, C> EpochLogic<(K, (E, Seq, F::Value)), E, Outcome<F::Output>>
    for FinalWindows<K, E, F, C>
where
    K: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    F: GroupFold<K>,
    F::Output: PartialEq,
    C: Fn(&E) -> E + 'static,
{
    fn epoch(
        &mut self,
        _now: SysTime,
        w: &Watermark<E>,
        mut records: Vec<((K, (E, Seq, F::Value)), isize)>,
        give: &mut dyn FnMut(Outcome<F::Output>),
    ) {
        let fold = &self.fold;
        if *w > self.fired {
            for k in due(w, &mut self.to_fire) {
                if let Some(window) = self.windows.get_mut(&k) {
                    refire(fold, &k, window, give);
                }
            }
            for k in due(w, &mut self.to_free) {
                self.windows.remove(&k);
            }
            self.fired = w.clone();
        }
        records.sort_by_key(|((_, (_, seq, _)), _)| *seq);
        let mut touched = Vec::new();
        for ((k, (max, seq, value)), diff) in records {
            let closes = (self.close)(&max);
            if w.passed(&closes) {
                let reason = format!(
                    "late row: its window (last event time {max:?}) closed at {closes:?} \
                     (allowed lateness), behind the watermark {w}"
                );
                give(Err(Rejected::late(seq, reason)));
                continue;
            }
            let (to_fire, to_free) = (&mut self.to_fire, &mut self.to_free);
            let window = self.windows.entry(k.clone()).or_insert_with(|| {
                if !w.passed(&max) {
                    to_fire.entry(max.clone()).or_default().push(k.clone());
                }
                to_free.entry(closes).or_default().push(k.clone());
                Window {
                    state: fold.init(),
                    rows: 0,
                    max: max.clone(),
                    emitted: None,
                }
            });
            match fold.update(&mut window.state, &value, diff) {
                Ok(()) => window.rows += diff,
                Err(reason) => give(Err(Rejected::invalid(seq, reason))),
            }
            if w.passed(&window.max) {
                touched.push(k);
            }
        }
        for k in touched {
            if let Some(window) = self.windows.get_mut(&k) {
                refire(fold, &k, window, give);
            }
        }
    }

    fn waiting(&self) -> bool {
        !self.to_fire.is_empty()
    }

    fn end(&mut self, give: &mut dyn FnMut(Outcome<F::Output>)) {
        for k in due(&Watermark::Max, &mut self.to_fire) {
            if let Some(window) = self.windows.get_mut(&k) {
                refire(&self.fold, &k, window, give);
            }
        }
        self.windows.clear();
        self.to_free.clear();
    }
}

/// The keys of the timers the watermark `w` has passed (all of them for `Max`), removed.
pub(crate) fn due<E: Ord + Clone, K>(w: &Watermark<E>, timers: &mut BTreeMap<E, Vec<K>>) -> Vec<K> {
    let due = match w {
        Watermark::Min => return Vec::new(),
        Watermark::At(x) => {
            let rest = timers.split_off(x);
            std::mem::replace(timers, rest)
        }
        Watermark::Max => std::mem::take(timers),
    };
    due.into_values().flatten().collect()
}

/// Emits the window's current row if it differs from the one it emitted (retracting that one).
fn refire<K, E, F: GroupFold<K>>(
    fold: &F,
    key: &K,
    window: &mut Window<E, F::State, F::Output>,
    give: &mut dyn FnMut(Outcome<F::Output>),
) where
    F::Output: PartialEq,
{
    let now = current_row(fold, key, &window.state, window.rows, give);
    replace_emitted(&mut window.emitted, now, give);
}

/// The row of group `key` with accumulator `state` over `rows` rows: none without rows, or
/// when the fold cannot compute it (then refused, with `seq` 0).
pub(crate) fn current_row<K, F: GroupFold<K>>(
    fold: &F,
    key: &K,
    state: &F::State,
    rows: isize,
    give: &mut dyn FnMut(Outcome<F::Output>),
) -> Option<F::Output> {
    if rows <= 0 {
        return None;
    }
    fold.output(key, state)
        .map_err(|reason| give(Err(Rejected::invalid(0, reason))))
        .ok()
}

/// The keys of the timers the watermark `w` has reached (`time <= w`; all of them for `Max`),
/// removed.
pub(crate) fn reached<E: Ord + Clone, K>(
    w: &Watermark<E>,
    timers: &mut BTreeMap<E, Vec<K>>,
) -> Vec<K> {
    let mut keys = due(w, timers);
    if let Watermark::At(x) = w {
        keys.extend(timers.remove(x).into_iter().flatten());
    }
    keys
}

/// Makes `now` the emitted row in place of `emitted`: when they differ, retracts the old row
/// and inserts the new one.
pub(crate) fn replace_emitted<O: PartialEq + Clone>(
    emitted: &mut Option<O>,
    now: Option<O>,
    give: &mut dyn FnMut(Outcome<O>),
) {
    if now != *emitted {
        if let Some(old) = emitted.take() {
            give(Ok((old, -1)));
        }
        if let Some(row) = &now {
            give(Ok((row.clone(), 1)));
        }
        *emitted = now;
    }
}

/// Splits the outcomes into the table (diffs carried in the record) and the refused rows.
pub(crate) fn split<'s, O: ExchangeData>(
    outcomes: VecCollection<'s, SysTime, Outcome<O>>,
) -> (
    VecCollection<'s, SysTime, O>,
    VecCollection<'s, SysTime, Rejected>,
) {
    use timely::dataflow::operators::OkErr;
    let (ok, err) = outcomes
        .inner
        .ok_err::<Vec<_>, _, Vec<_>, _, _>(|(o, t, r)| match o {
            Ok((row, diff)) => Ok((row, t, r * diff)),
            Err(rejected) => Err((rejected, t, r)),
        });
    (ok.as_collection(), err.as_collection())
}
