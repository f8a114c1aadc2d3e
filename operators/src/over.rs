//! OVER aggregation: per row, an aggregate over the rows of its partition in a frame that ends
//! at the row, ordered by event time (Flink's `OVER (PARTITION BY .. ORDER BY rowtime
//! ROWS|RANGE BETWEEN .. PRECEDING AND CURRENT ROW)`).
//!
//! Input records are `(P, (E, Seq, R, V))`: the partition key, the row's event time, its `seq`,
//! the row itself and the values the fold reads; an append-only input (diff `+1`). A partition's
//! rows are ordered by `(E, Seq)`. The frame of a row at `(t, s)` is, by [`Frame`]:
//! * `Rows(Some(n))`: the row and the `n` rows before it; `Rows(None)`: every row up to it;
//! * `Range(Some(lower))`: every row with an event time in `[lower(t), t]`, the rows after it
//!   with the same event time (its peers) included; `Range(None)`: every row up to `t`, peers
//!   included.
//!
//! The output row of a row is `fold.output(row, state over its frame)`. Two modes:
//! * *incremental* ([`OverMode::Incremental`]): exact at every system time. A row arriving out
//!   of order re-emits (retracts, then inserts) the rows whose frames it enters. State: every
//!   row, never freed (a row may arrive arbitrarily late).
//! * *final* ([`OverMode::Final`], Flink's): a row's output is emitted once, when the
//!   [watermark](crate::watermark) passes its event time; a row arriving behind the watermark
//!   is refused as late ([`Rejected`], with its `seq`), never silently dropped. The output is
//!   append-only. A row is freed once it is before every future frame: behind the start of the
//!   last emitted row's frame (bounded frames), or once emitted (unbounded frames keep one
//!   accumulator per partition instead). At the end of input every waiting row is emitted.
//!
//! A row whose values the fold refuses is refused at once (with its `seq`) and takes no part
//! in any frame; a row whose output cannot be computed (an overflow) is refused and has no
//! output row.
//!
//! Cost: the frame is an accumulator that slides forward over the partition's rows (each row
//! added once and retracted once as the frames pass it), so rows in event-time order cost
//! `O(1)` fold updates each; a row out of order rebuilds the accumulator from its frame and
//! re-emits the rows after it whose frames hold it (all later rows for an unbounded frame).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hash;
use std::ops::Bound::{Excluded, Included, Unbounded};

use differential_dataflow::{ExchangeData, Hashable, VecCollection};

use crate::epochs::{drive, EpochLogic};
use crate::group_aggregate::{Aggregated, GroupFold};
use crate::keyed_merge::Rejected;
use crate::watermark::Watermark;
use crate::window::{due, replace_emitted, split, Outcome};
use crate::{Seq, SysTime};

/// The frame of an OVER aggregation (see the [module docs](self)).
#[derive(Clone, Debug)]
pub enum Frame<L> {
    /// The row and the `n` rows before it (`None`: every row before it).
    Rows(Option<usize>),
    /// The rows from the event time `lower(t)` to the row's `t`, peers included (`None`: from
    /// the first row). `lower` must be monotone with `lower(t) <= t`.
    Range(Option<L>),
}

/// Whether an OVER aggregation revises its rows or emits each once on the watermark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverMode {
    /// Exact at every system time; out-of-order rows re-emit the rows they affect.
    Incremental,
    /// Each row emitted once when the watermark passes it; late rows refused.
    Final,
}

/// A row of a partition: the row, the values its fold reads and its current output row
/// (incremental mode).
struct Entry<R, V, O> {
    row: R,
    value: V,
    emitted: Option<O>,
}

type Key<E> = (E, Seq);

/// The accumulator of the rows whose keys are in `[lo, hi]` (`lo` the first such row, `None`
/// when there is none).
struct Acc<E, S> {
    state: S,
    lo: Option<Key<E>>,
    hi: Key<E>,
    count: usize,
}

/// One partition's rows, by `(event time, seq)`, and its sliding accumulator (`None` when a
/// row was inserted inside or before it: rebuilt at the next walk).
struct Partition<E, R, V, S, O> {
    rows: BTreeMap<Key<E>, Entry<R, V, O>>,
    acc: Option<Acc<E, S>>,
    /// Final mode: the key of the last emitted row.
    emitted: Option<Key<E>>,
}

/// The OVER aggregation of `rows` (see the [module docs](self)). `watermarks` is the input's
/// watermark collection (used in final mode).
///
/// # Examples
///
/// Running sums of the last two rows (`ROWS BETWEEN 1 PRECEDING AND CURRENT ROW`) of one
/// partition, incremental: the row at event time 2 arriving after the one at 3 re-emits it.
///
/// ```
/// use differential_temporal_operators::group_aggregate::GroupFold;
/// use differential_temporal_operators::over::{over_aggregate, Frame, OverMode};
/// use differential_temporal_operators::testing::run_unary;
/// use differential_temporal_operators::watermark::watermarks;
///
/// struct Sum;
/// impl GroupFold<i64> for Sum {
///     type Value = i64;
///     type State = i64;
///     type Output = (i64, i64);
///     fn init(&self) -> i64 { 0 }
///     fn update(&self, s: &mut i64, v: &i64, diff: isize) -> Result<(), String> {
///         *s += v * diff as i64;
///         Ok(())
///     }
///     fn output(&self, t: &i64, s: &i64) -> Result<(i64, i64), String> { Ok((*t, *s)) }
/// }
///
/// // (partition, (event time, seq, row = event time, value = 10 * event time)).
/// let record = |t: i64, seq| (((), (t, seq, t, 10 * t)), 1);
/// let epochs = vec![vec![record(1, 1), record(3, 2)], vec![record(2, 3)]];
/// let out = run_unary(1, epochs, |rows| {
///     let marks = watermarks(rows.clone(), |(_, (t, ..))| *t, |m: &i64| *m, "Wm");
///     let frame = Frame::<fn(&i64) -> i64>::Rows(Some(1));
///     let over = over_aggregate(rows, marks, Sum, frame, OverMode::Incremental, "Over");
///     over.table
/// });
/// // Epoch 0: 1 -> 10, 3 -> 40. Epoch 1: 2 -> 30, and 3 is revised to 50.
/// assert_eq!(
///     out,
///     vec![((1, 10), 0, 1), ((2, 30), 1, 1), ((3, 40), 0, 1), ((3, 40), 1, -1), ((3, 50), 1, 1)]
/// );
/// ```
pub fn over_aggregate<'s, P, E, R, F, L>(
    rows: VecCollection<'s, SysTime, (P, (E, Seq, R, F::Value))>,
    watermarks: VecCollection<'s, SysTime, Watermark<E>>,
    fold: F,
    frame: Frame<L>,
    mode: OverMode,
    name: &str,
) -> Aggregated<'s, F::Output>
where
    P: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    R: ExchangeData,
    F: GroupFold<R>,
    F::Output: PartialEq,
    L: Fn(&E) -> E + 'static,
{
    let logic = Over {
        fold,
        frame,
        mode,
        partitions: HashMap::new(),
        to_fire: BTreeMap::new(),
    };
    let route = |(p, _): &(P, (E, Seq, R, F::Value))| p.hashed();
    let outcomes = drive(rows, vec![watermarks], 0, route, name, logic);
    let (table, rejected) = split(outcomes);
    Aggregated { table, rejected }
}

/// The operator's state and rules.
struct Over<P, E, R, F: GroupFold<R>, L> {
    fold: F,
    frame: Frame<L>,
    mode: OverMode,
    partitions: HashMap<P, Partition<E, R, F::Value, F::State, F::Output>>,
    /// Final mode: the partitions with rows waiting, by those rows' event times.
    to_fire: BTreeMap<E, Vec<P>>,
}

type Record<P, E, R, V> = (P, (E, Seq, R, V));

impl<P, E, R, F, L> EpochLogic<Record<P, E, R, F::Value>, E, Outcome<F::Output>>
    for Over<P, E, R, F, L>
where
    P: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    R: ExchangeData,
    F: GroupFold<R>,
    F::Output: PartialEq,
    L: Fn(&E) -> E + 'static,
{
    fn epoch(
        &mut self,
        _now: SysTime,
        w: &Watermark<E>,
        records: Vec<(Record<P, E, R, F::Value>, isize)>,
        give: &mut dyn FnMut(Outcome<F::Output>),
    ) {
        if self.mode == OverMode::Final {
            self.fire(w, give);
        }
        let mut by_partition: HashMap<P, Vec<(Key<E>, R, F::Value)>> = HashMap::new();
        for ((p, (t, seq, row, value)), diff) in records {
            if self.mode == OverMode::Final && w.is_late(&t) {
                let reason = format!("late row: event time {t:?} is behind the watermark {w}");
                give(Err(Rejected::late(seq, reason)));
                continue;
            }
            if let Err(reason) = self.fold.update(&mut self.fold.init(), &value, 1) {
                give(Err(Rejected::invalid(seq, reason)));
                continue;
            }
            // The input is append-only: each record is one row, a retraction is refused.
            let Ok(copies @ 1..) = usize::try_from(diff) else {
                let reason = format!("a retraction (diff {diff}) into an OVER aggregation, which consumes inserts only");
                give(Err(Rejected::invalid(seq, reason)));
                continue;
            };
            let copies = std::iter::repeat_n((), copies);
            let group = by_partition.entry(p).or_default();
            group.extend(copies.map(|()| ((t.clone(), seq), row.clone(), value.clone())));
        }
        for (p, new) in by_partition {
            let part = self
                .partitions
                .entry(p.clone())
                .or_insert_with(|| Partition {
                    rows: BTreeMap::new(),
                    acc: None,
                    emitted: None,
                });
            let (mut first, mut last) = (None::<Key<E>>, None::<Key<E>>);
            for (key, row, value) in new {
                if part.acc.as_ref().is_some_and(|acc| key <= acc.hi) {
                    part.acc = None;
                }
                let start = match &self.frame {
                    Frame::Range(_) => (key.0.clone(), Seq::MIN),
                    Frame::Rows(_) => key.clone(),
                };
                first = Some(first.map_or(start.clone(), |f| f.min(start)));
                last = Some(last.map_or(key.clone(), |l| l.max(key.clone())));
                if self.mode == OverMode::Final {
                    self.to_fire
                        .entry(key.0.clone())
                        .or_default()
                        .push(p.clone());
                }
                let emitted = None;
                part.rows.insert(
                    key,
                    Entry {
                        row,
                        value,
                        emitted,
                    },
                );
            }
            if let (OverMode::Incremental, Some(first), Some(last)) = (self.mode, first, last) {
                walk(&self.fold, &self.frame, part, first, last, give);
            }
        }
    }

    fn waiting(&self) -> bool {
        !self.to_fire.is_empty()
    }

    fn end(&mut self, give: &mut dyn FnMut(Outcome<F::Output>)) {
        self.fire(&Watermark::Max, give);
        self.partitions.clear();
    }
}

impl<P, E, R, F, L> Over<P, E, R, F, L>
where
    P: ExchangeData + Hash,
    E: ExchangeData + std::fmt::Debug,
    R: ExchangeData,
    F: GroupFold<R>,
    F::Output: PartialEq,
    L: Fn(&E) -> E + 'static,
{
    /// Final mode: emits, per partition, the waiting rows the watermark `w` has passed, in
    /// order, then frees the rows no future frame holds.
    fn fire(&mut self, w: &Watermark<E>, give: &mut dyn FnMut(Outcome<F::Output>)) {
        let due: HashSet<P> = due(w, &mut self.to_fire).into_iter().collect();
        for p in due {
            let Some(part) = self.partitions.get_mut(&p) else {
                continue;
            };
            let from = part.emitted.clone();
            let mut cursor = match &from {
                Some(k) => part.rows.range((Excluded(k), Unbounded)).next(),
                None => part.rows.iter().next(),
            }
            .map(|(k, _)| k.clone());
            while let Some(key) = cursor.filter(|k| w.passed(&k.0)) {
                let acc = slide(
                    &self.fold,
                    &self.frame,
                    &part.rows,
                    &mut part.acc,
                    &key,
                    give,
                );
                let entry = &part.rows[&key];
                match self.fold.output(&entry.row, &acc.state) {
                    Ok(out) => give(Ok((out, 1))),
                    Err(reason) => give(Err(Rejected::invalid(key.1, reason))),
                }
                cursor = next_key(&part.rows, &key);
                part.emitted = Some(key);
            }
            // Free what no future frame holds.
            let keep_from = match (&self.frame, &part.acc) {
                (Frame::Rows(None) | Frame::Range(None), _) | (_, None) => part.emitted.clone(),
                (_, Some(acc)) => acc.lo.clone().or(part.emitted.clone()),
            };
            if let Some(keep_from) = keep_from {
                let unbounded = matches!(self.frame, Frame::Rows(None) | Frame::Range(None));
                let rest = match unbounded {
                    true => part.rows.split_off(&(keep_from.0.clone(), keep_from.1 + 1)),
                    false => part.rows.split_off(&keep_from),
                };
                part.rows = rest;
            }
            if part.rows.is_empty() && !matches!(self.frame, Frame::Rows(None) | Frame::Range(None))
            {
                self.partitions.remove(&p);
            }
        }
    }
}

/// The key after `key` in `rows`.
fn next_key<E: Ord + Clone, T>(rows: &BTreeMap<Key<E>, T>, key: &Key<E>) -> Option<Key<E>> {
    rows.range((Excluded(key), Unbounded))
        .next()
        .map(|(k, _)| k.clone())
}

/// Incremental mode: re-emits the rows from `first` on whose frames may hold a row inserted
/// between `first` and `last`, stopping once a frame starts after `last`.
fn walk<E, R, F, L>(
    fold: &F,
    frame: &Frame<L>,
    part: &mut Partition<E, R, F::Value, F::State, F::Output>,
    first: Key<E>,
    last: Key<E>,
    give: &mut dyn FnMut(Outcome<F::Output>),
) where
    E: ExchangeData + std::fmt::Debug,
    R: ExchangeData,
    F: GroupFold<R>,
    F::Output: PartialEq,
    L: Fn(&E) -> E,
{
    let mut cursor = part.rows.range(first..).next().map(|(k, _)| k.clone());
    while let Some(key) = cursor {
        let acc = slide(fold, frame, &part.rows, &mut part.acc, &key, give);
        if key > last && acc.lo.as_ref().is_none_or(|lo| *lo > last) {
            break;
        }
        let entry = part.rows.get(&key).expect("a row of the partition");
        let now = match fold.output(&entry.row, &acc.state) {
            Ok(out) => Some(out),
            Err(reason) => {
                give(Err(Rejected::invalid(key.1, reason)));
                None
            }
        };
        let entry = part.rows.get_mut(&key).expect("a row of the partition");
        replace_emitted(&mut entry.emitted, now, give);
        cursor = next_key(&part.rows, &key);
    }
}

/// Moves the accumulator `acc` to the frame of the row `key`: forward when it can (adding the
/// rows up to the frame's end, retracting those before its start), else rebuilt from the frame.
fn slide<'a, E, R, F, L>(
    fold: &F,
    frame: &Frame<L>,
    rows: &BTreeMap<Key<E>, Entry<R, F::Value, F::Output>>,
    slot: &'a mut Option<Acc<E, F::State>>,
    key: &Key<E>,
    give: &mut dyn FnMut(Outcome<F::Output>),
) -> &'a Acc<E, F::State>
where
    E: ExchangeData,
    F: GroupFold<R>,
    L: Fn(&E) -> E,
{
    let upper = match frame {
        Frame::Range(_) => (key.0.clone(), Seq::MAX),
        Frame::Rows(_) => key.clone(),
    };
    let mut update =
        |state: &mut F::State, (k, entry): (&Key<E>, &Entry<R, F::Value, F::Output>), diff| {
            if let Err(reason) = fold.update(state, &entry.value, diff) {
                give(Err(Rejected::invalid(k.1, reason)));
            }
        };
    let acc = match slot.take() {
        Some(mut a) if a.hi <= upper => {
            for item in rows.range((Excluded(&a.hi), Included(&upper))) {
                update(&mut a.state, item, 1);
                a.lo.get_or_insert_with(|| item.0.clone());
                a.count += 1;
            }
            a.hi = upper;
            a
        }
        _ => {
            let lo = match frame {
                Frame::Rows(Some(n)) => rows.range(..=key).rev().nth(*n),
                Frame::Range(Some(lower)) => rows.range((lower(&key.0), Seq::MIN)..).next(),
                Frame::Rows(None) | Frame::Range(None) => rows.iter().next(),
            }
            .or_else(|| rows.iter().next())
            .map(|(k, _)| k.clone());
            let mut a = Acc {
                state: fold.init(),
                lo: None,
                hi: upper.clone(),
                count: 0,
            };
            if let Some(lo) = lo {
                for item in rows.range(lo.clone()..=upper) {
                    update(&mut a.state, item, 1);
                    a.count += 1;
                }
                a.lo = Some(lo);
            }
            a
        }
    };
    slot.insert(retract_front::<E, R, F, L>(
        frame,
        rows,
        acc,
        key,
        &mut update,
    ))
}

/// Retracts the rows at the accumulator's front that the frame of `key` no longer holds.
fn retract_front<E, R, F, L>(
    frame: &Frame<L>,
    rows: &BTreeMap<Key<E>, Entry<R, F::Value, F::Output>>,
    mut acc: Acc<E, F::State>,
    key: &Key<E>,
    update: &mut impl FnMut(&mut F::State, (&Key<E>, &Entry<R, F::Value, F::Output>), isize),
) -> Acc<E, F::State>
where
    E: ExchangeData,
    F: GroupFold<R>,
    L: Fn(&E) -> E,
{
    let start = match frame {
        Frame::Range(Some(lower)) => Some(lower(&key.0)),
        _ => None,
    };
    while let Some(lo) = acc.lo.clone() {
        let stays = match (frame, &start) {
            (Frame::Rows(Some(n)), _) => acc.count <= n + 1,
            (Frame::Range(Some(_)), Some(start)) => lo.0 >= *start,
            _ => true,
        };
        if stays {
            break;
        }
        if let Some(entry) = rows.get(&lo) {
            update(&mut acc.state, (&lo, entry), -1);
        }
        acc.count -= 1;
        acc.lo = next_key(rows, &lo).filter(|k| *k <= acc.hi);
    }
    acc
}
