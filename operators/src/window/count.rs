//! Row-count windows: per key, windows of `size` consecutive rows starting every `slide` rows,
//! each aggregated once, when its `size`-th row arrives (Flink's `CountTumblingWindowAssigner`
//! and `CountSlidingWindowAssigner` with the trigger `ElementTriggers.count(size)`).
//!
//! Input records are `(K, (Seq, V))` inserts: the group key, the row's `seq` and the values the
//! fold reads. Per key the rows are numbered `0, 1, ..` in arrival order: by system time, then
//! `seq`, then value (a row entered with diff `n > 0` is `n` consecutive rows). Window `k` holds
//! the rows numbered `k * slide .. k * slide + size`; with `slide > size` the rows between two
//! windows are in none, and a window short of `size` rows never fires.
//!
//! A system time's records are folded only once the input frontier has passed it, sorted by
//! key, `seq` and value, so the output never depends on the number of workers (keys are routed
//! by their hash) and is a function of the input and its division into system times. Each row
//! is folded into every open window in turn; the window that reaches `size` rows emits its row
//! (diff `+1`, at the row's system time) and is dropped. The output is append-only: a window's
//! row is never revised.
//!
//! Refusals, never silent drops: a retraction (diff `< 0` after a system time's updates of a
//! row are consolidated: the input must be append-only) is refused with its `seq` and numbers
//! no row; a row the fold refuses, or a window whose row the fold cannot compute, refuses that
//! window when it fires (with the `seq` of that row, or of the window's last row), as the
//! window's aggregate over all its rows has no value.
//!
//! Cost: per row one hash probe per run of a key's rows in a system time and one
//! [`GroupFold::update`] per open window (at most `ceil(size / slide)`), plus the sort of each
//! system time's records. State: per key with open windows its position modulo `slide` and the
//! open windows' accumulators; a key is freed when it has no open window and its next row
//! would open one (so a tumbling window's key is freed when it fires).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use differential_dataflow::consolidation::consolidate;
use differential_dataflow::{ExchangeData, Hashable, VecCollection};

use super::{split, Outcome};
use crate::epochs::{drive, EpochLogic};
use crate::group_aggregate::{Aggregated, GroupFold};
use crate::keyed_merge::Rejected;
use crate::watermark::Watermark;
use crate::{Seq, SysTime};

/// Aggregates `rows` with `fold` over row-count windows of `size` rows every `slide` rows per
/// key (see the [module docs](self)); `size` and `slide` are at least 1 (0 is taken as 1).
///
/// # Examples
///
/// Sums of windows of 3 rows every 2 rows per key: key 1's rows `1, 2, 3, 4, 5` (over two
/// system times) fire `1 + 2 + 3` at the third row and `3 + 4 + 5` at the fifth; key 2's two
/// rows fill no window.
///
/// ```
/// use differential_temporal_operators::group_aggregate::GroupFold;
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::window::count_window_aggregate;
///
/// struct Sum;
/// impl GroupFold<u8> for Sum {
///     type Value = i64;
///     type State = i64;
///     type Output = (u8, i64);
///     fn init(&self) -> i64 { 0 }
///     fn update(&self, s: &mut i64, v: &i64, diff: isize) -> Result<(), String> {
///         *s += v * diff as i64;
///         Ok(())
///     }
///     fn output(&self, k: &u8, s: &i64) -> Result<(u8, i64), String> { Ok((*k, *s)) }
/// }
///
/// // (key, (seq, value)) inserts.
/// let row = |k: u8, seq: u64, v: i64| ((k, (seq, v)), 1);
/// let epochs = vec![
///     vec![row(1, 0, 1), row(1, 1, 2), row(2, 2, 10)],
///     vec![row(1, 3, 3), row(2, 4, 20), row(1, 5, 4), row(1, 6, 5)],
/// ];
/// let out = run_unary(2, epochs, |rows| count_window_aggregate(rows, 3, 2, Sum, "Count").table);
/// assert_eq!(out, vec![((1, 6), 1, 1), ((1, 12), 1, 1)]);
/// ```
pub fn count_window_aggregate<'s, K, F>(
    rows: VecCollection<'s, SysTime, (K, (Seq, F::Value))>,
    size: u64,
    slide: u64,
    fold: F,
    name: &str,
) -> Aggregated<'s, F::Output>
where
    K: ExchangeData + Hash,
    F: GroupFold<K>,
{
    let logic = CountWindows {
        spec: Spec {
            fold,
            size: size.max(1),
            slide: slide.max(1),
        },
        keys: HashMap::new(),
    };
    let outcomes = drive(
        rows,
        Vec::<VecCollection<'s, SysTime, Watermark<()>>>::new(),
        0,
        |(k, _): &(K, (Seq, F::Value))| k.hashed(),
        name,
        logic,
    );
    let (table, rejected) = split(outcomes);
    Aggregated { table, rejected }
}

/// The state of [`count_window_aggregate`] and its rule per system time.
struct CountWindows<K, F: GroupFold<K>> {
    spec: Spec<F>,
    /// The keys with open windows, or whose next row opens none.
    keys: HashMap<K, KeyWindows<F::State>>,
}

/// The windows' fold and shape.
struct Spec<F> {
    fold: F,
    size: u64,
    slide: u64,
}

/// One key's windows: its row count modulo `slide` (its next row opens a window at 0), and the
/// open windows, oldest first.
struct KeyWindows<S> {
    phase: u64,
    open: VecDeque<Open<S>>,
}

impl<S> KeyWindows<S> {
    /// A key before its first row.
    fn new() -> Self {
        KeyWindows {
            phase: 0,
            open: VecDeque::new(),
        }
    }

    /// Whether the key is as before its first row: no open window, and its next row opens one.
    fn is_fresh(&self) -> bool {
        self.phase == 0 && self.open.is_empty()
    }
}

/// An open window: its accumulator, its rows so far, and the first refusal of one of them
/// (then the window is refused when it fires).
struct Open<S> {
    state: S,
    rows: u64,
    refused: Option<(Seq, String)>,
}

impl<F> Spec<F> {
    /// Numbers one more row of `key` (`seq`, `value`): opens a window if the row starts one,
    /// folds the row into every open window, and fires and drops the one it completes.
    fn push<K>(
        &self,
        key: &K,
        windows: &mut KeyWindows<F::State>,
        seq: Seq,
        value: &F::Value,
        give: &mut dyn FnMut(Outcome<F::Output>),
    ) where
        F: GroupFold<K>,
    {
        if windows.phase == 0 {
            windows.open.push_back(Open {
                state: self.fold.init(),
                rows: 0,
                refused: None,
            });
        }
        windows.phase = (windows.phase + 1) % self.slide;
        for window in windows.open.iter_mut() {
            window.rows += 1;
            if window.refused.is_none() {
                if let Err(reason) = self.fold.update(&mut window.state, value, 1) {
                    window.refused = Some((seq, reason));
                }
            }
        }
        // Windows open in row order, so only the oldest can be complete.
        if windows.open.front().is_some_and(|w| w.rows == self.size) {
            let Some(window) = windows.open.pop_front() else {
                return;
            };
            let row = match window.refused {
                Some((seq, reason)) => Err((seq, reason)),
                None => (self.fold.output(key, &window.state)).map_err(|reason| (seq, reason)),
            };
            give(row.map(|row| (row, 1)).map_err(|(seq, reason)| {
                Rejected::invalid(seq, format!("a row-count window's aggregate: {reason}"))
            }));
        }
    }
}

impl<K, F> EpochLogic<(K, (Seq, F::Value)), (), Outcome<F::Output>> for CountWindows<K, F>
where
    K: ExchangeData + Hash,
    F: GroupFold<K>,
{
    fn epoch(
        &mut self,
        _now: SysTime,
        _w: &Watermark<()>,
        mut records: Vec<((K, (Seq, F::Value)), isize)>,
        give: &mut dyn FnMut(Outcome<F::Output>),
    ) {
        // Each key's rows together, in `(seq, value)` order.
        consolidate(&mut records);
        for run in records.chunk_by(|((a, _), _), ((b, _), _)| a == b) {
            let key = &run[0].0 .0;
            let mut fresh = KeyWindows::new();
            let stored = self.keys.get_mut(key);
            let known = stored.is_some();
            let windows = stored.unwrap_or(&mut fresh);
            for ((_, (seq, value)), diff) in run {
                if *diff < 0 {
                    let reason = format!(
                        "a row-count window consumes inserts only, but the row was retracted \
                         (diff {diff})"
                    );
                    give(Err(Rejected::invalid(*seq, reason)));
                }
                // A retraction, reported above, numbers no row.
                for _ in 0..(*diff).max(0) {
                    self.spec.push(key, windows, *seq, value, give);
                }
            }
            // A key as before its first row is freed.
            let now_fresh = windows.is_fresh();
            if known && now_fresh {
                self.keys.remove(key);
            } else if !known && !now_fresh {
                self.keys.insert(key.clone(), fresh);
            }
        }
    }

    fn waiting(&self) -> bool {
        false
    }

    fn end(&mut self, _give: &mut dyn FnMut(Outcome<F::Output>)) {
        // Windows short of `size` rows never fire (Flink drops them when the job ends).
        self.keys.clear();
    }
}

#[cfg(test)]
mod tests;
