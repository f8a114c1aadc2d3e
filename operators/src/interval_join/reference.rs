//! The sequential model of [`interval_join`](super::interval_join), by its definition rather
//! than its state: every pair of accepted rows in each other's window, emitted at the later
//! arrival; every unmatched accepted row of a padded side, emitted at the first system time
//! whose watermark has passed its last partner time.

use crate::testing::{Epoch, Updates};
use crate::watermark::Watermark;
use crate::{Seq, SysTime};

use super::Bounds;

/// One input: per system time, its records `(key, (event time, seq, row))` with their diffs,
/// and the map from a maximum event time to the watermark it implies (the allowed lateness).
pub struct Side<'a, K, E, V> {
    /// The records of each system time.
    pub epochs: &'a [Epoch<(K, (E, Seq, V))>],
    /// `max -> watermark`, e.g. `|m| m - delay`.
    pub lateness: &'a dyn Fn(&E) -> E,
    /// Whether this side's unmatched rows are padded.
    pub padded: bool,
}

/// The model's output: the joined and padded rows with their system times, consolidated, and
/// the refused records' `seq`s with theirs.
pub type Modelled<O> = (Updates<O>, Updates<Seq>);

/// An accepted row: system time, key, event time, row, multiplicity.
type Accepted<'a, K, E, V> = (SysTime, &'a K, &'a E, &'a V, isize);

/// The interval join of `left` and `right` over `bounds`, with `residual` and `output` as the
/// operator's (see the [operator's docs](super)). The watermark in force at system time `s` is
/// the least, over both sides, of the greatest watermark implied by the rows of system times
/// before `s`; `+infinity` from the system time after the last one holding a record.
pub fn interval_join<K, E, L, R, O>(
    left: Side<'_, K, E, L>,
    right: Side<'_, K, E, R>,
    bounds: &Bounds<E>,
    residual: impl Fn(&L, &R) -> bool,
    output: impl Fn(&K, Option<&L>, Option<&R>) -> O,
) -> Modelled<O>
where
    K: Ord + Clone,
    E: Ord + Clone,
    O: Ord + Clone,
{
    let end = match (last_epoch(left.epochs), last_epoch(right.epochs)) {
        (None, None) => return (Vec::new(), Vec::new()),
        (l, r) => l.max(r).map_or(0, |e| e as SysTime + 1),
    };
    let mark = |s: SysTime| match s >= end {
        true => Watermark::Max,
        false => side_mark(&left, s).min(side_mark(&right, s)),
    };
    let mut refused = Vec::new();
    let lefts = accept(left.epochs, &mark, &mut refused);
    let rights = accept(right.epochs, &mark, &mut refused);
    let within = |(lo, hi): (E, E), t: &E| lo <= *t && *t <= hi;
    let mut out = Vec::new();
    let mut left_matched = vec![false; lefts.len()];
    let mut right_matched = vec![false; rights.len()];
    for (i, (sl, kl, tl, l, nl)) in lefts.iter().enumerate() {
        for (j, (sr, kr, tr, r, nr)) in rights.iter().enumerate() {
            if kl == kr && within(bounds.right_times(tl), tr) && residual(l, r) {
                out.push((output(kl, Some(l), Some(r)), *sl.max(sr), nl * nr));
                left_matched[i] = true;
                right_matched[j] = true;
            }
        }
    }
    // A padded row is emitted at the first system time, from its arrival on, whose watermark has
    // passed the last time a partner may have (at once for an empty window).
    let padded_at = |s: SysTime, (lo, hi): (E, E)| {
        let last = if lo <= hi { hi } else { return s };
        (s..=end).find(|&x| mark(x).passed(&last)).unwrap_or(end)
    };
    if left.padded {
        for ((s, k, t, l, n), _) in lefts.iter().zip(&left_matched).filter(|(_, m)| !**m) {
            out.push((
                output(k, Some(l), None),
                padded_at(*s, bounds.right_times(t)),
                *n,
            ));
        }
    }
    if right.padded {
        for ((s, k, t, r, n), _) in rights.iter().zip(&right_matched).filter(|(_, m)| !**m) {
            out.push((
                output(k, None, Some(r)),
                padded_at(*s, bounds.left_times(t)),
                *n,
            ));
        }
    }
    differential_dataflow::consolidation::consolidate_updates(&mut out);
    differential_dataflow::consolidation::consolidate_updates(&mut refused);
    (out, refused)
}

/// The watermark `side` implies for system time `s`: the greatest of its rows' before `s`.
fn side_mark<K, E: Ord, V>(side: &Side<'_, K, E, V>, s: SysTime) -> Watermark<E> {
    (side.epochs.iter().take(s as usize).flatten())
        .map(|((_, (t, _, _)), _)| Watermark::At((side.lateness)(t)))
        .max()
        .unwrap_or(Watermark::Min)
}

/// The records of `epochs` that are inserts and not late under `mark`; the others go to
/// `refused`.
fn accept<'a, K, E: Ord, V>(
    epochs: &'a [Epoch<(K, (E, Seq, V))>],
    mark: &dyn Fn(SysTime) -> Watermark<E>,
    refused: &mut Updates<Seq>,
) -> Vec<Accepted<'a, K, E, V>> {
    let mut rows = Vec::new();
    for (s, epoch) in epochs.iter().enumerate() {
        let s = s as SysTime;
        for ((k, (t, seq, v)), diff) in epoch {
            match *diff > 0 && !mark(s).is_late(t) {
                true => rows.push((s, k, t, v, *diff)),
                false => refused.push((*seq, s, 1)),
            }
        }
    }
    rows
}

/// The last system time holding a record.
fn last_epoch<D>(epochs: &[Epoch<D>]) -> Option<usize> {
    epochs.iter().rposition(|e| !e.is_empty())
}
