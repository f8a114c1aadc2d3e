//! The regular join with idle-state retention (Flink's `table.exec.state.ttl` on a
//! `StreamingJoinOperator`): an equi-join of two updating inputs whose per-row state expires
//! when it has not been written for a [`Retention`] counted in **system-time epochs**.
//!
//! Flink keeps each side's rows of a key in state with `StateTtlConfig` `OnCreateAndWrite` and
//! `NeverReturnExpired`: a row's state is cleared once it has not been written for the TTL;
//! nothing is emitted when it goes, results already emitted stay, and a later row of the other
//! side no longer sees it. Flink's clock is the wall clock; here it is the system time (the
//! processing-time clock of this engine, as the lookup join's), so results are deterministic and
//! independent of the worker count: a row last written at epoch `s` is gone from epoch
//! `retention.expiry(s)` on ([`Retention::epochs`]`(n)`: `s + n`).
//!
//! Per key and per complete system time `now`, in order:
//!
//! 1. the rows of either side whose retention has run out are freed (no output);
//! 2. the left side's changes at `now` (consolidated) are applied, then the right side's, each
//!    change as Flink's `processElement` applies one record: joined with the
//!    other side's live rows passing the residual (`diff` times each partner's count); on a kept
//!    side, padded when it has no live partner; on a kept other side, each partner's
//!    association count moved (its padded row retracted when the count leaves 0, emitted when
//!    it returns to 0; the partner is written); then stored, or removed from state.
//!
//! So a left row whose partner expired keeps its joined row in the output and is not padded
//! (its association count still counts the expired partner, as in Flink); a later partner joins
//! it without retracting a padded row. A retraction of a row no longer in state is still joined
//! with the other side's live rows (Flink retracts those joined rows, whether or not they were
//! emitted). Without any expiry the output equals the regular join of the two tables.
//!
//! Differences from Flink, deliberate: the clock is system time, not the wall clock; state
//! expires exactly after the retention (Flink's cleanup is lazy but never returns expired
//! state, the same answers); a system time's changes are consolidated and applied left side
//! first, so a row inserted and retracted within one system time is not written (Flink applies
//! records one by one in arrival order).
//!
//! Cost: per change, a scan of its key's live rows on the other side (as Flink's state
//! iteration); state is the live rows, freed at the first system time this worker processes at
//! or after their expiry (one timer entry per key and system time it was touched at).

mod state;

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use differential_dataflow::consolidation::consolidate;
use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use serde::{Deserialize, Serialize};
use timely::dataflow::operators::vec::Map;

use crate::epochs::{drive, EpochLogic};
use crate::pair_join::PairJoinConfig;
use crate::retention::Retention;
use crate::watermark::Watermark;
use crate::SysTime;

use state::{apply, Rows, Side};

/// A regular join's configuration with its retention (in system-time epochs) and what
/// [`PairJoinConfig`] adds (padded sides, residual, name).
pub type TtlJoinConfig<L, R> = PairJoinConfig<Retention<SysTime>, L, R>;

impl<L, R> TtlJoinConfig<L, R> {
    /// An INNER join whose rows expire after `retention` (in system-time epochs, e.g.
    /// [`Retention::epochs`]), without residual, named `"TtlJoin"`.
    pub fn new(retention: Retention<SysTime>) -> Self {
        PairJoinConfig::inner(retention, "TtlJoin")
    }
}

/// A change of either input.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum Rec<K, L, R> {
    Left(K, L),
    Right(K, R),
}

/// The regular join of `left` and `right` (`(key, row)` records, both may be updating) with
/// idle-state retention (see the [module docs](self)). `output(left, right)` builds an output row
/// from a match (both `Some`) or a padded row (one `None`). The output is a collection whose
/// updates carry the signed multiplicities the rules give; it is not revised when state
/// expires.
///
/// # Examples
///
/// LEFT join, retention 2 epochs. `a` pads at 0; `x` joins it at 1 (retracting the padded row,
/// and writing `a` again: its association count changed); `y` joins it at 2; `a`, last written
/// at 2, is gone at 4, so `z` finds no partner, and the rows already emitted stay.
///
/// ```
/// use differential_temporal_operators::retention::Retention;
/// use differential_temporal_operators::testing::run_binary;
/// use differential_temporal_operators::ttl_join::{ttl_join, TtlJoinConfig};
///
/// let left = vec![vec![((1u8, 'a'), 1)]];
/// let right = vec![
///     vec![],
///     vec![((1u8, 'x'), 1)],
///     vec![((1, 'y'), 1)],
///     vec![],
///     vec![((1, 'z'), 1)],
/// ];
/// let out = run_binary(2, left, right, |l, r| {
///     let config = TtlJoinConfig::new(Retention::epochs(2)).padded(true, false);
///     ttl_join(l, r, config, |l: Option<&char>, r: Option<&char>| (l.copied(), r.copied()))
/// });
/// assert_eq!(
///     out,
///     vec![
///         ((Some('a'), None), 0, 1),
///         ((Some('a'), None), 1, -1),
///         ((Some('a'), Some('x')), 1, 1),
///         ((Some('a'), Some('y')), 2, 1),
///     ]
/// );
/// ```
pub fn ttl_join<'s, K, L, R, O>(
    left: VecCollection<'s, SysTime, (K, L)>,
    right: VecCollection<'s, SysTime, (K, R)>,
    config: TtlJoinConfig<L, R>,
    output: impl Fn(Option<&L>, Option<&R>) -> O + 'static,
) -> VecCollection<'s, SysTime, O>
where
    K: ExchangeData + Hash,
    L: ExchangeData,
    R: ExchangeData,
    O: ExchangeData,
{
    let name = config.name.clone();
    let records = left
        .map(|(k, l)| Rec::Left(k, l))
        .concat(right.map(|(k, r)| Rec::Right(k, r)));
    let logic = Ttl {
        config,
        output,
        keys: HashMap::new(),
        timers: BTreeMap::new(),
    };
    let route = |rec: &Rec<K, L, R>| match rec {
        Rec::Left(k, _) | Rec::Right(k, _) => k.hashed(),
    };
    drive::<_, (), _, _>(records, Vec::new(), 0, route, &name, logic)
        .inner
        .map(|((o, diff), time, r)| (o, time, r * diff))
        .as_collection()
}

/// A key's live rows on both sides.
struct KeyState<L, R> {
    left: Rows<L>,
    right: Rows<R>,
}

/// The state of [`ttl_join`] and its rules per system time.
struct Ttl<K, L, R, F> {
    config: TtlJoinConfig<L, R>,
    output: F,
    keys: HashMap<K, KeyState<L, R>>,
    /// The keys to sweep for expired rows, by the system time from which a row written when
    /// the key was touched has expired.
    timers: BTreeMap<SysTime, Vec<K>>,
}

impl<K, L, R, F, O> Ttl<K, L, R, F>
where
    K: ExchangeData + Hash,
    L: ExchangeData,
    R: ExchangeData,
    F: Fn(Option<&L>, Option<&R>) -> O,
{
    /// Frees the rows whose retention has run out at `now`, on the keys whose timers are due.
    fn expire(&mut self, now: SysTime) {
        let later = self.timers.split_off(&now.saturating_add(1));
        let due = std::mem::replace(&mut self.timers, later);
        for key in due.into_values().flatten() {
            if let Some(state) = self.keys.get_mut(&key) {
                state.left.expire(&self.config.spec, now);
                state.right.expire(&self.config.spec, now);
                if state.left.is_empty() && state.right.is_empty() {
                    self.keys.remove(&key);
                }
            }
        }
    }

    /// Applies one consolidated change at `now` (see [`state::apply`]).
    fn change(
        &mut self,
        record: Rec<K, L, R>,
        diff: isize,
        now: SysTime,
        give: &mut dyn FnMut((O, isize)),
    ) {
        let (pad_left, pad_right) = self.config.pad;
        let residual = self.config.residual.clone();
        let output = &self.output;
        let key = match &record {
            Rec::Left(k, _) | Rec::Right(k, _) => k.clone(),
        };
        let state = self.keys.entry(key.clone()).or_insert_with(|| KeyState {
            left: Rows::new(),
            right: Rows::new(),
        });
        match record {
            Rec::Left(_, l) => apply(
                Side {
                    rows: &mut state.left,
                    kept: pad_left,
                },
                Side {
                    rows: &mut state.right,
                    kept: pad_right,
                },
                (l, diff, now),
                |l: &L, r: &R| residual.as_ref().is_none_or(|f| f(l, r)),
                &mut |l, r, d| give((output(l, r), d)),
            ),
            Rec::Right(_, r) => apply(
                Side {
                    rows: &mut state.right,
                    kept: pad_right,
                },
                Side {
                    rows: &mut state.left,
                    kept: pad_left,
                },
                (r, diff, now),
                |r: &R, l: &L| residual.as_ref().is_none_or(|f| f(l, r)),
                &mut |r, l, d| give((output(l, r), d)),
            ),
        }
        if state.left.is_empty() && state.right.is_empty() {
            self.keys.remove(&key);
        }
    }
}

impl<K, L, R, F, O> EpochLogic<Rec<K, L, R>, (), (O, isize)> for Ttl<K, L, R, F>
where
    K: ExchangeData + Hash,
    L: ExchangeData,
    R: ExchangeData,
    F: Fn(Option<&L>, Option<&R>) -> O,
{
    fn epoch(
        &mut self,
        now: SysTime,
        _w: &Watermark<()>,
        mut records: Vec<(Rec<K, L, R>, isize)>,
        give: &mut dyn FnMut((O, isize)),
    ) {
        // 1. Free what has expired, so that no change below sees it.
        self.expire(now);
        // 2. The left side's changes, then the right side's (`Rec::Left` sorts first).
        consolidate(&mut records);
        let mut touched = Vec::with_capacity(records.len());
        for (record, diff) in records {
            match &record {
                Rec::Left(k, _) | Rec::Right(k, _) => touched.push(k.clone()),
            }
            self.change(record, diff, now, give);
        }
        // 3. Every key touched now was written now: sweep it when that write expires.
        touched.sort();
        touched.dedup();
        let at = self.config.spec.expiry(&now);
        self.timers.entry(at).or_default().extend(touched);
    }

    fn waiting(&self) -> bool {
        false
    }

    fn end(&mut self, _give: &mut dyn FnMut((O, isize))) {}
}
