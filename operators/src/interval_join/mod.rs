//! The event-time interval join, watermark-driven (Flink's `IntervalJoin`: the SQL planner's
//! `RowTimeIntervalJoin`, the DataStream API's `KeyedStream.intervalJoin`).
//!
//! Two append-only inputs of records `(K, (E, Seq, V))`: a key, an event time, the row's source
//! sequence number and the row. A left row at `tl` and a right row at `tr` of the same key
//! **match** when `tr` lies in the left row's window `[tl - upper, tl - lower]` ([`Bounds`]:
//! `lower <= tl - tr <= upper`, both inclusive) and the residual predicate, if any, holds.
//!
//! Per system time `s`, with `W` the least of the two inputs' [watermarks](crate::watermark) in
//! force for `s` (Flink's operator watermark is the minimum of its inputs'; with an idle
//! timeout (`IntervalJoinConfig::idle_timeout`) a side quiet for that long is left out, see
//! [`crate::combined`]; without one, a side that stops sending holds every row of the other
//! side until the inputs end):
//!
//! 1. every stored row whose last possible partner time `W` has passed (`tl - lower` for a left
//!    row, `tr + upper` for a right one) is freed; a row of a padded side that never matched is
//!    emitted then, padded (`(Some(l), None)`), as Flink's outer interval join emits it when its
//!    cleanup timer fires;
//! 2. the records of `s` arrive: one whose event time is behind `W` is **late** and refused
//!    ([`Rejected`], with its `seq`): the rows it could have joined may be freed already, so it
//!    is counted and reported, never silently dropped or half joined. Any other record is joined
//!    with the stored rows of the other side in its window (each match emitted at once), then
//!    stored until step 1 frees it, or, if `W` has passed its last partner time already, padded
//!    at once when unmatched (Flink's "the row is not cached" branch).
//!
//! When both inputs have ended (`W = +infinity`) every stored row is freed as in step 1. So the
//! output is **append-only** (diff `+1` times the rows' multiplicities), and on an input where no
//! row is late it is exactly the regular join of the two inputs with the window as a residual:
//! every match is emitted at the system time its second row arrives, every padded row once, when
//! no partner can come any more. Nothing depends on the number of workers; like every
//! watermark-driven result, which rows are late depends on how rows are grouped into system times.
//!
//! Differences from Flink, deliberate: Flink joins a row behind the watermark with what is left
//! of the other side's state (an incomplete, timing-dependent result, not reported); here it is
//! refused and reported. Flink's operator time is the watermark `max - delay - 1` and frees a
//! row when `time <= watermark`; here `W = max - delay` and a row is freed when `time < W`:
//! the same rows (see [`crate::watermark`]).
//!
//! Cost: per record one hash lookup and a range scan of its key's stored rows of the other side
//! within its window (O(log n + matches)); per stored row one timer. State: the rows whose
//! window the watermark has not passed, per side; with in-order data and watermark delay `d`,
//! about `d + (upper - lower)` worth of rows per key.

pub mod reference;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::rc::Rc;

use differential_dataflow::{ExchangeData, Hashable, VecCollection};
use serde::{Deserialize, Serialize};

use crate::epochs::{drive, EpochLogic};
use crate::keyed_merge::Rejected;
use crate::pair_join::PairJoinConfig;
use crate::watermark::Watermark;
use crate::window::{due, split, Outcome};
use crate::{Seq, SysTime};

/// The window of an interval join: a left row at `tl` and a right row at `tr` may match when
/// `lower <= tl - tr <= upper` (Flink's `l.rt BETWEEN r.rt + lower AND r.rt + upper`), bounds
/// in the units of `shift`, both inclusive. `lower > upper` is an empty window: nothing
/// matches.
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::interval_join::Bounds;
///
/// // l.t BETWEEN r.t - 2 AND r.t + 5 on integer times: lower -2, upper 5.
/// let b = Bounds::integers(-2, 5);
/// assert_eq!(b.right_times(&10), (5, 12)); // the right rows a left row at 10 may join
/// assert_eq!(b.left_times(&10), (8, 15)); // the left rows a right row at 10 may join
/// ```
#[derive(Clone)]
pub struct Bounds<E> {
    lower: i64,
    upper: i64,
    shift: Rc<dyn Fn(&E, i64) -> E>,
}

impl<E> Bounds<E> {
    /// The window `lower <= tl - tr <= upper`, with `shift(t, d)` the event time `d` units after
    /// `t` (saturating; monotone in both arguments).
    pub fn new(lower: i64, upper: i64, shift: impl Fn(&E, i64) -> E + 'static) -> Self {
        Bounds {
            lower,
            upper,
            shift: Rc::new(shift),
        }
    }

    /// The right times a left row at `t` may match: `[t - upper, t - lower]`, inclusive.
    pub fn right_times(&self, t: &E) -> (E, E) {
        let shift = &self.shift;
        (
            shift(t, self.upper.saturating_neg()),
            shift(t, self.lower.saturating_neg()),
        )
    }

    /// The left times a right row at `t` may match: `[t + lower, t + upper]`, inclusive.
    pub fn left_times(&self, t: &E) -> (E, E) {
        ((self.shift)(t, self.lower), (self.shift)(t, self.upper))
    }
}

impl Bounds<i64> {
    /// The window `lower <= tl - tr <= upper` on integer times (milliseconds, say).
    pub fn integers(lower: i64, upper: i64) -> Self {
        Bounds::new(lower, upper, |t: &i64, d| t.saturating_add(d))
    }
}

/// An interval join's configuration: its window ([`Bounds`]) and what
/// [`PairJoinConfig`] adds (padded sides, residual, name).
pub type IntervalJoinConfig<E, L, R> = PairJoinConfig<Bounds<E>, L, R>;

impl<E, L, R> IntervalJoinConfig<E, L, R> {
    /// An INNER interval join over `bounds`, without residual, named `"IntervalJoin"`.
    pub fn new(bounds: Bounds<E>) -> Self {
        PairJoinConfig::inner(bounds, "IntervalJoin")
    }

    /// The same join with an idle-source timeout of `timeout` system times (Flink's
    /// `table.exec.source.idle-timeout`; `0`, the default: off): a side that sends nothing for
    /// that long stops holding the join's watermark back (see [`crate::combined`]), so the other
    /// side's rows are freed and padded without waiting for it.
    pub fn idle_timeout(mut self, timeout: SysTime) -> Self {
        self.idle_timeout = timeout;
        self
    }
}

/// The outputs of [`interval_join`].
pub struct IntervalJoined<'s, O: 'static> {
    /// The joined and padded rows, append-only.
    pub joined: VecCollection<'s, SysTime, O>,
    /// The refused records: late ones (behind the watermark on arrival) and retractions.
    pub rejected: VecCollection<'s, SysTime, Rejected>,
}

/// A record of either input.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum Rec<K, E, L, R> {
    Left(K, (E, Seq, L)),
    Right(K, (E, Seq, R)),
}

/// The interval join of `left` and `right` (see the [module docs](self)), with the two inputs'
/// watermark collections `(left's, right's)` ([`watermarks`](crate::watermark::watermarks) or
/// [`no_watermark`](crate::watermark::no_watermark)). `output(key, left, right)` builds an
/// output row from a match (both `Some`) or a padded row (one `None`); it is called once per
/// output row. Inputs must be append-only with one `seq` per row and input; a record with a
/// diff `<= 0` is refused.
///
/// # Examples
///
/// `l.t BETWEEN r.t - 2 AND r.t + 2`, LEFT, watermarks without delay: the left row at 1 and the
/// right row at 2 match when the second arrives; the right row at 3 arriving under the
/// watermark 5 (the least of both inputs': `min(10, 5)`) is late; the left row at 10 may join
/// right rows up to 12, and the watermark `min(10, 30)` never passes 12, so it is padded when
/// the inputs end.
///
/// ```
/// use differential_temporal_operators::interval_join::{interval_join, Bounds, IntervalJoinConfig};
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::watermark::watermarks;
///
/// let left = vec![vec![((0u8, (1i64, 1u64, 'a')), 1)], vec![((0, (10, 2, 'b')), 1)]];
/// let right = vec![
///     vec![],
///     vec![((0u8, (2i64, 1u64, 'x')), 1)],
///     vec![((0, (5, 2, 'y')), 1)],
///     vec![((0, (3, 3, 'z')), 1), ((0, (20, 4, 'w')), 1)],
///     vec![((0, (30, 5, 'v')), 1)],
/// ];
/// let out = run_binary(2, left, right, |l, r| {
///     let t = |(_, (t, _, _)): &(u8, (i64, u64, char))| *t;
///     let marks = (watermarks(l.clone(), t, |m| *m, "Wl"), watermarks(r.clone(), t, |m| *m, "Wr"));
///     let config = IntervalJoinConfig::new(Bounds::integers(-2, 2)).padded(true, false);
///     let joined = interval_join(l, r, marks, config, |_, l: Option<&char>, r: Option<&char>| {
///         (l.copied(), r.copied())
///     });
///     joined.joined.map(Ok).concat(joined.rejected.map(|r| Err(r.seq)))
/// });
/// assert_eq!(
///     out,
///     vec![
///         (Ok((Some('a'), Some('x'))), 1, 1),
///         (Ok((Some('b'), None)), 5, 1),
///         (Err(3), 3, 1),
///     ]
/// );
/// ```
pub fn interval_join<'s, K, E, L, R, O>(
    left: VecCollection<'s, SysTime, (K, (E, Seq, L))>,
    right: VecCollection<'s, SysTime, (K, (E, Seq, R))>,
    watermarks: (
        VecCollection<'s, SysTime, Watermark<E>>,
        VecCollection<'s, SysTime, Watermark<E>>,
    ),
    config: IntervalJoinConfig<E, L, R>,
    output: impl Fn(&K, Option<&L>, Option<&R>) -> O + 'static,
) -> IntervalJoined<'s, O>
where
    K: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    L: ExchangeData,
    R: ExchangeData,
    O: ExchangeData,
{
    let name = config.name.clone();
    let idle_timeout = config.idle_timeout;
    let records = left
        .map(|(k, v)| Rec::Left(k, v))
        .concat(right.map(|(k, v)| Rec::Right(k, v)));
    let logic = Intervals {
        config,
        output,
        left: HashMap::new(),
        right: HashMap::new(),
        expiry: BTreeMap::new(),
        fired: Watermark::Min,
    };
    let route = |rec: &Rec<K, E, L, R>| match rec {
        Rec::Left(k, _) | Rec::Right(k, _) => k.hashed(),
    };
    let outcomes = drive(
        records,
        vec![watermarks.0, watermarks.1],
        idle_timeout,
        route,
        &name,
        logic,
    );
    let (joined, rejected) = split(outcomes);
    IntervalJoined { joined, rejected }
}

/// A stored row: the row, its multiplicity and whether it has matched.
struct Stored<V> {
    row: V,
    count: isize,
    matched: bool,
}

/// One side's stored rows, per key, by `(event time, seq)`.
type Side<K, E, V> = HashMap<K, BTreeMap<(E, Seq), Stored<V>>>;

/// Which side a timer frees a row of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    Left,
    Right,
}

/// The state of [`interval_join`] and its rules per system time.
struct Intervals<K, E, L, R, F> {
    config: IntervalJoinConfig<E, L, R>,
    output: F,
    left: Side<K, E, L>,
    right: Side<K, E, R>,
    /// Every stored row by its last possible partner time (freed when the watermark passes it).
    expiry: BTreeMap<E, Vec<(Which, K, (E, Seq))>>,
    /// The watermark rows were last freed under.
    fired: Watermark<E>,
}

impl<K, E, L, R, F, O> Intervals<K, E, L, R, F>
where
    K: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    F: Fn(&K, Option<&L>, Option<&R>) -> O,
{
    /// Frees the rows whose last partner time `w` has passed, padding the unmatched ones of a
    /// padded side.
    fn expire(&mut self, w: &Watermark<E>, give: &mut dyn FnMut(Outcome<O>)) {
        let (pad_left, pad_right) = self.config.pad;
        for (which, k, at) in due(w, &mut self.expiry) {
            match which {
                Which::Left => {
                    if let Some(row) = take(&mut self.left, &k, &at) {
                        if pad_left && !row.matched {
                            give(Ok(((self.output)(&k, Some(&row.row), None), row.count)));
                        }
                    }
                }
                Which::Right => {
                    if let Some(row) = take(&mut self.right, &k, &at) {
                        if pad_right && !row.matched {
                            give(Ok(((self.output)(&k, None, Some(&row.row)), row.count)));
                        }
                    }
                }
            }
        }
    }
}

/// Removes the stored row `at` of key `k` (and the key, when it has no row left).
fn take<K: Hash + Eq, E: Ord, V>(
    side: &mut Side<K, E, V>,
    k: &K,
    at: &(E, Seq),
) -> Option<Stored<V>> {
    let rows = side.get_mut(k)?;
    let row = rows.remove(at);
    if rows.is_empty() {
        side.remove(k);
    }
    row
}

/// Joins `row` (`count` times) with the stored rows of `key` of the other side in `[lo, hi]`
/// that `pass`; `emit(other, product of counts)` gives each match. Whether any matched.
fn probe<K: Hash + Eq, E: Ord + Clone, V>(
    others: &mut Side<K, E, V>,
    key: &K,
    (lo, hi): (&E, &E),
    count: isize,
    pass: impl Fn(&V) -> bool,
    mut emit: impl FnMut(&V, isize),
) -> bool {
    let Some(rows) = others.get_mut(key) else {
        return false;
    };
    let mut matched = false;
    for (_, other) in rows.range_mut((lo.clone(), Seq::MIN)..=(hi.clone(), Seq::MAX)) {
        if pass(&other.row) {
            emit(&other.row, count * other.count);
            other.matched = true;
            matched = true;
        }
    }
    matched
}

/// Stores `row` on its side until the watermark passes `last` (its last partner time), or, if
/// it has passed it already, pads it at once when it is unmatched and its side is padded.
fn keep<K: Hash + Eq + Clone, E: Ord + Clone, V>(
    (side, which, padded): (&mut Side<K, E, V>, Which, bool),
    expiry: &mut BTreeMap<E, Vec<(Which, K, (E, Seq))>>,
    w: &Watermark<E>,
    (key, at, last): (K, (E, Seq), E),
    stored: Stored<V>,
    pad: impl FnOnce(&K, &V, isize),
) {
    if w.passed(&last) {
        if padded && !stored.matched {
            pad(&key, &stored.row, stored.count);
        }
        return;
    }
    expiry
        .entry(last)
        .or_default()
        .push((which, key.clone(), at.clone()));
    let slot = side.entry(key).or_default().entry(at).or_insert(Stored {
        row: stored.row,
        count: 0,
        matched: false,
    });
    slot.count += stored.count;
    slot.matched |= stored.matched;
}

impl<K, E, L, R, F, O> EpochLogic<Rec<K, E, L, R>, E, Outcome<O>> for Intervals<K, E, L, R, F>
where
    K: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    L: ExchangeData,
    R: ExchangeData,
    F: Fn(&K, Option<&L>, Option<&R>) -> O,
{
    fn epoch(
        &mut self,
        _now: SysTime,
        w: &Watermark<E>,
        records: Vec<(Rec<K, E, L, R>, isize)>,
        give: &mut dyn FnMut(Outcome<O>),
    ) {
        if *w > self.fired {
            self.expire(w, give);
            self.fired = w.clone();
        }
        let (pad_left, pad_right) = self.config.pad;
        for (record, diff) in records {
            let (t, seq) = match &record {
                Rec::Left(_, (t, seq, _)) | Rec::Right(_, (t, seq, _)) => (t, *seq),
            };
            if diff <= 0 {
                let reason = "the interval join takes inserts only (an append-only input)";
                give(Err(Rejected::invalid(seq, reason)));
                continue;
            }
            if w.is_late(t) {
                let reason = format!(
                    "late row: event time {t:?} is behind the watermark {w}; the interval join \
                     may have freed the rows it would join"
                );
                give(Err(Rejected::late(seq, reason)));
                continue;
            }
            let (config, output) = (&self.config, &self.output);
            match record {
                Rec::Left(k, (t, seq, l)) => {
                    let (lo, hi) = config.spec.right_times(&t);
                    let open = lo <= hi;
                    let matched = open
                        && probe(
                            &mut self.right,
                            &k,
                            (&lo, &hi),
                            diff,
                            |r| config.passes(&l, r),
                            |r, n| give(Ok((output(&k, Some(&l), Some(r)), n))),
                        );
                    // An empty window: nothing can match, the row is padded at once.
                    let (last, w) = if open { (hi, w) } else { (lo, &Watermark::Max) };
                    let stored = Stored {
                        row: l,
                        count: diff,
                        matched,
                    };
                    let side = (&mut self.left, Which::Left, pad_left);
                    keep(
                        side,
                        &mut self.expiry,
                        w,
                        (k, (t, seq), last),
                        stored,
                        |k, l, n| give(Ok((output(k, Some(l), None), n))),
                    );
                }
                Rec::Right(k, (t, seq, r)) => {
                    let (lo, hi) = config.spec.left_times(&t);
                    let open = lo <= hi;
                    let matched = open
                        && probe(
                            &mut self.left,
                            &k,
                            (&lo, &hi),
                            diff,
                            |l| config.passes(l, &r),
                            |l, n| give(Ok((output(&k, Some(l), Some(&r)), n))),
                        );
                    // An empty window: nothing can match, the row is padded at once.
                    let (last, w) = if open { (hi, w) } else { (lo, &Watermark::Max) };
                    let stored = Stored {
                        row: r,
                        count: diff,
                        matched,
                    };
                    let side = (&mut self.right, Which::Right, pad_right);
                    keep(
                        side,
                        &mut self.expiry,
                        w,
                        (k, (t, seq), last),
                        stored,
                        |k, r, n| give(Ok((output(k, None, Some(r)), n))),
                    );
                }
            }
        }
    }

    fn waiting(&self) -> bool {
        let (pad_left, pad_right) = self.config.pad;
        (pad_left && !self.left.is_empty()) || (pad_right && !self.right.is_empty())
    }

    fn end(&mut self, give: &mut dyn FnMut(Outcome<O>)) {
        self.expire(&Watermark::Max, give);
    }
}
